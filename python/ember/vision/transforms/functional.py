"""torchvision.transforms.functional (0.14): each function takes a tensor image (..., C, H, W)
— one image or a batch — or, where torchvision does, a PIL image."""

import numbers
import warnings
from enum import Enum

import ember
from ember import _C
from ember.vision.transforms import _functional_tensor as F_t

__all__ = ["InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels",
           "to_tensor", "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize",
           "resize", "pad", "crop", "center_crop", "resized_crop", "hflip", "vflip", "affine",
           "rotate", "rgb_to_grayscale", "adjust_brightness", "adjust_contrast",
           "adjust_saturation", "adjust_hue", "gaussian_blur"]


class InterpolationMode(Enum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


_PIL_MODES = {"nearest": 0, "lanczos": 1, "bilinear": 2, "bicubic": 3, "box": 4, "hamming": 5}
_FROM_INT = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
             3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
             5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}


def _interp(mode):
    """An InterpolationMode (ours or torchvision's, by value) or a legacy PIL int."""
    if isinstance(mode, int) and not isinstance(mode, bool):
        warnings.warn("Argument 'interpolation' of type int is deprecated since 0.13 and will be "
                      "removed in 0.15. Please use InterpolationMode enum.")
        return _FROM_INT[mode]
    if isinstance(mode, Enum):
        try:
            return InterpolationMode(mode.value)
        except ValueError:
            pass
    raise TypeError("Argument interpolation should be a InterpolationMode")


def _pil():
    from ember.vision.transforms import _functional_pil
    return _functional_pil


def _is_pil(img):
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)


def _check(img):
    if not isinstance(img, ember.Tensor) and not _is_pil(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img):
    """[channels, height, width]."""
    if isinstance(img, ember.Tensor):
        return F_t.get_dimensions(img)
    _check(img)
    return _pil().get_dimensions(img)


def get_image_size(img):
    """[width, height]."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


# ---- conversions ------------------------------------------------------------------------

def to_tensor(pic):
    """A PIL image or H×W(×C) array (also a tensor, standing in for one) → C×H×W tensor; uint8
    becomes float32 in [0, 1], other dtypes are kept."""
    if _is_pil(pic):
        if pic.mode in ("I", "I;16", "F"):
            import numpy as np
            dt = {"I": np.int32, "I;16": np.int16, "F": np.float32}[pic.mode]
            arr = np.array(pic, dt, copy=True)[:, :, None]
        else:
            arr = _pil().to_array(pic)
        t = ember.from_numpy(arr.transpose(2, 0, 1).copy())
    else:
        is_array = type(pic).__module__ == "numpy" and hasattr(pic, "ndim")
        if not isinstance(pic, ember.Tensor) and not is_array:
            raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
        t = pic if isinstance(pic, ember.Tensor) else ember.as_tensor(pic)
        if t.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {t.dim()} dimensions.")
        if t.dim() == 2:
            t = t.unsqueeze(-1)
        t = t.permute(2, 0, 1).contiguous()
    if t.dtype == ember.uint8:
        return t.to(ember.float32).div(255)
    return t


def pil_to_tensor(pic):
    """A PIL image → C×H×W tensor of its own dtype (no scaling)."""
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    import numpy as np
    arr = np.array(pic, copy=True)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def to_pil_image(pic, mode=None):
    """A C×H×W tensor or H×W×C array → PIL image (float in [0, 1] is scaled to uint8)."""
    import numpy as np
    from PIL import Image
    if isinstance(pic, ember.Tensor):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        if pic.dim() == 2:
            pic = pic.unsqueeze(0)
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        arr = pic.permute(1, 2, 0).contiguous().numpy()
    else:
        arr = np.asarray(pic)
        if arr.ndim == 2:
            arr = arr[:, :, None]
    if arr.shape[-1] == 1:
        arr = arr[:, :, 0]
        if mode is None:
            mode = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}.get(arr.dtype)
    elif mode is None:
        mode = {2: "LA", 3: "RGB", 4: "RGBA"}.get(arr.shape[-1])
    return Image.fromarray(arr, mode=mode)


def convert_image_dtype(image, dtype=ember.float):
    """Converts the dtype, rescaling the values (torchvision.transforms.convert_image_dtype)."""
    if not isinstance(image, ember.Tensor):
        raise TypeError("Input img should be Tensor Image")
    return _C._data.convert_image_dtype(image, dtype)


def normalize(tensor, mean, std, inplace=False):
    """(x - mean[c]) / std[c] over the channel dim (-3)."""
    return F_t.normalize(tensor, mean, std, inplace)


# ---- geometry ----------------------------------------------------------------------------

def _output_size(h, w, size, max_size):
    if len(size) == 1:  # the smaller edge becomes size[0]
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = size[0], int(size[0] * long / short)
        if max_size is not None:
            if max_size <= size[0]:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                                 f"requested size for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        return [new_long, new_short] if w <= h else [new_short, new_long]
    return [size[0], size[1]]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=None):
    """Resizes to size (h, w), or the smaller edge to `size` keeping the aspect ratio. Tensors
    use interpolate (antialias=None means False, as torchvision 0.14); PIL always antialiases."""
    interpolation = _interp(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError("Size must be an int or a 1 or 2 element tuple/list, not a "
                             f"{len(size)} element tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size specifies the length of "
                             "the smaller edge, i.e. size should be an int or a sequence of "
                             "length 1 in torchscript mode.")
    _, h, w = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    out = _output_size(h, w, list(size), max_size)
    if [h, w] == out:
        return img
    if not isinstance(img, ember.Tensor):
        return _pil().resize(img, out, _PIL_MODES[interpolation.value])
    return F_t.resize(img, out, interpolation.value, antialias)


def _pad_ltrb(padding):
    if isinstance(padding, numbers.Number):
        p = int(padding)
        return [p, p, p, p]
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    return list(padding)


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pads (left, top, right, bottom) — one int, (lr, tb) or four ints; modes constant,
    edge, reflect, symmetric."""
    if isinstance(img, ember.Tensor):
        return F_t.pad(img, padding, fill, padding_mode)
    _check(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    return _pil().pad(img, _pad_ltrb(padding), fill, padding_mode)


def crop(img, top, left, height, width):
    """The window [top, top+height) × [left, left+width); outside the image is 0."""
    if isinstance(img, ember.Tensor):
        return F_t.crop(img, top, left, height, width)
    _check(img)
    return _pil().crop(img, top, left, height, width)


def center_crop(img, output_size):
    """The central output_size window, zero-padding first when the image is smaller."""
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, h, w = get_dimensions(img)
    ch, cw = output_size
    if ch > h or cw > w:
        padding = [(cw - w) // 2 if cw > w else 0, (ch - h) // 2 if ch > h else 0,
                   (cw - w + 1) // 2 if cw > w else 0, (ch - h + 1) // 2 if ch > h else 0]
        img = pad(img, padding, fill=0)
        _, h, w = get_dimensions(img)
        if cw == w and ch == h:
            return img
    top = int(round((h - ch) / 2.0))
    left = int(round((w - cw) / 2.0))
    return crop(img, top, left, ch, cw)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=None):
    """crop then resize."""
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img):
    if isinstance(img, ember.Tensor):
        return F_t.hflip(img)
    _check(img)
    return _pil().hflip(img)


