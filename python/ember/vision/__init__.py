"""ember.vision: torchvision's io, utils, models, datasets and transforms for the supported
subset (`import ember.vision as torchvision`)."""

from ember.vision import datasets, io, models, transforms, utils  # noqa: F401

__version__ = "0.14.0"

__all__ = ["datasets", "io", "models", "transforms", "utils"]
