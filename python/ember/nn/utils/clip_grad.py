"""Gradient clipping (torch.nn.utils.clip_grad) over ember::nn::utils."""

import warnings

from ember import _C

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scales the gradients in place so their joint `norm_type` norm is at most `max_norm`.

    Returns the total norm before clipping (a 0-dim tensor). `foreach` is accepted for
    torch 2.x compatibility; the result is the same either way.
    """
    return _C._nn.clip_grad_norm_(parameters, float(max_norm), float(norm_type),
                                  error_if_nonfinite)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Deprecated spelling of clip_grad_norm_."""
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of "
                  "torch.nn.utils.clip_grad_norm_.", stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient in place to [-clip_value, clip_value]."""
    _C._nn.clip_grad_value_(parameters, float(clip_value))
