"""DatasetFolder and ImageFolder (torchvision.datasets.folder): one sub-folder per class."""

import os

from ember.vision.datasets.vision import VisionDataset

__all__ = ["DatasetFolder", "ImageFolder", "find_classes", "make_dataset",
           "has_file_allowed_extension", "is_image_file", "default_loader", "pil_loader",
           "ember_loader", "IMG_EXTENSIONS"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename, extensions):
    """Whether the name ends with one of `extensions` (case-insensitive)."""
    return filename.lower().endswith(extensions if isinstance(extensions, str)
                                     else tuple(extensions))


def is_image_file(filename):
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory):
    """The sorted sub-folder names of `directory` and their indices."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None):
    """(path, class index) for every accepted file below each class folder, in sorted order
    (links followed). Exactly one of `extensions` and `is_valid_file` must be given; a class
    with no file raises FileNotFoundError."""
    directory = os.path.expanduser(os.fsdecode(directory))
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the "
                         "same time")
    if extensions is not None:
        def is_valid_file(x):
            return has_file_allowed_extension(x, extensions)

    instances = []
    available = set()
    for target_class in sorted(class_to_idx.keys()):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_index))
                    available.add(target_class)
    empty = set(class_to_idx.keys()) - available
    if empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            exts = extensions if isinstance(extensions, str) else ", ".join(extensions)
            msg += f"Supported extensions are: {exts}"
        raise FileNotFoundError(msg)
    return instances


def pil_loader(path):
    """The file as an RGB PIL image (needs PIL)."""
    from PIL import Image
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


def ember_loader(path):
    """The file (PNG or JPEG) as a uint8 3×H×W RGB tensor, decoded by ember."""
    from ember.vision import io
    return io.read_image(path, io.ImageReadMode.RGB)


def _have_pil():
    try:
        import PIL.Image  # noqa: F401
        return True
    except ImportError:
        return False


def default_loader(path):
    """pil_loader when PIL is installed (as torchvision), otherwise ember_loader."""
    return pil_loader(path) if _have_pil() else ember_loader(path)


class DatasetFolder(VisionDataset):
    """Samples arranged as root/<class>/**/<file>; `loader(path)` reads one. `classes`,
    `class_to_idx`, `samples` [(path, class)] and `targets` as torchvision's."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx, extensions, is_valid_file)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None):
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions=extensions,
                            is_valid_file=is_valid_file)

    def find_classes(self, directory):
        return find_classes(directory)

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self):
        return len(self.samples)


class ImageFolder(DatasetFolder):
    """Images in root/<class>/**/<file> with an image extension; loaded with `loader`
    (default_loader: PIL RGB images when PIL is installed, else ember's uint8 RGB tensors)."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader,
                 is_valid_file=None):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file)
        self.imgs = self.samples
