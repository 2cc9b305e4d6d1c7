"""Image transforms on tensors (..., C, H, W), as torchvision.transforms.functional_tensor
(0.14): same arithmetic, dtypes and rounding, written with ember ops."""

import math

import ember
from ember.nn import functional as F

_INT_DTYPES = None


def _is_int(dtype):
    global _INT_DTYPES
    if _INT_DTYPES is None:
        _INT_DTYPES = {ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64}
    return dtype in _INT_DTYPES


def assert_image(img):
    if not isinstance(img, ember.Tensor):
        raise TypeError(f"img should be a Tensor. Got {type(img)}")
    if img.dim() < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    assert_image(img)
    channels = 1 if img.dim() == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def _assert_channels(img, permitted):
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but found "
                        f"{c}")


def _max_value(dtype):
    if dtype == ember.uint8:
        return 255
    if dtype == ember.int8:
        return 127
    if dtype == ember.int16:
        return 32767
    if dtype == ember.int32:
        return 2147483647
    if dtype == ember.int64:
        return 9223372036854775807
    return 1


def _to_4d(img, float_dtypes):
    """The image as a float N×C×H×W tensor and what to undo afterwards."""
    shape = img.shape
    if img.dim() == 2:
        x = img.reshape(1, 1, shape[-2], shape[-1])
    elif img.dim() != 4:
        x = img.reshape(-1, shape[-3], shape[-2], shape[-1])
    else:
        x = img
    dtype = img.dtype
    if dtype not in float_dtypes:
        x = x.to(float_dtypes[0])
    return x, shape, dtype


def _from_4d(x, shape, dtype):
    if x.dtype != dtype:
        if _is_int(dtype):
            x = ember.round(x)
        x = x.to(dtype)
    return x.reshape(*shape[:-2], x.shape[-2], x.shape[-1])


# ---- geometry -----------------------------------------------------------------------------

def hflip(img):
    assert_image(img)
    return img.flip(-1)


def vflip(img):
    assert_image(img)
    return img.flip(-2)


def crop(img, top, left, height, width):
    """img[..., top:top+height, left:left+width]; what lies outside is zero."""
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        # The part inside the image, then zeros around it to the requested size.
        x0, y0 = min(max(left, 0), w), min(max(top, 0), h)
        x1, y1 = max(min(max(right, 0), w), x0), max(min(max(bottom, 0), h), y0)
        pad_l, pad_t = min(x0 - left, width), min(y0 - top, height)
        pad_r, pad_b = width - pad_l - (x1 - x0), height - pad_t - (y1 - y0)
        return pad(img[..., y0:y1, x0:x1], [pad_l, pad_t, pad_r, pad_b], fill=0)
    return img[..., top:bottom, left:right]


