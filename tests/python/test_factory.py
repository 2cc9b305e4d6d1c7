"""Factories, ember.tensor / as_tensor and random numbers against torch 1.13 (values where
deterministic; for random numbers: shapes, dtypes, ranges, moments and reproducibility)."""

import numpy as np
import pytest
import torch

import ember
from _oracle import (COMPLEX, DTYPES, INTS, check, check_lowp, make, name, raises_like,
                     to_numpy)

SIZE_FORMS = [((2, 3), {}), (((2, 3),), {}), (([2, 3],), {}), ((), {"size": (2, 3)}),
              ((np.int64(2), 3), {}), ((4,), {}), ((0, 3), {}), (((),), {}), ((1, 1, 1), {})]


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_sized_factories(factory):
    for args, kw in SIZE_FORMS:
        check(lambda L: getattr(L, factory)(*args, **kw).shape, what=f"{factory}{args}{kw}")
        check(lambda L: getattr(L, factory)(*args, **kw).dtype)
        check(lambda L: getattr(L, factory)(*args, **kw).stride())
        if factory in ("zeros", "ones"):
            check(lambda L: getattr(L, factory)(*args, **kw))
    check(lambda L: getattr(L, factory)(L.Size([2, 3])).shape)
    check(lambda L: getattr(L, factory)((2, L.tensor(3))).shape)
    for d in DTYPES:
        check(lambda L: getattr(L, factory)(2, 3, dtype=getattr(L, d)).dtype, key=(factory, d),
              what=f"{factory} {d}")
        if factory in ("zeros", "ones"):
            check(lambda L: getattr(L, factory)(2, 3, dtype=getattr(L, d)))
    for py_type in [float, int, bool]:
        check(lambda L: getattr(L, factory)(2, dtype=py_type).dtype)
    for dev in ["cpu", ember.device("cpu"), "cpu:0"]:
        check(lambda L: getattr(L, factory)(2, device=dev if isinstance(dev, str) else
                                            L.device("cpu")).device)
    check(lambda L: getattr(L, factory)(2, layout=L.strided).shape)
    check(lambda L: getattr(L, factory)(2, pin_memory=False).shape)
    check(lambda L: getattr(L, factory)(2, requires_grad=True).requires_grad)
    check(lambda L: getattr(L, factory)(2, dtype=L.float64, requires_grad=True).requires_grad)


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_sized_factory_errors(factory):
    f = factory
    for bad_args, kw in [((-1,), {}), ((2, -3), {}), ((2.5,), {}), (("a",), {}), ((), {}),
                         ((2,), {"bogus": 1}), ((2,), {"dtype": "float32"}),
                         ((2,), {"device": "bogus"}), ((2,), {"device": 1.5}),
                         ((2,), {"out": 3}), (((2, 2.5),), {}), ((2,), {"requires_grad": 1}),
                         (([2, None],), {}), ((2,), {"size": (2,)})]:
        raises_like(lambda L: getattr(L, f)(*bad_args, **kw))
    raises_like(lambda L: getattr(L, f)(2, dtype=L.int64, requires_grad=True))
    if f in ("rand", "randn"):
        for d in INTS + ["bool"]:
            raises_like(lambda L: getattr(L, f)(2, dtype=getattr(L, d)), key=(f, d))


