"""ember.distributed: not built yet. `is_available()` is False, as in a PyTorch build without
distributed support, so scripts that check it before using process groups take their
single-process path."""


def is_available():
    """False: this build of ember has no process groups."""
    return False


def is_initialized():
    """False: no process group can be initialised."""
    return False
