"""Forward-mode AD with dual tensors (torch.autograd.forward_ad)."""

from collections import namedtuple

from ember._C import _autograd as _ag

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

_current_levels = []


def enter_dual_level():
    """Enters a new forward-AD level and returns its number (levels nest)."""
    level = _ag._enter_dual_level()
    _current_levels.append(level)
    return level


def exit_dual_level(*, level=None):
    """Exits `level` (default: the innermost one); its tangents are dropped."""
    if level is None:
        if not _current_levels:
            raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                               "that was created. This is not supported.")
        level = _current_levels[-1]
    _ag._exit_dual_level(level)
    if _current_levels and _current_levels[-1] == level:
        _current_levels.pop()


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` that carries `tangent` at `level` (default: the innermost)."""
    return _ag._make_dual(tensor, tangent, level)


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor; tangent is None when it has none at `level`."""
    primal, tangent = _ag._unpack_dual(tensor, level)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Scope of one forward-AD level: `with dual_level(): ...`."""

    def __enter__(self):
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level(level=self.level)
