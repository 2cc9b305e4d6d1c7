"""ember.nn.functional: convolution, pooling and resampling with torch.nn.functional's
signatures (the kernels are ember._C._nn's)."""

import math

from ember import _C

_nn = _C._nn

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "lp_pool1d", "lp_pool2d", "fold", "unfold", "interpolate", "upsample", "upsample_nearest",
    "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
]


def _tuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


# ---- convolution ----

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _nn.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _nn.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _nn.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _nn.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                                dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _nn.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _nn.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                                dilation)


# ---- pooling ----

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _nn.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _nn.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _nn.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return _nn.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return _nn.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return _nn.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return _nn.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return _nn.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return _nn.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _nn.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _nn.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _nn.avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override)


def _adaptive_size(input, output_size, n):
    # None in output_size keeps the input's size in that dim (torch's _list_with_default).
    sizes = _tuple(output_size, n)
    if len(sizes) != n:
        return sizes
    return tuple(input.shape[input.dim() - n + i] if s is None else s
                 for i, s in enumerate(sizes))


def adaptive_avg_pool1d(input, output_size):
    return _nn.adaptive_avg_pool1d(input, _adaptive_size(input, output_size, 1))


def adaptive_avg_pool2d(input, output_size):
    return _nn.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    return _nn.adaptive_avg_pool3d(input, _adaptive_size(input, output_size, 3))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool1d(input, _adaptive_size(input, output_size, 1))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool3d(input, _adaptive_size(input, output_size, 3))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    default_size = []
    for d in range(len(kernel_size)):
        default_size.append((input_size[-len(kernel_size) + d] - 1) * stride[d] +
                            kernel_size[d] - 2 * padding[d])
    if output_size is None:
        return default_size
    output_size = list(output_size)
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(
            "output_size should be a sequence containing {} or {} elements, but it has a length "
            "of '{}'".format(len(kernel_size), len(kernel_size) + 2, len(output_size)))
    for d in range(len(kernel_size)):
        min_size = default_size[d] - stride[d]
        max_size = default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError('invalid output_size "{}" (dim {} must be between {} and {})'
                             .format(output_size, d, min_size, max_size))
    return output_size


def _unpool(n, input, indices, kernel_size, stride, padding, output_size):
    kernel_size = _tuple(kernel_size, n)
    stride = _tuple(stride, n) if stride is not None else kernel_size
    padding = _tuple(padding, n)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    if n == 3:
        return _nn.max_unpool3d(input, indices, size, stride, padding)
    return getattr(_nn, "max_unpool%dd" % n)(input, indices, size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _lp_finish(out, norm_type, kernel_count):
    return (_C.sign(out) * _C.relu(_C.abs(out))).mul(kernel_count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if stride is not None:
        out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(out, norm_type, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = _tuple(kernel_size, 2)
    if stride is not None:
        out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool2d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(out, norm_type, kw * kh)


# ---- sliding blocks ----

def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if input.dim() not in (3, 4):
        raise NotImplementedError("Input Error: Only 3D or 4D input Tensors are supported "
                                  "(got {}D)".format(input.dim()))
    return _nn.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if input.dim() not in (2, 3):
        raise NotImplementedError("Input Error: Only unbatched (2D) or batched (3D) input "
                                  "Tensors are supported (got {}D)".format(input.dim()))
    return _nn.col2im(input, output_size, kernel_size, dilation, padding, stride)


# ---- resampling ----

_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        assert scale_factor is None
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            output_size = list(size)
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        assert size is None
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    "format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        assert scale_factors is not None
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i])
                       for i in range(dim)]
        scale_factors = None
    if antialias:
        raise NotImplementedError("ember: interpolate(antialias=True) is not supported")

    if mode == "area":
        assert output_size is not None
        return [None, adaptive_avg_pool1d, adaptive_avg_pool2d,
                adaptive_avg_pool3d][dim](input, output_size) if 1 <= dim <= 3 else \
            _bad_dims(input, mode)
    if mode in ("nearest", "nearest-exact"):
        if not 1 <= dim <= 3:
            _bad_dims(input, mode)
    elif mode in _INTERP_DIMS:
        if _INTERP_DIMS[mode] != dim:
            _bad_dims(input, mode)
    else:
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: "
            "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {})"
            .format(input.dim(), mode))
    if output_size is None:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i])
                       for i in range(dim)]
    return _nn.upsample(input, output_size, mode,
                        None if mode.startswith("nearest") else align_corners, scale_factors)


def _bad_dims(input, mode):
    needs = {"linear": "3D", "bilinear": "4D", "bicubic": "4D", "trilinear": "5D"}
    if mode in needs:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{needs[mode]} input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {})"
        .format(input.dim(), mode))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    return _nn.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _nn.pixel_unshuffle(input, downscale_factor)
