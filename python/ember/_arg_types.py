"""Wrong argument types in the API written in Python raise TypeError, as PyTorch's parser does.

A function written in Python that gets, say, a str where it expects a Tensor fails on its first
`input.dim()` with AttributeError. `typed_errors` turns exactly that case (an attribute missing
from an argument that is not a Tensor) into TypeError naming the function; every other error
passes through unchanged, and a call that succeeds costs one extra Python frame.
"""

import functools
import types

from ember._C import Tensor


def typed_errors(fn):
    """`fn` with AttributeError on a non-Tensor argument raised as TypeError."""

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            obj = e.obj
            if e.name is None or isinstance(obj, (Tensor, types.ModuleType, type)):
                raise
            given = type(obj).__name__
            raise TypeError(f"{fn.__name__}(): expected a Tensor, but got {given} "
                            f"('{given}' object has no attribute '{e.name}')") from None

    return checked


def check_public_functions(namespace, module):
    """Wraps every public Python function of `namespace` defined in `module` (a name prefix)."""
    for name, obj in list(namespace.items()):
        if name.startswith("_") or not isinstance(obj, types.FunctionType):
            continue
        if obj.__module__.startswith(module) and not hasattr(obj, "__wrapped__"):
            namespace[name] = typed_errors(obj)
