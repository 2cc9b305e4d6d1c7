"""torch.autocast: a context manager and decorator that opens an autocast region.

Inside a region, ops with a CPU (or CUDA) autocast policy run in the region's lower-precision
dtype ("lower": matmul, linear, conv, ...), in float32 ("fp32": losses, linalg, fft, ...) or in
the widest dtype of their inputs ("promote": cat, stack, index_copy); the policy of each op is a
trait of the op list (torch 1.13's CPU lists). The state is per thread, as PyTorch's.
"""

import functools
import warnings

from ember import _C

__all__ = ["autocast", "autocast_decorator", "is_autocast_available"]


def is_autocast_available(device_type):
    """Whether autocast supports `device_type` ("cpu" or "cuda")."""
    return device_type in ("cpu", "cuda")


def autocast_decorator(autocast_instance, func):
    """`func` run inside the region of `autocast_instance`."""
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


def _cuda_available():
    try:
        return bool(_C._cuda_is_available())
    except AttributeError:
        return False


class autocast:
    """Runs the ops of its region in mixed precision.

    Args:
        device_type: "cpu" or "cuda".
        dtype: the lower-precision dtype (CPU: bfloat16 (default) or float16; CUDA: float16
            (default) or bfloat16). CPU autocast with another dtype warns and is disabled, and
            entering it raises RuntimeError, as in PyTorch 1.13.
        enabled: whether autocasting is on in the region (`enabled=False` makes a region that
            turns it off inside an enabled one).
        cache_enabled: whether casts of float32 weights (leaves that require grad) are cached
            for the region; None keeps the thread's current setting.

    "cuda" when CUDA is not available warns and disables the region, as PyTorch does.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        if self.device == "cuda":
            self.fast_dtype = _C.get_autocast_gpu_dtype()
        elif self.device == "cpu":
            self.fast_dtype = _C.get_autocast_cpu_dtype()
        else:
            raise RuntimeError("User specified autocast device_type must be 'cuda' or 'cpu'")
        self._cache_enabled = _C.is_autocast_cache_enabled()
        if enabled and self.device == "cuda" and not _cuda_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling")
            enabled = False
        if dtype is not None:
            self.fast_dtype = dtype
        if cache_enabled is not None:
            self._cache_enabled = cache_enabled
        if self.device == "cpu":
            import ember
            if self.fast_dtype not in (ember.bfloat16, ember.float16):
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                              "autocast.\nCPU Autocast only supports dtypes of ember.bfloat16 "
                              "and ember.float16 currently.")
                enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        self.prev_cache_enabled = _C.is_autocast_cache_enabled()
        if self.device == "cpu":
            self.prev = _C.is_autocast_cpu_enabled()
            self.prev_fastdtype = _C.get_autocast_cpu_dtype()
            # The dtype first: an unsupported one raises before any state changes.
            _C.set_autocast_cpu_dtype(self.fast_dtype)
            _C.set_autocast_cpu_enabled(self._enabled)
        else:
            self.prev = _C.is_autocast_enabled()
            self.prev_fastdtype = _C.get_autocast_gpu_dtype()
            _C.set_autocast_gpu_dtype(self.fast_dtype)
            _C.set_autocast_enabled(self._enabled)
        _C.autocast_increment_nesting()
        _C.set_autocast_cache_enabled(bool(self._cache_enabled))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Leaving the outermost region drops the cached weight casts.
        if _C.autocast_decrement_nesting() == 0:
            _C.clear_autocast_cache()
        if self.device == "cpu":
            _C.set_autocast_cpu_enabled(self.prev)
            _C.set_autocast_cpu_dtype(self.prev_fastdtype)
        else:
            _C.set_autocast_enabled(self.prev)
            _C.set_autocast_gpu_dtype(self.prev_fastdtype)
        _C.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        return autocast_decorator(self, func)
