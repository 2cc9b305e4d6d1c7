"""ember.optim.lr_scheduler against torch.optim.lr_scheduler (torch 1.13): the rates (and cycled
momenta) of two parameter groups epoch by epoch, chained/sequential schedulers, closed forms,
state dicts and bad arguments."""

import warnings

import pytest
import torch

import ember
import ember.optim
from ember.optim import lr_scheduler as ES

TS = torch.optim.lr_scheduler


def _pair(opt="SGD"):
    """The same two-group optimizer in ember and torch."""
    out = []
    for lib in (ember, torch):
        p1, p2 = lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)
        groups = [{"params": [p1]}, {"params": [p2], "lr": 0.05}]
        if opt == "SGD":
            out.append(lib.optim.SGD(groups, lr=0.1, momentum=0.9))
        else:
            out.append(lib.optim.Adam(groups, lr=0.1))
    return out


def _mom(o):
    return [g.get("momentum", g.get("betas", (None,))[0]) for g in o.param_groups]


CASES = {
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 0.9 ** e),
    "LambdaLRList": lambda m, o: m.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95),
    "StepLR": lambda m, o: m.StepLR(o, 4, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, [3, 7, 7, 12], gamma=0.3),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=8),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, 0.85),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=10, power=2.0),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.002),
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4,
                                        step_size_down=3, mode="triangular2"),
    "CyclicLRExp": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5,
                                           mode="exp_range", gamma=0.97),
    "CyclicLRCustom": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                              scale_fn=lambda x: 0.5 ** x,
                                              scale_mode="iterations"),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=30),
    "OneCycleLR3": lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 0.2], epochs=3, steps_per_epoch=10,
                                             three_phase=True, anneal_strategy="linear"),
}


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_epoch_by_epoch(name, opt):
    if name.startswith("Cyclic") and opt == "Adam":
        pytest.skip("CyclicLR cycles `momentum`, which Adam has not (checked below)")
    oe, ot = _pair(opt)
    se, st = CASES[name](ES, oe), CASES[name](TS, ot)
    for epoch in range(28):
        assert se.last_epoch == st.last_epoch
        assert se.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-14, abs=1e-15)
        assert [g["lr"] for g in oe.param_groups] == pytest.approx(
            [g["lr"] for g in ot.param_groups], rel=1e-14, abs=1e-15)
        assert _mom(oe) == pytest.approx(_mom(ot), rel=1e-14)
        if name.startswith("OneCycle") and epoch == 27:
            break
        oe.step()
        ot.step()
        se.step()
        st.step()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sequential_and_chained():
    for build in (
            lambda m, o: m.SequentialLR(o, [m.ConstantLR(o, factor=0.5, total_iters=3),
                                            m.ExponentialLR(o, 0.9)], milestones=[5]),
            lambda m, o: m.SequentialLR(o, [m.LinearLR(o, start_factor=0.1, total_iters=4),
                                            m.StepLR(o, 3, 0.5),
                                            m.CosineAnnealingLR(o, 5)], milestones=[4, 10]),
            lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.5, total_iters=3),
                                             m.ExponentialLR(o, 0.9)])):
        oe, ot = _pair()
        se, st = build(ES, oe), build(TS, ot)
        for _ in range(20):
            assert se.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-14)
            assert [g["lr"] for g in oe.param_groups] == pytest.approx(
                [g["lr"] for g in ot.param_groups], rel=1e-14)
            se.step()
            st.step()
    oe, _ = _pair()
    with pytest.raises(ValueError, match="number of schedulers provided to be one more"):
        ES.SequentialLR(oe, [ES.StepLR(oe, 2), ES.StepLR(oe, 3)], milestones=[])
    other, _ = _pair()
    with pytest.raises(ValueError, match="same optimizer"):
        ES.ChainedScheduler([ES.StepLR(oe, 2), ES.StepLR(other, 3)])


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", threshold_mode="abs", threshold=0.05),
                                dict(patience=2, factor=0.5, cooldown=1, threshold=0.01,
                                     min_lr=[0.02, 0.001])])
