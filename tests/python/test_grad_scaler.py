"""GradScaler and its two ops on CPU tensors.

torch 1.13 has neither `_amp_foreach_non_finite_check_and_unscale_` nor `_amp_update_scale_`
for the CPU (and its GradScaler disables itself without CUDA), so the expected values come from
the documented rule, by hand: a step whose gradients hold inf/NaN is skipped and multiplies the
scale by backoff_factor; `growth_interval` clean steps in a row multiply it by growth_factor.
Scales are powers of two, so scaling and unscaling are exact and parameters compare exactly.
"""

import math
import pickle

import numpy as np
import pytest
import torch

import ember

INF, NAN = float("inf"), float("nan")


# ---- the ops ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_unscale_op_values(dtype):
    dt = getattr(ember, dtype)
    a = ember.tensor([2.0, -4.0, 8.0, 0.0], dtype=dt)
    base = ember.tensor([[6.0, 1.0, 0.5], [2.0, -2.0, 4.0]], dtype=dt)
    b = base.t()  # strided: written through the view
    found = ember.zeros(1)
    ember._amp_foreach_non_finite_check_and_unscale_([a, b], found, ember.tensor([0.25]))
    assert found.item() == 0.0
    assert a.dtype == dt
    np.testing.assert_array_equal(a.float().numpy(), [0.5, -1.0, 2.0, 0.0])
    np.testing.assert_array_equal(base.float().numpy(), [[1.5, 0.25, 0.125], [0.5, -0.5, 1.0]])
    c = ember.tensor([1.0, INF, 4.0, NAN], dtype=dt)
    ember._amp_foreach_non_finite_check_and_unscale_([c], found, ember.tensor([0.5]))
    assert found.item() == 1.0
    v = c.float().numpy()
    assert v[0] == 0.5 and v[1] == INF and v[2] == 2.0 and math.isnan(v[3])
    # found_inf stays set: later clean tensors do not reset it.
    ember._amp_foreach_non_finite_check_and_unscale_([a], found, ember.tensor([1.0]))
    assert found.item() == 1.0


def test_unscale_op_by_one_and_edge_cases():
    a = ember.tensor([3.0, -INF])
    found = ember.zeros(1)
    ember._amp_foreach_non_finite_check_and_unscale_([a], found, ember.ones(1))
    assert found.item() == 1.0
    np.testing.assert_array_equal(a.numpy(), [3.0, -INF])
    # Empty list, zero-size and 0-dim tensors.
    found.zero_()
    ember._amp_foreach_non_finite_check_and_unscale_([], found, ember.ones(1))
    z, s = ember.zeros(0, 3), ember.tensor(8.0)
    ember._amp_foreach_non_finite_check_and_unscale_([z, s], found, ember.tensor([0.5]))
    assert found.item() == 0.0 and s.item() == 4.0 and z.shape == (0, 3)
    # 1-element tensors of any shape are accepted for found_inf and inv_scale.
    f2 = ember.zeros(1, 1)
    ember._amp_foreach_non_finite_check_and_unscale_([ember.tensor([NAN])], f2,
                                                     ember.tensor(2.0))
    assert f2.item() == 1.0


def test_unscale_op_bumps_versions():
    a = ember.ones(3, requires_grad=True)
    g = a * 2
    h = (g * g).sum()  # saves g for backward
    found = ember.zeros(1)
    v0 = g._version
    ember._amp_foreach_non_finite_check_and_unscale_([g.detach()], found, ember.tensor([0.5]))
    assert g._version > v0
    with pytest.raises(RuntimeError):
        h.backward()


