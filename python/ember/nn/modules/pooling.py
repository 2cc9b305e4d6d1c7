"""Max, average, LP, adaptive pooling and max unpooling (torch.nn.modules.pooling)."""

from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.modules.utils import _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, "
                "dilation={dilation}, ceil_mode={ceil_mode}").format(**self.__dict__)

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                        ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L) or (C, L)."""

    _fn = staticmethod(lambda *a, **k: F.max_pool1d(*a, **k))


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over (N, C, H, W) or (C, H, W)."""

    _fn = staticmethod(lambda *a, **k: F.max_pool2d(*a, **k))


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W)."""

    _fn = staticmethod(lambda *a, **k: F.max_pool3d(*a, **k))


class _MaxUnpoolNd(Module):
    _tup = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        tup = type(self)._tup
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if (stride is not None) else kernel_size)
        self.padding = tup(padding)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding,
                        output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: scatters values back to their argmax positions."""

    _tup = staticmethod(_single)
    _fn = staticmethod(lambda *a: F.max_unpool1d(*a))


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d."""

    _tup = staticmethod(_pair)
    _fn = staticmethod(lambda *a: F.max_unpool2d(*a))


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d."""

    _tup = staticmethod(_triple)
    _fn = staticmethod(lambda *a: F.max_unpool3d(*a))


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolNdDivisor(_AvgPoolNd):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                        self.count_include_pad, self.divisor_override)

    def __setstate__(self, d):
        self.__dict__.update(d)
        self.__dict__.setdefault("padding", 0)
        self.__dict__.setdefault("ceil_mode", False)
        self.__dict__.setdefault("count_include_pad", True)


class AvgPool2d(_AvgPoolNdDivisor):
    """2-D average pooling."""

    _fn = staticmethod(lambda *a: F.avg_pool2d(*a))


class AvgPool3d(_AvgPoolNdDivisor):
    """3-D average pooling."""

    _fn = staticmethod(lambda *a: F.avg_pool3d(*a))


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}").format(**self.__dict__)

    def forward(self, input):
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                        self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling: (sum x^p)^(1/p) over each window."""

    _fn = staticmethod(lambda *a: F.lp_pool1d(*a))


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling."""

    _fn = staticmethod(lambda *a: F.lp_pool2d(*a))


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling."""

    _fn = staticmethod(lambda *a: F.lp_pool3d(*a))


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return self._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-D max pooling to a fixed output length."""

    _fn = staticmethod(lambda *a: F.adaptive_max_pool1d(*a))


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-D max pooling to a fixed output size (None keeps that dimension)."""

    _fn = staticmethod(lambda *a: F.adaptive_max_pool2d(*a))


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-D max pooling to a fixed output size."""

    _fn = staticmethod(lambda *a: F.adaptive_max_pool3d(*a))


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return self._fn(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-D average pooling to a fixed output length."""

    _fn = staticmethod(lambda *a: F.adaptive_avg_pool1d(*a))


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-D average pooling to a fixed output size."""

    _fn = staticmethod(lambda *a: F.adaptive_avg_pool2d(*a))


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-D average pooling to a fixed output size."""

    _fn = staticmethod(lambda *a: F.adaptive_avg_pool3d(*a))
