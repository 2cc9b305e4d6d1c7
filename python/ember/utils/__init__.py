"""Utilities (torch.utils subset)."""

from ember.utils import checkpoint  # noqa: F401
from ember.utils import data  # noqa: F401,E402
