"""torch.nn.functional's linear, dropout, normalization, embedding and loss functions, with
torch's signatures and defaults (kernels in python/src/nn_ops.cpp)."""

import warnings as _warnings

from ember import _C

_nn = _C._nn

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction):
    if reduction == "elementwise_mean":
        _warnings.warn("reduction='elementwise_mean' is deprecated, please use reduction='mean' "
                       "instead.")
        return 1
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError("{} is not a valid value for reduction".format(reduction)) from None


def _legacy_reduction(size_average, reduce, emit_warning=True):
    """torch's mapping of the deprecated size_average/reduce pair to a reduction string."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        _warnings.warn("size_average and reduce args will be deprecated, please use "
                       "reduction='{}' instead.".format(ret))
    return ret


def _resolve(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


def _warn_size(input, target):
    if target.size() != input.size():
        _warnings.warn("Using a target size ({}) that is different to the input size ({}). This "
                       "will likely lead to incorrect results due to broadcasting. Please ensure "
                       "they have the same size.".format(target.size(), input.size()),
                       stacklevel=3)


def linear(input, weight, bias=None):
    return _nn.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    return _nn.bilinear(input1, input2, weight, bias)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _nn.dropout_(input, p, training) if inplace else _nn.dropout(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if inplace:
        return _nn.alpha_dropout_(input, p, training)
    return _nn.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    if inplace:
        return _nn.feature_alpha_dropout_(input, p, training)
    return _nn.feature_alpha_dropout(input, p, training)


def _feature_dropout(input, p, training, inplace):
    if inplace:
        return _nn.feature_dropout_(input, p, training)
    return _nn.feature_dropout(input, p, training)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    is_batched = inp_dim == 3
    if not is_batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not is_batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        _warnings.warn(f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is "
                       "deprecated and will result in an error in a future release. To retain "
                       "the behavior and silence this warning, please use dropout instead. Note "
                       "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                       "spatial dimensions, a channel dimension, and an optional batch dimension "
                       "(i.e. 3D or 4D inputs).")
    if inp_dim == 3:
        _warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                       "channel-wise 1D dropout behavior is desired - input is interpreted as "
                       "shape (N, C, L), where C is the channel dim. This behavior will change "
                       "in a future release to interpret the input as one without a batch "
                       "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                       "behavior, please switch to using dropout1d instead.")
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        _warnings.warn(f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is "
                       "deprecated and will result in an error in a future release. To retain "
                       "the behavior and silence this warning, please use dropout instead. Note "
                       "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                       "spatial dimensions, a channel dimension, and an optional batch dimension "
                       "(i.e. 4D or 5D inputs).")
    is_batched = inp_dim == 5
    if not is_batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not is_batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def _verify_batch_size(size):
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         "{}".format(size))


def _verify_spatial_size(size):
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         "{}".format(size))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.size())
    return _nn.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _nn.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                             momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return _nn.layer_norm(input, list(normalized_shape), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    if num_groups != 0:  # zero groups: the core's check names the error
        _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                           + list(input.size()[2:]))
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got {} dimensions)"
                         .format(dim))
    if input.numel() == 0:
        return input
    return _nn.local_response_norm(input, size, alpha, beta, k)


def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    from ember import no_grad
    with no_grad():
        _nn.embedding_renorm_(weight, input, max_norm, norm_type)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return _nn.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    if weight.dtype == _C.long and input.is_floating_point():
        _warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                       "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                       "`embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError("embedding_bag: If per_sample_weights ({}) is not None, then it must "
                         "have the same shape as the input ({})"
                         .format(per_sample_weights.shape, input.shape))
    if input.dim() == 2:
        if offsets is not None:
            type_str = "<unknown>"
            type_str = str(type(offsets))
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             "of type {}".format(type_str))
        offsets = _C.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension {}"
                         .format(input.dim()))
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  "(got mode='{}'). Please open a feature request on GitHub."
                                  .format(mode))
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    ret = _nn.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse,
                            per_sample_weights, include_last_offset, padding_idx)
    return ret[0]


# ---- losses ----
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    return _nn.cross_entropy(input, target, weight, _resolve(size_average, reduce, reduction),
                             ignore_index, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _nn.nll_loss(input, target, weight, _resolve(size_average, reduce, reduction),
                        ignore_index)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not valid")
    return _nn.poisson_nll_loss(input, target, log_input, full, eps, _reduction_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.size()[:-1] == var.size()[:-1] and var.size(-1) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    return _nn.gaussian_nll_loss(input, target, var, full, eps, _reduction_enum(reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            _warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                           "the support size.'batchmean' divides only by the batch size, and "
                           "aligns with the KL div math definition.'mean' will be changed to "
                           "behave the same as 'batchmean' in the next major release.")
        if reduction == "batchmean":
            reduction_enum = 2
        else:
            reduction_enum = _reduction_enum(reduction)
    reduced = _nn.kl_div(input, target, reduction_enum, log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _warn_size(input, target)
    r = _resolve(size_average, reduce, reduction)
    return _nn.mse_loss(input, target, r)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _warn_size(input, target)
    r = _resolve(size_average, reduce, reduction)
    return _nn.l1_loss(input, target, r)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_size(input, target)
    r = _resolve(size_average, reduce, reduction)
    return _nn.smooth_l1_loss(input, target, r, beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    _warn_size(input, target)
    return _nn.huber_loss(input, target, _reduction_enum(reduction), delta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    r = _resolve(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError("Using a target size ({}) that is different to the input size ({}) is "
                         "deprecated. Please ensure they have the same size."
                         .format(target.size(), input.size()))
    if weight is not None:
            weight = weight.expand(_C.broadcast_shapes(target.size(), weight.size()))
    return _nn.binary_cross_entropy(input, target, weight, r)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    r = _resolve(size_average, reduce, reduction)
    if not (target.size() == input.size()):
        raise ValueError("Target size ({}) must be the same as input size ({})"
                         .format(target.size(), input.size()))
    return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight, r)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    return _nn.cosine_embedding_loss(input1, input2, target, margin,
                                     _resolve(size_average, reduce, reduction))


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    r = _resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           "but got sizes: input1: {}, input2: {}, target: {} "
                           .format(input1.size(), input2.size(), target.size()))
    return _nn.margin_ranking_loss(input1, input2, target, margin, r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    return _nn.hinge_embedding_loss(input, target, margin,
                                    _resolve(size_average, reduce, reduction))


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.multilabel_margin_loss(input, target, _resolve(size_average, reduce, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.soft_margin_loss(input, target, _resolve(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _nn.multilabel_soft_margin_loss(input, target, weight, _reduction_enum(reduction))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    r = _resolve(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None:
        if weight.dim() != 1:
            raise ValueError("weight must be one-dimensional")
    return _nn.multi_margin_loss(input, target, p, margin, weight, r)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    return _nn.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                   _resolve(size_average, reduce, reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    return _nn.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                        _reduction_enum(reduction), zero_infinity)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _nn.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _nn.pairwise_distance(x1, x2, p, eps, keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    result = _nn.normalize(input, p, dim, eps)
    if out is None:
        return result
    out.copy_(result)
    return out


__all__ = [
    # linear, dropout, normalization, embeddings
    "linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "batch_norm", "layer_norm", "group_norm", "instance_norm",
    "local_response_norm", "embedding", "embedding_bag",
    # losses and distances
    "cross_entropy", "nll_loss", "poisson_nll_loss", "gaussian_nll_loss", "kl_div", "mse_loss",
    "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cosine_embedding_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "multilabel_margin_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "triplet_margin_loss", "ctc_loss",
    "cosine_similarity", "pairwise_distance", "normalize",
]
