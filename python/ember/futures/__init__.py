"""ember.futures: the Future of torch.futures.

A Future holds a value (or an error) that becomes available later. `Work.get_future()` returns
one that completes when the collective does; callbacks added with `then` or
`add_done_callback` run on the thread that completes it.
"""

import sys
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value that becomes available later (torch.futures.Future)."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        self._work = None

    def __repr__(self):
        state = "done" if self._done else "pending"
        return f"<ember.futures.Future ({state})>"

    def done(self):
        """True once a value or an error was set."""
        return self._done

    def wait(self):
        """Blocks until the future completes; returns its value or raises its error."""
        if self._work is not None and not self._done:
            try:
                self._work.wait()
            except Exception:
                pass  # the error is recorded by the completion callback
        with self._cond:
            while not self._done:
                self._cond.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed future (raises its error; RuntimeError while pending)."""
        if not self._done:
            raise RuntimeError("Future.value() called before the future completed; call wait()")
        if self._error is not None:
            raise self._error
        return self._value

    def then(self, callback):
        """A new Future completed with `callback(self)` once this one completes."""
        result = Future()

        def run(fut):
            try:
                result.set_result(callback(fut))
            except BaseException as e:  # noqa: B902 - delivered to the chained future
                result.set_exception(e)

        self.add_done_callback(run)
        return result

    def add_done_callback(self, callback):
        """Runs `callback(self)` once the future completes (now, if it has)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run_callback(callback)

    def set_result(self, result):
        """Completes the future with `result` (RuntimeError if already completed)."""
        self._finish(result, None)

    def set_exception(self, result):
        """Completes the future with an error, raised by `wait` and `value`."""
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._finish(None, result)

    def _finish(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            self._run_callback(cb)

    def _run_callback(self, cb):
        try:
            cb(self)
        except Exception:
            sys.excepthook(*sys.exc_info())

    def _complete_from_work(self):
        work = self._work
        if self._done:
            return
        if work.is_success():
            self.set_result(work.result())
        else:
            err = work.exception()
            self.set_exception(err if err is not None else RuntimeError("the work failed"))


def _from_work(work):
    """The Future of a distributed Work: completes when the work does."""
    fut = Future()
    fut._work = work
    work._add_callback(fut._complete_from_work)
    return fut


def collect_all(futures):
    """A Future completed with the list of `futures` once all of them complete."""
    futures = list(futures)
    result = Future()
    if not futures:
        result.set_result([])
        return result
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            result.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return result


def wait_all(futures):
    """Waits for every future; returns their values (raises the first error)."""
    return [f.wait() for f in futures]
