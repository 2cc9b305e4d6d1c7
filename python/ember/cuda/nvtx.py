"""torch.cuda.nvtx's names. ember emits no NVTX ranges: these are no-ops (profile with
ember.profiler, or Nsight Systems' CUDA API trace)."""

import contextlib

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_depth = 0


def range_push(msg):
    """Pushes a range; returns its depth (0-based), as NVTX."""
    global _depth
    _depth += 1
    return _depth - 1


def range_pop():
    """Pops a range; returns the depth it had, or -1 when none is open."""
    global _depth
    if _depth == 0:
        return -1
    _depth -= 1
    return _depth


def range_start(msg):
    return 0


def range_end(range_id):
    pass


def mark(msg):
    pass


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
