"""torchvision.transforms (0.14) classes over ember.vision.transforms.functional. Each works on
a tensor image (..., C, H, W) — one image or a batch — and, where torchvision does, on PIL
images. Random transforms draw one set of parameters per call from ember's default generator
through their get_params; the *_batch functions draw per image (C++ kernels, own generator)."""

import math
import numbers
import warnings
from collections.abc import Sequence

import ember
from ember import _C
from ember.vision.transforms import functional as F
from ember.vision.transforms.functional import InterpolationMode, _interp

__all__ = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize",
           "Resize", "CenterCrop", "Pad", "Lambda", "RandomCrop", "RandomHorizontalFlip",
           "RandomVerticalFlip", "RandomResizedCrop", "ColorJitter", "Grayscale",
           "RandomGrayscale", "RandomAffine", "RandomRotation", "GaussianBlur",
           "InterpolationMode", "random_crop_batch", "random_horizontal_flip_batch",
           "random_rotation_batch"]


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def _check_sequence_input(x, name, req_sizes):
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be sequence of length {msg}.")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _uniform(lo, hi):
    return float(ember.empty(1).uniform_(float(lo), float(hi)).item())


def _randint(hi):
    return int(ember.randint(0, hi, (1,)).item())


class Compose:
    """Applies the transforms in order."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class Lambda:
    """Applies a user function."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"


class ToTensor:
    """PIL image or H×W(×C) array (or tensor standing in for one) → C×H×W; uint8 becomes
    float32 in [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class PILToTensor:
    """PIL image → C×H×W tensor of the same dtype (needs PIL)."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class ToPILImage:
    """C×H×W tensor or H×W×C array → PIL image (needs PIL)."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{type(self).__name__}(mode={self.mode})"


class ConvertImageDtype:
    """Converts the dtype, rescaling as torchvision.transforms.ConvertImageDtype."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, image):
        return F.convert_image_dtype(image, self.dtype)

    def __repr__(self):
        return f"{type(self).__name__}(dtype={self.dtype})"


