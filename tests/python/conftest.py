"""pytest setup for the binding tests: makes `ember` importable and offers the oracle helpers.

`ember` comes from the environment when it is importable, else from $EMBER_PYTHONPATH, else
from the build tree (build/release/python).
"""

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _ensure_ember_importable():
    override = os.environ.get("EMBER_PYTHONPATH")
    if override:
        sys.path.insert(0, override)
        return
    try:
        import ember  # noqa: F401 - only whether it imports
    except ImportError:
        sys.path.insert(0, str(ROOT / "build" / "release" / "python"))


_ensure_ember_importable()
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


@pytest.fixture
def to_torch():
    """ember.Tensor -> torch.Tensor (a copy through NumPy; bfloat16 through float32)."""
    from _oracle import to_torch as f
    return f


@pytest.fixture
def to_ember():
    """torch.Tensor -> ember.Tensor (a copy through NumPy; bfloat16 through float32)."""
    from _oracle import to_ember as f
    return f


@pytest.fixture
def restore_globals():
    """For tests that change the default dtype or the thread count: puts them back."""
    import ember
    dtype, threads = ember.get_default_dtype(), ember.get_num_threads()
    yield
    ember.set_default_dtype(dtype)
    ember.set_num_threads(threads)


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    """Runs the test on 1 and on 2 intra-op threads; puts the thread count back."""
    import ember
    saved = ember.get_num_threads()
    ember.set_num_threads(request.param)
    yield request.param
    ember.set_num_threads(saved)