def test_out_argument():
    for f in ["zeros", "ones", "rand", "randn"]:
        for out_dtype in ["float32", "float64", "int32", "complex64"]:
            def fn(L):
                o = L.empty(0, dtype=getattr(L, out_dtype))
                r = getattr(L, f)(2, 3, out=o)
                assert r is o
                return (o.shape, o.dtype) if f in ("rand", "randn") else o
            check(fn, what=f"{f} out={out_dtype}", key=(f, "out", out_dtype))
        raises_like(lambda L: getattr(L, f)(2, dtype=L.float64, out=L.empty(0)))

    def same_shape(L):
        o = L.empty(2, 3).t()
        r = L.ones(3, 2, out=o)
        return r, r.stride()
    check(same_shape)
    check(lambda L: L.full((2,), 3, out=L.empty(0)))
    check(lambda L: L.full((2,), 3.5, out=L.empty(0, dtype=L.int32)))
    check(lambda L: L.arange(4, out=L.empty(0, dtype=L.int8)))
    check(lambda L: L.arange(0.5, 2, 0.5, out=L.empty(0, dtype=L.float64)))
    check(lambda L: L.linspace(0, 1, 3, out=L.empty(0, dtype=L.float64)))
    check(lambda L: L.eye(2, out=L.empty(0, dtype=L.int32)))
    check(lambda L: L.randperm(4, out=L.empty(0, dtype=L.int32)).sort()[0] if L is torch else
          L.tensor(sorted(L.randperm(4, out=L.empty(0, dtype=L.int32)).tolist()),
                   dtype=L.int32))
    check(lambda L: L.randint(5, (3,), out=L.empty(0, dtype=L.int16)).dtype)
    # A nonempty out of another shape: torch 1.13 resizes it with a deprecation warning; ember
    # does what torch announces (only empty outs are resized) and raises.
    with pytest.raises(RuntimeError):
        ember.zeros(2, 3, out=ember.empty(5))


def test_full():
    for v in [3, 2.5, True, 1 + 2j, -1, np.float32(1.5), np.int32(4), np.float64(2), 7]:
        check(lambda L: L.full((2, 3), v), what=f"full {v!r}")
        check(lambda L: L.full([2], v, dtype=L.float64))
        check(lambda L: L.full((), v))
    for d in DTYPES:
        check(lambda L: L.full((2,), 1, dtype=getattr(L, d)))
        check(lambda L: L.full((2,), True, dtype=getattr(L, d)))
    check(lambda L: L.full((2,), 2.7, dtype=L.int32))
    check(lambda L: L.full(size=(2,), fill_value=2.0, requires_grad=True).requires_grad)
    raises_like(lambda L: L.full((2,), "a"))
    raises_like(lambda L: L.full((2,)))
    raises_like(lambda L: L.full((2,), 1j, dtype=L.float32))
    raises_like(lambda L: L.full((-1,), 1))
    raises_like(lambda L: L.full((2,), [1, 2]))
    # torch 1.13 fills np.bool_ as a float (float32 result); ember as the bool it holds.
    assert ember.full((2,), np.bool_(True)).dtype == ember.bool


@pytest.mark.parametrize("dtype", DTYPES)
def test_like_factories(dtype):
    for layout in ["contiguous", "transposed", "strided", "broadcast", "scalar", "zero"]:
        x = make(dtype, layout)
        for f in ["zeros_like", "ones_like"]:
            check(lambda L, a: getattr(L, f)(a), x, what=f"{f} {layout}")
            check(lambda L, a: getattr(L, f)(a).stride(), x, what=f"{f} strides {layout}")
            check(lambda L, a: getattr(L, f)(a, dtype=L.float64), x)
        check(lambda L, a: L.empty_like(a).stride(), x)
        check(lambda L, a: (L.empty_like(a).shape, L.empty_like(a).dtype), x)
        check(lambda L, a: L.full_like(a, 1), x, what=f"full_like {layout}")
        check(lambda L, a: L.full_like(a, 2.5, dtype=L.float32), x)
        for f in ["rand_like", "randn_like"]:
            check(lambda L, a: getattr(L, f)(a).shape, x, key=(f, dtype, layout == "zero"))
            check(lambda L, a: getattr(L, f)(a).stride(), x, key=(f, dtype, layout == "zero"))
    raises_like(lambda L: L.zeros_like(3))
    raises_like(lambda L: L.full_like(L.ones(2), "a"))
    raises_like(lambda L: L.zeros_like(L.ones(2), bogus=1))


ARANGE = [(5,), (5.0,), (1, 5), (1, 5, 2), (0, 1, 0.25), (5, 0, -1), (-3, 3, 2), (0, 0),
          (0.5, 2.5), (np.int64(4),), (1, 10, 3.5), (10, 1, -2.5)]


