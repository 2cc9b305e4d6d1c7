"""NumPy and DLPack interop against torch 1.13 and NumPy: zero-copy in both directions, strides,
supported dtypes, errors, and the lifetime of shared memory."""

import gc
import sys
import warnings

import numpy as np
import pytest
import torch

import ember
from _oracle import DTYPES, check, make, name, raises_like

NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
             "complex64", "complex128"]


def arrays(dtype):
    """Arrays of `dtype` with various layouts (each a fresh array)."""
    base = (np.arange(24) % 7 - 3).astype(dtype)
    yield "contiguous", base.reshape(4, 6)
    yield "fortran", np.asfortranarray(base.reshape(4, 6))
    yield "transposed", base.reshape(4, 6).T
    yield "sliced", base.reshape(4, 6)[1:, ::2]
    yield "step", base[::3]
    yield "0-d", np.array(base[1])
    yield "zero-size", np.zeros((0, 3), dtype)
    yield "broadcast", np.broadcast_to(base[:6], (3, 6))


# ---- from_numpy ----

@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_from_numpy(dtype):
    for label, a in arrays(dtype):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's read-only warning (once per process)
            t = torch.from_numpy(a)
        if a.flags.writeable:
            e = ember.from_numpy(a)
        else:
            with pytest.warns(UserWarning, match="not writable"):
                e = ember.from_numpy(a)
        assert name(e.dtype) == name(t.dtype), label
        assert e.shape == t.shape and e.stride() == t.stride(), label
        np.testing.assert_array_equal(e.numpy(), a)
        if a.size and a.flags.writeable:
            assert e.data_ptr() == a.__array_interface__["data"][0], label


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_from_numpy_shares_memory_both_ways(dtype):
    a = np.zeros((3, 4), dtype)
    e = ember.from_numpy(a)
    a[1, 2] = 1
    assert e[1, 2].item() == a[1, 2]
    e[0].fill_(1)
    assert a[0].tolist() == [np.ones(1, dtype)[0].item()] * 4
    v = ember.from_numpy(a[:, 1::2])
    v.zero_()
    assert a[:, 1::2].tolist() == np.zeros((3, 2), dtype).tolist()


def test_from_numpy_errors():
    base = np.arange(12.0).reshape(3, 4)
    for bad in [base[::-1], base[:, ::-1], np.flip(base)]:
        raises_like(lambda L: L.from_numpy(bad))  # negative strides: ValueError
    for dt in ["uint16", "uint32", "uint64", "longdouble", "clongdouble", "object", "U3",
               "datetime64[s]", [("a", "f4"), ("b", "i4")]]:
        raises_like(lambda L: L.from_numpy(np.zeros(2, dtype=dt)), what=str(dt))
    raises_like(lambda L: L.from_numpy(np.arange(3.0).astype(">f8")))  # byte order
    packed = np.zeros(3, dtype=[("a", "i1"), ("b", "f4")])["b"]  # stride 5 bytes
    raises_like(lambda L: L.from_numpy(packed))
    for bad in [[1, 2], 3.0, np.float64(1), ember.ones(2), None]:
        raises_like(lambda L: L.from_numpy(bad))


def test_from_numpy_keeps_the_array_alive():
    a = np.arange(1000.0)
    refs = sys.getrefcount(a)
    e = ember.from_numpy(a)
    assert sys.getrefcount(a) == refs + 1
    del a
    gc.collect()
    assert e[999].item() == 999.0
    view = e[10:20]
    del e
    gc.collect()
    assert view.tolist() == [float(i) for i in range(10, 20)]
    b = np.arange(5.0)
    f = ember.from_numpy(b)
    del f
    gc.collect()
    assert sys.getrefcount(b) == refs  # the tensor released its reference


# ---- numpy() and __array__ ----

@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bfloat16"])
def test_numpy(dtype):
    for layout in ["contiguous", "transposed", "strided", "broadcast", "scalar", "zero"]:
        e, t = make(dtype, layout, seed=1)
        a, b = e.numpy(), t.numpy()
        assert a.dtype == b.dtype and a.shape == b.shape, layout
        if a.size:
            assert a.strides == b.strides, layout
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.asarray(e), b)
        np.testing.assert_array_equal(np.array(e), b)


