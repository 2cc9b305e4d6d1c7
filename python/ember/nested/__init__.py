"""ember.nested: nested (ragged) tensors, PyTorch 1.13's torch.nested prototype.

A nested tensor holds a list of tensors of equal rank and dtype whose sizes may differ, packed
in one buffer (ember::nested::NestedTensor). ember.matmul, ember.bmm, F.linear, F.softmax,
F.layer_norm, F.relu, F.gelu, F.dropout and the arithmetic operators accept them.
"""

from ember import _C
from ember._C import Tensor

NestedTensor = _C._nested.NestedTensor

__all__ = ["to_padded_tensor", "as_nested_tensor", "nested_tensor", "NestedTensor"]


def _check_list(tensor_list):
    if not isinstance(tensor_list, list) or any(not isinstance(t, Tensor) for t in tensor_list):
        raise TypeError("nested_tensor(): Expected first argument to be a list of tensors ")


def nested_tensor(tensor_list, *, dtype=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A nested tensor (a leaf, no autograd history) holding copies of `tensor_list`.

    dtype and device default to those of the first tensor; the others are converted.
    """
    _check_list(tensor_list)
    return _C._nested.nested_tensor(tensor_list, dtype, device, bool(requires_grad))


def as_nested_tensor(tensor_list, dtype=None, device=None):
    """A nested tensor of copies of `tensor_list` that keeps their autograd history."""
    _check_list(tensor_list)
    return _C._nested.as_nested_tensor(tensor_list, dtype, device)


def to_padded_tensor(input, padding, output_size=None, out=None):
    """The components of `input` stacked into a dense tensor padded with `padding`.

    output_size, when given, must have input.dim() entries, none below the padded size.
    """
    r = _C._nested.to_padded_tensor(input, padding, output_size)
    if out is None:
        return r
    out.resize_(r.shape).copy_(r)
    return out


def _repr(self):
    if self.size(0) == 0:
        body = ""
    else:
        parts = []
        for t in self.unbind():
            s = repr(t.detach())
            if self.requires_grad:
                s = s[:-1] + ", requires_grad=True)"
            parts.append("  " + s.replace("\n", "\n  "))
        body = ",\n".join(parts)
    suffix = ""
    fn = self._buffer().grad_fn
    if fn is not None:
        suffix = f", grad_fn=<{type(fn).__name__}>"
    elif self.requires_grad:
        suffix = ", requires_grad=True"
    return f"nested_tensor([\n{body}\n]{suffix})"


def _iter(self):
    return iter(self.unbind())


def _grad_fn(self):
    return self._buffer().grad_fn


def _unsupported(name):
    def call(*args, **kwargs):
        raise NotImplementedError(f"[{name}] {name} is not supported for nested tensors")
    call.__name__ = name
    return call


def _getattr(self, name):
    # Reached only for names the class lacks: a dense-tensor method not defined for nested
    # tensors raises NotImplementedError when called, naming the op.
    if not name.startswith("__") and callable(getattr(Tensor, name, None)):
        return _unsupported(name)
    raise AttributeError(f"'NestedTensor' object has no attribute '{name}'")


def _shape(self):
    raise RuntimeError("[shape] a nested tensor has no single shape: its components' sizes "
                       "differ (use size(dim), unbind() or to_padded_tensor())")


NestedTensor.__getattr__ = _getattr
NestedTensor.shape = property(_shape)
NestedTensor.__repr__ = _repr
NestedTensor.__str__ = _repr
NestedTensor.__iter__ = _iter
NestedTensor.grad_fn = property(_grad_fn)
