"""searchsorted / bucketize / histc / bincount against torch 1.13."""

import pytest

from _oracle import check, raises_like


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "float16", "bfloat16", "float32",
                                   "float64"])
def test_searchsorted_bucketize(dtype):
    for right in (False, True):
        check(lambda L: L.searchsorted(L.tensor([1, 3, 3, 5, 7]).to(getattr(L, dtype)),
                                       L.tensor([[0, 3], [5, 9]]).to(getattr(L, dtype)),
                                       right=right))
        check(lambda L: L.searchsorted(L.tensor([[1, 3, 5], [2, 4, 6]]).to(getattr(L, dtype)),
                                       L.tensor([[3, 0], [6, 4]]).to(getattr(L, dtype)),
                                       out_int32=True, right=right))
        check(lambda L: L.bucketize(L.tensor([0, 3, 8]).to(getattr(L, dtype)),
                                    L.tensor([1, 3, 5]).to(getattr(L, dtype)), right=right))
    check(lambda L: L.searchsorted(L.tensor([3.0, 1, 2]), L.tensor([2.5]),
                                   sorter=L.tensor([1, 2, 0]), side="right"))
    check(lambda L: L.searchsorted(L.tensor([1, 2]), 2.5))
    check(lambda L: L.searchsorted(L.tensor([1.0, 2]), L.tensor([float("nan")])))


def test_search_errors():
    raises_like(lambda L: L.searchsorted(L.ones(2, 3), L.ones(3, 4)))
    raises_like(lambda L: L.searchsorted(L.ones(2, 3), 2.0))
    raises_like(lambda L: L.searchsorted(L.ones(3), L.ones(2), side="left", right=True))
    raises_like(lambda L: L.searchsorted(L.tensor(3.0), L.ones(2)))
    raises_like(lambda L: L.bucketize(L.ones(2), L.ones(2, 2)))
    raises_like(lambda L: L.searchsorted(L.ones(3), L.ones(2), sorter=L.tensor([0, 1])))


def test_histc_bincount():
    check(lambda L: L.histc(L.tensor([1.0, 2, 3, 2.5, 0.1]), bins=4))
    check(lambda L: L.histc(L.tensor([1.0, 2, 3]), bins=4, min=1, max=3))
    check(lambda L: L.histc(L.tensor([1.0, 2, 3, 5]).double(), bins=5, min=0, max=4))
    check(lambda L: L.histc(L.zeros(0, 3)))
    check(lambda L: L.bincount(L.tensor([0, 2, 2, 5])))
    check(lambda L: L.bincount(L.tensor([0, 2, 2]), minlength=6))
    check(lambda L: L.bincount(L.tensor([1, 2]), weights=L.tensor([1.5, 2])))
    check(lambda L: L.bincount(L.tensor([1, 2]), weights=L.tensor([1, 2])))
    check(lambda L: L.bincount(L.tensor([], dtype=L.int64), minlength=3))
    raises_like(lambda L: L.histc(L.tensor([1, 2])))
    raises_like(lambda L: L.histc(L.ones(3), bins=0))
    raises_like(lambda L: L.histc(L.ones(3), min=3, max=1))
    raises_like(lambda L: L.bincount(L.tensor([-1, 2])))
    raises_like(lambda L: L.bincount(L.tensor([1.0, 2])))
    raises_like(lambda L: L.bincount(L.tensor([1, 2]), minlength=-1))