def test_reduce_lr_on_plateau(kw):
    oe, ot = _pair()
    se, st = ES.ReduceLROnPlateau(oe, **kw), TS.ReduceLROnPlateau(ot, **kw)
    metrics = [1.0, 0.9, 0.95, 0.91, 0.9, 0.89, 0.7, 0.71, 0.72, 0.73, 0.74] + [0.6] * 14 + \
        [0.5] * 14
    for m in metrics:
        se.step(m)
        st.step(torch.tensor(m))
        assert [g["lr"] for g in oe.param_groups] == [g["lr"] for g in ot.param_groups]
        assert se.num_bad_epochs == st.num_bad_epochs
        assert se.get_last_lr() == st._last_lr
    sd = se.state_dict()
    assert "optimizer" not in sd and sd["best"] == st.state_dict()["best"]
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ES.ReduceLROnPlateau(oe, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown"):
        ES.ReduceLROnPlateau(oe, mode="avg")


def test_closed_form_with_epoch_argument():
    for name in ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                 "ConstantLR", "PolynomialLR"]:
        oe, ot = _pair()
        se, st = CASES[name](ES, oe), CASES[name](TS, ot)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in [3, 7, 2, 9]:
                se.step(epoch)
                st.step(epoch)
                assert se.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-14), name
    oe, ot = _pair()
    se = ES.CosineAnnealingWarmRestarts(oe, T_0=3, T_mult=2)
    st = TS.CosineAnnealingWarmRestarts(ot, T_0=3, T_mult=2)
    for epoch in [0.5, 4, 10.25, 2]:
        se.step(epoch)
        st.step(epoch)
        assert se.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-14)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_state_dict_round_trip_and_keys():
    oe, ot = _pair()
    se, st = ES.StepLR(oe, 3, gamma=0.5), TS.StepLR(ot, 3, gamma=0.5)
    for _ in range(4):
        se.step()
        st.step()
    sd = se.state_dict()
    assert sorted(sd) == sorted(st.state_dict())
    oe2, _ = _pair()
    s2 = ES.StepLR(oe2, 3, gamma=0.5)
    s2.load_state_dict(sd)
    for g, lr in zip(oe2.param_groups, se.get_last_lr()):
        g["lr"] = lr
    for _ in range(5):
        se.step()
        s2.step()
        assert s2.get_last_lr() == se.get_last_lr()
    # LambdaLR keeps the state of callable objects, not plain functions.

    class Decay:
        def __init__(self):
            self.k = 0.5

        def __call__(self, e):
            return self.k ** e

    oe, _ = _pair()
    fn = Decay()
    sl = ES.LambdaLR(oe, [fn, lambda e: 1.0])
    sd = sl.state_dict()
    assert sd["lr_lambdas"] == [{"k": 0.5}, None]
    fn.k = 0.1
    sl.load_state_dict(sd)
    assert fn.k == 0.5


def test_warnings_and_errors():
    oe, _ = _pair()
    s = ES.StepLR(oe, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ES.StepLR(object(), 2)
    with pytest.raises(KeyError, match="initial_lr"):
        ES.StepLR(_pair()[0], 2, last_epoch=3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        ES.ConstantLR(oe, factor=2)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        ES.LambdaLR(oe, [lambda e: 1.0])
    with pytest.raises(ValueError, match="positive integer T_0"):
        ES.CosineAnnealingWarmRestarts(oe, T_0=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        ES.OneCycleLR(oe, max_lr=0.1)
    adam, _ = _pair("Adam")
    with pytest.raises(ValueError, match="must support momentum"):
        ES.CyclicLR(adam, 0.01, 0.1)
    one = ES.OneCycleLR(oe, max_lr=0.1, total_steps=3)
    for _ in range(3):
        one.step()
    with pytest.raises(ValueError, match="Tried to step 5 times"):
        one.step()
    assert ES._LRScheduler is ES.LRScheduler
