"""torch.distributed's front end (distributed_c10d) over ember::distributed.

Ranks given to the functions (`src`, `dst`, `peer`) are global ranks, as in PyTorch. Collectives
on a rank that is not a member of `group` warn and return None (get_rank/get_world_size: -1).
Objects of the object collectives are pickled here and travel as byte strings.
"""

import os
import pickle
import warnings
from datetime import timedelta

import ember
from ember import _C

_d = _C._distributed

ReduceOp = _d.ReduceOp
DebugLevel = _d.DebugLevel
Store = _d.Store
TCPStore = _d.TCPStore
FileStore = _d.FileStore
HashStore = _d.HashStore
PrefixStore = _d.PrefixStore
ProcessGroup = _d.ProcessGroup
Work = _d.Work
DistError = _d.DistError
DistBackendError = _d.DistBackendError
DistStoreError = _d.DistStoreError
DistNetworkError = _d.DistNetworkError

default_pg_timeout = timedelta(minutes=30)
# DistributedDataParallel's cap on the bucket of the first-registered parameters (torch's
# dist._DEFAULT_FIRST_BUCKET_BYTES).
_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024

__all__ = [
    "Backend", "DebugLevel", "DistBackendError", "DistError", "DistNetworkError",
    "DistStoreError", "FileStore", "GroupMember", "HashStore", "P2POp", "PrefixStore",
    "ProcessGroup", "ReduceOp", "Store", "TCPStore", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "default_pg_timeout", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_debug_level", "get_global_rank", "get_group_rank", "get_process_group_ranks",
    "get_rank", "get_world_size", "group", "init_process_group", "irecv", "is_gloo_available",
    "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
    "isend", "monitored_barrier", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send", "set_debug_level",
    "set_debug_level_from_env",
]


class Backend(str):
    """The backend names: `Backend("GLOO")` is "gloo"; ValueError for an unknown name."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        value = name.lower()
        if value not in (Backend.GLOO, Backend.NCCL, Backend.UCC, Backend.MPI):
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)


class _NonGroupMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class _WorldMeta(type):
    """`group.WORLD` / `GroupMember.WORLD`: the default group, None before init."""

    @property
    def WORLD(cls):  # noqa: N802 - torch's name
        return _d.default_group() if _d.is_initialized() else None


class group(metaclass=_WorldMeta):  # noqa: N801 - torch's name
    """`group.WORLD` is the default process group."""


class GroupMember(metaclass=_WorldMeta):
    """`GroupMember.WORLD` (the default group) and `NON_GROUP_MEMBER` (what new_group returns
    on ranks outside the new group)."""

    NON_GROUP_MEMBER = _NonGroupMember()


# ---- availability, environment ----

def is_gloo_available():
    return _d.is_backend_available("gloo")


def is_nccl_available():
    return _d.is_backend_available("nccl")


def is_mpi_available():
    return _d.is_backend_available("mpi")


def is_ucc_available():
    return False


def is_torchelastic_launched():
    """True when started by a torchelastic-style launcher (TORCHELASTIC_RUN_ID is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_debug_level():
    return _d.get_debug_level()


def set_debug_level(level):
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level expects a DebugLevel, got {type(level).__name__}")
    _d.set_debug_level(level)


def set_debug_level_from_env():
    """Reads EMBER_DISTRIBUTED_DEBUG (or TORCH_DISTRIBUTED_DEBUG): OFF, INFO or DETAIL."""
    value = os.environ.get("EMBER_DISTRIBUTED_DEBUG") or os.environ.get("TORCH_DISTRIBUTED_DEBUG")
    value = (value or "OFF").upper()
    if value not in ("OFF", "INFO", "DETAIL"):
        raise ValueError(f"The value of EMBER_DISTRIBUTED_DEBUG / TORCH_DISTRIBUTED_DEBUG must "
                         f"be OFF, INFO or DETAIL, got {value!r}")
    _d.set_debug_level(getattr(DebugLevel, value))


# ---- groups ----

def is_initialized():
    """True once init_process_group created the default group."""
    return _d.is_initialized()


def _require_init():
    if not _d.is_initialized():
        raise RuntimeError("Default process group has not been initialized, please make sure to "
                           "call init_process_group.")


def _get_default_group():
    _require_init()
    return _d.default_group()


def _get_default_store():
    _require_init()
    return _d.default_store()


def _rank_not_in_group(group):
    return group is GroupMember.NON_GROUP_MEMBER


def _pg(group):
    """The C++ group argument: None for the default group (which must exist)."""
    if group is None:
        _require_init()
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, got {type(group).__name__}")
    return group


def _warn_not_in_group(op_name):
    rank = _d.get_rank() if _d.is_initialized() else -1
    warnings.warn(f"Running {op_name} on global rank {rank} which does not belong to the given "
                  f"group.")


def _check_timeout(timeout, name="timeout"):
    if not isinstance(timeout, timedelta):
        raise RuntimeError(f"Expected {name} argument to be of type datetime.timedelta, got "
                           f"{type(timeout).__name__}")


def _parse_backend(backend, fn):
    if backend is None:
        return Backend.GLOO
    if not isinstance(backend, str):
        raise ValueError(f"Backend name must be a string, but got: {backend}")
    name = backend.lower()
    # "cpu:gloo,cuda:nccl": tensors here are on the CPU, so the CPU entry decides.
    if ":" in name:
        parts = dict(p.split(":", 1) for p in name.split(",") if ":" in p)
        if "cpu" not in parts:
            raise ValueError(f"[{fn}] backend {backend!r} names no CPU backend")
        name = parts["cpu"]
    name = Backend(name)
    if name != Backend.GLOO and not _d.is_backend_available(name):
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in "
                           f"(this build of ember has: gloo)")
    return name


