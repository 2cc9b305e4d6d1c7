"""Resampling against torch 1.13: interpolate in every mode (sizes and scale factors,
align_corners), fold/unfold, pixel_shuffle/unshuffle; values, gradients in float64 (with double
backward) and argument errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from test_conv import EF, _raises_like_torch, check, randn


INTERP = [
    # (shape, mode, size, scale_factor, align_corners)
    ((2, 3, 5), "nearest", 9, None, None),
    ((2, 3, 7), "nearest", None, 0.6, None),
    ((2, 3, 4, 5), "nearest", (7, 3), None, None),
    ((2, 3, 4, 5), "nearest", None, (2.5, 1.5), None),
    ((1, 2, 3, 4, 5), "nearest", (5, 6, 4), None, None),
    ((2, 3, 5, 4), "nearest-exact", (8, 7), None, None),
    ((2, 3, 6), "linear", 11, None, False),
    ((2, 3, 6), "linear", 11, None, True),
    ((2, 3, 6), "linear", None, 1.7, False),
    ((2, 3, 4, 5), "bilinear", (7, 9), None, False),
    ((2, 3, 4, 5), "bilinear", (3, 8), None, True),
    ((2, 3, 4, 5), "bilinear", None, (2.0, 0.5), False),
    ((2, 3, 4, 5), "bicubic", (9, 7), None, False),
    ((2, 3, 4, 5), "bicubic", (9, 7), None, True),
    ((2, 3, 6, 6), "bicubic", None, 0.5, False),
    ((1, 2, 3, 4, 5), "trilinear", (5, 3, 7), None, False),
    ((1, 2, 3, 4, 5), "trilinear", (5, 3, 7), None, True),
    ((2, 3, 9, 7), "area", (4, 3), None, None),
    ((2, 3, 8), "area", None, 0.5, None),
]


@pytest.mark.parametrize("case", INTERP)
def test_interpolate(case):
    shape, mode, size, sf, ac = case
    rng = np.random.default_rng(0)
    x = randn(rng, *shape)

    def f(F):
        return lambda x: F.interpolate(x, size, sf, mode, ac)

    check(f(EF), f(TF), [x], gradgrad=mode != "bicubic")
    check(f(EF), f(TF), [x], dtype="float32", rtol=1e-5, atol=1e-5)


def test_interpolate_strided_and_wrappers():
    rng = np.random.default_rng(1)
    x = randn(rng, 2, 3, 4, 10)
    check(lambda x: EF.interpolate(x[..., ::2], scale_factor=2, mode="bilinear"),
          lambda x: TF.interpolate(x[..., ::2], scale_factor=2, mode="bilinear"), [x])
    check(lambda x: EF.upsample_bilinear(x, (5, 6)), lambda x: TF.upsample_bilinear(x, (5, 6)),
          [x])
    check(lambda x: EF.upsample_nearest(x, scale_factor=2),
          lambda x: TF.upsample_nearest(x, scale_factor=2), [x])
    check(lambda x: EF.upsample(x, (3, 3), mode="bicubic"),
          lambda x: TF.upsample(x, (3, 3), mode="bicubic"), [x])


@pytest.mark.parametrize("call", [
    lambda F, x: F.interpolate(x, (4, 4), (2.0, 2.0)),
    lambda F, x: F.interpolate(x),
    lambda F, x: F.interpolate(x, (4, 4, 4)),
    lambda F, x: F.interpolate(x, (4, 4), mode="nearest", align_corners=True),
    lambda F, x: F.interpolate(x, 4, mode="linear"),
    lambda F, x: F.interpolate(x, 4, mode="bogus"),
])
def test_interpolate_errors(call):
    rng = np.random.default_rng(2)
    _raises_like_torch(lambda x: call(EF, x), lambda x: call(TF, x), [randn(rng, 1, 2, 3, 3)],
                       (ValueError, NotImplementedError, RuntimeError))


@pytest.mark.parametrize("shape,k,d,p,s", [
    ((2, 3, 6, 7), 2, 1, 0, 1), ((2, 3, 8, 7), (3, 2), (1, 2), (1, 0), (2, 1)),
    ((3, 5, 5), 3, 1, 1, 2),
])
def test_fold_unfold(shape, k, d, p, s):
    rng = np.random.default_rng(3)
    x = randn(rng, *shape)
    check(lambda x: EF.unfold(x, k, d, p, s), lambda x: TF.unfold(x, k, d, p, s), [x],
          gradgrad=True)
    cols = TF.unfold(torch.from_numpy(x), k, d, p, s).numpy()
    out = shape[-2:]
    check(lambda c: EF.fold(c, out, k, d, p, s), lambda c: TF.fold(c, out, k, d, p, s), [cols],
          gradgrad=True)
    check(lambda x: EF.unfold(x, k, d, p, s), lambda x: TF.unfold(x, k, d, p, s), [x],
          dtype="float32")


def test_fold_unfold_errors():
    rng = np.random.default_rng(4)
    _raises_like_torch(lambda x: EF.unfold(x, 5), lambda x: TF.unfold(x, 5),
                       [randn(rng, 1, 2, 3, 3)], RuntimeError)
    _raises_like_torch(lambda x: EF.fold(x, (4, 4), 2), lambda x: TF.fold(x, (4, 4), 2),
                       [randn(rng, 1, 5, 9)], RuntimeError)
    _raises_like_torch(lambda x: EF.fold(x, (4, 4), 2), lambda x: TF.fold(x, (4, 4), 2),
                       [randn(rng, 1, 8, 8)], RuntimeError)


def test_pixel_shuffle():
    rng = np.random.default_rng(5)
    x = randn(rng, 2, 8, 3, 4)
    check(lambda x: EF.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2), [x])
    check(lambda x: EF.pixel_unshuffle(x, 1), lambda x: TF.pixel_unshuffle(x, 1), [x])
    y = randn(rng, 2, 1, 3, 6, 4)
    check(lambda x: EF.pixel_unshuffle(x, 2), lambda x: TF.pixel_unshuffle(x, 2), [y])
    _raises_like_torch(lambda x: EF.pixel_shuffle(x, 3), lambda x: TF.pixel_shuffle(x, 3), [x],
                       RuntimeError)
    _raises_like_torch(lambda x: EF.pixel_unshuffle(x, 3), lambda x: TF.pixel_unshuffle(x, 3),
                       [x], RuntimeError)
