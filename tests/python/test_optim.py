"""ember.optim against torch.optim (torch 1.13): every optimizer and option combination step
for step on a model-free problem (params of several shapes and layouts, incl. 0-dim, zero-size
and transposed), float32 and float64, parameter groups, state_dict round trips, zero_grad and
bad options."""

import numpy as np
import pytest
import torch

import ember
import ember.optim

CASES = {
    "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9),
            dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
            dict(lr=0.05, momentum=0.5, dampening=0.2, maximize=True)],
    "Adam": [dict(lr=0.1), dict(lr=0.1, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.95)),
             dict(lr=0.05, maximize=True, eps=1e-3)],
    "AdamW": [dict(lr=0.1), dict(lr=0.1, amsgrad=True, weight_decay=0.3, maximize=True)],
    "Adagrad": [dict(lr=0.1), dict(lr=0.1, lr_decay=0.05, weight_decay=0.1,
                                   initial_accumulator_value=0.3, maximize=True)],
    "RMSprop": [dict(lr=0.01), dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1),
                dict(lr=0.01, alpha=0.9, centered=True, maximize=True)],
    "Adadelta": [dict(), dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)],
    "Adamax": [dict(lr=0.1), dict(lr=0.1, weight_decay=0.1, betas=(0.8, 0.9), maximize=True)],
    "NAdam": [dict(lr=0.1), dict(lr=0.1, weight_decay=0.1, momentum_decay=0.01)],
    "RAdam": [dict(lr=0.1), dict(lr=0.1, weight_decay=0.1, betas=(0.8, 0.9))],
}
PARAMS = [(name, i) for name, cs in CASES.items() for i in range(len(cs))]
SHAPES = [(2, 3), (), (0, 3), (4,), "t"]


def _np(t):
    return np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == "float32" else dict(rtol=1e-11, atol=1e-12)