def init_process_group(backend=None, init_method=None, timeout=default_pg_timeout,
                       world_size=-1, rank=-1, store=None, group_name="", pg_options=None):
    """Creates the default process group (torch.distributed.init_process_group).

    init_method: "env://" (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), "tcp://host:port" or
    "file://path"; or pass a `store` with `rank` and `world_size`.
    """
    _check_timeout(timeout)
    if _d.is_initialized():
        raise RuntimeError("trying to initialize the default process group twice!")
    if init_method is not None and store is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if store is not None:
        if not isinstance(store, Store):
            raise TypeError(f"store must be an ember.distributed.Store, got "
                            f"{type(store).__name__}")
        if world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if rank < 0:
            raise ValueError("rank must be non-negative if using store")
    elif init_method is None:
        init_method = "env://"
    name = _parse_backend(backend, "init_process_group")
    _d.init_process_group(str(name), init_method or "", int(rank), int(world_size), timeout,
                          store, group_name or "")


def destroy_process_group(group=None):
    """Destroys `group`, or every group (and the default one) when None / group.WORLD."""
    if _rank_not_in_group(group):
        return
    if group is None or group is GroupMember.WORLD:
        _require_init()
        _d.destroy_process_group(None)
        return
    _d.destroy_process_group(_pg(group))


def get_rank(group=None):
    """This process's rank in `group` (the default group when None); -1 when not a member."""
    if _rank_not_in_group(group):
        return -1
    return _d.get_rank(_pg(group))


def get_world_size(group=None):
    """The number of ranks in `group`; -1 when this rank is not a member."""
    if _rank_not_in_group(group):
        return -1
    return _d.get_world_size(_pg(group))


def get_backend(group=None):
    """The backend of `group` ("gloo")."""
    if _rank_not_in_group(group):
        raise RuntimeError("Invalid process group specified")
    return Backend(_d.get_backend(_pg(group)))


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """A group of the given global ranks; every rank of the world must call it, in the same
    order. Ranks outside it get GroupMember.NON_GROUP_MEMBER."""
    _require_init()
    if timeout is not None:
        _check_timeout(timeout)
    if backend is not None:
        _parse_backend(backend, "new_group")
    if ranks is None:
        ranks = []
    else:
        ranks = sorted(int(r) for r in ranks)
    pg = _d.new_group(ranks, timeout)
    return GroupMember.NON_GROUP_MEMBER if pg is None else pg


