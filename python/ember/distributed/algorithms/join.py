"""The generic join context manager for uneven inputs (torch.distributed.algorithms.join).

Ranks that run out of inputs leave the training loop and "join"; while any rank still trains,
each joined rank runs the main hooks of its Joinables once per iteration of the others, which
shadow the collectives of a training step (so nothing hangs). Once every rank joined, the post
hooks run (e.g. DDP copies the final model from one of the last ranks to join).

Protocol: in every iteration each non-joined rank's first Joinable calls
`Join.notify_join_context(self)` before its own collectives; this all-reduces a 1, which a
joined rank matches with a 0 to count the ranks still training.
"""

import warnings

import ember

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """The two entry points of a Joinable in the join context manager."""

    def main_hook(self):
        """Called while some rank has not joined: shadows one iteration's collectives."""

    def post_hook(self, is_last_joiner):
        """Called once all ranks joined; `is_last_joiner` is True on the last ranks to join."""


class _JoinConfig:
    __slots__ = ("enable", "throw_on_early_termination", "is_first_joinable")

    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(False, False, False)


class Joinable:
    """A class usable with Join: provides join_hook(), join_device and join_process_group."""

    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    def join_hook(self, **kwargs):
        """A JoinHook for this object (kwargs come from Join(..., **kwargs))."""
        raise NotImplementedError

    @property
    def join_device(self):
        """The device of the join context manager's own collectives."""
        raise NotImplementedError

    @property
    def join_process_group(self):
        """The process group of the join context manager's own collectives."""
        raise NotImplementedError


def _dist():
    import ember.distributed as dist
    return dist


class Join:
    """Context manager running the join hooks of `joinables` after this rank's inputs ran out.

    `enable=False` turns it into a no-op; with `throw_on_early_termination=True`, all ranks
    raise RuntimeError as soon as one rank runs out of inputs. Extra keyword arguments go to
    every joinable's join_hook().
    """

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        joinables = list(joinables)
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        for j in joinables:
            if not isinstance(j, Joinable):
                raise TypeError(f"Join expects Joinable objects, got {type(j).__name__}")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        first = True
        for j in joinables:
            j._join_config = _JoinConfig(enable, throw_on_early_termination, first)
            first = False
        self._process_group = None
        self._device = None
        for j in joinables:
            pg = j.join_process_group
            if self._process_group is None:
                self._process_group = pg
            elif pg is not self._process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if self._device is None:
                self._device = j.join_device
        self._rank = _dist().get_rank(self._process_group)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if not self._enable or exc_type is not None:
                return False  # an exception propagates as is
            dist = _dist()
            all_joined = False
            is_last_joiner = True
            i = 0
            while not all_joined:
                if i > 1000:
                    warnings.warn(
                        f"Detected uneven input skew of greater than 1000. This means that rank "
                        f"{self._rank} has at least 1000 fewer inputs than other currently-active "
                        f"ranks. This level of skew could lead to performance degradation during "
                        f"training.")
                count = ember.zeros(1)
                dist.all_reduce(count, group=self._process_group)
                if count.item() == 0:
                    all_joined = True
                else:
                    if self._throw_on_early_termination:
                        self._notify_procs_to_terminate()
                    for hook in self._join_hooks:
                        hook.main_hook()
                    is_last_joiner = False
                    i += 1
            for hook in self._join_hooks:
                hook.post_hook(is_last_joiner)
            return False
        finally:
            for j in self._joinables:
                j._join_config = _JoinConfig.construct_disabled_join_config()

    def _notify_procs_to_terminate(self):
        ones = ember.ones(1)
        _dist().all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by a Joinable each iteration before its collectives: returns the Work of the
        all-reduce that counts the ranks still training (None when this joinable is not the
        first one of an enabled join context)."""
        if not hasattr(joinable, "_join_config"):
            raise RuntimeError(f"Check that the {type(joinable)} constructor calls the "
                               "``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        dist = _dist()
        pg = joinable.join_process_group
        ones = ember.ones(1)
        work = dist.all_reduce(ones, group=pg, async_op=True)
        if config.throw_on_early_termination:
            zeros = ember.zeros(1)
            dist.all_reduce(zeros, group=pg)
            if zeros.item():
                raise RuntimeError(
                    "Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
