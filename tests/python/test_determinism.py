"""Deterministic mode: the flag API matches torch's, and reductions, scans and index
accumulation do not depend on the thread count or on the data's address (bitwise), flag on or
off (Note [Deterministic algorithms]). Float matrix products go to OpenBLAS, whose blocking
depends on its thread count: they are reproducible only for a fixed thread count."""

import numpy as np
import pytest
import torch

import ember


@pytest.fixture
def restore():
    threads = ember.get_num_threads()
    yield
    ember.use_deterministic_algorithms(False)
    ember.set_num_threads(threads)


def test_flag_roundtrip(restore):
    assert ember.are_deterministic_algorithms_enabled() is False
    assert ember.is_deterministic_algorithms_warn_only_enabled() is False
    ember.use_deterministic_algorithms(True)
    assert ember.are_deterministic_algorithms_enabled() is True
    assert ember.is_deterministic_algorithms_warn_only_enabled() is False
    ember.use_deterministic_algorithms(True, warn_only=True)
    assert ember.is_deterministic_algorithms_warn_only_enabled() is True
    ember.use_deterministic_algorithms(False)
    assert ember.are_deterministic_algorithms_enabled() is False
    assert ember.is_deterministic_algorithms_warn_only_enabled() is False


def test_flag_bad_input(restore):
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms(1)
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms("yes")


def _workloads():
    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.standard_normal((513, 1031)).astype(np.float32) * 1e3)
    big = ember.from_numpy(rng.standard_normal(1 << 21).astype(np.float32))
    idx = ember.from_numpy(rng.integers(0, 64, 1 << 16))
    src = ember.from_numpy(rng.standard_normal(1 << 16).astype(np.float32))
    return {
        "sum_all": lambda: big.sum(),
        "sum_dim0": lambda: x.sum(0),
        "sum_dim1": lambda: x.sum(1),
        "mean_t": lambda: x.t().mean(1),
        "var": lambda: x.var(0),
        "norm": lambda: ember.linalg.vector_norm(big),
        "logsumexp": lambda: x.logsumexp(1),
        "cumsum": lambda: x.cumsum(1),
        "scatter_add": lambda: ember.zeros(64).scatter_add(0, idx, src),
        "index_add": lambda: ember.zeros(64).index_add(0, idx, src),
        "index_put_acc": lambda: ember.zeros(64).index_put_((idx,), src, accumulate=True),
    }


@pytest.mark.parametrize("deterministic", [False, True])
def test_results_do_not_depend_on_thread_count(restore, deterministic):
    ember.use_deterministic_algorithms(deterministic)
    work = _workloads()
    results = {}
    for threads in (1, 2, 3):
        ember.set_num_threads(threads)
        for name, fn in work.items():
            r = fn().numpy()
            if name in results:
                np.testing.assert_array_equal(r, results[name], err_msg=f"{name} at {threads}")
            else:
                results[name] = r


@pytest.mark.parametrize("offset", [0, 1, 3, 5])
def test_sum_does_not_depend_on_address(offset):
    # The same values summed at another alignment (a view into a larger buffer, and a copy) give
    # bitwise the same result.
    rng = np.random.default_rng(1)
    a = rng.standard_normal(100_003 + 8).astype(np.float32) * 1e3
    base = ember.from_numpy(a)
    v = base[offset:offset + 100_003]
    c = v.clone()
    assert v.sum().item() == c.sum().item()
    assert v.double().sum().item() == c.double().sum().item()
    m = base[offset:offset + 100_000].view(400, 250)
    np.testing.assert_array_equal(m.sum(1).numpy(), m.clone().sum(1).numpy())
