"""Python-level behaviour a PyTorch user relies on: where(condition), einsum's sublist format,
PyTorch's TypeError wording for bad argument types, range indices, and regressions of the bad
calls that test_fuzz_api.py found (each fails with a typed error instead of crashing)."""

import numpy as np
import pytest
import torch

import ember

# ---- where(condition) ----

@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["bool", "float32", "int64", "complex64"])
def test_where_one_argument(shape, dtype):
    rng = np.random.default_rng(0)
    a = np.asarray(rng.random(shape) > 0.5).astype(dtype)
    e, t = ember.tensor(a), torch.tensor(a)
    got, want = ember.where(e), torch.where(t)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == ember.int64
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_where_one_argument_strided():
    x = ember.tensor([[1, 0, 2], [0, 3, 0]]).t()
    got = ember.where(x)
    want = torch.where(torch.tensor([[1, 0, 2], [0, 3, 0]]).t())
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_where_three_arguments_unchanged():
    c = ember.tensor([True, False, True])
    got = ember.where(c, ember.tensor([1.0, 2.0, 3.0]), 0.0)
    np.testing.assert_array_equal(got.numpy(), [1.0, 0.0, 3.0])
    with pytest.raises(TypeError):
        ember.where(c, ember.tensor([1.0, 2.0, 3.0]))


# ---- einsum's sublist format ----