def get_process_group_ranks(group):
    """The global ranks of `group` in group-rank order."""
    if group is None or group is GroupMember.WORLD:
        return list(range(get_world_size()))
    return list(_d.get_process_group_ranks(_pg(group)))


def get_group_rank(group, global_rank):
    """The rank in `group` of global rank `global_rank`."""
    if group is None or group is GroupMember.WORLD:
        return global_rank
    return _d.get_group_rank(_pg(group), global_rank)


def get_global_rank(group, group_rank):
    """The global rank of `group_rank` in `group`."""
    if group is None or group is GroupMember.WORLD:
        return group_rank
    return _d.get_global_rank(_pg(group), group_rank)


# ---- argument checks ----

def _check_single_tensor(param, name):
    if not isinstance(param, ember.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"ember.Tensor but got {type(param).__name__} instead.")


def _check_tensor_list(param, name):
    if not isinstance(param, list) or not all(isinstance(p, ember.Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[ember.Tensor] but got {type(param).__name__} instead.")


def _check_op(op, fn):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"[{fn}] op must be an ember.distributed.ReduceOp, got "
                        f"{type(op).__name__}")


def _check_rank_arg(value, name, fn):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"[{fn}] {name} must be an int (a global rank), got "
                        f"{type(value).__name__}")


# ---- collectives ----

def broadcast(tensor, src, group=None, async_op=False):
    """Copies `tensor` of global rank `src` into `tensor` on every rank of the group."""
    _check_single_tensor(tensor, "tensor")
    _check_rank_arg(src, "src", "broadcast")
    if _rank_not_in_group(group):
        _warn_not_in_group("broadcast")
        return None
    return _d.broadcast(tensor, src, _pg(group), bool(async_op))


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces `tensor` over the ranks of the group, in place on every rank."""
    _check_single_tensor(tensor, "tensor")
    _check_op(op, "all_reduce")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_reduce")
        return None
    return _d.all_reduce(tensor, op, _pg(group), bool(async_op))


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces `tensor` over the group into `tensor` on global rank `dst`."""
    _check_single_tensor(tensor, "tensor")
    _check_rank_arg(dst, "dst", "reduce")
    _check_op(op, "reduce")
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce")
        return None
    return _d.reduce(tensor, dst, op, _pg(group), bool(async_op))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] receives the `tensor` of group rank r."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather")
        return None
    return _d.all_gather(tensor_list, tensor, _pg(group), bool(async_op))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """`output_tensor` (world size times the input, concatenated along dim 0 or stacked)
    receives every rank's `input_tensor` in rank order."""
    _check_single_tensor(input_tensor, "input_tensor")
    _check_single_tensor(output_tensor, "output_tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather_into_tensor")
        return None
    return _d.all_gather_into_tensor(output_tensor, input_tensor, _pg(group), bool(async_op))


def _all_gather_base(output_tensor, input_tensor, group=None, async_op=False):
    """Deprecated spelling of all_gather_into_tensor."""
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def _validate_list_for_rank(my_rank, root, lst, list_name, root_name):
    if my_rank == root:
        if not lst:
            raise ValueError(f"Argument ``{list_name}`` must be specified on {root_name} rank.")
    elif lst:
        raise ValueError(f"Argument ``{list_name}`` must NOT be specified on non-{root_name} "
                         f"ranks.")


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """On global rank `dst`, gather_list[r] receives the `tensor` of group rank r."""
    _check_single_tensor(tensor, "tensor")
    _check_rank_arg(dst, "dst", "gather")
    if gather_list is not None:
        _check_tensor_list(gather_list, "gather_list")
    else:
        gather_list = []
    if _rank_not_in_group(group):
        _warn_not_in_group("gather")
        return None
    _validate_list_for_rank(get_rank(), dst, gather_list, "gather_list", "destination")
    return _d.gather(tensor, gather_list if gather_list else None, dst, _pg(group),
                     bool(async_op))


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Group rank r receives scatter_list[r] of global rank `src` into `tensor`."""
    _check_single_tensor(tensor, "tensor")
    _check_rank_arg(src, "src", "scatter")
    if scatter_list is not None:
        _check_tensor_list(scatter_list, "scatter_list")
    else:
        scatter_list = []
    if _rank_not_in_group(group):
        _warn_not_in_group("scatter")
        return None
    _validate_list_for_rank(get_rank(), src, scatter_list, "scatter_list", "source")
    return _d.scatter(tensor, scatter_list if scatter_list else None, src, _pg(group),
                      bool(async_op))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """`output` receives the reduction over ranks of their input_list[this rank]."""
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    _check_op(op, "reduce_scatter")
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce_scatter")
        return None
    return _d.reduce_scatter(output, input_list, op, _pg(group), bool(async_op))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """`output` receives the reduction of this rank's slice of `input` (world size times the
    output)."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _check_op(op, "reduce_scatter_tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce_scatter_tensor")
        return None
    return _d.reduce_scatter_tensor(output, input, op, _pg(group), bool(async_op))


