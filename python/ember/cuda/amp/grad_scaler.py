"""torch.cuda.amp.GradScaler: ember.amp.GradScaler for the "cuda" device type."""

from ember.amp.grad_scaler import GradScaler as _GradScaler


class GradScaler(_GradScaler):
    """`ember.amp.GradScaler("cuda", ...)` with torch 1.13's signature (no device argument).

    ember's scaler works on the device of the tensors it scales, so it also runs (on CPU
    tensors) where CUDA is missing, where torch 1.13 would warn and disable itself.
    """

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
