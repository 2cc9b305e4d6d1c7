"""Pooling against torch 1.13: max pools (values and indices equal torch's, padding, dilation,
ceil_mode, NaN, strided and unbatched inputs), average pools (count_include_pad,
divisor_override, ceil_mode), adaptive pools, unpooling, lp pools; gradients in float64 with
double backward; argument errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from test_conv import EF, _base_shape, _layout, _raises_like_torch, check, leaves, randn


MAXPOOL = [
    # (nd, input shape, kernel, stride, padding, dilation, ceil_mode)
    (2, (2, 3, 8, 8), 2, None, 0, 1, False),
    (2, (2, 3, 9, 7), 3, 2, 1, 1, True),
    (2, (1, 2, 10, 9), (3, 2), (2, 1), (1, 1), (2, 1), False),
    (2, (3, 7, 6), 2, 2, 1, 1, True),  # unbatched
    (1, (2, 3, 11), 3, 2, 1, 2, True),
    (3, (1, 2, 5, 6, 7), (2, 3, 2), (2, 2, 1), (1, 1, 0), 1, True),
]


@pytest.mark.parametrize("case", MAXPOOL)
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_max_pool(case, layout):
    nd, shape, k, s, p, d, ceil = case
    rng = np.random.default_rng(0)
    # distinct values: the argmax (and so the gradient) is unique
    x = rng.permutation(np.prod(_base_shape(shape, layout))).reshape(
        _base_shape(shape, layout)).astype(np.float64) / 7.0
    name = f"max_pool{nd}d"

    def f(lib, F):
        return lambda x: getattr(F, name)(_layout(lib, x, layout), k, s, p, d, ceil,
                                          return_indices=True)

    check(f(ember, EF), f(torch, TF), [x], gradgrad=True)
    check(f(ember, EF), f(torch, TF), [x], dtype="float32")
    if nd < 3:  # torch 1.13 has no bfloat16 max_pool3d on CPU
        check(f(ember, EF), f(torch, TF), [x], dtype="bfloat16", grad=False)


def test_max_pool_nan_and_ties():
    x = np.array([[[[1.0, np.nan, 3.0, 3.0], [0.0, 2.0, 3.0, 3.0],
                    [-np.inf, -np.inf, 5.0, 5.0], [-np.inf, -np.inf, 5.0, 4.0]]]])
    check(lambda x: EF.max_pool2d(x, 2, return_indices=True),
          lambda x: TF.max_pool2d(x, 2, return_indices=True), [x], grad=False)
    check(lambda x: EF.max_pool2d(x, 2, 1, 1, return_indices=True),
          lambda x: TF.max_pool2d(x, 2, 1, 1, return_indices=True), [x], grad=False)


def test_max_pool_main_job_shape_float32():
    rng = np.random.default_rng(1)
    x = randn(rng, 16, 32, 26, 26)
    check(lambda x: EF.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [x], dtype="float32")
    check(lambda x: EF.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2),
          [np.zeros((0, 3, 4, 4))])


AVGPOOL = [
    # (nd, shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    (2, (2, 3, 8, 8), 2, None, 0, False, True, None),
    (2, (2, 3, 9, 7), 3, 2, 1, True, False, None),
    (2, (2, 3, 9, 7), 3, 2, 1, True, True, None),
    (2, (1, 2, 7, 8), (3, 2), (2, 3), (1, 1), False, True, 5),
    (2, (3, 7, 6), 2, 2, 1, True, False, None),
    (1, (2, 3, 11), 4, 3, 2, True, False, None),
    (3, (1, 2, 5, 6, 7), (2, 3, 2), (2, 2, 1), (1, 1, 0), True, True, None),
    (3, (1, 2, 5, 6, 7), 3, 2, 1, False, False, 4),
]


@pytest.mark.parametrize("case", AVGPOOL)
def test_avg_pool(case):
    nd, shape, k, s, p, ceil, cip, div = case
    rng = np.random.default_rng(2)
    x = randn(rng, *_base_shape(shape, "strided"))
    name = f"avg_pool{nd}d"
    extra = () if nd == 1 else (div,)

    def f(lib, F):
        return lambda x: getattr(F, name)(_layout(lib, x, "strided"), k, s, p, ceil, cip, *extra)

    check(f(ember, EF), f(torch, TF), [x], gradgrad=True)
    check(f(ember, EF), f(torch, TF), [x], dtype="float32", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nd,shape,out", [
    (1, (2, 3, 10), 4), (2, (2, 3, 9, 7), (4, 3)), (2, (3, 8, 8), 1), (2, (2, 3, 5, 7), (None, 3)),
    (3, (1, 2, 5, 6, 7), (2, 3, 4)), (2, (2, 3, 4, 4), (6, 5)),
])
def test_adaptive_pools(nd, shape, out):
    rng = np.random.default_rng(3)
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float64) / 3.0
    avg, mx = f"adaptive_avg_pool{nd}d", f"adaptive_max_pool{nd}d"
    check(lambda x: getattr(EF, avg)(x, out), lambda x: getattr(TF, avg)(x, out), [x],
          gradgrad=True)
    check(lambda x: getattr(EF, mx)(x, out, True), lambda x: getattr(TF, mx)(x, out, True), [x],
          gradgrad=True)


@pytest.mark.parametrize("nd,shape,k,s,p,out", [
    (2, (2, 3, 8, 8), 2, None, 0, None), (2, (1, 2, 9, 9), 3, 2, 1, (9, 9)),
    (1, (2, 3, 10), 2, 2, 0, None), (3, (1, 2, 4, 6, 4), 2, 2, 0, None),
])
def test_max_unpool(nd, shape, k, s, p, out):
    rng = np.random.default_rng(4)
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float64)
    mp, up = f"max_pool{nd}d", f"max_unpool{nd}d"

    def f(F):
        def g(x):
            y, i = getattr(F, mp)(x, k, s, p, return_indices=True)
            return getattr(F, up)(y, i, k, s, p, out)
        return g

    check(f(EF), f(TF), [x])


def test_lp_pool():
    rng = np.random.default_rng(5)
    x = np.abs(randn(rng, 2, 3, 8, 9)) + 0.1
    # pow's gradient rounds differently from torch's: a few ulps
    check(lambda x: EF.lp_pool2d(x, 2, 3, 2), lambda x: TF.lp_pool2d(x, 2, 3, 2), [x],
          rtol=1e-6)
    check(lambda x: EF.lp_pool1d(x[0], 3, 2), lambda x: TF.lp_pool1d(x[0], 3, 2), [x],
          rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool2d(x[0, 0], 2),                  # 2-d input
    lambda F, x: F.max_pool2d(x, 2, 2, 2),                  # pad > kernel / 2
    lambda F, x: F.max_pool2d(x, 9),                        # output too small
    lambda F, x: F.max_pool2d(x, 0),
    lambda F, x: F.max_pool2d(x, 2, 0),
    lambda F, x: F.avg_pool2d(x, 2, 2, 3),
    lambda F, x: F.avg_pool2d(x, 2, divisor_override=0),
    lambda F, x: F.adaptive_avg_pool2d(x, (1, 2, 3)),
    lambda F, x: F.max_unpool2d(x, x, 2),                   # float indices
])
def test_pool_errors(call):
    rng = np.random.default_rng(6)
    _raises_like_torch(lambda x: call(EF, x), lambda x: call(TF, x), [randn(rng, 1, 2, 4, 4)],
                       (RuntimeError, ValueError, TypeError))
