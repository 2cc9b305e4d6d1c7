"""The DataLoader worker process: fetches batches for the indices it is sent and returns them
(tensors travel by shared memory through ember.multiprocessing's reducers)."""

import os
import pickle
import queue
import random
import sys
import traceback

from multiprocessing.reduction import ForkingPickler

import ember
import ember.multiprocessing  # noqa: F401  (registers the tensor reducers here)
from ember.utils.data import _utils

__all__ = ["ExceptionWrapper", "worker_loop"]

# How often a waiting worker checks that its parent is alive, in seconds.
STATUS_CHECK_INTERVAL = 1.0


class _KeyErrorMessage(str):
    """KeyError's str() is the repr of its argument; this keeps the traceback readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:  # a class the main process cannot import arrives as a RuntimeError
            pickle.dumps(self.exc_type)
        except Exception:
            self.exc_msg = f"{self.exc_type.__qualname__}: {self.exc_msg}"
            self.exc_type = RuntimeError

    def reraise(self):
        """Raises the original exception type, with the worker's traceback in the message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class ResumeIteration:
    """Sent to persistent workers at the start of each epoch; they answer with it."""


class IterableStopped:
    """A worker's answer once its copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            return self.collate_fn([self.dataset[i] for i in index])
        return self.collate_fn(self.dataset[index])


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        batch = []
        for _ in index:
            try:
                batch.append(next(self.it))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.drop_last and len(batch) < len(index)):
            raise StopIteration
        return self.collate_fn(batch)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def seed_worker(seed):
    """Seeds Python's, ember's and (when loaded) NumPy's generators of this worker."""
    random.seed(seed)
    ember.manual_seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(np.random.SeedSequence(seed).generate_state(4))


def _pickled(number, data, where):
    # Pickled here rather than in the queue's feeder thread, so that a batch that cannot be
    # pickled becomes an error for the main process instead of a result that never arrives.
    # The tensors are moved to shared memory now; only their handles are in the bytes.
    try:
        return bytes(ForkingPickler.dumps((number, data)))
    except Exception:
        return bytes(ForkingPickler.dumps((number, ExceptionWrapper(where=where))))


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    """Serves (number, index) requests from `index_queue` until it receives None."""
    try:
        ember.set_num_threads(1)
        seed = base_seed + worker_id
        seed_worker(seed)
        _utils._set_process_worker_info(
            _utils.WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset))
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)
        parent = os.getppid()
        ended = False
        while True:
            try:
                request = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent:  # the main process died: nobody will ask again
                    break
                continue
            if isinstance(request, ResumeIteration):
                ended = False
                if init_error is None:
                    try:
                        fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn,
                                               drop_last)
                    except Exception:
                        init_error = ExceptionWrapper(where=where)
                data_queue.put(bytes(ForkingPickler.dumps((request, None))))
                continue
            if request is None:
                break
            if done_event.is_set() or ended:
                continue
            number, index = request
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = IterableStopped(worker_id)
                        ended = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put(_pickled(number, data, where))
            del data, index, request
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # The main process stops reading: do not wait at exit for the pipe to drain.
        data_queue.cancel_join_thread()
        data_queue.close()