def test_unscale_op_errors():
    f = ember._amp_foreach_non_finite_check_and_unscale_
    g = ember.ones(3)
    with pytest.raises(RuntimeError, match="inv_scale must be a 1-element tensor"):
        f([g], ember.zeros(1), ember.ones(2))
    with pytest.raises(RuntimeError, match="found_inf must be a 1-element tensor"):
        f([g], ember.zeros(2), ember.ones(1))
    with pytest.raises(RuntimeError, match="inv_scale must be a float tensor"):
        f([g], ember.zeros(1), ember.ones(1, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor"):
        f([g], ember.zeros(1, dtype=ember.int32), ember.ones(1))
    with pytest.raises(RuntimeError, match="floating"):
        f([ember.ones(3, dtype=ember.int64)], ember.zeros(1), ember.ones(1))
    with pytest.raises(TypeError):
        f(g, ember.zeros(1), ember.ones(1))
    with pytest.raises(TypeError):
        f([g, 3], ember.zeros(1), ember.ones(1))
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0, 1.0])


def _update(scale, tracker, found, growth=2.0, backoff=0.5, interval=3):
    s = ember.tensor([scale])
    t = ember.tensor([tracker], dtype=ember.int32)
    r = ember._amp_update_scale_(s, t, ember.tensor([found]), growth, backoff, interval)
    assert r is s
    return s.item(), t.item()


def test_update_scale_op_rule():
    assert _update(8.0, 0, 0.0) == (8.0, 1)
    assert _update(8.0, 1, 0.0) == (8.0, 2)
    assert _update(8.0, 2, 0.0) == (16.0, 0)  # the third clean step in a row grows it
    assert _update(8.0, 2, 1.0) == (4.0, 0)  # an inf resets the count and backs off
    assert _update(8.0, 0, 3.0) == (4.0, 0)  # any nonzero found_inf counts
    assert _update(8.0, 0, 0.0, interval=1) == (16.0, 0)
    assert _update(10.0, 0, 1.0, backoff=0.25) == (2.5, 0)
    assert _update(3.0, 1, 0.0, growth=1.5, interval=2) == (4.5, 0)
    # Growth past float32's range keeps the scale (and restarts the count).
    assert _update(3e38, 0, 0.0, interval=1) == (pytest.approx(3e38, rel=1e-6), 0)


