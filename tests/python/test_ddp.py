"""ember.nn.parallel.DistributedDataParallel on 2 and 3 processes (Gloo on loopback).

Oracles: one process's gradients on the concatenated batch, and torch 1.13's DDP (gloo) run in
the same child processes on the same model, data and initial weights.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from _dist_util import run_ranks  # noqa: E402

import ember  # noqa: E402

pytestmark = pytest.mark.skipif(not ember.distributed.is_available(),
                                reason="ember.distributed not built")


def _make_net(nn, unused=False, batchnorm=False):
    """The same small CNN in ember.nn or torch.nn."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3)
            self.conv2 = nn.Conv2d(4, 8, 3)
            self.fc1 = nn.Linear(8 * 4 * 4, 16)
            self.bn = nn.BatchNorm1d(16) if batchnorm else None
            self.fc2 = nn.Linear(16, 3)
            self.spare = nn.Linear(3, 3) if unused else None
            self.partial = nn.Linear(3, 3) if unused else None

        def forward(self, x, use_partial=False):
            x = self.conv1(x).relu()
            x = self.conv2(x).relu()
            x = self.fc1(x.flatten(1))
            if self.bn is not None:
                x = self.bn(x)
            x = self.fc2(x.relu())
            if use_partial:
                x = self.partial(x)
            return x

    return Net()


def _copy_from_torch(e_model, t_model):
    with ember.no_grad():
        for (n1, pe), (n2, pt) in zip(e_model.state_dict(keep_vars=True).items(),
                                      t_model.state_dict(keep_vars=True).items()):
            assert n1 == n2, (n1, n2)
            pe.copy_(ember.tensor(pt.detach().numpy()))


def _np(t):
    return None if t is None else t.detach().numpy().copy()


def _batch(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 1, 8, 8)).astype(np.float32)
    y = rng.standard_normal((n, 3)).astype(np.float32)
    return x, y


def _init_both(rank, world_size):
    """Initialises ember's and torch's default process groups on the run's stores."""
    from datetime import timedelta

    import torch.distributed as tdist

    import ember.distributed as edist
    from _dist_util import connect_store
    edist.init_process_group("gloo", store=connect_store("ember"), rank=rank,
                             world_size=world_size, timeout=timedelta(seconds=30))
    tdist.init_process_group("gloo", store=connect_store("torch"), rank=rank,
                             world_size=world_size, timeout=timedelta(seconds=30))


# ---- 1. gradients equal one process's gradients on the whole batch ----

def _body_full_batch(rank, world_size):
    import ember.nn as nn
    from ember.nn.parallel import DistributedDataParallel as DDP
    import ember.distributed as dist
    ember.manual_seed(100 + rank)  # different weights per rank: DDP broadcasts rank 0's
    model = _make_net(nn)
    dist._DEFAULT_FIRST_BUCKET_BYTES = 1024
    ddp = DDP(model, bucket_cap_mb=0.001)  # three buckets: [fc2, fc1], [conv2], [conv1]
    per = 2
    x, y = _batch(7, per * world_size)
    xs = ember.tensor(x[rank * per:(rank + 1) * per])
    ys = ember.tensor(y[rank * per:(rank + 1) * per])
    ember.nn.functional.mse_loss(ddp(xs), ys).backward()
    ddp_grads = [_np(p.grad) for p in model.parameters()]
    # One process, whole batch, same (broadcast) weights.
    ref = _make_net(nn)
    ref.load_state_dict(model.state_dict())
    ember.nn.functional.mse_loss(ref(ember.tensor(x)), ember.tensor(y)).backward()
    ref_grads = [_np(p.grad) for p in ref.parameters()]
    w0 = [_np(p) for p in model.parameters()]
    stats = ddp._get_ddp_logging_data()
    return ddp_grads, ref_grads, w0, stats, list(map(list, ddp.reducer.bucket_indices))