def vflip(img):
    if isinstance(img, ember.Tensor):
        return F_t.vflip(img)
    _check(img)
    return _pil().vflip(img)


def _affine_args(angle, translate, scale, shear):
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if isinstance(shear, tuple):
        shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    return float(angle), list(translate), float(scale), [float(s) for s in shear]


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Rotation by `angle` degrees (counter-clockwise) about `center` (default: the image centre),
    then translation, scale and shear (degrees); uncovered pixels get `fill`."""
    interpolation = _interp(interpolation)
    angle, translate, scale, shear = _affine_args(angle, translate, scale, shear)
    _, h, w = get_dimensions(img)
    if not isinstance(img, ember.Tensor):
        _check(img)
        # PIL's affine maps output to input about the top-left corner.
        center_f = [w * 0.5, h * 0.5] if center is None else list(center)
        matrix = F_t._inverse_affine_matrix(center_f, angle, translate, scale, shear)
        return _pil().affine(img, matrix, _PIL_MODES[interpolation.value], fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = F_t._inverse_affine_matrix(center_f, angle, [1.0 * t for t in translate], scale,
                                        shear)
    return F_t.affine(img, matrix, interpolation.value, fill)


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    """Rotation by `angle` degrees counter-clockwise (expand=False only for tensors)."""
    if expand and isinstance(img, ember.Tensor):
        raise NotImplementedError("rotate(expand=True) is not supported for tensors")
    if not isinstance(img, ember.Tensor):
        interpolation = _interp(interpolation)
        return img.rotate(angle, resample=_PIL_MODES[interpolation.value], expand=expand,
                          center=center, fillcolor=fill)
    return affine(img, -float(angle), [0, 0], 1.0, [0.0, 0.0], interpolation, fill, center)


# ---- colour ------------------------------------------------------------------------------

def rgb_to_grayscale(img, num_output_channels=1):
    if isinstance(img, ember.Tensor):
        return F_t.rgb_to_grayscale(img, num_output_channels)
    _check(img)
    return _pil().rgb_to_grayscale(img, num_output_channels)


def to_grayscale(img, num_output_channels=1):
    if isinstance(img, ember.Tensor):
        raise TypeError("to_grayscale takes a PIL image; use rgb_to_grayscale for tensors")
    return _pil().rgb_to_grayscale(img, num_output_channels)


def _colour(name, img, factor):
    if isinstance(img, ember.Tensor):
        return getattr(F_t, name)(img, factor)
    _check(img)
    if name != "adjust_hue" and factor < 0:
        raise ValueError(f"{name.split('_')[1]}_factor ({factor}) is not non-negative.")
    if name == "adjust_hue" and not -0.5 <= factor <= 0.5:
        raise ValueError(f"hue_factor ({factor}) is not in [-0.5, 0.5].")
    return getattr(_pil(), name)(img, factor)


def adjust_brightness(img, brightness_factor):
    """Blends with black: factor 0 black, 1 the original."""
    return _colour("adjust_brightness", img, brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blends with the mean gray level: 0 a flat gray image, 1 the original."""
    return _colour("adjust_contrast", img, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blends with the grayscale image: 0 gray, 1 the original."""
    return _colour("adjust_saturation", img, saturation_factor)


def adjust_hue(img, hue_factor):
    """Shifts the hue by hue_factor (a fraction of the colour circle, in [-0.5, 0.5])."""
    return _colour("adjust_hue", img, hue_factor)


def gaussian_blur(img, kernel_size, sigma=None):
    """Gaussian blur with odd positive kernel_size [kx, ky] and sigma [sx, sy] (default
    0.3 * ((k - 1) * 0.5 - 1) + 0.8 per axis); reflect padding."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got "
                        f"{type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got "
                         f"{len(kernel_size)}")
    for k in kernel_size:
        if k % 2 == 0 or k < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got "
                             f"{kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if isinstance(img, ember.Tensor):
        return F_t.gaussian_blur(img, kernel_size, sigma)
    _check(img)
    out = F_t.gaussian_blur(pil_to_tensor(img), kernel_size, sigma)
    return to_pil_image(out, mode=img.mode)