def test_update_scale_op_errors():
    f = ember._amp_update_scale_
    s, t, z = ember.ones(1), ember.zeros(1, dtype=ember.int32), ember.zeros(1)
    with pytest.raises(RuntimeError, match="growth_tracker must be a int tensor"):
        f(s, ember.zeros(1), z, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="current_scale must be a float tensor"):
        f(ember.ones(1, dtype=ember.float64), t, z, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="current_scale must be a 1-element tensor"):
        f(ember.ones(2), t, z, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor"):
        f(s, t, ember.zeros(1, dtype=ember.int32), 2.0, 0.5, 2)
    assert s.item() == 1.0 and t.item() == 0


def test_torch_has_the_same_op_schemas():
    # The ops exist in torch 1.13 under these names (CUDA kernels only there).
    for name in ("_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"):
        assert callable(getattr(torch, name))
    with pytest.raises(NotImplementedError):
        torch._amp_update_scale_(torch.ones(1), torch.zeros(1, dtype=torch.int32),
                                 torch.zeros(1), 2.0, 0.5, 2)


# ---- GradScaler: a scripted run ----

# (gradient of the loss w.r.t. w at this step, expected scale after update, tracker after)
SCRIPT = [
    ([1.0, -2.0, 0.5, 4.0], 4.0, 1),
    ([0.25, 1.0, -1.0, 2.0], 8.0, 0),   # second clean step in a row: grows
    ([1.0, INF, 0.0, 0.0], 4.0, 0),     # inf: skipped, backs off
    ([-1.0, 0.5, 2.0, 1.0], 4.0, 1),
    ([NAN, 1.0, 1.0, 1.0], 2.0, 0),     # NaN: skipped, backs off
    ([0.5, 0.5, -0.5, 1.0], 2.0, 1),
    ([2.0, -1.0, 0.25, 0.5], 4.0, 0),   # grows again
    ([1.0, 1.0, 1.0, 1.0], 4.0, 1),
]


def _run_script(scaler, steps, lr=0.5, explicit_unscale=False):
    w = ember.nn.Parameter(ember.tensor([1.0, 2.0, -1.0, 0.5]))
    opt = ember.optim.SGD([w], lr=lr)
    expected_w = np.array([1.0, 2.0, -1.0, 0.5])
    for g, scale_after, tracker_after in steps:
        opt.zero_grad()
        x = ember.tensor(g)
        loss = (w * x).sum()
        scaled = scaler.scale(loss)
        before = scaler.get_scale()
        assert scaled.item() == pytest.approx(loss.item() * before, nan_ok=True)
        scaled.backward()
        # The gradients are scaled until unscale_.
        np.testing.assert_array_equal(w.grad.numpy(), np.array(g) * before)
        if explicit_unscale:
            scaler.unscale_(opt)
            np.testing.assert_array_equal(w.grad.numpy(), np.array(g))
        ret = scaler.step(opt)
        assert ret is None
        np.testing.assert_array_equal(w.grad.numpy(), np.array(g))  # unscaled exactly
        if all(math.isfinite(v) for v in g):
            expected_w = expected_w - lr * np.array(g)
        scaler.update()
        np.testing.assert_array_equal(w.detach().numpy(), expected_w)
        assert scaler.get_scale() == scale_after
        assert scaler._get_growth_tracker() == tracker_after
        assert scaler._scale.dtype == ember.float32
        assert scaler._growth_tracker.dtype == ember.int32
    return w


@pytest.mark.parametrize("explicit_unscale", [False, True])
def test_scripted_sequence(explicit_unscale):
    scaler = ember.cuda.amp.GradScaler(init_scale=4.0, growth_interval=2)
    assert scaler.is_enabled()
    assert scaler.get_scale() == 4.0  # before the first scale(): the initial value
    assert scaler._scale is None
    _run_script(scaler, SCRIPT, explicit_unscale=explicit_unscale)


def test_amp_gradscaler_with_device_argument():
    scaler = ember.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    _run_script(scaler, SCRIPT[:3])
    assert scaler._scale.device.type == "cpu"


def test_growth_and_backoff_factors():
    scaler = ember.amp.GradScaler(init_scale=2.0**10, growth_factor=4.0, backoff_factor=0.25,
                                  growth_interval=1)
    steps = [([1.0, 1.0, 1.0, 1.0], 2.0**12, 0), ([INF, 0.0, 0.0, 0.0], 2.0**10, 0),
             ([1.0, 2.0, 3.0, 4.0], 2.0**12, 0)]
    _run_script(scaler, steps)
    assert scaler.get_growth_factor() == 4.0 and scaler.get_backoff_factor() == 0.25
    assert scaler.get_growth_interval() == 1
    scaler.set_growth_factor(2.0)
    scaler.set_backoff_factor(0.5)
    scaler.set_growth_interval(3)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval()) == (2.0, 0.5, 3)
    _run_script(scaler, [([1.0] * 4, 2.0**12, 1), ([NAN] * 4, 2.0**11, 0)])


def test_two_optimizers_share_one_update():
    scaler = ember.amp.GradScaler(init_scale=8.0, growth_interval=100)
    a = ember.nn.Parameter(ember.ones(2))
    b = ember.nn.Parameter(ember.ones(2))
    oa, ob = ember.optim.SGD([a], lr=1.0), ember.optim.SGD([b], lr=1.0)
    loss = (a * ember.tensor([1.0, 2.0])).sum() + (b * ember.tensor([INF, 1.0])).sum()
    scaler.scale(loss).backward()
    scaler.step(oa)
    scaler.step(ob)
    scaler.update()
    np.testing.assert_array_equal(a.detach().numpy(), [0.0, -1.0])  # clean: stepped
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 1.0])  # inf: skipped
    assert scaler.get_scale() == 4.0  # one inf anywhere backs the scale off