@pytest.mark.parametrize("world_size", [2, 3])
def test_gradients_equal_full_batch(world_size):
    res = run_ranks(_body_full_batch, world_size, timeout=90)
    for rank, (g, ref, w0, stats, buckets) in enumerate(res):
        for a, b in zip(g, ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        for a, b in zip(w0, res[0][2]):  # every rank holds rank 0's weights
            np.testing.assert_array_equal(a, b)
        # Buckets in reverse registration order, launched during backward.
        assert buckets[0][-1] == 7 and buckets[-1][0] == 0, buckets
        assert stats["num_buckets"] == len(buckets) >= 3
        assert stats["buckets_launched_during_backward"] == stats["num_buckets"]
        assert stats["iterations"] == 1


# ---- 2. ember DDP vs torch DDP, several SGD steps ----

def _body_vs_torch(rank, world_size, opts, steps):
    import torch

    import ember.nn as enn
    torch.manual_seed(0)
    t_model = _make_net(torch.nn, unused=opts.get("find_unused_parameters", False),
                        batchnorm=True)
    e_model = _make_net(enn, unused=opts.get("find_unused_parameters", False), batchnorm=True)
    _copy_from_torch(e_model, t_model)
    if rank == 1:  # rank 1 starts elsewhere: both DDPs broadcast rank 0's state
        with torch.no_grad():
            for p in t_model.parameters():
                p.add_(1.0)
        with ember.no_grad():
            for p in e_model.parameters():
                p.add_(1.0)
    t_ddp = torch.nn.parallel.DistributedDataParallel(t_model, **opts)
    e_ddp = ember.nn.parallel.DistributedDataParallel(e_model, **opts)
    t_opt = torch.optim.SGD(t_model.parameters(), lr=0.1, momentum=0.9)
    e_opt = ember.optim.SGD(e_model.parameters(), lr=0.1, momentum=0.9)
    grads = []
    for step in range(steps):
        x, y = _batch(1000 * step + rank, 4)
        for lib, ddp, opt, mod in (("torch", t_ddp, t_opt, torch), ("ember", e_ddp, e_opt, ember)):
            opt.zero_grad(set_to_none=True)
            partial = bool(opts.get("find_unused_parameters")) and rank == 0 and step % 2 == 0
            out = ddp(mod.tensor(x), use_partial=partial)
            mod.nn.functional.mse_loss(out, mod.tensor(y)).backward()
            grads.append([_np(p.grad) for p in ddp.module.parameters()])
            opt.step()
    t_state = {k: _np(v) for k, v in t_ddp.state_dict().items()}
    e_state = {k: _np(v) for k, v in e_ddp.state_dict().items()}
    return t_state, e_state, grads


_TORCH_OPTS = [
    {},
    {"find_unused_parameters": True},
    {"gradient_as_bucket_view": True, "bucket_cap_mb": 0.001},
    {"broadcast_buffers": False},
]


def _body_vs_torch_all(rank, world_size, steps):
    _init_both(rank, world_size)
    return [_body_vs_torch(rank, world_size, opts, steps) for opts in _TORCH_OPTS]


def test_matches_torch_ddp():
    steps = 3
    res = run_ranks(_body_vs_torch_all, 2, steps, init=None, timeout=120)
    for rank, per_opts in enumerate(res):
        for opts, (t_state, e_state, grads) in zip(_TORCH_OPTS, per_opts):
            where = f"rank {rank} {opts}"
            assert list(t_state) == list(e_state)  # "module." keys, as torch
            assert all(k.startswith("module.") for k in e_state)
            for k in t_state:
                np.testing.assert_allclose(e_state[k], t_state[k], rtol=1e-4, atol=1e-5,
                                           err_msg=f"{where} {k}")
            for step in range(steps):
                t_g, e_g = grads[2 * step], grads[2 * step + 1]
                for i, (a, b) in enumerate(zip(t_g, e_g)):
                    assert (a is None) == (b is None), (where, step, i)  # unused: None
                    if a is not None:
                        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5, err_msg=where)


# ---- 3. no_sync, static_graph, bucket views, comm hooks, join ----

