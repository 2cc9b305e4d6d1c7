"""einsum against torch 1.13: matrix/batched products, implicit outputs, ellipsis (broadcast),
repeated indices (diagonals and traces), sums, outer products, three or more operands (greedy
order), strided and zero-size operands, dtypes, and the errors."""

import numpy as np
import pytest
import torch

import ember
from _oracle import check, raises_like


def rnd(L, shape, seed, dtype="float64"):
    g = np.random.default_rng(seed)
    a = g.integers(-4, 5, shape)
    if dtype.startswith("complex"):
        a = a + 1j * g.integers(-4, 5, shape)
    t = torch.from_numpy(np.asarray(a)).to(getattr(torch, dtype))
    return t if L is torch else ember.from_numpy(t.numpy())


CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bij,jk->bik", [(5, 2, 3), (3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,i", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("...ij,...jk->...ik", [(2, 5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk", [(1, 2, 3), (5, 3, 4)]),
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    ("...,...", [(2, 3), (2, 3)]),
    ("ij...->...", [(2, 3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ab,bc,cd,de->ae", [(2, 10), (10, 3), (3, 8), (8, 4)]),
    ("ab,cd,bd->ac", [(2, 3), (4, 5), (3, 5)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("i,i,i->", [(3,), (3,), (3,)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 6)]),
    ("iJ,Jk->ik", [(2, 3), (3, 4)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]),
    ("ij,jk->ik", [(0, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    ("ij,jk->", [(2, 0), (0, 4)]),
    ("ab,ab->ab", [(2, 1), (1, 3)]),
    ("ij,kl->ijkl", [(2, 3), (4, 1)]),
]


@pytest.mark.parametrize("eq,shapes", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_einsum(eq, shapes, dtype):
    check(lambda L: L.einsum(eq, *[rnd(L, s, i, dtype) for i, s in enumerate(shapes)]),
          what=eq)
    check(lambda L: L.einsum(eq, [rnd(L, s, i, dtype) for i, s in enumerate(shapes)]),
          what=eq + " (list)")


def test_einsum_strided_operands():
    check(lambda L: L.einsum("ij,jk->ik", rnd(L, (3, 2), 1).t(), rnd(L, (3, 8), 2)[:, ::2]))
    check(lambda L: L.einsum("bij,bjk->bik", rnd(L, (2, 3, 5), 1).transpose(1, 2),
                             rnd(L, (1, 3, 4), 2).expand(5, 3, 4)))
    check(lambda L: L.einsum("ii->i", rnd(L, (4, 4), 3).t()))
    check(lambda L: L.einsum("i,i->", rnd(L, (1,), 3).expand(4), rnd(L, (8,), 4)[::2]))


def test_einsum_errors():
    x = lambda L: L.ones(2, 3)  # noqa: E731
    raises_like(lambda L: L.einsum("ij,jk", x(L), x(L)))
    raises_like(lambda L: L.einsum("ij,jk->ik", x(L)))
    raises_like(lambda L: L.einsum("ij->ik", x(L)))
    raises_like(lambda L: L.einsum("ijk", x(L)))
    raises_like(lambda L: L.einsum("i", x(L)))
    raises_like(lambda L: L.einsum("ii", x(L)))
    raises_like(lambda L: L.einsum("ij->ii", x(L)))
    raises_like(lambda L: L.einsum("i1", x(L)))
    raises_like(lambda L: L.einsum("ij,jk->ik", x(L), L.ones(3, 2, dtype=L.float64)))
    raises_like(lambda L: L.einsum("ij..,jk->ik", x(L), x(L).t()))
