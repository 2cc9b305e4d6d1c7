"""torch.cuda.amp.GradScaler: loss scaling for float16 training."""


class GradScaler:
    """Scales the loss so float16 gradients do not underflow; skips steps with inf/NaN."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("GradScaler is not available yet")
