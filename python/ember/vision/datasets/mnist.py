"""MNIST-format datasets as torchvision.datasets (images come as uint8 H×W tensors where
torchvision gives PIL images; transforms.ToTensor turns them into float 1×H×W in [0, 1])."""

import os

import ember
from ember import _C
from ember.utils.data import Dataset

__all__ = ["MNIST", "FashionMNIST", "read_idx"]


def read_idx(path):
    """An IDX file (plain or gzip) as a tensor of its dims and type."""
    return _C._data.read_idx(os.fsdecode(path))


class MNIST(Dataset):
    """MNIST from `root`: the IDX files (plain or .gz) are looked up in root/<ClassName>/raw
    (torchvision's layout), root/<ClassName>, root/raw and root. `download` is not supported."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.fsdecode(root) if root is not None else ""
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        prefix = "train" if train else "t10k"
        folder = self._find(prefix)
        if folder is None:
            if download:
                raise RuntimeError(f"{type(self).__name__}: downloading is not supported; put "
                                   f"the IDX files in {self.raw_folder}")
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        images = read_idx(os.path.join(folder, self._name(folder, prefix + "-images-idx3-ubyte")))
        labels = read_idx(os.path.join(folder, self._name(folder, prefix + "-labels-idx1-ubyte")))
        if images.dim() != 3 or images.dtype != ember.uint8:
            raise RuntimeError(f"{type(self).__name__}: expected 3-D uint8 images in {folder}")
        if labels.dim() != 1 or labels.size(0) != images.size(0):
            raise RuntimeError(f"{type(self).__name__}: {images.size(0)} images but "
                               f"{labels.numel()} labels in {folder}")
        self.data = images
        self.targets = labels.to(ember.int64)

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    @staticmethod
    def _name(folder, base):
        return base if os.path.exists(os.path.join(folder, base)) else base + ".gz"

    def _find(self, prefix):
        name = type(self).__name__
        for folder in (self.raw_folder, os.path.join(self.root, name),
                       os.path.join(self.root, "raw"), self.root):
            ok = all(os.path.exists(os.path.join(folder, f"{prefix}-{kind}-ubyte")) or
                     os.path.exists(os.path.join(folder, f"{prefix}-{kind}-ubyte.gz"))
                     for kind in ("images-idx3", "labels-idx1"))
            if ok:
                return folder
        return None

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}", f"    {self.extra_repr()}"]
        if self.transform is not None:
            lines.append(f"    Transform: {self.transform!r}")
        return "\n".join(lines)


class FashionMNIST(MNIST):
    """Fashion-MNIST (same file format as MNIST)."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
