"""CIFAR-10 and CIFAR-100 from their "python version" batch files (torchvision.datasets.CIFAR10
and CIFAR100). The batches are pickles, so they are read with a restricted unpickler that can
build only NumPy arrays and plain containers: a hostile file is refused, never run."""

import io as _io
import os
import pickle

from ember.vision.datasets.vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "load_batch"]


def _encode_latin1(text, encoding="utf-8", errors="strict"):
    # Protocol-2 pickles written by Python 3 store bytes as _codecs.encode(text, "latin1").
    if str(encoding).lower().replace("_", "-") not in ("latin1", "latin-1", "iso-8859-1"):
        raise pickle.UnpicklingError(f"CIFAR batch: refusing _codecs.encode with encoding "
                                     f"{encoding!r}")
    return text.encode("latin1", errors)


class _BatchUnpickler(pickle.Unpickler):
    """Resolves only the globals a pickled NumPy array needs."""

    def find_class(self, module, name):
        import numpy as np
        if module in ("numpy.core.multiarray", "numpy._core.multiarray") and \
                name == "_reconstruct":
            try:  # NumPy 2 moved the module; 1.x has only numpy.core
                from numpy._core.multiarray import _reconstruct
            except ImportError:
                from numpy.core.multiarray import _reconstruct
            return _reconstruct
        if module == "numpy" and name == "ndarray":
            return np.ndarray
        if module == "numpy" and name == "dtype":
            return np.dtype
        if module == "_codecs" and name == "encode":
            return _encode_latin1
        raise pickle.UnpicklingError(f"CIFAR batch: global '{module}.{name}' is not allowed "
                                     "(only NumPy arrays and plain containers may be loaded)")


def load_batch(path):
    """One CIFAR batch file (a pickled dict), loaded with the restricted unpickler."""
    with open(path, "rb") as f:
        data = f.read()
    return _BatchUnpickler(_io.BytesIO(data), encoding="latin1").load()


class CIFAR10(VisionDataset):
    """CIFAR-10 from root/cifar-10-batches-py (data_batch_1..5, test_batch, batches.meta).
    `data` is a uint8 N×32×32×3 NumPy array and `targets` a list of ints, as torchvision's.
    Items are PIL images when PIL is installed (as torchvision), else uint8 3×32×32 tensors.
    Nothing is downloaded, and the files' checksums are not verified."""

    base_folder = "cifar-10-batches-py"
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    labels_key = "labels"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        import numpy as np
        self.train = train
        folder = os.path.join(self.root, self.base_folder)
        files = self.train_list if train else self.test_list
        missing = [f for f in files + [self.meta["filename"]]
                   if not os.path.isfile(os.path.join(folder, f))]
        if missing:
            if download:
                raise RuntimeError(f"{type(self).__name__}: nothing is downloaded by ember; put "
                                   f"the python-version batches ({', '.join(missing)}) in "
                                   f"{folder} (root={self.root!r})")
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               f"download it (missing in {folder}: {', '.join(missing)})")
        data, targets = [], []
        for name in files:
            path = os.path.join(folder, name)
            entry = load_batch(path)
            if not isinstance(entry, dict) or "data" not in entry:
                raise RuntimeError(f"{type(self).__name__}: {path} is not a CIFAR batch (no "
                                   "'data' entry)")
            labels = entry.get("labels", entry.get("fine_labels"))
            arr = np.asarray(entry["data"])
            if arr.dtype != np.uint8 or arr.ndim != 2 or arr.shape[1] != 3 * 32 * 32 or \
                    labels is None or len(labels) != arr.shape[0]:
                raise RuntimeError(f"{type(self).__name__}: {path} holds data of shape "
                                   f"{arr.shape} and dtype {arr.dtype} with "
                                   f"{None if labels is None else len(labels)} labels; expected "
                                   "uint8 N×3072 and N labels")
            data.append(arr)
            targets.extend(int(t) for t in labels)
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self.targets = targets
        meta = load_batch(os.path.join(folder, self.meta["filename"]))
        if not isinstance(meta, dict) or self.meta["key"] not in meta:
            raise RuntimeError(f"{type(self).__name__}: the meta file has no "
                               f"'{self.meta['key']}' entry")
        self.classes = [c.decode("latin1") if isinstance(c, bytes) else str(c)
                        for c in meta[self.meta["key"]]]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        img, target = self.data[index], self.targets[index]
        try:
            from PIL import Image
            img = Image.fromarray(img)
        except ImportError:
            import ember
            img = ember.from_numpy(img.transpose(2, 0, 1).copy())
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100 from root/cifar-100-python (train, test, meta); targets are the fine labels."""

    base_folder = "cifar-100-python"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