def test_arange():
    for args in ARANGE:
        check(lambda L: L.arange(*args), what=f"arange{args}")
        for d in ["float64", "int32", "float16", "bfloat16", "int8"]:
            check(lambda L: L.arange(*args, dtype=getattr(L, d)), what=f"arange{args} {d}")
    check(lambda L: L.arange(L.tensor(3)))
    check(lambda L: L.arange(end=4))
    check(lambda L: L.arange(start=1, end=4))
    check(lambda L: L.arange(1, 4, step=2))
    check(lambda L: L.arange(1, end=4, step=2, dtype=L.float64))
    check(lambda L: L.arange(3, requires_grad=True, dtype=L.float32).requires_grad)
    for bad in [(0, 5, 0), (5, 0), (0, 5, -1), ("a",), (1j,), ()]:
        raises_like(lambda L: L.arange(*bad))
    raises_like(lambda L: L.arange(start=1))
    raises_like(lambda L: L.arange(3, dtype=L.bool))


def test_linspace_logspace():
    for args in [(0, 1, 5), (0, 10, 5), (-1, 1, 1), (0, 1, 0), (2, -3, 6), (0.5, 0.25, 3)]:
        for d in [None, "float64", "int64", "float16", "complex64", "int8"]:
            kw = {} if d is None else {"dtype": d}
            tol = (2e-2, 1e-2) if d == "float16" else (1e-5, 1e-5)
            check_lowp(lambda L: L.linspace(*args, **{k: getattr(L, v) for k, v in kw.items()}),
                       dtype=d, what=f"linspace{args} {d}", rtol=tol[0], atol=tol[1])
            check_lowp(lambda L: L.logspace(*args, **{k: getattr(L, v) for k, v in kw.items()}),
                       dtype=d, what=f"logspace{args} {d}", rtol=tol[0], atol=tol[1])
        check(lambda L: L.logspace(*args, base=2))
        check(lambda L: L.logspace(*args, 2.0, dtype=L.float64))
    check(lambda L: L.linspace(start=0, end=1, steps=3))
    check(lambda L: L.linspace(0, 1, steps=np.int64(3)))
    raises_like(lambda L: L.linspace(0, 1, -1))
    raises_like(lambda L: L.linspace(0, 1))
    raises_like(lambda L: L.linspace(0, 1, 2.5))
    raises_like(lambda L: L.logspace(0, 1, -2))


def test_eye_empty_strided_scalar_tensor():
    for args in [(3,), (2, 3), (3, 2), (0,), (1, 0), (0, 4)]:
        for d in ["float32", "int32", "bool", "complex64", "bfloat16"]:
            check_lowp(lambda L: L.eye(*args, dtype=getattr(L, d)), dtype=d, what=f"eye{args} {d}")
    check(lambda L: L.eye(2, m=3))
    check(lambda L: L.eye(n=2))
    raises_like(lambda L: L.eye(-1))
    raises_like(lambda L: L.eye(2, -1))
    raises_like(lambda L: L.eye(2.5))
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((), ()), ((0, 2), (2, 1)),
                         ((2, 2), (0, 1))]:
        check(lambda L: L.empty_strided(size, stride).stride())
        check(lambda L: L.empty_strided(size, stride, dtype=L.int8).shape)
    raises_like(lambda L: L.empty_strided((2, 3), (1,)))
    for v in [3, 2.5, True, -1]:
        for d in [None, "float64", "int64", "bool", "complex64"]:
            kw = {} if d is None else {"dtype": d}
            check(lambda L: L.scalar_tensor(v, **{k: getattr(L, x) for k, x in kw.items()}))
    check(lambda L: L.scalar_tensor(1j, dtype=L.complex64))
    raises_like(lambda L: L.scalar_tensor(1j))
    raises_like(lambda L: L.scalar_tensor("a"))


# ---- ember.tensor ----

