"""torch.autocast: a context manager and decorator that opens an autocast region."""


def is_autocast_available(device_type):
    """Whether autocast supports `device_type` ("cpu" or "cuda")."""
    return device_type in ("cpu", "cuda")


class autocast:
    """Runs the ops of its region in mixed precision (see the op lists of the op list)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        raise NotImplementedError("autocast is not available yet")
