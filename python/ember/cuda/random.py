"""torch.cuda's random-state functions on the CUDA default generators. Seeding without a GPU
does nothing (torch queues it until CUDA initialises, which never happens there)."""

from ember import _C
from ember.cuda._utils import device_index, require

_cuda = _C._cuda

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _generator(device):
    idx = device_index(device, optional=True)
    if idx < 0 or idx >= _cuda.device_count():
        raise RuntimeError(f"[cuda] invalid device index {idx} for "
                           f"{_cuda.device_count()} CUDA device(s)")
    return _cuda.default_generator(idx)


def get_rng_state(device="cuda"):
    """The state of `device`'s default generator, as a uint8 CPU tensor."""
    require("get_rng_state")
    return _generator(device).get_state()


def get_rng_state_all():
    """get_rng_state() of every device."""
    return [get_rng_state(i) for i in range(_cuda.device_count())]


def set_rng_state(new_state, device="cuda"):
    """Restores a state from get_rng_state()."""
    if not _cuda.is_available():
        return
    _generator(device).set_state(new_state.clone())


def set_rng_state_all(new_states):
    """set_rng_state() of every device, in order."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed):
    """Seeds the current device's default generator."""
    seed = int(seed)
    if _cuda.is_available():
        _cuda.manual_seed(seed)


def manual_seed_all(seed):
    """Seeds every device's default generator."""
    seed = int(seed)
    if _cuda.is_available():
        _cuda.manual_seed_all(seed)


def seed():
    """Seeds the current device's generator with a non-deterministic number."""
    if _cuda.is_available():
        _generator(None).seed()


def seed_all():
    """Seeds every device's generator with one non-deterministic number."""
    if _cuda.is_available():
        s = _generator(None).seed()
        manual_seed_all(s)


def initial_seed():
    """The current device's generator's seed."""
    require("initial_seed")
    return _generator(None).initial_seed()


def _default_generators():
    return tuple(_cuda.default_generator(i) for i in range(_cuda.device_count()))


