"""The base class of the image datasets, as torchvision.datasets.VisionDataset."""

import os

from ember.utils.data import Dataset

__all__ = ["VisionDataset", "StandardTransform"]


class StandardTransform:
    """Applies `transform` to the input and `target_transform` to the target."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __repr__(self):
        body = [type(self).__name__]
        if self.transform is not None:
            body.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            body.append(f"Target transform: {self.target_transform!r}")
        return "\n".join(body)


class VisionDataset(Dataset):
    """A dataset under `root` with an optional joint `transforms(input, target)`, or separate
    `transform` and `target_transform` (not both kinds)."""

    _repr_indent = 4

    def __init__(self, root, transforms=None, transform=None, target_transform=None):
        if isinstance(root, (str, bytes, os.PathLike)):
            root = os.path.expanduser(os.fsdecode(root))
        self.root = root
        has_transforms = transforms is not None
        has_separate = transform is not None or target_transform is not None
        if has_transforms and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as "
                             "argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def extra_repr(self):
        return ""

    def __repr__(self):
        head = "Dataset " + type(self).__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body += [repr(self.transforms)]
        lines = [head] + [" " * self._repr_indent + line for line in body]
        return "\n".join(lines)