class Problem:
    """The same parameters in ember and torch; loss = sum(c * p^2) + sum(d * p)."""

    def __init__(self, dtype, seed=0):
        rng = np.random.default_rng(seed)
        self.e, self.t, self.ce, self.ct = [], [], [], []
        for s in SHAPES:
            shape = (3, 2) if s == "t" else s
            v = rng.standard_normal(shape)
            c = rng.uniform(0.5, 2.0, shape)
            d = rng.uniform(-0.5, 0.5, shape)
            pe = ember.tensor(v.tolist(), dtype=getattr(ember, dtype)).reshape(shape)
            pt = torch.tensor(v, dtype=getattr(torch, dtype))
            if s == "t":  # a non-contiguous leaf
                pe, pt = pe.t().detach(), pt.t().detach()
                c, d = c.T, d.T
            self.e.append(pe.requires_grad_())
            self.t.append(pt.requires_grad_())
            self.ce.append((ember.tensor(c.tolist(), dtype=getattr(ember, dtype)).reshape(c.shape),
                            ember.tensor(d.tolist(), dtype=getattr(ember, dtype)).reshape(d.shape)))
            self.ct.append((torch.tensor(c, dtype=getattr(torch, dtype)),
                            torch.tensor(d, dtype=getattr(torch, dtype))))
        assert not self.e[-1].is_contiguous()

    def loss_e(self):
        return sum(((c * p * p).sum() + (d * p).sum() for p, (c, d) in zip(self.e, self.ce)),
                   ember.tensor(0.0, dtype=self.e[0].dtype))

    def loss_t(self):
        return sum(((c * p * p).sum() + (d * p).sum() for p, (c, d) in zip(self.t, self.ct)),
                   torch.tensor(0.0, dtype=self.t[0].dtype))

    def step(self, oe, ot):
        oe.zero_grad()
        ot.zero_grad()
        self.loss_e().backward()
        self.loss_t().backward()
        oe.step()
        ot.step()

    def check(self, dtype):
        for pe, pt in zip(self.e, self.t):
            np.testing.assert_allclose(_np(pe), _np(pt), **_tol(dtype))
            assert tuple(pe.shape) == tuple(pt.shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,case", PARAMS)
def test_matches_torch_step_for_step(name, case, dtype):
    kw = CASES[name][case]
    pr = Problem(dtype)
    oe = getattr(ember.optim, name)(pr.e, **kw)
    ot = getattr(torch.optim, name)(pr.t, **kw)
    for _ in range(12):
        pr.step(oe, ot)
        pr.check(dtype)
    # Same state entries and values as torch.
    for pe, pt in zip(pr.e, pr.t):
        se, st = oe.state[pe], ot.state[pt]
        assert sorted(se) == sorted(st)
        for k in st:
            if isinstance(st[k], torch.Tensor):
                assert isinstance(se[k], ember.Tensor), k
                np.testing.assert_allclose(_np(se[k]), st[k].detach().double().numpy(),
                                           **_tol(dtype))
                if k != "step" and k != "mu_product":
                    assert se[k].dtype == pe.dtype
            else:
                assert se[k] == st[k], k


@pytest.mark.parametrize("name", list(CASES))
def test_param_groups_with_different_options(name):
    kw = CASES[name][-1]
    other = dict(lr=0.02) if name != "Adadelta" else dict(lr=0.3)
    pr = Problem("float64", seed=1)
    oe = getattr(ember.optim, name)([{"params": pr.e[:2]}, {"params": pr.e[2:], **other}], **kw)
    ot = getattr(torch.optim, name)([{"params": pr.t[:2]}, {"params": pr.t[2:], **other}], **kw)
    assert len(oe.param_groups) == 2
    assert oe.param_groups[1]["lr"] == other["lr"]
    assert sorted(oe.param_groups[0]) == sorted(k for k in ot.param_groups[0])
    for _ in range(6):
        pr.step(oe, ot)
    pr.check("float64")


@pytest.mark.parametrize("name", list(CASES))
def test_state_dict_round_trip(name):
    kw = CASES[name][-1]
    ref = Problem("float64", seed=2)
    ot = getattr(torch.optim, name)(ref.t, **kw)
    oe = getattr(ember.optim, name)(ref.e, **kw)
    for _ in range(5):
        ref.step(oe, ot)
    sd = oe.state_dict()
    sdt = ot.state_dict()
    # torch's layout: state by parameter index, groups with the indices of their parameters.
    assert sorted(sd) == ["param_groups", "state"]
    assert sorted(sd["state"]) == sorted(sdt["state"])
    assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in sdt["param_groups"]]
    assert sorted(sd["param_groups"][0]) == sorted(sdt["param_groups"][0])
    for i in sdt["state"]:
        assert sorted(sd["state"][i]) == sorted(sdt["state"][i])
    # Continue in a new optimizer on copies of the parameters: same result as not stopping.
    copies = [ember.tensor(p.tolist(), dtype=p.dtype).reshape(p.shape) for p in ref.e]
    copies[-1] = ember.tensor(ref.e[-1].t().tolist(), dtype=ember.float64).t().detach()
    copies = [c.requires_grad_() for c in copies]
    o2 = getattr(ember.optim, name)(copies, **kw)
    o2.load_state_dict(sd)
    sd["state"].clear()  # the optimizer holds its own copy
    for _ in range(5):
        ref.step(oe, ot)
        o2.zero_grad()
        sum(((c * p * p).sum() + (d * p).sum() for p, (c, d) in zip(copies, ref.ce)),
            ember.tensor(0.0, dtype=ember.float64)).backward()
        o2.step()
    ref.check("float64")
    for a, b in zip(copies, ref.e):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-13, atol=1e-14)


