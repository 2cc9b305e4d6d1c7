"""torchvision.utils (0.14): make_grid and save_image (PNG and JPEG through ember's encoders)."""

import math
import os
import warnings

import ember

__all__ = ["make_grid", "save_image"]


def _normalize_(img, low, high):
    img.clamp_(min=low, max=high)
    img.sub_(low).div_(max(high - low, 1e-5))


def _normalize_range_(t, value_range):
    if value_range is not None:
        _normalize_(t, value_range[0], value_range[1])
    else:
        _normalize_(t, float(t.min()), float(t.max()))


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0, **kwargs):
    """Tiles a B×C×H×W batch (or a list of C×H×W images) into one C×H'×W' image with `nrow`
    images a row, `padding` pixels of `pad_value` around each. One-channel images become three
    channels. `normalize` shifts each image (scale_each) or the batch to [0, 1] using
    `value_range` (min, max) or the data's min and max."""
    is_list = isinstance(tensor, list) and all(isinstance(t, ember.Tensor) for t in tensor)
    if not (isinstance(tensor, ember.Tensor) or is_list):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if "range" in kwargs:
        warnings.warn("The parameter 'range' is deprecated since 0.12 and will be removed in "
                      "0.14. Please use 'value_range' instead.")
        value_range = kwargs["range"]
    if is_list:
        tensor = ember.stack(tensor, dim=0)
    if tensor.dim() == 2:  # a single H×W image
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:  # a single C×H×W image
        if tensor.size(0) == 1:
            tensor = ember.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:  # single-channel images
        tensor = ember.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        tensor = tensor.clone()  # normalize in place without touching the caller's tensor
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max "
                            "are numbers")
        if scale_each is True:
            for t in tensor:  # each image on its own range
                _normalize_range_(t, value_range)
        else:
            _normalize_range_(tensor, value_range)

    if not isinstance(tensor, ember.Tensor):
        raise TypeError("tensor should be of type torch.Tensor")
    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding),
                           pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def _format_of(fp, format):
    if format is not None:
        return str(format).upper()
    name = fp if isinstance(fp, (str, bytes, os.PathLike)) else getattr(fp, "name", None)
    if name is None:
        return "PNG"
    ext = os.path.splitext(os.fsdecode(name))[1].lower()
    return {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG"}.get(ext, ext[1:].upper() or "PNG")


def save_image(tensor, fp, format=None, **kwargs):
    """Saves a batch or image (values in [0, 1]) as one image file: make_grid(tensor, **kwargs),
    scaled to uint8 with rounding. PNG and JPEG use ember's encoders; other formats need PIL.
    `fp` is a path or a writable binary file object; `format` overrides the file extension."""
    from ember.vision import io

    grid = make_grid(tensor, **kwargs)
    img = grid.mul(255).add_(0.5).clamp_(0, 255).to("cpu", ember.uint8)
    if img.dim() == 2:
        img = img.unsqueeze(0)
    fmt = _format_of(fp, format)
    if fmt == "PNG":
        data = io.encode_png(img)
    elif fmt in ("JPEG", "JPG"):
        data = io.encode_jpeg(img)
    else:
        try:
            from PIL import Image
        except ImportError:
            raise ValueError(f"save_image: format {fmt!r} needs PIL; PNG and JPEG work "
                             "without it") from None
        arr = img.permute(1, 2, 0).numpy()
        Image.fromarray(arr.squeeze(-1) if arr.shape[-1] == 1 else arr).save(fp, format=fmt)
        return
    if isinstance(fp, (str, bytes, os.PathLike)):
        io.write_file(fp, data)
    else:
        try:
            fp.write(data.numpy().tobytes())
        except (ImportError, RuntimeError):  # no NumPy
            fp.write(bytes(data.tolist()))