def _pad_index(n, before, after, mode):
    """Source indices along one axis for edge / reflect / symmetric padding."""
    idx = ember.arange(-before, n + after)
    if mode == "edge":
        return idx.clamp(0, n - 1)
    if mode == "reflect":  # mirror without repeating the edge: period 2(n-1)
        if n == 1:
            return ember.zeros_like(idx)
        period = 2 * (n - 1)
        m = ember.remainder(idx, period)
        return ember.where(m < n, m, period - m)
    period = 2 * n  # symmetric: mirror repeating the edge
    m = ember.remainder(idx, period)
    return ember.where(m < n, m, period - 1 - m)


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pads (left, top, right, bottom); negative amounts crop. Modes: constant (fill), edge,
    reflect (no edge repeat), symmetric (edge repeated)."""
    assert_image(img)
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, tuple):
        padding = list(padding)
    if isinstance(padding, list) and len(padding) not in (1, 2, 4):
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if isinstance(padding, int):
        left = right = top = bottom = padding
    elif len(padding) == 1:
        left = right = top = bottom = padding[0]
    elif len(padding) == 2:
        left = right = padding[0]
        top = bottom = padding[1]
    else:
        left, top, right, bottom = padding
    left, top, right, bottom = int(left), int(top), int(right), int(bottom)
    h, w = img.shape[-2], img.shape[-1]
    # Negative padding crops first.
    if min(left, top, right, bottom) < 0:
        img = img[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
        left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
        h, w = img.shape[-2], img.shape[-1]
    if left == top == right == bottom == 0:
        return img
    if padding_mode == "constant":
        return F.pad(img, (left, right, top, bottom), value=float(fill))
    if padding_mode == "reflect" and (top >= h or bottom >= h or left >= w or right >= w):
        raise RuntimeError(f"Padding size should be less than the corresponding input dimension, "
                           f"but got: padding ({left}, {right}) at dimension 3 of input "
                           f"{list(img.shape)}")
    rows = _pad_index(h, top, bottom, padding_mode)
    cols = _pad_index(w, left, right, padding_mode)
    return img.index_select(-2, rows).index_select(-1, cols)


def resize(img, size, interpolation="bilinear", antialias=None):
    """Resizes to size [h, w] with interpolate (align_corners=False); integer images are
    rounded back, bicubic uint8 clamped to [0, 255]."""
    assert_image(img)
    if antialias is None:
        antialias = False
    if antialias and interpolation not in ("bilinear", "bicubic"):
        raise ValueError("Antialias option is supported for bilinear and bicubic interpolation "
                         "modes only")
    if interpolation not in ("nearest", "bilinear", "bicubic", "nearest-exact"):
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")
    x, shape, dtype = _to_4d(img, [ember.float32, ember.float64])
    size = [int(size[0]), int(size[1])]
    if antialias:
        x = _resize_antialias(x, size, interpolation)
    else:
        align = False if interpolation in ("bilinear", "bicubic") else None
        x = F.interpolate(x, size=size, mode=interpolation, align_corners=align)
    if interpolation == "bicubic" and dtype == ember.uint8:
        x = x.clamp(min=0, max=255)
    return _from_4d(x, shape, dtype)


def _aa_weights(in_size, out_size, interpolation, dtype):
    """out×in matrix of the separable antialiased filter (PIL's convolution resampling, as
    torch's antialias=True): the filter is widened by the downscale factor."""
    scale = in_size / out_size
    support_scale = max(scale, 1.0)
    if interpolation == "bilinear":
        support = 1.0

        def kernel(x):
            return max(0.0, 1.0 - abs(x))
    else:
        support = 2.0
        a = -0.5

        def kernel(x):
            x = abs(x)
            if x < 1.0:
                return ((a + 2.0) * x - (a + 3.0)) * x * x + 1
            if x < 2.0:
                return (((x - 5) * x + 8) * x - 4) * a
            return 0.0
    support *= support_scale
    rows = []
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        ws = [kernel((j - center + 0.5) / support_scale) for j in range(lo, hi)]
        total = sum(ws)
        row = [0.0] * in_size
        for j, wgt in zip(range(lo, hi), ws):
            row[j] = wgt / total if total != 0 else 0.0
        rows.append(row)
    return ember.tensor(rows, dtype=dtype)


def _resize_antialias(x, size, interpolation):
    wh = _aa_weights(x.shape[-2], size[0], interpolation, x.dtype)
    ww = _aa_weights(x.shape[-1], size[1], interpolation, x.dtype)
    return ember.matmul(ember.matmul(wh, x), ww.t())


def _inverse_affine_matrix(center, angle, translate, scale, shear):
    """The 2×3 matrix mapping output pixel coordinates (about `center`) to input ones for
    rotation by `angle` degrees, translation, scale and shear (degrees, x then y)."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    # Forward map M = T(center + t) R(angle) Sh(sx, sy) S(scale) T(-center); invert R·Sh·S.
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m


def _sample_grid(x, gx, gy, mode):
    """grid_sample(x, grid, mode, padding_mode="zeros", align_corners=False) for one grid
    (H'×W' normalised coordinates) shared by the batch; x is N×C×H×W float."""
    n, c, h, w = x.shape
    ix = ((gx + 1) * w - 1) / 2
    iy = ((gy + 1) * h - 1) / 2
    flat = x.reshape(n, c, h * w)

    def take(xi, yi):
        valid = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).reshape(1, 1, -1)
        vals = ember.gather(flat, 2, idx.expand(n, c, idx.shape[-1]))
        return vals * valid.reshape(1, 1, -1).to(x.dtype)

    if mode == "nearest":
        out = take(ember.round(ix).to(ember.int64), ember.round(iy).to(ember.int64))
    else:
        x0, y0 = ember.floor(ix), ember.floor(iy)
        wx1, wy1 = (ix - x0).reshape(1, 1, -1), (iy - y0).reshape(1, 1, -1)
        wx0, wy0 = 1 - wx1, 1 - wy1
        x0, y0 = x0.to(ember.int64), y0.to(ember.int64)
        out = (take(x0, y0) * wx0 * wy0 + take(x0 + 1, y0) * wx1 * wy0 +
               take(x0, y0 + 1) * wx0 * wy1 + take(x0 + 1, y0 + 1) * wx1 * wy1)
    return out.reshape(n, c, gx.shape[0], gx.shape[1])


def affine(img, matrix, interpolation="nearest", fill=None):
    """Samples img at matrix·(output pixel) (coordinates centred on the image); outside pixels
    get `fill` (a number or one per channel), or 0 when fill is None."""
    assert_image(img)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")
    x, shape, dtype = _to_4d(img, [ember.float32, ember.float64])
    h, w = x.shape[-2], x.shape[-1]
    fdt = x.dtype
    # Output pixel centres relative to the image centre, mapped to normalised input coords.
    xs = ember.linspace(-w * 0.5 + 0.5, w * 0.5 - 0.5, steps=w, dtype=fdt).view(1, w)
    ys = ember.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, steps=h, dtype=fdt).view(h, 1)
    # The coefficients are rescaled first, in the image dtype, as torchvision's grid is built.
    theta = ember.tensor(matrix, dtype=fdt).view(2, 3) / ember.tensor([[0.5 * w], [0.5 * h]],
                                                                      dtype=fdt)
    gx = xs * theta[0, 0] + ys * theta[0, 1] + theta[0, 2]
    gy = xs * theta[1, 0] + ys * theta[1, 1] + theta[1, 2]
    if fill is None:
        out = _sample_grid(x, gx, gy, interpolation)
    else:
        ones = ember.ones(x.shape[0], 1, h, w, dtype=fdt)
        both = _sample_grid(ember.cat((x, ones), 1), gx, gy, interpolation)
        out, mask = both[:, :-1], both[:, -1:].expand(-1, x.shape[1], -1, -1)
        fills = [float(f) for f in fill] if isinstance(fill, (list, tuple)) else [float(fill)]
        fill_img = ember.tensor(fills, dtype=fdt).view(1, len(fills), 1, 1).expand_as(out)
        if interpolation == "nearest":
            out = ember.where(mask < 0.5, fill_img, out)
        else:
            out = out * mask + (1.0 - mask) * fill_img
    return _from_4d(out, shape, dtype)


# ---- colour ------------------------------------------------------------------------------

def rgb_to_grayscale(img, num_output_channels=1):
    """ITU-R 601 luma 0.2989 R + 0.587 G + 0.114 B, cast back to the input dtype (truncating)."""
    if img.dim() < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found "
                        f"{img.dim()}")
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    if num_output_channels == 3:
        return gray.expand(img.shape)
    return gray


def _blend(img1, img2, ratio):
    ratio = float(ratio)
    bound = 1.0 if img1.is_floating_point() else 255.0
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img, brightness_factor):
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    assert_image(img)
    _assert_channels(img, [1, 3])
    return _blend(img, ember.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    assert_image(img)
    _assert_channels(img, [3, 1])
    dtype = img.dtype if img.is_floating_point() else ember.float32
    base = rgb_to_grayscale(img) if get_dimensions(img)[0] == 3 else img
    mean = ember.mean(base.to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    assert_image(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb_to_hsv(img):
    r, g, b = img.unbind(-3)
    maxc = ember.amax(img, dim=-3)
    minc = ember.amin(img, dim=-3)
    same = maxc == minc
    delta = maxc - minc
    ones = ember.ones_like(maxc)
    s = delta / ember.where(same, ones, maxc)
    d = ember.where(same, ones, delta)
    rc, gc, bc = (maxc - r) / d, (maxc - g) / d, (maxc - b) / d
    # Hue sector by which channel is the maximum (red wins ties, then green).
    is_r = maxc == r
    is_g = (maxc == g) & ~is_r
    h = ember.where(is_r, bc - gc, ember.where(is_g, 2.0 + rc - bc, 4.0 + gc - rc))
    h = ember.where(same, ember.zeros_like(h), h)
    h = ember.fmod(h / 6.0 + 1.0, 1.0)
    return h, s, maxc


def _hsv_to_rgb(h, s, v):
    i = ember.floor(h * 6.0)
    f = h * 6.0 - i
    i = ember.remainder(i.to(ember.int32), 6)
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)

    def pick(options):
        out = options[5]
        for k in range(4, -1, -1):
            out = ember.where(i == k, options[k], out)
        return out

    r = pick((v, q, p, p, t, v))
    g = pick((t, v, v, q, p, p))
    b = pick((p, p, t, v, v, q))
    return ember.stack((r, g, b), dim=-3)


def adjust_hue(img, hue_factor):
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    assert_image(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    dtype = img.dtype
    x = img.to(ember.float32) / 255.0 if dtype == ember.uint8 else img
    h, s, v = _rgb_to_hsv(x)
    h = ember.remainder(h + hue_factor, 1.0)
    out = _hsv_to_rgb(h, s, v)
    if dtype == ember.uint8:
        out = (out * 255.0).to(dtype)
    return out


# ---- blur --------------------------------------------------------------------------------

def _gaussian_kernel1d(ksize, sigma, dtype):
    half = (ksize - 1) * 0.5
    x = ember.linspace(-half, half, steps=ksize, dtype=dtype)
    pdf = ember.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma):
    """Separable Gaussian (kernel_size [kx, ky], sigma [sx, sy]) with reflect padding, as one
    depthwise 2-D convolution."""
    assert_image(img)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0], dtype)
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1], dtype)
    kernel = ember.mm(ky[:, None], kx[None, :])
    x, shape, out_dtype = _to_4d(img, [dtype])
    c = x.shape[1]
    weight = kernel.expand(c, 1, kernel.shape[0], kernel.shape[1])
    p = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2]
    x = F.pad(x, p, mode="reflect")
    x = F.conv2d(x, weight, groups=c)
    return _from_4d(x, shape, out_dtype)


def normalize(tensor, mean, std, inplace=False):
    if not isinstance(tensor, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tuple(tensor.shape)}")
    if not inplace:
        tensor = tensor.clone()
    mean = ember.as_tensor(mean, dtype=tensor.dtype)
    std = ember.as_tensor(std, dtype=tensor.dtype)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to "
                         "division by zero.")
    if mean.dim() == 1:
        mean = mean.view(-1, 1, 1)
    if std.dim() == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)
