"""ember.cuda.amp: autocast for CUDA (float16 by default) and GradScaler."""

from ember.cuda.amp.autocast_mode import autocast  # noqa: F401
from ember.cuda.amp.grad_scaler import GradScaler  # noqa: F401
