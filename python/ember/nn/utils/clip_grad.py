"""Gradient clipping (torch.nn.utils.clip_grad)."""

import math
import warnings

import ember

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scales the gradients in place so their joint `norm_type` norm is at most `max_norm`.

    Returns the total norm before clipping (a 0-dim tensor). `foreach` is accepted for
    torch 2.x compatibility; the result is the same either way.
    """
    if isinstance(parameters, ember.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if len(grads) == 0:
        return ember.tensor(0.0)
    with ember.no_grad():
        if norm_type == math.inf:
            norms = [g.detach().abs().max() for g in grads]
            total_norm = norms[0] if len(norms) == 1 else ember.max(ember.stack(norms))
        else:
            norms = [ember.linalg.vector_norm(g.detach(), norm_type) for g in grads]
            total_norm = ember.linalg.vector_norm(ember.stack(norms), norm_type)
        if error_if_nonfinite and bool(ember.logical_or(total_norm.isnan(),
                                                        total_norm.isinf())):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        clip_coef = max_norm / (total_norm + 1e-6)
        # Multiplying by the clamped coefficient avoids a host sync on `clip_coef < 1`.
        clip_coef_clamped = ember.clamp(clip_coef, max=1.0)
        for g in grads:
            g.detach().mul_(clip_coef_clamped.to(g.dtype))
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Deprecated spelling of clip_grad_norm_."""
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of "
                  "torch.nn.utils.clip_grad_norm_.", stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient in place to [-clip_value, clip_value]."""
    if isinstance(parameters, ember.Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with ember.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.detach().clamp_(min=-clip_value, max=clip_value)
