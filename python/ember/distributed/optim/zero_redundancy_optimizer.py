"""ZeroRedundancyOptimizer (torch.distributed.optim.ZeroRedundancyOptimizer, PyTorch 1.10's
API): optimizer state sharded across the ranks of a process group (ZeRO stage 1).

Every rank holds all parameters and all gradients (as with DistributedDataParallel), but each
parameter is owned by one rank and only its owner keeps the optimizer state for it and updates
it. `step()` runs the local optimizer on the rank's shard, then every owner broadcasts its
updated parameters to the others, so all ranks end the step with the same parameters as one
optimizer over all of them would give.

Note [ZeRO partition]: the parameters of each group, largest first (a stable sort by numel),
go one by one to the rank with the fewest elements so far (the lowest rank on a tie); the
element counts carry over from group to group. The partition only depends on the parameter
shapes and their order, so every rank computes the same one without communicating, and
adding a group later leaves the earlier groups' owners unchanged.
"""

import ember
from ember import Tensor
from ember.optim.optimizer import Optimizer, _copy_state

__all__ = ["ZeroRedundancyOptimizer"]


def _dist():
    import ember.distributed as dist
    return dist


def _global_rank(group, group_rank):
    """The global rank of `group_rank` in `group` (None: the default group)."""
    dist = _dist()
    if group is None or group is getattr(getattr(dist, "group", None), "WORLD", None):
        return group_rank
    return dist.get_process_group_ranks(group)[group_rank]


