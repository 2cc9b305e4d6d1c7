"""spawn(): run `fn(rank, *args)` in `nprocs` processes and report the first failure by rank
(torch.multiprocessing.spawn's contract)."""

import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    """A child process of spawn() failed; `error_index` is its rank."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """The child of rank `error_index` raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """The child of rank `error_index` exited with a nonzero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _run(fn, rank, args, error_queue):
    # The parent reads the traceback from `error_queue`; exit code 1 marks the failure.
    try:
        fn(rank, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes of one spawn() call; join() waits and raises on the first failure."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {p.sentinel: rank for rank, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Waits up to `timeout` seconds for the processes. Returns True once all exited
        cleanly, False when some still run; raises ProcessRaisedException or
        ProcessExitedException (after terminating the others) when one failed."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            rank = self.sentinels.pop(sentinel)
            p = self.processes[rank]
            p.join()
            if p.exitcode != 0 and failed is None:
                failed = rank
        if failed is None:
            return not self.sentinels
        # Stop the others before reporting.
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        for p in self.processes:
            p.join()
        self.sentinels.clear()
        p = self.processes[failed]
        queue = self.error_queues[failed]
        if queue.empty():
            code = p.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(
                    f"process {failed} terminated with signal {name}", error_index=failed,
                    error_pid=p.pid, exit_code=code, signal_name=name)
            raise ProcessExitedException(
                f"process {failed} terminated with exit code {code}", error_index=failed,
                error_pid=p.pid, exit_code=code)
        original = queue.get()
        msg = f"\n\n-- Process {failed} terminated with the following error:\n{original}"
        raise ProcessRaisedException(msg, failed, p.pid)


class SpawnContext(ProcessContext):
    pass


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts `nprocs` processes running fn(rank, *args) with the given start method."""
    ctx = multiprocessing.get_context(start_method)
    error_queues, processes = [], []
    for rank in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_run, args=(fn, rank, args, q), daemon=daemon)
        p.start()
        error_queues.append(q)
        processes.append(p)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs fn(rank, *args) for rank in range(nprocs) in new processes. With join=True waits
    for all and raises on the first failure (naming its rank); else returns the ProcessContext."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
