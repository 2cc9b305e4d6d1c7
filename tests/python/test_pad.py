"""ember.nn.functional.pad against torch 1.13: constant (negative pads crop), reflect, replicate
and circular on 1-3 trailing dims, dtypes per mode, and the errors."""

import pytest

import ember

from _oracle import DTYPES, check, make, raises_like

PADS = [(1, 2), (0, 0), (-1, 1), (2, -1), (1, 1, 0, 2), (1, 0, 1, 1, 1, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_modes(dtype, mode):
    for shape in [(2, 3, 4), (1, 2, 3, 4), (2, 2, 3, 3, 4)]:
        a = make(dtype, shape=shape, seed=1)
        for p in PADS:
            check(lambda L, x: L.nn.functional.pad(x, p, mode), a, what=f"{shape} {p}")
            check(lambda L, x: L.nn.functional.pad(x.transpose(-1, -2), p, mode), a)


def test_pad_constant_values_and_errors():
    a = make("float32", shape=(2, 3), seed=2)
    check(lambda L, x: L.nn.functional.pad(x, (1, 1), value=2.5), a)
    check(lambda L, x: L.nn.functional.pad(x.long(), (1, 1, 1, 0), value=2.5), a)
    check(lambda L, x: L.nn.functional.pad(x, (0, -3)), a)
    check(lambda L, x: L.nn.functional.pad(x, (1, -1, -2, 1)), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (1, 1, 1)), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (1,) * 8), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (1, -4)), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (-5, 1)), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (3, 3), mode="reflect"), a)
    raises_like(lambda L, x: L.nn.functional.pad(x[0], (1, 1), mode="reflect"), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (1, 1), mode="foo"), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (1, 1), mode="reflect", value=2), a)
    raises_like(lambda L, x: L.nn.functional.pad(x, (1, 1), mode="circular"), a)
    raises_like(lambda L, x: L.nn.functional.pad(x[None], (4, 1), mode="circular"), a)
    # circular: negative pads crop, then the positive side wraps around the cropped part
    c = make("float32", shape=(1, 2, 5), seed=3)
    for p in [(-1, 2), (2, -1), (-1, -1), (-2, -3), (3, -2), (-2, 3)]:
        check(lambda L, x: L.nn.functional.pad(x, p, mode="circular"), c, what=f"{p}")
    with pytest.raises(RuntimeError, match="wrapping around"):
        ember.nn.functional.pad(ember.zeros(1, 1, 4), (2, -3), mode="circular")
