"""torchvision.datasets for the supported subset: MNIST, FashionMNIST, CIFAR10, CIFAR100,
FakeData, DatasetFolder and ImageFolder. Nothing is downloaded."""

from ember.vision.datasets.cifar import CIFAR10, CIFAR100
from ember.vision.datasets.fakedata import FakeData
from ember.vision.datasets.folder import DatasetFolder, ImageFolder
from ember.vision.datasets.mnist import MNIST, FashionMNIST, read_idx
from ember.vision.datasets.vision import VisionDataset
from ember.vision.datasets import folder  # noqa: F401

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "FakeData", "DatasetFolder",
           "ImageFolder", "VisionDataset", "read_idx"]
