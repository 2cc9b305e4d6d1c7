"""DataLoader with torch.utils.data.DataLoader's signature. With num_workers > 0 the batches
are made by worker processes (multiprocessing_context: a start method name or a context; the
default context when None), prefetching up to num_workers * prefetch_factor batches, returned
in sampler order through shared memory. multiprocessing_context="thread" uses worker threads in
this process instead (ember ops release the GIL on large tensors)."""

import itertools
import multiprocessing
import multiprocessing.connection
import signal
import threading
import time
import warnings
from multiprocessing.reduction import ForkingPickler

import ember
from ember.utils.data import _utils
from ember.utils.data import _worker
from ember.utils.data.dataset import IterableDataset
from ember.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler:
    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterates a dataset in batches (see torch.utils.data.DataLoader). With pin_memory=True
    and a GPU, the main process copies each batch's tensors to pinned memory (for
    non_blocking copies to the device); without one it warns and returns the batches as they
    are."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=2, persistent_workers=False, pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor != 2:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing.")
        assert prefetch_factor > 0
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        if pin_memory_device and not pin_memory:
            warnings.warn("pin memory device is set and pin_memory flag is not used then device "
                          "pinned memory won't be usedplease set pin_memory to true, if you need "
                          "to use the device pin memory")
        self._pin = bool(pin_memory) and ember.cuda.is_available()
        if pin_memory and not self._pin:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.")
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers
        self.generator = generator
        self.multiprocessing_context = multiprocessing_context
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually "
                                 "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = (_utils.default_collate if self._auto_collation
                          else _utils.default_convert)
        self.collate_fn = collate_fn
        self._persistent = None

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got num_workers=0")
            if isinstance(context, str):
                valid = multiprocessing.get_all_start_methods() + ["thread"]
                if context not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {valid!r}, but got "
                                     f"multiprocessing_context={context!r}")
                if context != "thread":
                    context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object "
                                "or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    @property
    def _uses_threads(self):
        return self._multiprocessing_context == "thread"

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    # Batches of an iterable dataset, as (kind, value) pairs for the pipeline.
    def _iterable_batches(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = []
            for sample in it:
                batch.append(sample)
                if len(batch) == self.batch_size:
                    break
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)
            if len(batch) < self.batch_size:
                return

    def _fetch(self, index):
        if self._auto_collation:
            return self.collate_fn([self.dataset[i] for i in index])
        return self.collate_fn(self.dataset[index])

    def __iter__(self):
        # As torch, every epoch draws a base seed from `generator` first, so the shuffle order
        # is the same whatever num_workers is.
        base_seed = int(ember.randint(0, 2**62, (1,), generator=self.generator).item())
        if self._pin:
            return _PinnedIter(self._iter(base_seed), self)
        return self._iter(base_seed)

    def _iter(self, base_seed):
        if self.num_workers == 0:
            return self._single_iter()
        if self._uses_threads:
            if self.persistent_workers:
                if self._persistent is None:
                    self._persistent = _WorkerPool(self, base_seed)
                self._persistent.start_epoch()
                return self._persistent.iterate()
            pool = _WorkerPool(self, base_seed)
            pool.start_epoch()
            return pool.iterate(close=True)
        if self.persistent_workers:
            if self._persistent is None:
                self._persistent = _ProcessIter(self, base_seed)
            else:
                self._persistent._reset(self)
            return self._persistent
        return _ProcessIter(self, base_seed)

    def _single_iter(self):
        if self._iterable:
            _utils._set_worker_info(None)
            yield from self._iterable_batches()
            return
        for index in self._index_sampler:
            yield self._fetch(index)

    def __del__(self):
        if getattr(self, "_persistent", None) is not None:
            self._persistent.close()


class _PinnedIter:
    """The loader's batches with their tensors copied to pinned memory in the main process."""

    def __init__(self, it, loader):
        self._it = it
        self._loader = loader

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        return _utils.pin_memory(next(self._it))

    def close(self):
        close = getattr(self._it, "close", None)
        if close is not None:
            close()


def _worker_failure(worker_id, process):
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return (f"DataLoader worker {worker_id} (pid {process.pid}) was killed by signal "
                f"{name}")
    return (f"DataLoader worker {worker_id} (pid {process.pid}) exited unexpectedly with exit "
            f"code {code}")