def _both(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    return [ember.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


@pytest.mark.parametrize("case", [
    ([(2, 3), (3, 4)], [[0, 1], [1, 2]], None),
    ([(2, 3), (3, 4)], [[0, 1], [1, 2]], [2, 0]),
    ([(3, 3)], [[0, 0]], None),
    ([(3, 3)], [[0, 0]], [0]),
    ([(2, 5, 3), (2, 3, 4)], [[..., 0, 1], [..., 1, 2]], [..., 0, 2]),
    ([(4,), (5,)], [[26], [51]], [26, 51]),
    ([(2, 3), (3,), (3,)], [[0, 1], [1], [1]], [0]),
])
def test_einsum_sublist(case):
    shapes, subs, out = case
    es, ts = _both(*shapes)
    eargs, targs = [], []
    for e, t, s in zip(es, ts, subs):
        eargs += [e, s]
        targs += [t, s]
    if out is not None:
        eargs.append(out)
        targs.append(out)
    np.testing.assert_allclose(ember.einsum(*eargs).numpy(), torch.einsum(*targs).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_einsum_sublist_strided():
    es, ts = _both((4, 3), (8, 5))
    got = ember.einsum(es[0].t(), [0, 1], es[1][::2], [1, 2])
    want = torch.einsum(ts[0].t(), [0, 1], ts[1][::2], [1, 2])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_einsum_sublist_errors():
    x = ember.ones(2, 2)
    with pytest.raises(ValueError, match=r"\[0, 52\)"):
        ember.einsum(x, [0, 52])
    with pytest.raises(ValueError, match=r"\[0, 52\)"):
        ember.einsum(x, [-1, 0])
    with pytest.raises(TypeError):
        ember.einsum(x, "ab")
    with pytest.raises(TypeError):
        ember.einsum(x, [0, "a"])
    with pytest.raises(TypeError):
        ember.einsum(x, [0, 1], "y", [1, 2])
    with pytest.raises(RuntimeError):  # more subscripts than dims
        ember.einsum(x, [0, 1, 2])


# ---- PyTorch's TypeError wording ----

def _pybind_functions():
    out = []
    for ns_name, ns in (("ember", ember._C), ("linalg", ember._C._linalg)):
        for name in sorted(dir(ns)):
            obj = getattr(ns, name)
            if type(obj).__name__ == "builtin_function_or_method" and \
                    (obj.__doc__ or "").startswith(name + "("):
                out.append((f"{ns_name}.{name}", obj))
    return out


def test_type_error_wording_matches_torch():
    x = ember.ones(2, 3)
    with pytest.raises(TypeError) as info:
        ember.tensordot(x, "a")
    msg = str(info.value)
    assert msg.startswith("tensordot() received an invalid combination of arguments - got "
                          "(Tensor, str), but expected ")
    assert "Tensor a, Tensor b" in msg
    assert "incompatible function arguments" not in msg


def test_type_error_lists_every_overload():
    with pytest.raises(TypeError) as info:
        ember.where({}, 1)
    msg = str(info.value)
    assert msg.startswith("where() received an invalid combination of arguments - got (dict, "
                          "int), but expected one of:\n * (Tensor condition, ")
    assert "\n * (Tensor condition)" in msg


def test_type_error_keyword_arguments_and_methods():
    x = ember.ones(2, 3)
    with pytest.raises(TypeError) as info:
        x.nonzero(as_tuple="yes")
    assert str(info.value) == ("nonzero() received an invalid combination of arguments - got "
                               "(as_tuple=str), but expected (*, bool as_tuple)")


def test_type_error_wording_on_every_binding():
    # Every pybind11 function, called with a dict where it takes none, gives PyTorch's wording.
    funcs = _pybind_functions()
    assert len(funcs) > 100
    checked = 0
    for label, fn in funcs:
        try:
            fn({"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}, {"e": 5}, {"f": 6}, {"g": 7}, {"h": 8},
               {"i": 9}, {"j": 10}, {"k": 11}, {"l": 12}, {"m": 13})
        except TypeError as e:
            msg = str(e)
            assert "incompatible function arguments" not in msg, label
            if "received an invalid combination of arguments" in msg:
                checked += 1
        except Exception:  # noqa: BLE001  (functions taking *args check types themselves)
            pass
    assert checked > 100


def test_type_error_on_tensor_methods():
    x = ember.ones(2, 3)
    bad = 0
    for name in sorted(dir(ember.Tensor)):
        if name.startswith("_"):
            continue
        fn = getattr(ember.Tensor, name, None)
        if not callable(fn) or isinstance(fn, type):
            continue
        try:
            fn(x, {"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}, {"e": 5}, {"f": 6}, {"g": 7}, {"h": 8})
        except TypeError as e:
            assert "incompatible function arguments" not in str(e), name
            bad += 1
        except Exception:  # noqa: BLE001
            pass
    assert bad > 100


# ---- range indices ----

@pytest.mark.parametrize("index", [
    range(3), range(0, 4, 2), range(0), range(3, 0, -1), range(-2, 0),
    (1, range(2)), (range(2), slice(None), 0), (range(2), range(1, 3)), (Ellipsis, range(1)),
    [range(2), 0],
])
def test_range_index(index):
    a = np.arange(4 * 3 * 2, dtype=np.float32).reshape(4, 3, 2)
    e, t = ember.tensor(a), torch.tensor(a)
    np.testing.assert_array_equal(e[index].numpy(), t[index].numpy())
    e2, t2 = ember.tensor(a), torch.tensor(a)
    e2[index] = -1.0
    t2[index] = -1.0
    np.testing.assert_array_equal(e2.numpy(), t2.numpy())


def test_range_index_out_of_bounds():
    with pytest.raises(IndexError):
        ember.zeros(3)[range(5)]
    with pytest.raises(IndexError):
        ember.zeros(3)[range(2), range(2)]


# ---- regressions found by the fuzzer ----

def test_unbound_method_with_a_non_tensor_self():
    # Tensor.squeeze_(-inf, True) crashed: the binding read -inf as a Tensor.
    for call in (lambda: ember.Tensor.squeeze_(-float("inf"), True),
                 lambda: ember.Tensor.nan_to_num_(-2 ** 62),
                 lambda: ember.Tensor.unsqueeze_("a", 0)):
        with pytest.raises(TypeError):
            call()


def test_tensor_split_runaway_sections():
    # 2**63 - 1 sections leaked std::length_error ("vector::reserve").
    x = ember.zeros(0, 0, 4, dtype=ember.bool)
    with pytest.raises(RuntimeError, match=r"\[tensor_split\]"):
        ember.tensor_split(x, 2 ** 63 - 1)
    assert len(ember.tensor_split(ember.zeros(3), 5)) == 5  # past the size: empty parts


def test_python_functions_reject_wrong_types_with_type_error():
    import ember.nn.functional as F
    for call in (lambda: F.log_softmax({"a": 1}), lambda: F.l1_loss(1j, ember.ones(2)),
                 lambda: F.unfold("gelu", 3), lambda: F.max_unpool2d(False, (3,), []),
                 lambda: ember.instance_norm(True, ember.ones(1), None, None, None, True, 0.1,
                                             1e-5)):
        with pytest.raises(TypeError, match="expected a Tensor"):
            call()


def test_group_norm_zero_groups():
    # ZeroDivisionError from the batch-size check before the core's own check.
    import ember.nn.functional as F
    with pytest.raises(RuntimeError):
        F.group_norm(ember.ones(5, 5, dtype=ember.float16), 0)
    with pytest.raises(RuntimeError):
        ember.group_norm(ember.ones(2, 4), 0)


def test_pixel_shuffle_huge_factor():
    # upscale_factor 2**40 squared wrapped to 0 and the divisibility check divided by zero.
    x = ember.zeros(4, 2, 1, 2, dtype=ember.int64)
    with pytest.raises(RuntimeError, match="pixel_shuffle"):
        ember.pixel_shuffle(x, 2 ** 40)
    with pytest.raises(RuntimeError, match="pixel_shuffle"):
        ember.nn.functional.pixel_shuffle(x, 2 ** 32)
    assert ember.pixel_shuffle(ember.zeros(1, 8, 2, 2), 2).shape == (1, 2, 4, 4)


@pytest.mark.parametrize("rwr", [(0, False), (1, False), (2, False), (3, False), (4, False),
                                 (1, True), (2, True), (3, True)])
def test_combinations_values(rwr):
    r, wr = rwr
    for n in (0, 1, 3, 4):
        x = np.arange(n) * 1.5
        got = ember.combinations(ember.tensor(x), r, with_replacement=wr)
        want = torch.combinations(torch.tensor(x), r, with_replacement=wr)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_huge_counts_fail_before_allocating():
    # Each sized a buffer from the count before any check (std::vector length_error or a
    # 2**63-iteration loop).
    with pytest.raises(RuntimeError, match="combinations"):
        ember.combinations(ember.arange(3), 2 ** 63 - 1, with_replacement=True)
    assert ember.combinations(ember.arange(3), 2 ** 62).shape == (0, 2 ** 62)
    with pytest.raises(RuntimeError, match="combinations"):
        ember.combinations(ember.arange(200), 100)
    with pytest.raises(RuntimeError, match="tril_indices"):
        ember.tril_indices(2 ** 63 - 1, 5)
    with pytest.raises(RuntimeError, match="triu_indices"):
        ember.triu_indices(5, 2 ** 63 - 1)
    # Rows past the last column hold no upper-triangle index: 5 + 4 + 3 + 2 + 1.
    assert ember.triu_indices(2 ** 63 - 1, 5).shape == (2, 15)
    for f in (ember.triu_indices, ember.tril_indices):
        assert f(2 ** 62, 0).shape == (2, 0)
    assert ember.triu_indices(2 ** 62, 3, 1).shape == (2, 3)
    assert ember.tril_indices(3, 2 ** 62, -1).shape == (2, 3)
    with pytest.raises(RuntimeError, match="chunk"):
        ember.zeros(0).chunk(2 ** 63 - 1)
    assert len(ember.zeros(0).chunk(5)) == 5


@pytest.mark.parametrize("row,col", [(0, 0), (0, 3), (3, 0), (1, 1), (3, 4), (4, 3), (5, 5)])
def test_triangle_indices_against_torch(row, col):
    for off in (-6, -2, -1, 0, 1, 2, 6):
        for name in ("tril_indices", "triu_indices"):
            got = getattr(ember, name)(row, col, off)
            want = getattr(torch, name)(row, col, off)
            assert tuple(got.shape) == tuple(want.shape), (name, row, col, off)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
