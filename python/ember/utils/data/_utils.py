"""default_collate / default_convert (torch.utils.data._utils.collate) and worker info."""

import collections.abc
import re
import threading

import ember

__all__ = ["default_collate", "default_convert", "get_worker_info", "WorkerInfo"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}")


def _is_numpy(elem, *names):
    return type(elem).__module__ == "numpy" and type(elem).__name__ in names


def default_convert(data):
    """Converts NumPy arrays (recursively inside mappings and sequences) to tensors."""
    elem_type = type(data)
    if isinstance(data, ember.Tensor):
        return data
    if _is_numpy(data, "ndarray", "memmap"):
        if _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return ember.as_tensor(data)
    if _is_numpy(data) or type(data).__module__ == "numpy":
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors are stacked, numbers become tensors
    (float64 / int64), mappings, namedtuples and sequences are collated element-wise."""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, ember.Tensor):
        if _process_worker_info is not None and elem.device.type == "cpu" \
                and all(b.dtype == elem.dtype and not b.requires_grad for b in batch):
            # In a worker process the batch is built in shared memory, so sending it to the
            # main process copies nothing more.
            out = ember._C._shm.empty([len(batch)] + list(elem.shape), elem.dtype)
            return ember.stack(batch, 0, out=out)
        return ember.stack(batch, 0)
    if type(elem).__module__ == "numpy" and elem_type.__name__ != "str_" \
            and elem_type.__name__ != "string_":
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(default_collate_err_msg_format.format(elem.dtype))
            return default_collate([ember.as_tensor(b) for b in batch])
        if elem.shape == ():
            return ember.as_tensor(batch)
    if isinstance(elem, bool):
        return ember.tensor(batch)
    if isinstance(elem, float):
        return ember.tensor(batch, dtype=ember.float64)
    if isinstance(elem, int):
        return ember.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return elem_type({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


class WorkerInfo:
    """What a DataLoader worker knows about itself (torch.utils.data.get_worker_info()):
    id, num_workers, seed and its copy of the dataset. Read-only."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_local = threading.local()
_process_worker_info = None


def get_worker_info():
    """The WorkerInfo of the calling DataLoader worker (process or thread); None elsewhere."""
    info = getattr(_worker_local, "info", None)
    return info if info is not None else _process_worker_info


def _set_worker_info(info):
    _worker_local.info = info


def _set_process_worker_info(info):
    global _process_worker_info
    _process_worker_info = info


def _in_worker_process():
    return _process_worker_info is not None


def pin_memory(data):
    """Copies the tensors of a batch (inside mappings, namedtuples and sequences) to pinned
    memory, as torch.utils.data._utils.pin_memory.pin_memory in PyTorch 1.13: tuples come back
    as lists, objects with a pin_memory() method are pinned by it, the rest is unchanged."""
    if isinstance(data, ember.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: pin_memory(v) for k, v in data.items()})
        except TypeError:
            return {k: pin_memory(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pin_memory(x) for x in data))
    if isinstance(data, tuple):
        return [pin_memory(x) for x in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return type(data)([pin_memory(x) for x in data])
        except TypeError:
            return [pin_memory(x) for x in data]
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
