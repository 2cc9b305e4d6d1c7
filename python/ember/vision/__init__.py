"""ember.vision: torchvision's datasets and transforms for the supported subset."""

from ember.vision import datasets, transforms  # noqa: F401

__all__ = ["datasets", "transforms"]
