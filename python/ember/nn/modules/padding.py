"""Constant, zero, reflection and replication padding layers (torch.nn.modules.padding)."""

from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.modules.utils import _ntuple, _pair, _quadruple

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad2d"]

_sextuple = _ntuple(6, "_sextuple")


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with `value` by (left, right)."""

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _pair(padding)


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dimensions with `value` by (left, right, top, bottom)."""

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _quadruple(padding)


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dimensions with `value` (six amounts, last dimension first)."""

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _sextuple(padding)


class _ModePadNd(Module):
    __constants__ = ["padding"]
    _mode = None

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


def _make_pad(name, mode, tup, doc):
    def __init__(self, padding):
        _ModePadNd.__init__(self)
        self.padding = tup(padding)

    return type(name, (_ModePadNd,), {"__init__": __init__, "_mode": mode, "__doc__": doc,
                                      "__module__": __name__, "__qualname__": name})


ReflectionPad1d = _make_pad("ReflectionPad1d", "reflect", _pair,
                            "Pads the last dimension by reflecting the input at its border.")
ReflectionPad2d = _make_pad("ReflectionPad2d", "reflect", _quadruple,
                            "Pads the last two dimensions by reflection.")
ReflectionPad3d = _make_pad("ReflectionPad3d", "reflect", _sextuple,
                            "Pads the last three dimensions by reflection.")
ReplicationPad1d = _make_pad("ReplicationPad1d", "replicate", _pair,
                             "Pads the last dimension by repeating the border value.")
ReplicationPad2d = _make_pad("ReplicationPad2d", "replicate", _quadruple,
                             "Pads the last two dimensions by replication.")
ReplicationPad3d = _make_pad("ReplicationPad3d", "replicate", _sextuple,
                             "Pads the last three dimensions by replication.")


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dimensions with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
