"""Device-index parsing and the no-GPU error shared by ember.cuda's modules."""

from ember import _C

_cuda = _C._cuda


def no_gpu(what):
    """The RuntimeError raised by functions that need a GPU when none is available."""
    why = _cuda.load_error()
    detail = f" ({why})" if why else ""
    return RuntimeError(f"[cuda.{what}] no CUDA GPU is available{detail}; check "
                        "torch.cuda.is_available() before using CUDA")


def require(what):
    """Raises no_gpu(what) unless a GPU is available."""
    if not _cuda.is_available():
        raise no_gpu(what)


def device_index(device, optional=False, allow_cpu=False):
    """The CUDA device index of an ember.device, a 'cuda:N' string, an int or None.

    None means the current device when `optional` (RuntimeError without a GPU). A cpu device
    is ValueError unless `allow_cpu` (then -1), as torch.cuda._utils._get_device_index."""
    import ember
    if isinstance(device, str):
        device = ember.device(device)
    if isinstance(device, ember.device):
        if device.type == "cpu" and allow_cpu:
            return -1
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        device = device.index
    if device is None:
        if optional:
            require("current_device")
            return _cuda.current_device()
        raise ValueError("Expected a cuda device with a specified index or an integer, "
                         "but got: None")
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"Expected a cuda device, an int or None, but got: {type(device).__name__}")
    return device
