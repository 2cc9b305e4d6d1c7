"""ember.amp: automatic mixed precision (autocast regions and gradient scaling)."""

import ember as _ember
from ember import _C
from ember.amp.autocast_mode import autocast, is_autocast_available  # noqa: F401
from ember.amp.grad_scaler import GradScaler  # noqa: F401

# torch._amp_foreach_non_finite_check_and_unscale_ and torch._amp_update_scale_
# (`from ember._C import *` skips names with a leading underscore).
_ember._amp_foreach_non_finite_check_and_unscale_ = _C._amp_foreach_non_finite_check_and_unscale_
_ember._amp_update_scale_ = _C._amp_update_scale_
