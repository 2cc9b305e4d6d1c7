"""The libraries the harness runs op_db samples through: ember, or torch standing in for it.

A backend converts torch sample arguments into its own values, resolves a call spec from
ember_ops.py against its module, and converts results back to torch for comparison.
"""

import inspect

import numpy as np
import torch


def resolve_path(root, path):
    """root.a.b.c for path "a.b.c"; None when any part is missing."""
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def torch_name(obj):
    """"float32" for torch.float32, "contiguous_format" for torch.contiguous_format."""
    return str(obj).rsplit(".", 1)[-1]


def whole_storage(t):
    """A contiguous copy of all of t's storage, so that t's sizes, strides and storage offset
    can be rebuilt on it (as_strided samples may read outside the view itself)."""
    return t.as_strided((t.storage().size(),), (1,), 0).clone()


def is_plain(t):
    """True when t owns exactly its own contiguous storage (no strides or offset to rebuild)."""
    return t.is_contiguous() and t.storage_offset() == 0 and t.storage().size() == t.numel()


class Backend:
    """Conversion of nested sample arguments; subclasses convert tensors and dtypes."""

    name = ""
    module = None

    def convert(self, obj):
        """torch values (nested in lists, tuples and dicts) as this backend's values."""
        if isinstance(obj, torch.Tensor):
            return self.tensor(obj.detach())
        if isinstance(obj, torch.Size):
            return tuple(obj)
        if isinstance(obj, (torch.dtype, torch.memory_format, torch.layout)):
            return self.named(obj)
        if isinstance(obj, torch.device):
            return self.device(obj)
        if isinstance(obj, list):
            return [self.convert(x) for x in obj]
        if isinstance(obj, tuple):
            return tuple(self.convert(x) for x in obj)
        if isinstance(obj, dict):
            return {k: self.convert(v) for k, v in obj.items()}
        return obj

    def named(self, obj):
        """The backend's object of the same name (dtype, memory format, layout)."""
        name = torch_name(obj)
        found = getattr(self.module, name, None)
        if found is None:
            raise AttributeError(f"{self.name} has no {name}")
        return found

    def resolve(self, spec):
        """The callable a call spec names (see ember_ops.py), or None if missing."""
        if spec.startswith("."):
            # Unbound, as the OpInfos call torch.Tensor methods (the input may be a number).
            return getattr(self.tensor_type, spec[1:], None)
        if spec.startswith("@"):
            name = spec[1:]
            if not hasattr(self.tensor_type, name):
                return None
            return lambda x: getattr(x, name)
        fn = resolve_path(self.module, spec)
        return fn if callable(fn) else None

    def dtype_name(self, x):
        return torch_name(x.dtype)


class TorchBackend(Backend):
    """torch itself, with inputs copied: validates the harness's conversion and comparison."""

    name = "torch"
    module = torch
    tensor_type = torch.Tensor

    def tensor(self, t):
        if is_plain(t):
            return t.clone()
        return whole_storage(t).as_strided(t.shape, t.stride(), t.storage_offset())

    def device(self, d):
        return d

    def is_tensor(self, x):
        return isinstance(x, torch.Tensor)

    def to_torch(self, x):
        return x.detach()


class EmberBackend(Backend):
    """ember through its Python binding; tensors cross by NumPy, keeping their strides."""

    name = "ember"

    def __init__(self):
        import ember

        self.module = ember
        self.tensor_type = ember.Tensor

    def tensor(self, t):
        E = self.module
        t = t.resolve_conj().resolve_neg()
        # NumPy has no bfloat16: cross as float32 (exact), convert on the ember side.
        bf16 = t.dtype == torch.bfloat16
        # Nor complex32: cross as complex64 (exact).
        if t.dtype == torch.complex32:
            return self.tensor(t.to(torch.complex64)).to(E.complex32)
        if is_plain(t):
            arr = np.array((t.float() if bf16 else t).numpy(), copy=True)
        else:
            # A strided NumPy view of a private copy: from_numpy keeps the strides (zero ones
            # included). The storage offset is not kept; only as_strided could see it, and its
            # samples have plain inputs.
            base = whole_storage(t)
            base = (base.float() if bf16 else base).numpy()[t.storage_offset():]
            arr = np.lib.stride_tricks.as_strided(
                base, tuple(t.shape), tuple(s * base.itemsize for s in t.stride()))
        x = E.from_numpy(arr)
        return x.to(E.bfloat16) if bf16 else x

    def device(self, d):
        return self.module.device(str(d))

    def is_tensor(self, x):
        return isinstance(x, self.tensor_type)

    def to_torch(self, x):
        E = self.module
        for resolve in ("resolve_conj", "resolve_neg"):
            if hasattr(x, resolve):
                x = getattr(x, resolve)()
        if self.dtype_name(x) == "bfloat16":
            return torch.from_numpy(np.array(x.to(E.float32).numpy())).to(torch.bfloat16)
        if self.dtype_name(x) == "complex32":
            return torch.from_numpy(np.array(x.to(E.complex64).numpy())).to(torch.complex32)
        return torch.from_numpy(np.array(x.numpy()))


def make_backend(name):
    return {"torch": TorchBackend, "ember": EmberBackend}[name]()


def default_call(op):
    """How torch spells op `op.name`: a function path, ".method" or "@property"; None if neither.

    The same spelling is then looked up in the backend.
    """
    fn = resolve_path(torch, op.name)
    if callable(fn) and not isinstance(fn, torch.dtype):
        return op.name
    attr = inspect.getattr_static(torch.Tensor, op.name, None)
    if attr is None:
        return None
    if inspect.isdatadescriptor(attr) or isinstance(attr, property):
        return "@" + op.name
    return "." + op.name
