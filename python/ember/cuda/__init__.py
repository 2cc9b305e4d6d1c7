"""ember.cuda: torch.cuda's API. Devices, streams and events, the caching allocator's
statistics, random state, CUDA Graphs. Without a GPU (or without libember_cuda.so) is_available()
is False, device_count() is 0, the statistics are empty, seeding does nothing, and everything
that needs a GPU raises RuntimeError."""

from ember import _C
from ember.cuda import _tensor
from ember.cuda._utils import device_index as _device_index
from ember.cuda._utils import require as _require
from ember.cuda.graphs import (  # noqa: F401
    CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables)
from ember.cuda.memory import (  # noqa: F401
    empty_cache, max_memory_allocated, max_memory_cached, max_memory_reserved, mem_get_info,
    memory_allocated, memory_cached, memory_reserved, memory_stats, memory_summary,
    reset_max_memory_allocated, reset_max_memory_cached, reset_peak_memory_stats,
    set_per_process_memory_fraction)
from ember.cuda.random import (  # noqa: F401
    get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed,
    seed_all, set_rng_state, set_rng_state_all)
from ember.cuda.streams import (  # noqa: F401
    Event, ExternalStream, Stream, StreamContext, current_stream, default_stream, set_stream,
    stream)

_cuda = _C._cuda
_initialized = False


def is_available():
    """True when ember was built with CUDA and a GPU is visible."""
    return _C._cuda_is_available()


def device_count():
    """Number of visible CUDA devices."""
    return _C._cuda_device_count()


def is_initialized():
    """Whether CUDA has been initialised (by init() or by using a device)."""
    return is_available() and (_initialized or _cuda.memory_reserved(-1) > 0)


def init():
    """Initialises CUDA; RuntimeError without a GPU."""
    global _initialized
    _require("init")
    _initialized = True


def _lazy_init():
    init()


def current_device():
    """The index of the selected device."""
    _require("current_device")
    return _cuda.current_device()


def set_device(device):
    """Selects a device (an index, 'cuda:N' or ember.device); a negative index does nothing."""
    idx = _device_index(device)
    if idx >= 0:
        _cuda.set_device(idx)


class device:
    """Selects `device` for a `with` block (a negative index or a CPU device: no-op)."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=True, allow_cpu=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx == -1:
            return
        _require("device")
        self.prev_idx = _cuda.exchange_device(self.idx)

    def __exit__(self, *exc):
        if self.idx != -1 and self.prev_idx != -1:
            _cuda.exchange_device(self.prev_idx)
        return False


class device_of(device):
    """Selects the device of tensor `obj` for a `with` block (no-op for a CPU tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def synchronize(device=None):
    """Waits for all work on `device` (default: current)."""
    _require("synchronize")
    _cuda.synchronize(_device_index(device, optional=True))


class _DeviceProperties:
    """What get_device_properties() returns (torch's _CudaDeviceProperties)."""

    def __init__(self, p):
        for k in ("name", "major", "minor", "total_memory", "multi_processor_count",
                  "is_integrated", "is_multi_gpu_board", "max_threads_per_multi_processor",
                  "warp_size", "l2_cache_size"):
            setattr(self, k, getattr(p, k))

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """Name, capability, memory and SM count of `device` (default: current)."""
    _require("get_device_properties")
    idx = _device_index(device, optional=True)
    if idx < 0 or idx >= device_count():
        raise AssertionError("Invalid device id")
    return _DeviceProperties(_cuda.get_device_properties(idx))


def get_device_name(device=None):
    """The device's name, e.g. 'NVIDIA H100 80GB HBM3'."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """(major, minor) compute capability."""
    p = get_device_properties(device)
    return p.major, p.minor


def get_arch_list():
    """The architectures ember's kernels are built for ([] without a GPU)."""
    if not is_available():
        return []
    return ["sm_80", "sm_90"]


def is_bf16_supported():
    """Whether the current device computes in bfloat16 (compute capability 8.0 or newer)."""
    return get_device_capability()[0] >= 8


def __getattr__(name):
    if name == "default_generators":
        from ember.cuda.random import _default_generators
        return _default_generators()
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")


def _install_tensor_methods():
    _tensor.install(_C.Tensor)


_install_tensor_methods()

from ember.cuda import amp, nvtx  # noqa: E402,F401
