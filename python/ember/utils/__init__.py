"""Utilities (torch.utils subset)."""

from ember.utils import checkpoint  # noqa: F401
