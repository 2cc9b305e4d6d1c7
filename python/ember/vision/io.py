"""torchvision.io (0.14) for images: PNG and JPEG codecs on 1-D uint8 tensors of file bytes,
backed by libpng and libjpeg in C++ (ember._C._vision). Errors from corrupt, truncated or
unsupported files are RuntimeErrors, as torchvision's."""

import os
from enum import Enum

import ember
from ember import _C

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_png", "encode_png", "write_png",
           "decode_jpeg", "encode_jpeg", "write_jpeg", "decode_image", "read_image"]


class ImageReadMode(Enum):
    """How decoded pixels are converted: UNCHANGED keeps the file's channels; GRAY, GRAY_ALPHA,
    RGB and RGB_ALPHA give 1, 2, 3 or 4 channels (a missing alpha channel becomes 255)."""

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4


def _mode(mode):
    if isinstance(mode, Enum):  # torchvision's own ImageReadMode works as well
        return int(mode.value)
    if isinstance(mode, int) and not isinstance(mode, bool):
        return mode
    raise TypeError(f"mode should be an ImageReadMode, got {type(mode).__name__}")


def _bytes(input):
    if isinstance(input, (bytes, bytearray, memoryview)):
        import numpy as np  # only for the bytes → tensor convenience
        return ember.from_numpy(np.frombuffer(bytes(input), dtype=np.uint8).copy())
    if not isinstance(input, ember.Tensor):
        raise TypeError(f"input should be a 1-D uint8 Tensor, got {type(input).__name__}")
    return input


def read_file(path):
    """The bytes of a file as a 1-D uint8 tensor."""
    return _C._vision.read_file(os.fsdecode(path))


def write_file(filename, data):
    """Writes a 1-D uint8 tensor to a file (atomically: under a temporary name, then renamed)."""
    _C._vision.write_file(os.fsdecode(filename), data)


def decode_png(input, mode=ImageReadMode.UNCHANGED):
    """PNG bytes → uint8 C×H×W. Palette images expand to RGB (RGBA with transparency); 16-bit
    images raise RuntimeError, as in torchvision 0.14 (see _read_png_16)."""
    return _C._vision.decode_png(_bytes(input), _mode(mode), False)


def _decode_png_16(input, mode=ImageReadMode.UNCHANGED):
    """PNG bytes → int32 C×H×W, keeping 16-bit samples (values in [0, 65535])."""
    return _C._vision.decode_png(_bytes(input), _mode(mode), True)


def _read_png_16(path, mode=ImageReadMode.UNCHANGED):
    """torchvision's private 16-bit reader: int32 samples of a 16-bit (or 8-bit) PNG file."""
    return _decode_png_16(read_file(path), mode)


def encode_png(input, compression_level=6):
    """A uint8 C×H×W tensor (C 1–4; torchvision accepts 1 or 3) → 1-D uint8 PNG bytes."""
    return _C._vision.encode_png(input, int(compression_level))


def write_png(input, filename, compression_level=6):
    """encode_png then write_file."""
    write_file(filename, encode_png(input, compression_level))


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu"):
    """JPEG bytes → uint8 C×H×W (1 gray, 3 RGB, 4 CMYK). Modes UNCHANGED, GRAY and RGB."""
    if ember.device(device).type != "cpu":
        raise NotImplementedError("decode_jpeg: only device='cpu' is supported; move the "
                                  "decoded tensor with .to(device)")
    return _C._vision.decode_jpeg(_bytes(input), _mode(mode))


def encode_jpeg(input, quality=75):
    """A uint8 C×H×W tensor (C 1 or 3) → 1-D uint8 JPEG bytes of quality 1–100."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    return _C._vision.encode_jpeg(input, int(quality))


def write_jpeg(input, filename, quality=75):
    """encode_jpeg then write_file."""
    write_file(filename, encode_jpeg(input, quality))


def decode_image(input, mode=ImageReadMode.UNCHANGED):
    """PNG or JPEG bytes (chosen by the signature) → uint8 C×H×W."""
    return _C._vision.decode_image(_bytes(input), _mode(mode))


def read_image(path, mode=ImageReadMode.UNCHANGED):
    """A PNG or JPEG file → uint8 C×H×W."""
    return decode_image(read_file(path), mode)
