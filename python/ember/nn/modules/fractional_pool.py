"""Fractional max pooling modules (torch.nn.FractionalMaxPool2d / 3d)."""

from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.modules.utils import _pair, _triple

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class _FractionalMaxPoolNd(Module):
    _tup = None
    _fn = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        tup = type(self)._tup
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError("FractionalMaxPool requires specifying either "
                             "an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None:
            if not all(0 < r < 1 for r in self.output_ratio):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling over (N, C, H, W) or (C, H, W)."""

    _tup = staticmethod(_pair)
    _fn = staticmethod(lambda *a, **k: F.fractional_max_pool2d(*a, **k))


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W)."""

    _tup = staticmethod(_triple)
    _fn = staticmethod(lambda *a, **k: F.fractional_max_pool3d(*a, **k))
