"""DistributedDataParallel (torch.nn.parallel.DistributedDataParallel).

Each process keeps a replica of the module and runs it on its own share of the batch. The
replicas start equal (rank 0's parameters and buffers are broadcast at construction) and stay
equal: during backward the C++ reducer averages the gradients across the process group, bucket
by bucket, while backward still runs (Note [Gradient buckets] in
include/ember/nn/parallel/distributed.h).
"""

from contextlib import contextmanager

import ember
from ember.distributed.algorithms.join import Join, Joinable, JoinHook
from ember.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]

# Cap of the bucket holding the first-registered parameters (the last bucket reduced after
# backward): small, so that little communication remains once backward ends. torch's
# dist._DEFAULT_FIRST_BUCKET_BYTES.
_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def _dist():
    import ember.distributed as dist
    if not dist.is_available():
        raise RuntimeError("DistributedDataParallel needs ember.distributed, which this build "
                           "does not have")
    return dist


def _find_tensors(obj):
    """The tensors in a forward result (nested lists, tuples and dicts)."""
    if isinstance(obj, ember.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


class _DDPJoinHook(JoinHook):
    """Shadows a DDP training step on a rank that ran out of inputs."""

    def __init__(self, ddp, divide_by_initial_world_size):
        if not isinstance(ddp, DistributedDataParallel):
            raise TypeError("DDP join hook requires passing in a DistributedDataParallel "
                            "instance as the state")
        self.ddp = ddp
        self.ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        ddp = self.ddp
        ddp._check_and_sync_module_buffers()
        should_sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        ddp.reducer._join_shadow_backward()

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    """Data parallelism across processes: wraps `module`; every rank calls forward and backward
    on its own inputs, and after backward every rank holds the gradients averaged over ranks.

    CPU modules only (device_ids and output_device must be None). Options as torch:
    broadcast_buffers (rank 0's buffers before each forward), process_group (default: the
    world), bucket_cap_mb, find_unused_parameters (parameters that forward did not use get
    zero gradients in the average, their own .grad untouched), gradient_as_bucket_view (.grad
    are views of the communication buckets), static_graph.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        Module.__init__(self)
        Joinable.__init__(self)
        dist = _dist()
        if not isinstance(module, Module):
            raise TypeError("DistributedDataParallel expects an nn.Module, got "
                            f"{type(module).__name__}")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        devices = {p.device.type for p in module.parameters()}
        if len(devices) > 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type "
                             f"of devices, but input module parameters locate in {devices}.")
        if device_ids or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules; ember runs DDP on CPU modules, which "
                f"take device_ids=None and output_device=None, but got device_ids {device_ids}, "
                f"output_device {output_device}")
        if bucket_cap_mb is None or bucket_cap_mb <= 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.device = ember.device("cpu")
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = False
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.process_group = process_group if process_group is not None \
            else dist.distributed_c10d._get_default_group()
        self._distributed_rank = self.process_group.rank()
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self.num_iterations = 0
        self._divide_by_initial_world_size = True
        self._comm_hook = None

        named = [(n, p) for n, p in module.named_parameters()
                 if p.requires_grad and n not in self.parameters_to_ignore]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._param_names = [n for n, _ in named]
        params = [p for _, p in named]
        ember._C._distributed._verify_params_across_processes(self.process_group, params)
        self._module_buffers = [b for n, b in module.named_buffers()
                                if n not in self.parameters_to_ignore]
        self._sync_module_states(0)
        self.reducer = ember._C._distributed.Reducer(
            params, self.process_group, bucket_cap_bytes=self.bucket_bytes_cap,
            first_bucket_bytes=getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES",
                                       _DEFAULT_FIRST_BUCKET_BYTES),
            find_unused_parameters=find_unused_parameters,
            gradient_as_bucket_view=gradient_as_bucket_view, static_graph=static_graph,
            param_names=self._param_names)
        self.static_graph = bool(static_graph)

    # -- construction helpers --

    def _sync_module_states(self, src):
        """Copies rank `src`'s (group rank) parameters and buffers to every rank."""
        tensors = [p for n, p in self.module.named_parameters()
                   if n not in self.parameters_to_ignore] + self._module_buffers
        ember._C._distributed._broadcast_coalesced(self.process_group, tensors, src)

    @staticmethod
    def _set_params_and_buffers_to_ignore_for_model(module, params_and_buffers_to_ignore):
        """Parameters and buffers (by name) that DDP neither broadcasts nor reduces."""
        module._ddp_params_and_buffers_to_ignore = list(params_and_buffers_to_ignore)

    # -- forward --

    def forward(self, *inputs, **kwargs):
        grad_sync = ember.is_grad_enabled() and self.require_backward_grad_sync
        if grad_sync:
            self.num_iterations += 1
        work = Join.notify_join_context(self)
        if work is not None:
            work.wait()
            active = int(work.result()[0].item())
            self.reducer._set_div_factor(self.process_group.size()
                                         if self._divide_by_initial_world_size else active)
        if self._check_sync_bufs_pre_fwd():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        output = self.module(*inputs, **kwargs)
        if grad_sync:
            self.require_forward_param_sync = True
            if self.find_unused_parameters and not self.static_graph:
                self.reducer.prepare_for_backward(_find_tensors(output))
            else:
                self.reducer.prepare_for_backward([])
        else:
            self.require_forward_param_sync = False
        return output

    def will_sync_module_buffers(self):
        return (self.require_forward_param_sync and self.broadcast_buffers
                and len(self._module_buffers) > 0)

    def _check_sync_bufs_pre_fwd(self):
        return self.will_sync_module_buffers() and self.process_group.size() > 1

    def _find_common_rank(self, input_rank, rank_cond):
        """The largest group rank among the ranks where `rank_cond` holds."""
        dist = _dist()
        t = ember.tensor([input_rank if rank_cond else -1], dtype=ember.int64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.process_group)
        rank = int(t.item())
        if rank == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process.")
        return rank

    def _sync_buffers(self):
        src = self._find_common_rank(self._distributed_rank, True) \
            if self._join_config.enable else 0
        ember._C._distributed._broadcast_coalesced(self.process_group, self._module_buffers,
                                                    src)

    def _check_and_sync_module_buffers(self):
        if self._check_sync_bufs_pre_fwd():
            src = self._find_common_rank(self._distributed_rank, False)
            ember._C._distributed._broadcast_coalesced(self.process_group,
                                                        self._module_buffers, src)

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        dist = _dist()
        t = ember.ones(1) if (not is_joined_rank and self.require_backward_grad_sync) \
            else ember.zeros(1)
        dist.all_reduce(t, group=self.process_group)
        return t.item() != 0

    def _sync_final_model(self, is_last_joiner):
        self._authoritative_rank = self._find_common_rank(self._distributed_rank,
                                                          is_last_joiner)
        self._sync_module_states(self._authoritative_rank)

    # -- gradient synchronisation control --

    @contextmanager
    def no_sync(self):
        """Backward passes inside only accumulate local gradients; the first synced backward
        after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """Reduces each bucket with `hook(state, bucket)`, which returns a Future of the
        averaged flat gradients (ember.futures.Future). The default hooks of
        ember.distributed.algorithms.ddp_comm_hooks.default_hooks run in C++."""
        from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
        if not callable(hook):
            raise TypeError(f"Communication hook must be callable, got {type(hook).__name__}")
        if self._comm_hook is not None or self.reducer._has_comm_hook:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once.")
        builtin = {default_hooks.allreduce_hook: "allreduce",
                   default_hooks.fp16_compress_hook: "fp16_compress",
                   default_hooks.bf16_compress_hook: "bf16_compress"}.get(hook)
        if builtin is not None:
            self.reducer._register_builtin_comm_hook(builtin, state)
        else:
            self.reducer.register_comm_hook(state, hook)
        self._comm_hook = hook

    def _register_builtin_comm_hook(self, comm_hook_type):
        """Registers a built-in hook by type (a DDPCommHookType or its name)."""
        name = getattr(comm_hook_type, "name", str(comm_hook_type)).lower()
        kinds = {"allreduce": "allreduce", "fp16_compress": "fp16_compress",
                 "bf16_compress": "bf16_compress"}
        if name not in kinds:
            raise ValueError(f"unknown built-in comm hook {comm_hook_type!r}")
        self.reducer._register_builtin_comm_hook(kinds[name], None)
        self._comm_hook = kinds[name]

    def _set_static_graph(self):
        """Declares the graph static (as the static_graph argument); before the first
        iteration only."""
        if self.static_graph:
            return
        raise RuntimeError("ember's DistributedDataParallel takes static_graph=True at "
                           "construction; _set_static_graph() after it is not supported")

    def _get_ddp_logging_data(self):
        """Counters of the reducer (ember's subset of torch's logging data)."""
        d = dict(self.reducer._stats())
        d.update(bucket_cap_bytes=self.bucket_bytes_cap,
                 find_unused_parameters=self.find_unused_parameters,
                 gradient_as_bucket_view=self.gradient_as_bucket_view,
                 static_graph=self.static_graph, world_size=self.process_group.size())
        return d

    # -- join (uneven inputs) --

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Context manager for uneven inputs: a rank whose inputs ran out shadows the
        collectives of the others until all ranks finished (torch's DDP.join)."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def extra_repr(self):
        return ""
