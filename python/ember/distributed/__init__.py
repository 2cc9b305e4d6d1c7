"""ember.distributed: process groups, collectives and stores with torch.distributed's names.

Collectives run on Gloo over TCP between processes of one machine. See distributed_c10d for
the front end; errors are DistError and its subclasses (all RuntimeErrors).
"""

from ember import _C


def is_available():
    """True when this build of ember has process groups."""
    return hasattr(_C, "_distributed") and hasattr(_C._distributed, "init_process_group")


if is_available():
    from ember.distributed.distributed_c10d import *  # noqa: F401,F403
    from ember.distributed.distributed_c10d import (  # noqa: F401
        _DEFAULT_FIRST_BUCKET_BYTES,
        _all_gather_base,
        _get_default_group,
        _get_default_store,
        _rank_not_in_group,
        _reduce_scatter_base,
        is_ucc_available,
    )
    # DistributedDataParallel's reducer, under torch.distributed's names.
    from ember._C._distributed import GradBucket, Reducer  # noqa: F401
else:
    def is_initialized():
        """False: this build has no process groups."""
        return False