def test_numpy_shares_memory_both_ways():
    e = ember.zeros(3, 4)
    a = e.numpy()
    a[1, 1] = 5
    assert e[1, 1].item() == 5.0
    e[2].fill_(7)
    assert a[2].tolist() == [7.0] * 4
    v = e.t()[1:].numpy()
    v[0, 0] = -1
    assert e[0, 1].item() == -1.0
    arr = np.asarray(e)
    arr[0, 0] = 3
    assert e[0, 0].item() == 3.0
    copied = np.array(e)
    copied[0, 0] = 9
    assert e[0, 0].item() == 3.0


def test_numpy_keeps_the_tensor_alive():
    e = ember.arange(1000.0)
    a = e.numpy()
    del e
    gc.collect()
    assert a[999] == 999.0 and isinstance(a.base, ember.Tensor)


def test_numpy_errors():
    raises_like(lambda L: L.ones(2, dtype=L.bfloat16).numpy())
    raises_like(lambda L: np.asarray(L.ones(2, dtype=L.bfloat16)))
    raises_like(lambda L: L.ones(2, dtype=L.complex64).conj().numpy())
    raises_like(lambda L: L.ones(2, requires_grad=True).numpy())
    raises_like(lambda L: L.ones(2, dtype=L.bfloat16).numpy(force=True))
    raises_like(lambda L: L.ones(2).numpy(True))
    check(lambda L: L.from_numpy(L.ones(2, dtype=L.complex64).conj().numpy(force=True)))
    check(lambda L: L.from_numpy(L.ones(2, requires_grad=True).numpy(force=True)))


def test_array_protocol():
    e, t = make("int32", "transposed")
    assert ember.Tensor.__array_priority__ == torch.Tensor.__array_priority__ == 1000
    for dt in [None, np.float64, "float32", np.int8]:
        a, b = np.asarray(e, dtype=dt), np.asarray(t, dtype=dt)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    # NumPy ufuncs on tensors give tensors back, as torch's.
    check(lambda L, x: np.add(x, 1), (e, t))
    check(lambda L, x: np.negative(x), (e, t))
    check(lambda L, x: np.sqrt(x.float()), (e, t))
    check(lambda L, x: np.multiply(x[0, 0], 2), (e, t))
    assert isinstance(np.float64(2.0) * e, ember.Tensor)


# ---- DLPack ----

DL_DTYPES = [d for d in NP_DTYPES if d != "bool"]


def test_dlpack_device():
    e = ember.ones(2)
    assert e.__dlpack_device__() == torch.ones(2).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", DL_DTYPES)
def test_dlpack_with_numpy(dtype):
    for label, a in arrays(dtype):
        if not a.flags.writeable:
            continue  # NumPy exports no read-only arrays (BufferError)
        e = ember.from_dlpack(a)
        t = torch.from_dlpack(a)
        assert name(e.dtype) == name(t.dtype) and e.shape == t.shape, label
        assert e.stride() == t.stride() or a.size == 0, label
        np.testing.assert_array_equal(e.numpy(), a)
        if a.size and a.flags.writeable:
            assert e.data_ptr() == a.__array_interface__["data"][0]
    for layout in ["contiguous", "transposed", "strided", "broadcast", "scalar", "zero"]:
        e, t = make(dtype, layout)
        a, b = np.from_dlpack(e), np.from_dlpack(t)
        assert a.dtype == b.dtype and a.shape == b.shape, layout
        assert a.strides == b.strides or a.size == 0, layout
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", DL_DTYPES + ["bfloat16"])
def test_dlpack_with_torch(dtype):
    for layout in ["contiguous", "transposed", "strided", "broadcast", "scalar", "zero"]:
        e, t = make(dtype, layout, seed=2)
        # ember -> torch
        t2 = torch.from_dlpack(e)
        assert t2.dtype == t.dtype and t2.shape == t.shape, layout
        assert t2.stride() == e.stride() or t2.numel() == 0, layout
        torch.testing.assert_close(t2, t, equal_nan=True)
        # torch -> ember
        e2 = ember.from_dlpack(t)
        assert e2.dtype == e.dtype, layout
        assert e2.stride() == t.stride() or t.numel() == 0, layout  # torch exports 1s then
        check(lambda L, x: x, (e2, t))
        # capsules too
        check(lambda L, x: L.from_dlpack(x.__dlpack__()), (e, t))


