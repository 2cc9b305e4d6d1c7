"""Reverse- and forward-mode automatic differentiation (torch.autograd)."""

from ember._C import _autograd as _ag
from ember.autograd import forward_ad, function, grad_mode, anomaly_mode, profiler  # noqa: F401
from ember.autograd import functional  # noqa: F401
from ember.autograd.anomaly_mode import (  # noqa: F401
    detect_anomaly, set_detect_anomaly, is_anomaly_enabled, is_anomaly_check_nan_enabled)
from ember.autograd.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from ember.autograd.grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
    is_inference_mode_enabled)
from ember.autograd.gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401
from ember._C._autograd import Node  # noqa: F401

__all__ = ["Function", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly",
           "set_detect_anomaly", "forward_ad", "Node", "GradcheckError"]


def _is_tensor(x):
    from ember import Tensor
    return isinstance(x, Tensor)


def _as_tuple(x, what, fn):
    if x is None:
        return None
    if _is_tensor(x):
        return (x,)
    try:
        return tuple(x)
    except TypeError:
        raise TypeError(f"{fn}(): {what} must be a Tensor or a sequence of Tensors, got "
                        f"{type(x).__name__}") from None


def _make_grads(outputs, grads, fn):
    """Default gradients: ones for one-element outputs that require grad (as PyTorch)."""
    import ember
    if grads is None:
        grads = (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"Mismatch in number of gradients and outputs: got {len(grads)} "
                           f"gradients for {len(outputs)} outputs")
    out = []
    for o, g in zip(outputs, grads):
        if g is None and o.requires_grad:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ember.ones_like(o)
        elif g is not None and not _is_tensor(g):
            g = ember.full_like(o, g)
        out.append(g)
    return tuple(out)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates the gradients of `tensors` into `.grad` of the leaves (or of `inputs`)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors, "tensors", "backward")
    if inputs is not None:
        inputs = _as_tuple(inputs, "inputs", "backward")
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grad_tensors = _as_tuple(grad_tensors, "grad_tensors", "backward")
    grad_tensors = _make_grads(tensors, grad_tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    _ag._backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` w.r.t. `inputs` (a tuple), without touching `.grad`."""
    if is_grads_batched:
        raise NotImplementedError("grad(): is_grads_batched=True is not supported; use "
                                  "ember.func.vmap over autograd.grad")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs, "outputs", "grad")
    inputs = _as_tuple(inputs, "inputs", "grad")
    for i in inputs:
        if not _is_tensor(i):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(i).__name__}")
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    grad_outputs = _as_tuple(grad_outputs, "grad_outputs", "grad")
    grad_outputs = _make_grads(outputs, grad_outputs, "grad")
    if retain_graph is None:
        retain_graph = create_graph
    return _ag._grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                     materialize_grads)