class ZeroRedundancyOptimizer(Optimizer):
    """Wraps `optimizer_class` so each rank keeps the state of its shard of the parameters only.

    Args:
        params: tensors or parameter groups (dicts), as for any optimizer.
        optimizer_class: the local optimizer's class (e.g. ember.optim.Adam).
        process_group: the ranks sharing the state (default: the default group).
        parameters_as_bucket_view: keep each rank's parameters in one flat buffer (the
            parameters become views of it) and broadcast one buffer per rank.
        overlap_with_ddp: not supported (raises NotImplementedError).
        **defaults: the local optimizer's options (lr=..., ...).
    """

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer: overlap_with_ddp=True (running the step inside a DDP "
                "communication hook) is not supported by ember; construct it with "
                "overlap_with_ddp=False and call step() after backward")
        params = self._check_params(params)
        self._initialized = False
        self._partition_cache = []
        Optimizer.__init__(self, params, defaults)
        dist = _dist()
        self.process_group = process_group
        self.world_size = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self.global_rank = _global_rank(process_group, self.rank)
        self._optimizer_class = optimizer_class
        self._optim_defaults = defaults
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        # The local optimizer filled in its defaults (betas, eps, ...): show them globally too.
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._buckets = []
        self._build_param_buckets()
        self._all_state_dicts = []
        self._initialized = True

    @staticmethod
    def _check_params(params):
        if isinstance(params, Tensor):
            raise TypeError("`params` argument should be an iterable of Tensors, but got "
                            "ember.Tensor")
        try:
            params = list(params)
        except TypeError:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts, but "
                            f"got {type(params).__name__}") from None
        if not params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if not (all(isinstance(p, Tensor) for p in params)
                or all(isinstance(p, dict) for p in params)):
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        for group in params:
            if isinstance(group, dict) and "params" not in group:
                raise ValueError("Each parameter group passed-in via `params` must have a "
                                 "'params' key mapping to the parameters in the group")
        return params

    # -- partition ----------------------------------------------------------------------------

    def _partition_parameters(self):
        """Per rank, its parameter groups: each global group's options with the parameters of
        that group the rank owns (Note [ZeRO partition])."""
        if not self._partition_cache:
            per_rank = [[] for _ in range(self.world_size)]
            load = [0] * self.world_size
            for group in self.param_groups:
                owned = [[] for _ in range(self.world_size)]
                for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    r = load.index(min(load))
                    owned[r].append(p)
                    load[r] += p.numel()
                for r in range(self.world_size):
                    shard = dict(group)
                    shard["params"] = owned[r]
                    per_rank[r].append(shard)
            self._partition_cache = per_rank
        return self._partition_cache

    def _owner(self):
        """id(param) -> the group rank owning it."""
        return {id(p): r for r, groups in enumerate(self._partition_parameters())
                for g in groups for p in g["params"]}

    def _index_to_param(self):
        return [p for g in self.param_groups for p in g["params"]]

    def _param_to_index(self):
        return {id(p): i for i, p in enumerate(self._index_to_param())}

    # -- parameter synchronisation ------------------------------------------------------------

    def _build_param_buckets(self):
        """With parameters_as_bucket_view, one flat buffer per rank holding its parameters (in
        partition order); the parameters' data become views of it."""
        self._buckets = []
        if not self.parameters_as_bucket_view:
            return
        with ember.no_grad():
            for groups in self._partition_parameters():
                params = [p for g in groups for p in g["params"]]
                if not params:
                    self._buckets.append(None)
                    continue
                dtype = params[0].dtype
                bucket = ember.empty(sum(p.numel() for p in params), dtype=dtype)
                offset = 0
                for p in params:
                    n = p.numel()
                    bucket[offset:offset + n].copy_(p.detach().reshape(-1))
                    p.data = bucket[offset:offset + n].view_as(p)
                    offset += n
                self._buckets.append(bucket)

    def _sync_params(self):
        """Every owner broadcasts its (updated) parameters to the other ranks."""
        dist = _dist()
        works = []
        with ember.no_grad():
            for r, groups in enumerate(self._partition_parameters()):
                src = _global_rank(self.process_group, r)
                if self.parameters_as_bucket_view:
                    tensors = [self._buckets[r]] if self._buckets[r] is not None else []
                else:
                    tensors = [p.detach() for g in groups for p in g["params"]]
                for t in tensors:
                    works.append(dist.broadcast(t, src=src, group=self.process_group,
                                                async_op=True))
        for w in works:
            w.wait()

    @staticmethod
    def _sync_param_groups(src_groups, dst_groups):
        """Copies every option but "params" from `src_groups` to `dst_groups` (same length)."""
        if len(src_groups) != len(dst_groups):
            raise ValueError("ZeroRedundancyOptimizer: mismatch between the number of parameter "
                             f"groups ({len(src_groups)} vs {len(dst_groups)})")
        for src, dst in zip(src_groups, dst_groups):
            for k, v in src.items():
                if k != "params":
                    dst[k] = v

    # -- the optimizer API --------------------------------------------------------------------

    def add_param_group(self, param_group):
        """Adds a group (call it on every rank): its parameters are partitioned after the
        existing ones, whose owners do not change."""
        super().add_param_group(param_group)
        if self._initialized:
            self._partition_cache = []
            groups = self._partition_parameters()[self.rank]
            self.optim.add_param_group(groups[-1])
            self._sync_param_groups(self.optim.param_groups, self.param_groups)
            if self.parameters_as_bucket_view:
                self._build_param_buckets()

    def step(self, closure=None, **kwargs):
        """Runs the local optimizer on this rank's shard, then broadcasts the parameters from
        their owners. Returns the closure's loss, if one is given."""
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        if closure is not None:
            loss = self.optim.step(closure=closure, **kwargs)
        else:
            loss = self.optim.step(**kwargs)
        self._sync_params()
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        return loss

    def consolidate_state_dict(self, to=0):
        """Gathers every rank's shard of the state on group rank `to` (call on every rank);
        `state_dict()` on that rank then returns the whole state."""
        dist = _dist()
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        local = self.optim.state_dict()
        gathered = [None] * self.world_size if self.rank == to else None
        dist.gather_object(local, gathered, dst=_global_rank(self.process_group, to),
                           group=self.process_group)
        self._all_state_dicts = list(gathered) if self.rank == to else []

    def state_dict(self):
        """The whole optimizer state as one optimizer over all parameters would give (global
        parameter indices), as last consolidated on this rank."""
        if not self._all_state_dicts:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you meant "
                "to save the global state.")
        result = Optimizer.state_dict(self)
        index = self._param_to_index()
        state = {}
        for r, local in enumerate(self._all_state_dicts):
            shards = self._partition_parameters()[r]
            local_groups = local["param_groups"]
            if len(local_groups) != len(shards):
                raise RuntimeError("ZeroRedundancyOptimizer: the consolidated state of rank "
                                   f"{r} has {len(local_groups)} parameter groups, expected "
                                   f"{len(shards)}")
            for local_group, shard in zip(local_groups, shards):
                for local_index, p in zip(local_group["params"], shard["params"]):
                    if local_index in local["state"]:
                        state[index[id(p)]] = local["state"][local_index]
        result["state"] = dict(sorted(state.items()))
        return result

    def load_state_dict(self, state_dict):
        """Loads a state from `state_dict()`: each rank keeps the entries of the parameters it
        owns; the options of every group are restored."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        params = self._index_to_param()
        owner = self._owner()
        for i, value in state_dict["state"].items():
            p = params[i]
            if owner[id(p)] == self.rank:
                value = _copy_state(value)
                for k, v in value.items():
                    if (isinstance(v, Tensor) and k != "step" and v.is_floating_point()
                            and p.is_floating_point()):
                        value[k] = v.to(p.dtype)
                self.optim.state[p] = value
        self._sync_param_groups(groups, self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