def test_dlpack_shares_memory():
    e = ember.zeros(3, 4)
    t = torch.from_dlpack(e)
    t[1, 2] = 5
    assert e[1, 2].item() == 5.0
    e[0].fill_(1)
    assert t[0].tolist() == [1.0] * 4
    t3 = torch.zeros(4, 5)
    e3 = ember.from_dlpack(t3[:, 1::2])
    e3.fill_(2)
    assert t3[:, 1::2].tolist() == [[2.0, 2.0]] * 4 and t3[:, 0].tolist() == [0.0] * 4
    a = np.zeros(4)
    e4 = ember.from_dlpack(a)
    e4[1] = 3
    assert a[1] == 3
    b = np.from_dlpack(e)  # NumPy marks DLPack imports read-only
    e[2, 3] = 8
    assert b[2, 3] == 8.0


def test_dlpack_lifetime():
    # Producer deleted before the consumer: the consumer keeps the memory alive.
    e = ember.arange(1000.0)
    t = torch.from_dlpack(e)
    del e
    gc.collect()
    assert t[999].item() == 999.0
    t2 = torch.arange(1000.0)
    e2 = ember.from_dlpack(t2)
    del t2
    gc.collect()
    assert e2[999].item() == 999.0
    a = np.arange(1000.0)
    e3 = ember.from_dlpack(a)
    del a
    gc.collect()
    assert e3[999].item() == 999.0
    e4 = ember.arange(50.0)
    n = np.from_dlpack(e4)
    del e4
    gc.collect()
    assert n[49] == 49.0
    # Consumer deleted first; the producer is unaffected.
    e5 = ember.ones(10)
    t5 = torch.from_dlpack(e5)
    del t5
    gc.collect()
    assert e5.tolist() == [1.0] * 10
    # Round trips through several consumers.
    e6 = ember.arange(6.0).reshape(2, 3).t()
    back = np.from_dlpack(ember.from_dlpack(torch.from_dlpack(e6)))
    del e6
    gc.collect()
    assert back.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    # An unconsumed capsule frees its tensor when collected.
    cap = ember.ones(3).__dlpack__()
    del cap
    gc.collect()


def test_dlpack_errors():
    raises_like(lambda L: L.ones(2, dtype=L.bool).__dlpack__())
    raises_like(lambda L: L.from_dlpack(L.ones(2, dtype=L.bool)))
    raises_like(lambda L: L.ones(2, dtype=L.complex64).conj().__dlpack__())
    raises_like(lambda L: L.from_dlpack(np.ones(2, dtype=bool)))  # NumPy's BufferError
    raises_like(lambda L: L.from_dlpack(np.ones(2, dtype=np.uint16)))
    raises_like(lambda L: L.from_dlpack(3))
    raises_like(lambda L: L.from_dlpack([1, 2]))
    with pytest.raises(RuntimeError):
        np.from_dlpack(ember.ones(2, dtype=ember.bfloat16))
    with pytest.raises(RuntimeError):
        np.from_dlpack(torch.ones(2, dtype=torch.bfloat16))
    e = ember.ones(3)
    for L, x in [(ember, e), (torch, torch.ones(3))]:
        cap = x.__dlpack__()
        L.from_dlpack(cap)
        with pytest.raises(RuntimeError):
            L.from_dlpack(cap)  # consumed once
    cap = ember.to_dlpack(e)
    assert type(cap).__name__ == "PyCapsule"
    assert ember.from_dlpack(cap).tolist() == [1.0] * 3