def _body_features(rank, world_size):
    import torch

    import ember.distributed as edist
    import ember.nn as enn
    from ember.distributed.algorithms.ddp_comm_hooks import (
        DDPCommHookType, default_hooks, register_ddp_comm_hook)
    _init_both(rank, world_size)
    out = {}
    torch.manual_seed(0)
    t_model = _make_net(torch.nn, unused=True)
    init = {k: v.clone() for k, v in t_model.state_dict().items()}

    def fresh(**opts):
        m = _make_net(enn, unused=True)
        t_model.load_state_dict(init)
        _copy_from_torch(m, t_model)
        return ember.nn.parallel.DistributedDataParallel(m, **opts)

    def step(ddp, mod, x, y, **kw):
        mod.nn.functional.mse_loss(ddp(mod.tensor(x), **kw), mod.tensor(y)).backward()

    x, y = _batch(50 + rank, 4)

    # no_sync: two local micro-batches, then a synced one == the full batch, averaged.
    d = fresh(find_unused_parameters=True)
    with d.no_sync():
        step(d, ember, x[:2], y[:2])
    local = [_np(p.grad) for p in d.module.parameters()][:2]
    step(d, ember, x[2:], y[2:])
    out["no_sync"] = [_np(p.grad) for p in d.module.parameters()]
    out["no_sync_local"] = local
    t_model.load_state_dict(init)
    t = torch.nn.parallel.DistributedDataParallel(t_model, find_unused_parameters=True)
    with t.no_sync():
        step(t, torch, x[:2], y[:2])
    step(t, torch, x[2:], y[2:])
    out["no_sync_torch"] = [_np(p.grad) for p in t_model.parameters()]
    t_model.zero_grad(set_to_none=True)

    # static_graph: 3 iterations with an unused parameter, against torch.
    d = fresh(static_graph=True)
    t_model.load_state_dict(init)
    t = torch.nn.parallel.DistributedDataParallel(t_model, static_graph=True)
    e_opt = ember.optim.SGD(d.parameters(), lr=0.1)
    t_opt = torch.optim.SGD(t.parameters(), lr=0.1)
    for _ in range(3):
        e_opt.zero_grad(set_to_none=True)
        t_opt.zero_grad(set_to_none=True)
        step(d, ember, x, y, use_partial=True)
        step(t, torch, x, y, use_partial=True)
        e_opt.step()
        t_opt.step()
    out["static"] = ([_np(p) for p in d.module.parameters()],
                     [_np(p) for p in t_model.parameters()],
                     [_np(p.grad) for p in d.module.parameters()],
                     [_np(p.grad) for p in t_model.parameters()])

    # gradient_as_bucket_view: each .grad lies inside its bucket's flat buffer.
    d = fresh(gradient_as_bucket_view=True, find_unused_parameters=True, bucket_cap_mb=0.001)
    step(d, ember, x, y)
    params = list(d.module.parameters())
    inside = []
    for b, idx in enumerate(d.reducer.bucket_indices):
        buf = d.reducer._bucket_buffer(b)
        off = 0
        for i in idx:
            g = params[i].grad
            if g is not None:
                inside.append(g.data_ptr() == buf.data_ptr() + off * buf.element_size())
            off += params[i].numel()
    out["views"] = inside
    out["views_grads"] = [_np(p.grad) for p in params]

    # comm hooks: built-in (C++) and a Python hook, against the plain average.
    hooks = {}
    for name in ("none", "allreduce", "fp16", "bf16", "python", "type_fp16"):
        d = fresh(find_unused_parameters=True)
        if name == "allreduce":
            d.register_comm_hook(None, default_hooks.allreduce_hook)
        elif name == "fp16":
            d.register_comm_hook(edist.group.WORLD, default_hooks.fp16_compress_hook)
        elif name == "bf16":
            d.register_comm_hook(None, default_hooks.bf16_compress_hook)
        elif name == "type_fp16":
            register_ddp_comm_hook(DDPCommHookType.FP16_COMPRESS, d)
        elif name == "python":
            seen = []

            def hook(state, bucket):
                seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters()),
                             [tuple(g.shape) for g in bucket.gradients()]))
                buf = bucket.buffer().div_(state["world"])
                fut = edist.all_reduce(buf, async_op=True).get_future()
                return fut.then(lambda f: f.value()[0])

            d.register_comm_hook({"world": world_size}, hook)
        step(d, ember, x, y)
        hooks[name] = [_np(p.grad) for p in d.module.parameters()]
        if name == "python":
            hooks["python_seen"] = seen
            hooks["python_buckets"] = [list(b) for b in d.reducer.bucket_indices]
    out["hooks"] = hooks
    return out


