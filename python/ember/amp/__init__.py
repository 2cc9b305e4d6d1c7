"""ember.amp: automatic mixed precision (autocast regions and gradient scaling)."""

from ember.amp.autocast_mode import autocast, is_autocast_available  # noqa: F401
from ember.amp.grad_scaler import GradScaler  # noqa: F401