class _ProcessIter:
    """Batches made by worker processes. Requests (number, index) go round-robin to the
    workers' index queues, at most num_workers * prefetch_factor ahead; results come back on
    one queue as pickled bytes and are returned in request order. A worker that dies, or a
    timeout, raises here; close() stops the workers."""

    def __init__(self, loader, base_seed):
        ctx = loader.multiprocessing_context or multiprocessing
        self._persistent = loader.persistent_workers
        self._num_workers = loader.num_workers
        self._index_sampler = loader._index_sampler
        self._timeout = loader.timeout
        self._capacity = loader.num_workers * loader.prefetch_factor
        self._closed = False
        self._workers, self._index_queues = [], []
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        try:
            for wid in range(self._num_workers):
                q = ctx.Queue()
                q.cancel_join_thread()  # exiting never waits on a dead worker's pipe
                w = ctx.Process(
                    target=_worker.worker_loop,
                    args=(loader._iterable, loader.dataset, q, self._data_queue, self._done_event,
                          loader._auto_collation, loader.collate_fn, loader.drop_last, base_seed,
                          loader.worker_init_fn, wid, self._num_workers),
                    daemon=True)
                self._index_queues.append(q)
                w.start()
                self._workers.append(w)
            self._start_epoch(first=True)
        except BaseException:
            self.close()
            raise

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _reset(self, loader):
        self._index_sampler = loader._index_sampler
        self._start_epoch(first=False)

    def _start_epoch(self, first):
        self._sampler_iter = iter(self._index_sampler)
        self._send_number = 0  # number of the next request
        self._rcvd_number = 0  # number of the next batch to return
        self._task_worker = {}  # request number -> worker id, until returned
        self._early = {}  # request number -> data that arrived before its turn
        self._active = [True] * self._num_workers
        self._next_worker = itertools.cycle(range(self._num_workers))
        if not first:
            # A worker answers ResumeIteration after whatever it still had from the last epoch;
            # those stale results are dropped.
            for q in self._index_queues:
                q.put(_worker.ResumeIteration())
            waiting = self._num_workers
            while waiting:
                number, _ = self._get()
                if isinstance(number, _worker.ResumeIteration):
                    waiting -= 1
        for _ in range(self._capacity):
            self._put_index()

    def _put_index(self):
        for _ in range(self._num_workers):
            wid = next(self._next_worker)
            if self._active[wid]:
                break
        else:
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        self._index_queues[wid].put((self._send_number, index))
        self._task_worker[self._send_number] = wid
        self._send_number += 1

    def _get(self):
        """The next (number, data) from any worker; raises when a worker died or on timeout."""
        reader = self._data_queue._reader
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            remaining = None
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            sentinels = [w.sentinel for w in self._workers]
            ready = multiprocessing.connection.wait([reader] + sentinels, remaining)
            if reader in ready or reader.poll():
                return ForkingPickler.loads(self._data_queue.get())
            for wid, w in enumerate(self._workers):
                if w.sentinel in ready:
                    w.join(1.0)
                    msg = _worker_failure(wid, w)
                    self.close()
                    raise RuntimeError(msg)

    def __next__(self):
        if self._closed:
            raise StopIteration
        while True:
            # Skip the requests of workers whose iterable ended (their answer never comes).
            while self._rcvd_number < self._send_number:
                wid = self._task_worker[self._rcvd_number]
                if self._rcvd_number in self._early or self._active[wid]:
                    break
                del self._task_worker[self._rcvd_number]
                self._rcvd_number += 1
            else:
                if not self._persistent:
                    self.close()
                raise StopIteration
            if self._rcvd_number in self._early:
                return self._deliver(self._early.pop(self._rcvd_number))
            number, data = self._get()
            if isinstance(data, _worker.IterableStopped):
                self._active[data.worker_id] = False
                self._put_index()
                continue
            if number == self._rcvd_number:
                return self._deliver(data)
            self._early[number] = data

    def _deliver(self, data):
        del self._task_worker[self._rcvd_number]
        self._rcvd_number += 1
        self._put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            if not self._persistent:
                self.close()
            data.reraise()
        return data

    def close(self):
        """Stops the workers (one that does not exit in time is terminated)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._done_event.set()
            for q, w in zip(self._index_queues, self._workers):
                if w.is_alive():
                    q.put(None)
            for w in self._workers:
                w.join(timeout=2 * _worker.STATUS_CHECK_INTERVAL)
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join()
            for q in self._index_queues:
                q.close()
                # The stop message went through the queue's feeder thread: wait for it to
                # flush and exit, so that no thread outlives the iterator.
                q.join_thread()
            self._data_queue.cancel_join_thread()
            self._data_queue.close()

    def __del__(self):
        if not getattr(self, "_closed", True):
            self.close()


class _WorkerPool:
    """Threads that take batch numbers in order (at most `capacity` ahead of the consumer) and
    publish results keyed by number; the consumer takes them in order."""

    def __init__(self, loader, base_seed):
        self.loader = loader
        self.cv = threading.Condition()
        self.capacity = loader.num_workers * loader.prefetch_factor
        self.stop = False
        self.epoch = 0
        self.tasks = None  # iterator of (number, index) for map-style datasets
        self.next_number = 0
        self.consumed = 0
        self.exhausted_at = None  # number of batches, once the sampler runs out
        self.results = {}
        n = 1 if loader._iterable else loader.num_workers
        self.threads = []
        for wid in range(n):
            t = threading.Thread(target=self._run, args=(wid, n, base_seed + wid), daemon=True)
            t.start()
            self.threads.append(t)

    def start_epoch(self):
        with self.cv:
            self.epoch += 1
            self.next_number = 0
            self.consumed = 0
            self.exhausted_at = None
            self.results = {}
            if self.loader._iterable:
                self.tasks = iter(self.loader._iterable_batches())
            else:
                self.tasks = iter(self.loader._index_sampler)
            self.cv.notify_all()

    def _run(self, wid, num_workers, seed):
        _utils._set_worker_info(_utils.WorkerInfo(id=wid, num_workers=num_workers, seed=seed,
                                                   dataset=self.loader.dataset))
        if self.loader.worker_init_fn is not None:
            self.loader.worker_init_fn(wid)
        iterable = self.loader._iterable
        while True:
            with self.cv:
                self.cv.wait_for(lambda: self.stop or (
                    self.tasks is not None and self.exhausted_at is None
                    and self.next_number < self.consumed + self.capacity))
                if self.stop:
                    return
                epoch, number = self.epoch, self.next_number
                tasks = self.tasks
                if not iterable:
                    try:
                        index = next(tasks)
                    except StopIteration:
                        self.exhausted_at = number
                        self.cv.notify_all()
                        continue
                    except BaseException as e:  # a failing sampler ends the epoch with its error
                        self.results[number] = (False, e)
                        self.exhausted_at = number + 1
                        self.cv.notify_all()
                        continue
                self.next_number += 1
            try:
                if iterable:
                    value = (True, next(tasks))
                else:
                    value = (True, self.loader._fetch(index))
            except StopIteration:
                value = None
            except BaseException as e:
                value = (False, e)
            with self.cv:
                if epoch != self.epoch:
                    continue
                if value is None:
                    self.exhausted_at = number
                else:
                    self.results[number] = value
                self.cv.notify_all()

    def iterate(self, close=False):
        epoch = self.epoch
        try:
            while True:
                with self.cv:
                    if epoch != self.epoch:
                        raise RuntimeError("DataLoader: this iterator was superseded by a new "
                                           "epoch (iter() was called again)")
                    number = self.consumed
                    ready = lambda: number in self.results or (  # noqa: E731
                        self.exhausted_at is not None and number >= self.exhausted_at)
                    timeout = self.loader.timeout if self.loader.timeout > 0 else None
                    if not self.cv.wait_for(ready, timeout):
                        raise RuntimeError(
                            f"DataLoader timed out after {self.loader.timeout} seconds")
                    if number not in self.results:
                        return
                    ok, value = self.results.pop(number)
                    self.consumed += 1
                    self.cv.notify_all()
                if not ok:
                    raise value
                yield value
        finally:
            if close:
                self.close()

    def close(self):
        with self.cv:
            self.stop = True
            self.cv.notify_all()
        for t in self.threads:
            if t is not threading.current_thread():
                t.join()