def test_features():
    res = run_ranks(_body_features, 2, init=None, timeout=120)
    for rank, out in enumerate(res):
        for a, b in zip(out["no_sync"], out["no_sync_torch"]):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        # The local accumulation differs between ranks before the synced step.
        assert not np.allclose(res[0]["no_sync_local"][0], res[1]["no_sync_local"][0])
        e_p, t_p, e_g, t_g = out["static"]
        for a, b in zip(e_p, t_p):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        for a, b in zip(e_g, t_g):
            assert (a is None) == (b is None)
        assert out["views"] and all(out["views"])
        h = out["hooks"]
        ref = h["none"]
        for i, g in enumerate(ref):
            if g is None:
                assert all(h[k][i] is None for k in ("allreduce", "fp16", "bf16", "python"))
                continue
            np.testing.assert_allclose(h["allreduce"][i], g, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(h["python"][i], g, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(out["views_grads"][i], g, rtol=1e-5, atol=1e-7)
            scale = np.abs(g).max() + 1e-6
            assert np.abs(h["fp16"][i] - g).max() <= 2e-3 * scale
            assert np.abs(h["type_fp16"][i] - g).max() <= 2e-3 * scale
            assert np.abs(h["bf16"][i] - g).max() <= 1.6e-2 * scale
            assert not np.array_equal(h["bf16"][i], g) or np.abs(g).max() == 0
        seen, buckets = h["python_seen"], h["python_buckets"]
        assert [s[0] for s in seen] == list(range(len(buckets)))
        assert [s[1] for s in seen] == [False] * (len(buckets) - 1) + [True]
        assert [s[2] for s in seen] == [len(b) for b in buckets]


# ---- join: uneven inputs ----

def _body_join_all(rank, world_size):
    _init_both(rank, world_size)
    return [_body_join(rank, world_size, d) for d in (True, False)]


def _body_join(rank, world_size, divide_by_initial):
    import torch

    import ember.nn as enn
    torch.manual_seed(0)
    t_model = _make_net(torch.nn, batchnorm=True)
    e_model = _make_net(enn, batchnorm=True)
    _copy_from_torch(e_model, t_model)
    n_batches = 2 + 2 * rank  # rank 0 runs out first
    res = {}
    for lib, mod, model in (("torch", torch, t_model), ("ember", ember, e_model)):
        ddp = mod.nn.parallel.DistributedDataParallel(model)
        opt = mod.optim.SGD(model.parameters(), lr=0.1)
        with ddp.join(divide_by_initial_world_size=divide_by_initial):
            for b in range(n_batches):
                x, y = _batch(10 * b + rank, 3)
                opt.zero_grad(set_to_none=True)
                mod.nn.functional.mse_loss(ddp(mod.tensor(x)), mod.tensor(y)).backward()
                opt.step()
        res[lib] = {k: _np(v) for k, v in model.state_dict().items()}
    return res


def test_join_uneven_inputs():
    res = run_ranks(_body_join_all, 2, init=None, timeout=120)
    for case, divide_by_initial in enumerate((True, False)):
        for rank in range(2):
            r = res[rank][case]
            for k in r["torch"]:
                np.testing.assert_allclose(r["ember"][k], r["torch"][k], rtol=1e-4, atol=1e-5,
                                           err_msg=f"rank {rank} {k} {divide_by_initial}")
                # The final model is the same everywhere (copied from the last rank to join).
                np.testing.assert_array_equal(r["ember"][k], res[0][case]["ember"][k])


# ---- 4. bad input ----

def _body_errors(rank, world_size):
    import ember.nn as enn
    from ember.nn.parallel import DistributedDataParallel as DDP
    out = {}
    ember.manual_seed(0)
    model = _make_net(enn, unused=True)
    ddp = DDP(model)
    x, y = _batch(rank, 2)
    ember.nn.functional.mse_loss(ddp(ember.tensor(x)), ember.tensor(y)).backward()
    try:
        ddp(ember.tensor(x))
        out["unused"] = None
    except RuntimeError as e:
        out["unused"] = str(e)
    # Shapes differ across ranks.
    m = enn.Sequential(enn.Linear(4, 3 + rank), enn.Linear(3 + rank, 2))
    try:
        DDP(m)
        out["shape"] = None
    except RuntimeError as e:
        out["shape"] = str(e)
    # A comm hook that does not return a future.
    ddp = DDP(enn.Linear(3, 2))
    ddp.register_comm_hook(None, lambda state, bucket: bucket.buffer())
    try:
        ddp(ember.ones(2, 3)).sum().backward()
        out["hook"] = None
    except TypeError as e:
        out["hook"] = str(e)
    try:
        ddp.register_comm_hook(None, lambda s, b: None)
        out["twice"] = None
    except RuntimeError as e:
        out["twice"] = str(e)
    # throw_on_early_termination: every rank raises once one runs out of inputs.
    ddp = DDP(enn.Linear(3, 2))
    try:
        with ddp.join(throw_on_early_termination=True):
            for _ in range(1 + 2 * rank):
                ddp(ember.ones(2, 3)).sum().backward()
        out["early"] = None
    except RuntimeError as e:
        out["early"] = str(e)
    return out


def test_bad_input_across_ranks():
    res = run_ranks(_body_errors, 2, timeout=90)
    for rank, out in enumerate(res):
        msg = out["unused"]
        assert msg is not None and "Expected to have finished reduction in the prior iteration" \
            in msg and "find_unused_parameters=True" in msg, msg
        # spare.weight/bias and partial.weight/bias are parameters 8-11
        assert f"Parameter indices which did not receive grad for rank {rank}: 8 9 10 11" in msg
        assert out["shape"] is not None and \
            f"[{rank}]: params[0] in this process with sizes [{3 + rank}, 4]" in out["shape"]
        assert out["hook"] is not None and "Future" in out["hook"]
        assert out["twice"] is not None and "can only be called once" in out["twice"]
    assert res[0]["early"] == "Rank 0 exhausted all inputs."
    assert res[1]["early"] == ("Detected at least one rank that exhausted inputs. Throwing "
                               "across all ranks.")


def test_bad_input_local():
    from ember.nn.parallel import DistributedDataParallel as DDP
    frozen = ember.nn.Linear(2, 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
        DDP(frozen)
    with pytest.raises(ValueError, match="device_ids"):
        DDP(ember.nn.Linear(2, 2), device_ids=[0])
    with pytest.raises(ValueError, match="output_device"):
        DDP(ember.nn.Linear(2, 2), output_device=0)
    with pytest.raises(TypeError, match="nn.Module"):
        DDP(lambda x: x)
