"""torch.cpu.amp.autocast: torch.autocast("cpu", ...)."""

import ember.amp.autocast_mode as _mode


class autocast(_mode.autocast):
    """`torch.autocast("cpu", dtype=bfloat16, ...)`."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        import ember
        super().__init__("cpu", dtype=ember.bfloat16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)