def _reduce_scatter_base(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Deprecated spelling of reduce_scatter_tensor."""
    return reduce_scatter_tensor(output, input, op, group, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """output_tensor_list[r] receives input_tensor_list[this rank] of group rank r."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_to_all")
        return None
    return _d.all_to_all(output_tensor_list, input_tensor_list, _pg(group), bool(async_op))


def _split_sizes(sizes, name):
    if sizes is None:
        return []
    if isinstance(sizes, ember.Tensor):
        sizes = sizes.tolist()
    try:
        return [int(s) for s in sizes]
    except TypeError:
        raise TypeError(f"[all_to_all_single] {name} must be a list of ints, got "
                        f"{type(sizes).__name__}") from None


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Splits `input` along dim 0 (equally, or by input_split_sizes), sends piece r to rank r,
    and concatenates what arrives into `output` (by output_split_sizes)."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    out_splits = _split_sizes(output_split_sizes, "output_split_sizes")
    in_splits = _split_sizes(input_split_sizes, "input_split_sizes")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_to_all_single")
        return None
    return _d.all_to_all_single(output, input, out_splits, in_splits, _pg(group),
                                bool(async_op))


def barrier(group=GroupMember.WORLD, async_op=False, device_ids=None):
    """Blocks until every rank of the group reaches it."""
    if _rank_not_in_group(group):
        _warn_not_in_group("barrier")
        return None
    return _d.barrier(_pg(group), bool(async_op))


def monitored_barrier(group=GroupMember.WORLD, timeout=None, wait_all_ranks=False):
    """A barrier that raises naming the ranks that did not arrive within `timeout`."""
    if _rank_not_in_group(group):
        _warn_not_in_group("monitored_barrier")
        return None
    if timeout is not None:
        _check_timeout(timeout)
    return _d.monitored_barrier(_pg(group), timeout, bool(wait_all_ranks))


# ---- point to point ----

def send(tensor, dst, group=None, tag=0):
    """Sends `tensor` to global rank `dst` (blocks until it is sent)."""
    _check_single_tensor(tensor, "tensor")
    _check_rank_arg(dst, "dst", "send")
    if _rank_not_in_group(group):
        _warn_not_in_group("send")
        return None
    _d.send(tensor, dst, _pg(group), int(tag))


def recv(tensor, src=None, group=None, tag=0):
    """Receives into `tensor` from global rank `src` (any rank when None); returns the
    sender's rank, or -1 when this rank is not in `group`."""
    _check_single_tensor(tensor, "tensor")
    if src is not None:
        _check_rank_arg(src, "src", "recv")
    if _rank_not_in_group(group):
        _warn_not_in_group("recv")
        return -1
    return _d.recv(tensor, -1 if src is None else src, _pg(group), int(tag))


def isend(tensor, dst, group=None, tag=0):
    """Starts sending `tensor` to global rank `dst`; returns the Work."""
    _check_single_tensor(tensor, "tensor")
    _check_rank_arg(dst, "dst", "isend")
    if _rank_not_in_group(group):
        _warn_not_in_group("isend")
        return None
    return _d.isend(tensor, dst, _pg(group), int(tag))