TENSOR_DATA = [
    3, 2.5, True, 1 + 2j, [], [[]], [[], []], [1, 2, 3], [1.5, 2], [True, False], [1, 2.0],
    [True, 1], [True, 2.5], [1, 2j], [[1, 2], [3, 4]], [[[1], [2]], [[3], [4]]], (1, 2),
    ((1, 2), [3, 4]), range(4), [range(2), range(2)], [-1, 2 ** 62], [1e300], [float("nan")],
    [float("inf"), -0.0], np.float32(2.5), np.float64(1), np.int32(3), np.int64(-4), np.uint8(7),
    np.int8(-3), np.int16(5), np.float16(0.5), np.bool_(True), np.complex64(1j),
    np.complex128(2 - 1j), [np.float32(2), 1], [np.int32(2), 1], [np.float16(1), np.int64(3)],
    [np.bool_(True), 2], [np.uint8(200), np.int8(-1)], np.array(5.0), np.array([1, 2], np.int16),
    np.array([[1.5], [2]], np.float32), np.arange(6).reshape(2, 3)[:, ::2],
    [np.array([1, 2]), np.array([3, 4])], np.zeros((0, 2)), np.array([True]),
]


def numpy_scalar_quirk(data, dtype):
    """torch 1.13 refuses NumPy float scalars (other than float64) for integer dtypes
    (TypeError) and drops the imaginary part of NumPy complex scalars for real dtypes; ember
    converts NumPy scalars as the Python numbers they hold (test_numpy_scalar_elements)."""
    items = data if isinstance(data, list) else [data]
    for x in items:
        if isinstance(x, (np.float32, np.float16)) and dtype in INTS + ["bool"]:
            return True
        if isinstance(x, np.complexfloating) and dtype not in COMPLEX:
            return True
    return False


@pytest.mark.parametrize("data", TENSOR_DATA, ids=lambda d: repr(d)[:40])
def test_tensor_inference(data):
    check(lambda L: L.tensor(data), what=repr(data))
    for d in ["float64", "int32", "bool", "complex128", "float16", "bfloat16", "uint8"]:
        if numpy_scalar_quirk(data, d):
            continue
        check(lambda L: L.tensor(data, dtype=getattr(L, d)), what=f"{data!r} as {d}",
              key=("tensor", repr(data), d))
    check(lambda L: L.as_tensor(data), what=f"as_tensor {data!r}")


def test_numpy_scalar_elements():
    assert ember.tensor(np.float32(2.5), dtype=ember.int32).tolist() == 2
    assert ember.tensor([np.float16(1.5), 3], dtype=ember.int64).tolist() == [1, 3]
    for v in [np.complex64(1j), np.complex128(2 - 1j)]:
        with pytest.raises(TypeError):
            ember.tensor(v, dtype=ember.float64)
        with pytest.raises(TypeError):
            ember.tensor(complex(v), dtype=ember.float64)
        with pytest.raises(TypeError):
            torch.tensor(complex(v), dtype=torch.float64)


def test_tensor_from_tensors():
    for d in ["float32", "int64", "bool", "complex64"]:
        x = make(d, "scalar")
        check(lambda L, a: L.tensor([a, a]), x)
        check(lambda L, a: L.tensor(a), x)
        check(lambda L, a: L.tensor([[a], [a]], dtype=L.float64), x)
        y = make(d, "transposed")
        check(lambda L, a: L.tensor(a), y)
        check(lambda L, a: L.tensor(a, dtype=L.float64), y)
        check(lambda L, a: L.tensor([a[0, 0], 5]), y)
    # A tensor and a number side by side: torch 1.13 fails converting the tensor to a double
    # (RuntimeError); ember reports the ragged nesting (TypeError, as for [[1, 2], 3]).
    with pytest.raises(TypeError):
        ember.tensor([ember.ones(2), 3])


def test_tensor_copies_and_options():
    src = np.arange(4.0)
    e = ember.tensor(src)
    src[0] = 7
    assert e.tolist()[0] == 0.0
    t = ember.ones(3)
    c = ember.tensor(t)
    c.fill_(2)
    assert t.tolist() == [1.0, 1.0, 1.0]
    check(lambda L: L.tensor([1.5], requires_grad=True).requires_grad)
    check(lambda L: L.tensor([1.5], device="cpu").device)
    check(lambda L: L.tensor([1], dtype=float))
    check(lambda L: L.tensor(data=[1, 2]))


