"""Reducers that send tensors between processes by shared-memory handle (the storage is moved to
shared memory first, then its file descriptor travels with multiprocessing.reduction.DupFd)."""

import multiprocessing
import os
from multiprocessing.reduction import ForkingPickler

import ember
from ember import _C

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor", "reduce_parameter",
           "rebuild_parameter", "get_sharing_strategy", "set_sharing_strategy",
           "get_all_sharing_strategies"]

_all_sharing_strategies = {"file_descriptor"}
_sharing_strategy = "file_descriptor"


def get_sharing_strategy():
    """The strategy used to share CPU tensors ('file_descriptor')."""
    return _sharing_strategy


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors; one of get_all_sharing_strategies()."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise ValueError(f"set_sharing_strategy: unknown strategy {new_strategy!r}; the available "
                         f"ones are {sorted(_all_sharing_strategies)}")
    _sharing_strategy = new_strategy


def get_all_sharing_strategies():
    """The set of sharing strategies this system supports."""
    return set(_all_sharing_strategies)


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def reduce_tensor(tensor):
    """Pickles a CPU tensor as (descriptor of its shared storage, geometry)."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries. If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    if tensor.device.type != "cpu":
        raise RuntimeError(
            f"ember.multiprocessing: sharing {tensor.device.type} tensors between processes is "
            "not implemented; move the tensor to the CPU (tensor.cpu()) first")
    _C._shm.share_memory_(tensor)
    fd, nbytes, _, _ = _C._shm.handle(tensor)
    meta = (_dtype_name(tensor.dtype), tuple(tensor.shape), tuple(tensor.stride()),
            tensor.storage_offset(), tensor.requires_grad, tensor.is_conj())
    return (rebuild_tensor, (multiprocessing.reduction.DupFd(fd), nbytes, meta))


def rebuild_tensor(dupfd, nbytes, meta):
    """Maps a received storage (once per process: the same block gives the same storage)."""
    dtype_name, sizes, strides, offset, requires_grad, is_conj = meta
    fd = dupfd.detach()
    try:
        t = _C._shm.rebuild(fd, nbytes, getattr(ember, dtype_name), list(sizes), list(strides),
                            offset)
    finally:
        os.close(fd)
    if is_conj:
        t = t.conj()
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_parameter(param):
    return (rebuild_parameter, (param.detach(), param.requires_grad))


def rebuild_parameter(data, requires_grad):
    from ember.nn.parameter import Parameter
    return Parameter(data, requires_grad)


def init_reductions():
    """Registers the reducers on multiprocessing's ForkingPickler (queues, pipes and the
    arguments of spawned processes use it)."""
    ForkingPickler.register(ember.Tensor, reduce_tensor)
    from ember.nn.parameter import Parameter
    ForkingPickler.register(Parameter, reduce_parameter)
