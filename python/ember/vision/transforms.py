"""torchvision.transforms for tensors: one image (C×H×W) or a batch (N×C×H×W). As in
torchvision, a random transform draws one set of parameters per call from ember's default
generator; the *_batch functions draw per image (fast C++ kernels) and take a generator."""

import numbers

import ember
from ember import _C

__all__ = ["Compose", "ToTensor", "Normalize", "RandomCrop", "RandomHorizontalFlip",
           "RandomRotation", "ConvertImageDtype", "Lambda", "random_crop_batch",
           "random_horizontal_flip_batch", "random_rotation_batch"]


def _pair(size, name):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"{name} should be an int or a sequence of one or two ints")


def _check_image(img, name):
    if not isinstance(img, ember.Tensor):
        raise TypeError(f"{name}: img should be a Tensor. Got {type(img)}")
    if img.dim() < 2:
        raise TypeError(f"{name}: tensor is not a torch image (expected at least 2 dims)")


class Compose:
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
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class ToTensor:
    """uint8 H×W or H×W×C (a tensor or a NumPy array, the stand-ins for PIL images) → float32
    C×H×W in [0, 1]; other arrays become tensors with H×W×C moved to C×H×W."""

    def __call__(self, pic):
        t = pic if isinstance(pic, ember.Tensor) else ember.as_tensor(pic)
        if t.dim() == 2:
            t = t.unsqueeze(-1)
        if t.dim() != 3:
            raise ValueError(f"pic should be 2 or 3 dimensional. Got {t.dim()} dimensions.")
        t = t.permute(2, 0, 1).contiguous()
        if t.dtype == ember.uint8:
            return t.to(ember.float32).div(255)
        return t

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """(x - mean[c]) / std[c] over the channel dim (-3)."""

    def __init__(self, mean, std, inplace=False):
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def __call__(self, tensor):
        _check_image(tensor, "Normalize")
        if not tensor.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.dim() < 3:
            raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                             f"tensor.size() = {tuple(tensor.shape)}")
        mean = ember.as_tensor(self.mean, dtype=tensor.dtype)
        std = ember.as_tensor(self.std, dtype=tensor.dtype)
        if bool((std == 0).any()):
            raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, "
                             "leading to division by zero.")
        if mean.dim() == 1:
            mean = mean.view(-1, 1, 1)
        if std.dim() == 1:
            std = std.view(-1, 1, 1)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return tensor.sub(mean).div(std)

    def __repr__(self):
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class RandomCrop:
    """Pads (constant `fill`) by `padding`, then crops a random window of `size`."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = _pair(size, "size")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        if padding_mode != "constant":
            raise ValueError("RandomCrop: only padding_mode='constant' is supported")
        self.padding_mode = padding_mode

    def _pad(self, img, left, top, right, bottom):
        return ember.nn.functional.pad(img, (left, right, top, bottom), value=float(self.fill))

    def __call__(self, img):
        _check_image(img, "RandomCrop")
        if self.padding is not None:
            p = self.padding
            if isinstance(p, numbers.Number):
                p = (p, p, p, p)
            elif len(p) == 2:
                p = (p[0], p[1], p[0], p[1])
            img = self._pad(img, *p)
        h, w = img.shape[-2], img.shape[-1]
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = self._pad(img, tw - w, 0, tw - w, 0)
        if self.pad_if_needed and h < th:
            img = self._pad(img, 0, th - h, 0, th - h)
        h, w = img.shape[-2], img.shape[-1]
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if w == tw and h == th:
            return img
        i = int(ember.randint(0, h - th + 1, (1,)).item())
        j = int(ember.randint(0, w - tw + 1, (1,)).item())
        return img[..., i:i + th, j:j + tw]

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        _check_image(img, "RandomHorizontalFlip")
        if float(ember.rand(1).item()) < self.p:
            return img.flip(-1)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomRotation:
    """Rotates by an angle uniform in [-degrees, degrees] (or [min, max]); nearest
    interpolation, zero fill, about the centre (torchvision's defaults, the only ones here)."""

    def __init__(self, degrees, interpolation=None, expand=False, center=None, fill=0):
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError("If degrees is a single number, it must be positive.")
            degrees = (-float(degrees), float(degrees))
        elif len(degrees) != 2:
            raise ValueError("If degrees is a sequence, it must be of len 2.")
        self.degrees = [float(d) for d in degrees]
        if expand or center is not None or fill not in (0, None):
            raise ValueError("RandomRotation: only expand=False, center=None and fill=0 are "
                             "supported")

    def __call__(self, img):
        _check_image(img, "RandomRotation")
        lo, hi = self.degrees
        angle = lo + (hi - lo) * float(ember.rand(1, dtype=ember.float64).item())
        squeeze = img.dim() == 2
        x = img.unsqueeze(0) if squeeze else img
        out = _C._data.rotate(x, angle)
        return out.squeeze(0) if squeeze else out

    def __repr__(self):
        return f"{type(self).__name__}(degrees={self.degrees})"


class ConvertImageDtype:
    """Converts the dtype, rescaling as torchvision.transforms.ConvertImageDtype."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, image):
        return _C._data.convert_image_dtype(image, self.dtype)

    def __repr__(self):
        return f"{type(self).__name__}(dtype={self.dtype})"


def random_crop_batch(images, size, padding=0, generator=None):
    """A random (zero-padded) crop per image of an N×C×H×W batch."""
    return _C._data.random_crop(images, list(_pair(size, "size")), padding, generator)


def random_horizontal_flip_batch(images, p=0.5, generator=None):
    """Mirrors each image of a batch with probability p."""
    return _C._data.random_horizontal_flip(images, p, generator)


def random_rotation_batch(images, degrees, generator=None):
    """Rotates each image of a batch by its own angle in [-degrees, degrees]."""
    return _C._data.random_rotation(images, degrees, generator)