def test_load_state_dict_errors_and_dtype_cast():
    p = ember.ones(3, requires_grad=True)
    q = ember.ones(2, requires_grad=True)
    o = ember.optim.Adam([p, q], lr=0.1)
    (p * p).sum().backward()
    o.step()
    sd = o.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        ember.optim.Adam([{"params": [p]}, {"params": [q]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        ember.optim.Adam([p]).load_state_dict(sd)
    # States are cast to the parameter's dtype, except step.
    p64 = ember.ones(3, dtype=ember.float64, requires_grad=True)
    o64 = ember.optim.Adam([p64, q])
    o64.load_state_dict(sd)
    st = o64.state[p64]
    assert st["exp_avg"].dtype == ember.float64
    assert st["step"].dtype == ember.float32
    assert o64.param_groups[0]["lr"] == 0.1


def test_state_is_keyed_by_parameter_object():
    p = ember.ones(2, requires_grad=True)
    o = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    (p * 2).sum().backward()
    o.step()
    assert p in o.state
    assert list(o.state) == [p]
    buf = o.state[p]["momentum_buffer"]
    np.testing.assert_allclose(_np(buf), [2.0, 2.0])
    assert ember.ones(2, requires_grad=True) not in o.state
    # Without momentum torch stores momentum_buffer = None.
    o2 = ember.optim.SGD([p], lr=0.1)
    o2.step()
    assert o2.state[p] == {"momentum_buffer": None}


def test_zero_grad():
    p = ember.ones(2, requires_grad=True)
    o = ember.optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    ptr = p.grad.data_ptr()
    o.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.data_ptr() == ptr
    np.testing.assert_array_equal(_np(p.grad), [0.0, 0.0])
    o.zero_grad()
    assert p.grad is None
    o.step()  # no gradients: nothing changes
    np.testing.assert_array_equal(_np(p), [1.0, 1.0])


def test_closure_and_no_grad_leaf_update():
    p = ember.tensor([1.0, -2.0], requires_grad=True)
    o = ember.optim.Adam([p], lr=0.1)
    calls = []

    def closure():
        calls.append(ember.is_grad_enabled())
        o.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    v = p._version
    with ember.no_grad():
        loss = o.step(closure)
    assert calls == [True]
    assert float(loss) == 5.0
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert p._version > v
    np.testing.assert_allclose(_np(p), [0.9, -1.9], rtol=1e-6)
    assert o.step() is None


def test_bfloat16_params_follow_float32():
    pe = ember.tensor([1.0, -2.0, 0.5], dtype=ember.bfloat16, requires_grad=True)
    pt = torch.tensor([1.0, -2.0, 0.5], dtype=torch.bfloat16, requires_grad=True)
    oe, ot = ember.optim.Adam([pe], lr=0.1), torch.optim.Adam([pt], lr=0.1)
    for _ in range(3):
        for o, p in ((oe, pe), (ot, pt)):
            o.zero_grad()
            (p.float() * p.float()).sum().backward()
            o.step()
    assert pe.dtype == ember.bfloat16
    np.testing.assert_allclose(_np(pe.float()), pt.detach().float().numpy(), rtol=2e-2, atol=1e-2)


@pytest.mark.parametrize("name,kw,msg", [
    ("SGD", dict(lr=-1), "Invalid learning rate: -1"),
    ("SGD", dict(lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    ("SGD", dict(lr=0.1, nesterov=True), "Nesterov momentum requires a momentum"),
    ("Adam", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Adam", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("Adam", dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    ("AdamW", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Adagrad", dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    ("Adagrad", dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value value"),
    ("RMSprop", dict(alpha=-1), "Invalid alpha value: -1"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adamax", dict(lr=-0.5), "Invalid learning rate: -0.5"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
])
def test_bad_options_raise_like_torch(name, kw, msg):
    with pytest.raises(ValueError) as te:
        getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as ee:
        getattr(ember.optim, name)([ember.ones(1, requires_grad=True)], **kw)
    assert msg in str(te.value)
    assert str(ee.value) == str(te.value)


def test_bad_params():
    p = ember.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        ember.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        ember.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        ember.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        ember.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        ember.optim.SGD([p, 1.0], lr=0.1)
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        ember.optim.SGD([p])
    with pytest.raises(TypeError, match="ordered collections"):
        ember.optim.SGD([{"params": {1}}], lr=0.1)
    o = ember.optim.SGD([p], lr=0.1)
    o.add_param_group({"params": ember.zeros(3, requires_grad=True), "lr": 0.5})
    assert o.param_groups[1]["lr"] == 0.5 and o.param_groups[1]["momentum"] == 0
    # A gradient of the wrong shape is an error, not a read out of bounds.
    q = ember.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="different size"):
        q.grad = ember.ones(2)


def test_fused_kernels_direct():
    from ember import _C
    p = ember.ones(5)
    g = ember.full((5,), 2.0)
    m, v = ember.zeros(5), ember.zeros(5)
    step = ember.tensor(0.0)
    _C._optim.adam_step([p], [g], [m], [v], [], [step], lr=0.1, beta1=0.9, beta2=0.999,
                        eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False)
    assert float(step) == 1.0
    np.testing.assert_allclose(_np(p), [0.9] * 5, rtol=1e-6)
    with pytest.raises(RuntimeError, match="has shape"):
        _C._optim.adam_step([p], [ember.ones(3)], [m], [v], [], [step], lr=0.1, beta1=0.9,
                            beta2=0.999, eps=1e-8, weight_decay=0.0, amsgrad=False,
                            maximize=False)
    np.testing.assert_allclose(_np(p), [0.9] * 5, rtol=1e-6)
    with pytest.raises(ValueError, match="one per parameter"):
        _C._optim.adam_step([p], [g, g], [m], [v], [], [step], lr=0.1, beta1=0.9, beta2=0.999,
                            eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False)
    bufs = _C._optim.sgd_step([p], [g], [None], lr=0.1, momentum=0.9, dampening=0.0,
                              weight_decay=0.0, nesterov=False, maximize=False)
    np.testing.assert_allclose(_np(bufs[0]), [2.0] * 5)


def _rosenbrock(lib, x):
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [dict(lr=0.1, max_iter=10),
                                dict(lr=1, max_iter=15, line_search_fn="strong_wolfe",
                                     history_size=5),
                                dict(lr=1, max_iter=40, max_eval=30, tolerance_grad=1e-4,
                                     line_search_fn="strong_wolfe")])
def test_lbfgs_matches_torch(kw, dtype):
    x0 = [-1.5, 2.0, 0.5, -0.3]
    xe = ember.tensor(x0, dtype=getattr(ember, dtype), requires_grad=True)
    xt = torch.tensor(x0, dtype=getattr(torch, dtype), requires_grad=True)
    oe, ot = ember.optim.LBFGS([xe], **kw), torch.optim.LBFGS([xt], **kw)

    def closure_for(lib, o, x):
        def closure():
            o.zero_grad()
            loss = _rosenbrock(lib, x)
            loss.backward()
            return loss
        return closure

    tol = dict(rtol=1e-9, atol=1e-10) if dtype == "float64" else dict(rtol=2e-3, atol=2e-3)
    for _ in range(3):
        le = oe.step(closure_for(ember, oe, xe))
        lt = ot.step(closure_for(torch, ot, xt))
        np.testing.assert_allclose(float(le), float(lt), **tol)
        np.testing.assert_allclose(_np(xe), _np(xt), **tol)
    if dtype == "float64":
        assert oe.state[xe]["func_evals"] == ot.state[xt]["func_evals"]
        assert oe.state[xe]["n_iter"] == ot.state[xt]["n_iter"]
    assert oe.param_groups[0]["max_eval"] == ot.param_groups[0]["max_eval"]


def test_lbfgs_errors():
    p = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        ember.optim.LBFGS([{"params": [p]}, {"params": [ember.ones(1, requires_grad=True)]}])
    o = ember.optim.LBFGS([p], line_search_fn="armijo")

    def closure():
        o.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        o.step(closure)


def test_adagrad_share_memory_shares_its_accumulators():
    for lib in (torch, ember):
        m = lib.nn.Linear(2, 2)
        opt = lib.optim.Adagrad(m.parameters())
        assert not any(opt.state[p]["sum"].is_shared() for p in m.parameters())
        opt.share_memory()
        assert all(opt.state[p]["sum"].is_shared() for p in m.parameters())