class Normalize:
    """(x - mean[c]) / std[c] over the channel dim (-3)."""

    def __init__(self, mean, std, inplace=False):
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def __call__(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Resize:
    """Resizes to `size` (h, w), or the smaller edge to an int `size` (see F.resize)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=None):
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = _interp(interpolation)
        self.antialias = antialias

    def __call__(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, interpolation="
                f"{self.interpolation.value}, max_size={self.max_size}, "
                f"antialias={self.antialias})")


class CenterCrop:
    def __init__(self, size):
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def __call__(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size})"


class Pad:
    def __init__(self, padding, fill=0, padding_mode="constant"):
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                             f"{len(padding)} element tuple")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def __call__(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return (f"{type(self).__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class RandomCrop:
    """Pads by `padding` (and to `size` when pad_if_needed), then crops a random window."""

    @staticmethod
    def get_params(img, output_size):
        """(top, left, height, width) of a uniformly random window of output_size."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = _randint(h - th + 1)
        j = _randint(w - tw + 1)
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = tuple(_setup_size(size, "Please provide only two dimensions (h, w) for "
                                            "size."))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def __call__(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        _, height, width = F.get_dimensions(img)
        if (i, j, h, w) == (0, 0, height, width):
            return img
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if float(ember.rand(1).item()) < self.p:
            return F.hflip(img)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomVerticalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if float(ember.rand(1).item()) < self.p:
            return F.vflip(img)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomResizedCrop:
    """A random window of random area (scale) and aspect ratio (ratio), resized to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=None):
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.interpolation = _interp(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        """(top, left, height, width): up to 10 tries of a random area and log-uniform aspect
        ratio, then a central crop clamped to the ratio range."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect = math.exp(_uniform(log_lo, log_hi))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                i = _randint(height - h + 1)
                j = _randint(width - w + 1)
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __call__(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, scale={tuple(self.scale)}, "
                f"ratio={tuple(self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


class ColorJitter:
    """Random brightness, contrast, saturation and hue changes, applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                     clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            if not bound[0] <= value[0] <= value[1] <= bound[1]:
                raise ValueError(f"{name} values should be between {bound}")
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if value[0] == value[1] == center:
            return None
        return value

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """(order of the four adjustments, brightness, contrast, saturation, hue factors)."""
        fn_idx = ember.randperm(4)
        b = None if brightness is None else _uniform(brightness[0], brightness[1])
        c = None if contrast is None else _uniform(contrast[0], contrast[1])
        s = None if saturation is None else _uniform(saturation[0], saturation[1])
        h = None if hue is None else _uniform(hue[0], hue[1])
        return fn_idx, b, c, s, h

    def __call__(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation,
                                             self.hue)
        for fn_id in fn_idx.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


class Grayscale:
    def __init__(self, num_output_channels=1):
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{type(self).__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale:
    def __init__(self, p=0.1):
        self.p = p

    def __call__(self, img):
        num_output_channels = F.get_dimensions(img)[0]
        if float(ember.rand(1).item()) < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomAffine:
    """A random rotation (degrees), translation (fractions of width/height), scale and shear
    about the centre, as torchvision.transforms.RandomAffine."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            for t in translate:
                if not 0.0 <= t <= 1.0:
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = None if shear is None else _setup_angle(shear, name="shear",
                                                              req_sizes=(2, 4))
        self.interpolation = _interp(interpolation)
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        """(angle, (tx, ty), scale, (shear_x, shear_y)) for an image of img_size [w, h]."""
        angle = _uniform(degrees[0], degrees[1])
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(_uniform(-max_dx, max_dx)))
            ty = int(round(_uniform(-max_dy, max_dy)))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        scale = 1.0 if scale_ranges is None else _uniform(scale_ranges[0], scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def __call__(self, img):
        fill = self.fill
        channels, height, width = F.get_dimensions(img)
        if isinstance(img, ember.Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else \
                [float(f) for f in fill]
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear,
                              [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill,
                        center=self.center)

    def __repr__(self):
        return (f"{type(self).__name__}(degrees={self.degrees}, translate={self.translate}, "
                f"scale={self.scale}, shear={self.shear}, "
                f"interpolation={self.interpolation.value}, fill={self.fill})")


class GaussianBlur:
    """Gaussian blur with a sigma drawn uniformly from (min, max) per call."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two "
                                                    "integers")
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        return _uniform(sigma_min, sigma_max)

    def __call__(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self):
        return f"{type(self).__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class RandomRotation:
    """Rotates by an angle uniform in [-degrees, degrees] (or [min, max]); nearest
    interpolation, zero fill, about the centre (torchvision's defaults, the only ones here)."""

    def __init__(self, degrees, interpolation=None, expand=False, center=None, fill=0):
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if expand or center is not None or fill not in (0, None):
            raise ValueError("RandomRotation: only expand=False, center=None and fill=0 are "
                             "supported")

    @staticmethod
    def get_params(degrees):
        return _uniform(degrees[0], degrees[1])

    def __call__(self, img):
        if not isinstance(img, ember.Tensor) or img.dim() < 2:
            raise TypeError(f"RandomRotation: img should be a Tensor image. Got {type(img)}")
        angle = self.get_params(self.degrees)
        squeeze = img.dim() == 2
        x = img.unsqueeze(0) if squeeze else img
        out = _C._data.rotate(x, angle)
        return out.squeeze(0) if squeeze else out

    def __repr__(self):
        return f"{type(self).__name__}(degrees={self.degrees})"


def random_crop_batch(images, size, padding=0, generator=None):
    """A random (zero-padded) crop per image of an N×C×H×W batch."""
    return _C._data.random_crop(images, list(_setup_size(size, "size")), padding, generator)


def random_horizontal_flip_batch(images, p=0.5, generator=None):
    """Mirrors each image of a batch with probability p."""
    return _C._data.random_horizontal_flip(images, p, generator)


def random_rotation_batch(images, degrees, generator=None):
    """Rotates each image of a batch by its own angle in [-degrees, degrees]."""
    return _C._data.random_rotation(images, degrees, generator)
