"""The PIL-image side of ember.vision.transforms.functional (used only when PIL is installed and
the input is a PIL image), with torchvision 0.14's semantics."""

import numpy as np
from PIL import Image, ImageEnhance, ImageOps


def is_pil_image(img):
    return isinstance(img, Image.Image)


def get_dimensions(img):
    bands = img.getbands()
    return [len(bands), img.height, img.width]


def hflip(img):
    return img.transpose(Image.FLIP_LEFT_RIGHT)


def vflip(img):
    return img.transpose(Image.FLIP_TOP_BOTTOM)


def crop(img, top, left, height, width):
    return img.crop((left, top, left + width, top + height))


def resize(img, size, interpolation):
    h, w = size
    return img.resize((w, h), interpolation)


def pad(img, padding, fill=0, padding_mode="constant"):
    """(left, top, right, bottom) padding; negative amounts crop."""
    left, top, right, bottom = padding
    if padding_mode == "constant":
        border = (max(left, 0), max(top, 0), max(right, 0), max(bottom, 0))
        if img.mode == "P":  # the fill is a palette index
            out = ImageOps.expand(img, border=border, fill=fill)
            out.putpalette(img.getpalette())
        else:
            out = ImageOps.expand(img, border=border, fill=_fill(img, fill))
        if min(left, top, right, bottom) < 0:
            w, h = out.size
            out = out.crop((max(-left, 0), max(-top, 0), w - max(-right, 0),
                            h - max(-bottom, 0)))
        return out
    arr = np.asarray(img)
    if min(left, top, right, bottom) < 0:
        arr = arr[max(-top, 0):arr.shape[0] - max(-bottom, 0),
                  max(-left, 0):arr.shape[1] - max(-right, 0)]
        left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    np_mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode]
    out = Image.fromarray(np.pad(arr, widths, np_mode))
    if img.mode == "P":
        out.putpalette(img.getpalette())
    return out


def rgb_to_grayscale(img, num_output_channels):
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        gray = np.asarray(img.convert("L"))
        return Image.fromarray(np.dstack([gray, gray, gray]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")


def adjust_brightness(img, factor):
    return ImageEnhance.Brightness(img).enhance(factor)


def adjust_contrast(img, factor):
    return ImageEnhance.Contrast(img).enhance(factor)


def adjust_saturation(img, factor):
    return ImageEnhance.Color(img).enhance(factor)


def adjust_hue(img, hue_factor):
    mode = img.mode
    if mode in ("L", "1", "I", "F"):
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    with np.errstate(over="ignore"):
        np_h += np.uint8(int(hue_factor * 255) & 0xFF)  # hue wraps around the circle
    h = Image.fromarray(np_h, "L")
    return Image.merge("HSV", (h, s, v)).convert(mode)


def _fill(img, fill):
    """PIL's fillcolor for `fill`: one value per band (ints unless the image is float)."""
    bands = len(img.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and bands > 1:
        fill = [fill] * bands
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = list(fill) * bands
        if len(fill) != bands:
            raise ValueError(f"The number of elements in 'fill' does not match the number of "
                             f"bands of the image ({len(fill)} != {bands})")
        fill = tuple(fill)
        return tuple(int(f) for f in fill) if img.mode != "F" else fill
    return fill


def affine(img, matrix, interpolation, fill):
    fill = _fill(img, fill)
    return img.transform(img.size, Image.AFFINE, matrix, interpolation, fillcolor=fill)


def to_array(img):
    """The image as an H×W×C array (bool images as uint8 0/255)."""
    arr = np.array(img, copy=True)
    if img.mode == "1":
        arr = arr.astype(np.uint8) * 255
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return arr
