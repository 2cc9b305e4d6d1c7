"""ember.distributed.algorithms: the join context manager and DDP communication hooks."""

from ember.distributed.algorithms.join import Join, Joinable, JoinHook  # noqa: F401

__all__ = ["Join", "Joinable", "JoinHook"]
