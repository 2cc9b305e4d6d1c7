"""torch.cuda's memory functions: the caching allocator's statistics and controls."""

import collections
import warnings

from ember import _C
from ember.cuda._utils import device_index, require

_cuda = _C._cuda

__all__ = ["memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_cached", "max_memory_cached",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
           "empty_cache", "memory_summary", "set_per_process_memory_fraction", "mem_get_info"]


def _index(device):
    # Without a GPU the statistics are empty whatever the device, as torch's before init.
    if not _cuda.is_available():
        return -1
    return device_index(device, optional=True)


def memory_stats(device=None):
    """The allocator's statistics ("allocated_bytes.all.current", "num_ooms", ...), sorted by
    key; empty without a GPU."""
    if not _cuda.is_available():
        return collections.OrderedDict()
    return collections.OrderedDict(sorted(_cuda.memory_stats(_index(device)).items()))


def memory_allocated(device=None):
    """Bytes held by tensors on `device`."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """Peak of memory_allocated since the start or the last reset_peak_memory_stats()."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """Bytes the allocator holds from the driver (allocated + cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """Peak of memory_reserved."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_cached(device=None):
    """Deprecated name of memory_reserved."""
    warnings.warn("torch.cuda.memory_cached has been renamed to torch.cuda.memory_reserved",
                  FutureWarning)
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated name of max_memory_reserved."""
    warnings.warn("torch.cuda.max_memory_cached has been renamed to "
                  "torch.cuda.max_memory_reserved", FutureWarning)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    """Resets the peaks of the statistics to their current values."""
    require("reset_peak_memory_stats")
    _cuda.reset_peak_memory_stats(device_index(device, optional=True))


def reset_max_memory_allocated(device=None):
    """Deprecated: calls reset_peak_memory_stats (which resets every peak)."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning)
    return reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """Deprecated: calls reset_peak_memory_stats (which resets every peak)."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning)
    return reset_peak_memory_stats(device)


def empty_cache():
    """Returns cached blocks that hold no tensor to the driver (no-op without a GPU)."""
    if _cuda.is_available():
        _cuda.empty_cache()


def memory_summary(device=None, abbreviated=False):
    """The allocator's statistics as a table."""
    require("memory_summary")
    return _cuda.memory_summary(device_index(device, optional=True), bool(abbreviated))


def set_per_process_memory_fraction(fraction, device=None):
    """Caps what the allocator may reserve on `device` to `fraction` of its memory."""
    require("set_per_process_memory_fraction")
    idx = device_index(device, optional=True)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _cuda.set_per_process_memory_fraction(fraction, idx)


def mem_get_info(device=None):
    """(free, total) bytes of device memory, as cudaMemGetInfo."""
    require("mem_get_info")
    return tuple(_cuda.mem_get_info(device_index(device, optional=True)))
