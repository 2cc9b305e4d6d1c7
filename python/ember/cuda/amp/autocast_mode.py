"""torch.cuda.amp.autocast: torch.autocast("cuda", ...)."""

import ember.amp.autocast_mode as _mode


class autocast(_mode.autocast):
    """`torch.autocast("cuda", dtype=float16, ...)`."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        import ember
        super().__init__("cuda", dtype=ember.float16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)
