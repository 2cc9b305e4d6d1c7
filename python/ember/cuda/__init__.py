"""ember.cuda: device queries (kernels run when the build has CUDA and a GPU is present)."""

from ember import _C


def is_available():
    """True when ember was built with CUDA and a GPU is visible."""
    return _C._cuda_is_available()


def device_count():
    """Number of visible CUDA devices."""
    return _C._cuda_device_count()

from ember.cuda import amp  # noqa: E402,F401