def test_mixed_grad_dtypes_and_missing_grads():
    scaler = ember.amp.GradScaler(init_scale=16.0)
    p32 = ember.nn.Parameter(ember.ones(2))
    p16 = ember.nn.Parameter(ember.ones(2, dtype=ember.bfloat16))
    unused = ember.nn.Parameter(ember.ones(2))
    # ember's SGD takes one dtype per group.
    opt = ember.optim.SGD([{"params": [p32, unused]}, {"params": [p16]}], lr=1.0)
    loss = p32.sum() + p16.float().sum() * 2
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    np.testing.assert_array_equal(p32.grad.numpy(), [1.0, 1.0])
    assert p16.grad.dtype == ember.bfloat16
    np.testing.assert_array_equal(p16.grad.float().numpy(), [2.0, 2.0])
    assert unused.grad is None
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(p32.detach().numpy(), [0.0, 0.0])


def test_scale_of_iterables():
    scaler = ember.amp.GradScaler(init_scale=2.0)
    a, b, c = ember.tensor(1.0), ember.tensor([2.0]), ember.tensor(3.0)
    out = scaler.scale([a, (b, c)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    assert out[0].item() == 2.0 and out[1][0].item() == 4.0 and out[1][1].item() == 6.0
    gen = scaler.scale(x for x in [a, b])
    assert [t.sum().item() for t in gen] == [2.0, 4.0]
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale([1.0])
    assert isinstance(scaler.scale((a,)), tuple)


def test_new_scale_argument():
    scaler = ember.amp.GradScaler(init_scale=8.0)
    scaler.scale(ember.ones(1))
    scaler.update(new_scale=32.0)
    assert scaler.get_scale() == 32.0
    scaler.update(ember.tensor([2.0]))
    assert scaler.get_scale() == 2.0
    for bad in (ember.tensor([2.0], dtype=ember.float64), ember.tensor([1.0, 2.0]),
                ember.tensor([2.0], requires_grad=True), 3):
        with pytest.raises(AssertionError, match="new_scale should be a float"):
            scaler.update(bad)
    assert scaler.get_scale() == 2.0


def test_state_dict_round_trip():
    scaler = ember.cuda.amp.GradScaler(init_scale=4.0, growth_interval=2)
    _run_script(scaler, SCRIPT[:4])
    sd = scaler.state_dict()
    assert sd == {"scale": 4.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                  "growth_interval": 2, "_growth_tracker": 1}
    # Same keys as torch 1.13's state_dict (its values come from the same fields).
    assert set(sd) == {"scale", "growth_factor", "backoff_factor", "growth_interval",
                       "_growth_tracker"}
    fresh = ember.cuda.amp.GradScaler()
    fresh.load_state_dict(sd)
    assert fresh.get_scale() == 4.0 and fresh._get_growth_tracker() == 1
    assert fresh.state_dict() == sd
    # Both go on the same way: the next clean step grows the scale (tracker was 1).
    for s in (scaler, fresh):
        _run_script(s, [([1.0] * 4, 8.0, 0)])
    # Loading into a scaler whose tensors exist overwrites them.
    fresh.load_state_dict({"scale": 64.0, "growth_factor": 3.0, "backoff_factor": 0.25,
                           "growth_interval": 5, "_growth_tracker": 2})
    assert fresh.get_scale() == 64.0 and fresh._get_growth_tracker() == 2
    assert fresh.get_growth_factor() == 3.0
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        fresh.load_state_dict({})


def test_pickle():
    scaler = ember.amp.GradScaler(init_scale=4.0, growth_interval=2)
    _run_script(scaler, SCRIPT[:1])
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.get_scale() == 4.0 and clone._get_growth_tracker() == 1
    assert clone._scale is None
    _run_script(clone, [([1.0] * 4, 8.0, 0)])
    # Not in the middle of an iteration.
    w = ember.nn.Parameter(ember.ones(1))
    opt = ember.optim.SGD([w], lr=1.0)
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(AssertionError, match="may only be pickled at the beginning"):
        pickle.dumps(scaler)


def _one_param():
    w = ember.nn.Parameter(ember.ones(2))
    return w, ember.optim.SGD([w], lr=1.0)


def test_state_machine_errors():
    scaler = ember.amp.GradScaler()
    w, opt = _one_param()
    # Nothing scaled yet.
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        scaler.step(opt)
    with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None"):
        scaler.unscale_(opt)
    with pytest.raises(AssertionError, match="Attempted update but _scale is None"):
        scaler.update()
    scaler.scale(w.sum()).backward()
    # update before any step or unscale_ of this iteration.
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        scaler.update()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    # A new iteration starts clean.
    scaler.scale(w.sum()).backward()
    scaler.step(opt)
    scaler.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        ember.amp.GradScaler(growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor must be < 1.0"):
        ember.amp.GradScaler(backoff_factor=1.0)


def test_float16_grads_are_refused():
    scaler = ember.amp.GradScaler(init_scale=1024.0)
    p = ember.nn.Parameter(ember.ones(2, dtype=ember.float16))
    opt = ember.optim.SGD([p], lr=1.0)
    scaler.scale(p.float().sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        scaler.unscale_(opt)
    # The private check accepts them (torch's _check_inf_per_device).
    found = scaler._check_inf_per_device(opt)
    assert sum(v.item() for v in found.values()) == 0.0
    # 2^16 times a unit gradient overflows float16: found.
    big = ember.amp.GradScaler()
    p.grad = None
    big.scale(p.float().sum()).backward()
    assert p.grad.isinf().all().item()
    assert sum(v.item() for v in big._check_inf_per_device(opt).values()) == 1.0


def test_optimizer_that_scales_itself():
    class SelfScaling(ember.optim.SGD):
        _step_supports_amp_scaling = True

        def step(self, closure=None, grad_scaler=None):
            self.seen = grad_scaler
            return "stepped"

    w = ember.nn.Parameter(ember.ones(2))
    opt = SelfScaling([w], lr=1.0)
    scaler = ember.amp.GradScaler()
    scaler.scale(w.sum()).backward()
    assert scaler.step(opt) == "stepped" and opt.seen is scaler
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)


def test_disabled_scaler_is_a_pass_through():
    scaler = ember.cuda.amp.GradScaler(enabled=False)
    assert not scaler.is_enabled()
    w, opt = _one_param()
    loss = w.sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    assert scaler.unscale_(opt) is None
    assert scaler.step(opt) is None
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, 0.0])  # stepped
    assert scaler.update() is None
    assert scaler.get_scale() == 1.0
    assert scaler._get_growth_tracker() == 0
    assert scaler.state_dict() == {}
    scaler.load_state_dict({})  # ignored
    # torch's disabled scaler behaves alike.
    tscaler = torch.cuda.amp.GradScaler(enabled=False)
    assert tscaler.get_scale() == 1.0 and tscaler.state_dict() == {}


def test_training_with_autocast_and_scaler():
    # A small bfloat16-autocast regression: the loss decreases and parameters stay float32.
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((32, 4)).astype(np.float32))
    y = x @ ember.tensor([[1.0], [-2.0], [0.5], [3.0]])
    model = ember.nn.Linear(4, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    scaler = ember.amp.GradScaler(init_scale=2.0**8, growth_interval=5)
    losses = []
    for _ in range(40):
        opt.zero_grad()
        with ember.autocast("cpu"):
            out = model(x)
            assert out.dtype == ember.bfloat16
            loss = ember.nn.functional.mse_loss(out, y)
            assert loss.dtype == ember.float32
        scaler.scale(loss).backward()
        assert model.weight.grad.dtype == ember.float32
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.05 * losses[0]
    assert model.weight.dtype == ember.float32
    assert scaler.get_scale() == 2.0**16  # 40 clean steps: grown 8 times from 2^8