def irecv(tensor, src=None, group=None, tag=0):
    """Starts receiving into `tensor` from global rank `src` (any rank when None)."""
    _check_single_tensor(tensor, "tensor")
    if src is not None:
        _check_rank_arg(src, "src", "irecv")
    if _rank_not_in_group(group):
        _warn_not_in_group("irecv")
        return None
    return _d.irecv(tensor, -1 if src is None else src, _pg(group), int(tag))


class P2POp:
    """One send or receive for batch_isend_irecv: `op` is isend or irecv."""

    def __init__(self, op, tensor, peer, group=None, tag=0):
        if op is not isend and op is not irecv:
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``ember.distributed.isend`` or ``ember.distributed.irecv``.")
        _check_single_tensor(tensor, "tensor")
        _check_rank_arg(peer, "peer", "P2POp")
        self.op = op
        self.tensor = tensor
        self.peer = peer
        self.group = group
        self.tag = tag

    def __repr__(self):
        return (f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag}, "
                f"tensor={tuple(self.tensor.shape)})")


def batch_isend_irecv(p2p_op_list):
    """Starts every send and receive of the list at once; returns their Works."""
    if not isinstance(p2p_op_list, list) or not p2p_op_list or not all(
            isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to be of type "
                         "``ember.distributed.P2POp``, and the list must not be empty.")
    group = p2p_op_list[0].group
    if any(p.group is not group for p in p2p_op_list):
        raise ValueError("All ops in ``p2p_op_list`` need to use the same group.")
    if _rank_not_in_group(group):
        _warn_not_in_group("batch_isend_irecv")
        return []
    pg = _pg(group)
    ops = [(p.op is isend, p.tensor, int(p.peer), pg, int(p.tag)) for p in p2p_op_list]
    return list(_d.batch_isend_irecv(ops))


# ---- object collectives ----

def _dumps(obj):
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] receives the (picklable) `obj` of group rank r."""
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather_object")
        return None
    data = _d.all_gather_object(_dumps(obj), _pg(group))
    for i, b in enumerate(data):
        object_list[i] = pickle.loads(b)


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """On global rank `dst`, object_gather_list[r] receives the `obj` of group rank r."""
    _check_rank_arg(dst, "dst", "gather_object")
    if _rank_not_in_group(group):
        _warn_not_in_group("gather_object")
        return None
    _validate_list_for_rank(get_rank(), dst, object_gather_list, "object_gather_list",
                            "destination")
    data = _d.gather_object(_dumps(obj), dst, _pg(group))
    if get_rank() == dst:
        for i, b in enumerate(data):
            object_gather_list[i] = pickle.loads(b)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Fills `object_list` in place on every rank with the objects of global rank `src`."""
    _check_rank_arg(src, "src", "broadcast_object_list")
    if _rank_not_in_group(group):
        _warn_not_in_group("broadcast_object_list")
        return None
    if get_rank() == src:
        data = [_dumps(o) for o in object_list]
    else:
        data = [b""] * len(object_list)
    data = _d.broadcast_object_list(data, src, _pg(group))
    if get_rank() != src:
        if len(data) != len(object_list):
            raise ValueError(f"[broadcast_object_list] rank {get_rank()} passed a list of "
                             f"{len(object_list)} objects but src {src} sent {len(data)}")
        for i, b in enumerate(data):
            object_list[i] = pickle.loads(b)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0,
                        group=None):
    """scatter_object_output_list[0] of group rank r receives scatter_object_input_list[r] of
    global rank `src`."""
    _check_rank_arg(src, "src", "scatter_object_list")
    if _rank_not_in_group(group):
        _warn_not_in_group("scatter_object_list")
        return None
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    if get_rank() == src:
        if scatter_object_input_list is None:
            raise ValueError("Argument ``scatter_object_input_list`` must be specified on the "
                             "source rank.")
        data = [_dumps(o) for o in scatter_object_input_list]
    else:
        data = []
    b = _d.scatter_object_list(data, src, _pg(group))
    scatter_object_output_list[0] = pickle.loads(b)