def test_tensor_errors():
    for bad in [[[1, 2], [3]], [1, "a"], "a", [[1, 2], 3], [1, [2]], [None], {1: 2}, [[1], [2, 3]],
                object(), [1, object()], b"ab", [2 ** 64], 2 ** 63, [[1, 2], [3, 4], [5]],
                [1j, [2]]]:
        raises_like(lambda L: L.tensor(bad), what=repr(bad))
    for data, d in [([300], "uint8"), ([-129], "int8"), ([1e10], "int32"), ([40000], "int16"),
                    ([1j], "float32"), ([1j], "int64"), ([2 + 0j], "bool"), ([2 ** 40], "int32"),
                    ([-256], "uint8")]:
        raises_like(lambda L: L.tensor(data, dtype=getattr(L, d)), what=f"{data} as {d}")
    for data, d in [([-1], "uint8"), ([255], "uint8"), ([-255], "uint8"), ([2.9], "int32"),
                    ([1e300], "float32"), ([-128], "int8"), ([1.5], "bool"), ([1e10], "float16")]:
        check(lambda L: L.tensor(data, dtype=getattr(L, d)), what=f"{data} as {d}")
    raises_like(lambda L: L.tensor())
    raises_like(lambda L: L.tensor([1], dtype="float32"))
    raises_like(lambda L: L.tensor([1], bogus=2))
    raises_like(lambda L: L.tensor([1], device="bogus"))
    raises_like(lambda L: L.tensor([1], requires_grad=True))


def test_tensor_inference_differences_from_torch():
    """Where torch 1.13 refuses what NumPy and later torch versions accept, ember builds the
    tensor: a list of same-shape tensors (torch: TypeError) and 0-d arrays in a list."""
    r = ember.tensor([ember.tensor([1, 2]), ember.tensor([3, 4])])
    assert r.shape == (2, 2) and r.tolist() == [[1, 2], [3, 4]]
    r = ember.tensor([np.array(5.0), 1])
    assert r.dtype == ember.float64 and r.tolist() == [5.0, 1.0]


def test_as_tensor_shares_memory():
    a = np.arange(4.0)
    e = ember.as_tensor(a)
    a[1] = 9
    assert e.tolist()[1] == 9.0
    e2 = ember.as_tensor(a, dtype=ember.float32)
    a[2] = 8
    assert e2.tolist()[2] == 2.0
    t = ember.ones(2)
    assert ember.as_tensor(t) is t
    assert ember.as_tensor(t, dtype=ember.float32) is t
    assert ember.as_tensor(t, dtype=ember.float64) is not t
    check(lambda L: L.as_tensor([1, 2], dtype=L.float16))
    check(lambda L: L.as_tensor(np.arange(3), device="cpu"))
    raises_like(lambda L: L.as_tensor("a"))


# ---- random numbers ----

RANDOM_CALLS = {
    "rand": lambda L, g: L.rand(5, 7, generator=g),
    "randn": lambda L, g: L.randn(5, 7, generator=g, dtype=L.float64),
    "randint": lambda L, g: L.randint(3, 10, (5, 7), generator=g),
    "randperm": lambda L, g: L.randperm(20, generator=g),
    "normal": lambda L, g: L.normal(0.0, 1.0, (5, 7), generator=g),
    "normal_t": lambda L, g: L.normal(L.zeros(4), L.ones(4), generator=g),
    "bernoulli": lambda L, g: L.bernoulli(L.full((5, 7), 0.5), generator=g),
    "multinomial": lambda L, g: L.multinomial(L.ones(10), 4, generator=g),
    "uniform_": lambda L, g: L.empty(5, 7).uniform_(-2, 3, generator=g),
    "normal_": lambda L, g: L.empty(5, 7).normal_(1, 2, generator=g),
    "random_": lambda L, g: L.empty(5, 7).random_(0, 5, generator=g),
    "exponential_": lambda L, g: L.empty(5, 7).exponential_(2.0, generator=g),
    "bernoulli_": lambda L, g: L.empty(5, 7).bernoulli_(0.3, generator=g),
}


