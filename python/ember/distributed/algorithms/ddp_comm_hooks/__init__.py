"""DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks): how each gradient
bucket is reduced. The hooks of default_hooks run in C++ when registered on a
DistributedDataParallel model."""

from enum import Enum
from functools import partial

from ember.distributed.algorithms.ddp_comm_hooks import default_hooks

__all__ = ["DDPCommHookType", "register_ddp_comm_hook", "default_hooks"]


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(Enum):
    """The built-in hooks; `DDPCommHookType.FP16_COMPRESS.value(model=m, state=pg)` registers
    one on model `m`."""

    ALLREDUCE = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Registers the hook `comm_hook_type` (a DDPCommHookType) on DDP `model`."""
    if not isinstance(comm_hook_type, DDPCommHookType):
        raise TypeError(f"comm_hook_type must be a DDPCommHookType, got {comm_hook_type!r}")
    comm_hook_type.value(model=model, state=state)
