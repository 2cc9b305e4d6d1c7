"""Tensor.pin_memory, Tensor.is_pinned and Tensor.record_stream (installed on ember.Tensor
when ember.cuda is imported)."""

from ember import _C

_cuda = _C._cuda


def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked memory, or self when already pinned.
    RuntimeError without a GPU, as PyTorch."""
    if _cuda.is_pinned(self):
        return self
    return _cuda.pin_memory(self)


def is_pinned(self, device=None):
    """Whether this tensor is a CPU tensor in page-locked memory."""
    return _cuda.is_pinned(self)


def record_stream(self, stream):
    """Keeps this CUDA tensor's memory from reuse until the work queued on `stream` when it is
    freed has finished."""
    from ember.cuda.streams import Stream
    if not isinstance(stream, Stream):
        raise TypeError(f"record_stream(): argument 'stream' must be ember.cuda.Stream, not "
                        f"{type(stream).__name__}")
    _cuda.record_stream(self, stream._s)


def install(tensor_type):
    tensor_type.pin_memory = pin_memory
    tensor_type.is_pinned = is_pinned
    tensor_type.record_stream = record_stream