@pytest.mark.parametrize("call", list(RANDOM_CALLS))
def test_random_reproducible_with_generators(call):
    f = RANDOM_CALLS[call]
    g1, g2 = ember.Generator().manual_seed(123), ember.Generator()
    assert g2.manual_seed(123) is g2
    a, b = f(ember, g1), f(ember, g2)
    assert a.tolist() == b.tolist()
    c = f(ember, g1)
    assert c.tolist() != a.tolist() or call in ("bernoulli_",)  # the stream advanced
    assert g1.initial_seed() == 123
    # Same metadata as torch's.
    tg = torch.Generator().manual_seed(123)
    t = f(torch, tg)
    assert (tuple(a.shape), name(a.dtype)) == (tuple(t.shape), name(t.dtype))
    # Without a generator: the default one, reseeded by manual_seed.
    ember.manual_seed(7)
    d = f(ember, None)
    ember.manual_seed(7)
    assert f(ember, None).tolist() == d.tolist()


def test_generator_state():
    g = ember.Generator()
    g.manual_seed(5)
    s = g.get_state()
    assert isinstance(s, ember.Tensor) and s.dtype == ember.uint8
    x = ember.rand(10, generator=g)
    g.set_state(s)
    assert ember.rand(10, generator=g).tolist() == x.tolist()
    ember.manual_seed(3)
    st = ember.get_rng_state()
    y = ember.rand(4)
    ember.set_rng_state(st)
    assert ember.rand(4).tolist() == y.tolist()
    assert ember.initial_seed() == 3
    assert isinstance(ember.manual_seed(3), ember.Generator)
    assert ember.default_generator.initial_seed() == 3
    assert g.device == ember.device("cpu")
    assert isinstance(g.seed(), int)
    assert ember.Generator(device="cpu").device.type == "cpu"
    g.manual_seed(-1)  # wraps, as torch's
    for bad in ["a", 2.5, 2 ** 70]:
        raises_like(lambda L: L.Generator().manual_seed(bad))
    for seed in [2.5, "7", -3, 2 ** 64 - 1, np.int64(4)]:
        ember.manual_seed(seed)
        torch.manual_seed(seed)
        assert ember.initial_seed() == torch.initial_seed()
    for bad in ["a", None, 2 ** 64]:
        raises_like(lambda L: L.manual_seed(bad))
    raises_like(lambda L: L.Generator().set_state(L.zeros(3)))
    raises_like(lambda L: L.Generator().set_state(L.zeros(3, dtype=L.uint8)))
    raises_like(lambda L: L.set_rng_state(L.zeros(16)))
    raises_like(lambda L: L.rand(2, generator=3))
    raises_like(lambda L: L.randint(3, (2,), generator="g"))


def test_random_independent_of_thread_count(restore_globals):
    """Note [Reproducible random streams]: a seed gives the same numbers whatever the threads."""
    out = []
    for n in [1, 2]:
        ember.set_num_threads(n)
        g = ember.Generator().manual_seed(99)
        out.append((ember.rand(300000, generator=g).numpy()[::997].tolist(),
                    ember.randn(1000, generator=g).tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64",
                                   "complex64", "complex128"])
def test_random_dtypes_and_moments(dtype):
    g = ember.Generator().manual_seed(1)
    for f in ["rand", "randn"]:
        r = check(lambda L: getattr(L, f)(4000, dtype=getattr(L, dtype)).dtype, key=(f, dtype))
        if r is None:
            continue
        x = getattr(ember, f)(4000, dtype=getattr(ember, dtype), generator=g)
        v = to_numpy(x).astype(np.complex128 if dtype in COMPLEX else np.float64)
        parts = [v.real, v.imag] if dtype in COMPLEX else [v]
        for p in parts:
            if f == "rand":
                assert p.min() >= 0 and p.max() < 1
                assert abs(p.mean() - 0.5) < 0.05
            else:
                scale = np.sqrt(0.5) if dtype in COMPLEX else 1.0  # torch: E|z|^2 = 1
                assert abs(p.mean()) < 0.1 and abs(p.std() - scale) < 0.1


def test_random_ranges_and_values():
    g = ember.Generator().manual_seed(2)
    r = ember.randint(-3, 4, (2000,), generator=g)
    v = r.tolist()
    assert r.dtype == ember.int64 and min(v) == -3 and max(v) == 3
    r = ember.randint(5, (2000,), dtype=ember.uint8, generator=g)
    assert r.dtype == ember.uint8 and set(r.tolist()) == set(range(5))
    # Keyword size after positional low/high, and keyword high after positional low.
    for r in (ember.randint(2, 5, size=(500,)), ember.randint(2, high=5, size=(500,)),
              ember.randint(low=2, high=5, size=(500,))):
        assert set(r.tolist()) == {2, 3, 4}
    assert set(ember.randint(3, size=(500,)).tolist()) == {0, 1, 2}
    p = ember.randperm(50, generator=g)
    assert sorted(p.tolist()) == list(range(50)) and p.dtype == ember.int64
    assert ember.randperm(0).shape == (0,)
    u = ember.empty(1000, dtype=ember.float64).uniform_(2, 3, generator=g).numpy()
    assert u.min() >= 2 and u.max() < 3
    n = ember.normal(5.0, 0.5, (4000,), generator=g).numpy()
    assert abs(n.mean() - 5) < 0.05 and abs(n.std() - 0.5) < 0.05
    nt = ember.normal(ember.full((4000,), 2.0), 3.0, generator=g).numpy()
    assert abs(nt.mean() - 2) < 0.3 and abs(nt.std() - 3) < 0.3
    b = ember.bernoulli(ember.full((4000,), 0.25), generator=g)
    assert b.dtype == ember.float32 and set(b.tolist()) <= {0.0, 1.0}
    assert abs(b.numpy().mean() - 0.25) < 0.05
    assert ember.bernoulli(ember.zeros(5)).tolist() == [0.0] * 5
    assert ember.bernoulli(ember.ones(5), p=0.0).tolist() == [0.0] * 5
    e = ember.empty(4000).exponential_(2.0, generator=g).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.05
    m = ember.multinomial(ember.tensor([0.0, 1.0, 0.0, 3.0]), 2, generator=g)
    assert sorted(m.tolist()) == [1, 3]
    m = ember.multinomial(ember.tensor([[1.0, 0.0], [0.0, 1.0]]), 5, True)
    assert m.tolist() == [[0] * 5, [1] * 5]
    ri = ember.empty(1000, dtype=ember.int16).random_(generator=g)
    assert ri.dtype == ember.int16 and min(ri.tolist()) >= 0
    rb = ember.empty(100, dtype=ember.bool).random_()
    assert set(rb.tolist()) == {True, False}
    bt = ember.empty(3).bernoulli_(ember.tensor([0.0, 1.0, 0.0]))
    assert bt.tolist() == [0.0, 1.0, 0.0]


def test_random_errors():
    for f in [lambda L: L.randint(10, 3, (3,)), lambda L: L.randint(5),
              lambda L: L.randint(2.5, (3,)), lambda L: L.randperm(-1),
              lambda L: L.normal(0.0, -1.0, (2,)), lambda L: L.normal(0.0, 1.0),
              lambda L: L.normal(L.zeros(2), L.ones(3)), lambda L: L.bernoulli(L.full((4,), 2.0)),
              lambda L: L.multinomial(L.tensor([0.0, 1.0]), 3),
              lambda L: L.multinomial(L.tensor([-1.0, 1.0]), 1),
              lambda L: L.multinomial(L.zeros(2), 1), lambda L: L.empty(3).uniform_(2, 1),
              lambda L: L.empty(3).exponential_(-1.0), lambda L: L.empty(3).random_(5, 2),
              lambda L: L.empty(3).bernoulli_(1.5), lambda L: L.empty(3, dtype=L.int32).normal_(),
              lambda L: L.empty(3, dtype=L.int32).uniform_(), lambda L: L.rand(2, dtype=L.int8),
              lambda L: L.randn(2, dtype=L.bool), lambda L: L.rand_like(L.ones(2, dtype=L.int32)),
              lambda L: L.Generator(device="bogus")]:
        raises_like(f)
