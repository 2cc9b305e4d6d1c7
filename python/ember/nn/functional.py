"""ember.nn.functional: torch.nn.functional's functions.

Every function here is the binding of its C++ functional form (ember._C._nn.functional, over
ember::nn::functional), which holds the argument handling, defaults and errors. Nothing is
written twice: tests/python/test_nn_parity.py fails when a Python functional has no C++ form.
"""

from ember._C._nn.functional import (  # noqa: F401
    # activations
    relu, relu_, relu6, selu, selu_, silu, mish, hardsigmoid, hardswish,
    softsign, tanhshrink, logsigmoid, sigmoid, tanh, leaky_relu, leaky_relu_,
    elu, elu_, celu, celu_, gelu, softplus, hardtanh, hardtanh_, hardshrink,
    softshrink, threshold, threshold_, softmax, softmin, log_softmax, prelu, glu,
    rrelu, rrelu_, multi_head_attention_forward,
    # linear, dropout, normalization, embeddings, distances, padding
    linear, bilinear, dropout, dropout1d, dropout2d, dropout3d, alpha_dropout,
    feature_alpha_dropout, batch_norm, instance_norm, layer_norm, group_norm,
    local_response_norm, normalize, embedding, embedding_bag, one_hot,
    cosine_similarity, pairwise_distance, pad,
    # losses
    l1_loss, mse_loss, smooth_l1_loss, huber_loss, cross_entropy, nll_loss,
    poisson_nll_loss, gaussian_nll_loss, kl_div, binary_cross_entropy,
    binary_cross_entropy_with_logits, cosine_embedding_loss, margin_ranking_loss,
    hinge_embedding_loss, multilabel_margin_loss, soft_margin_loss,
    multilabel_soft_margin_loss, multi_margin_loss, triplet_margin_loss,
    triplet_margin_with_distance_loss, ctc_loss,
    # convolution, pooling
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
    max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices,
    max_pool2d_with_indices, max_pool3d_with_indices, avg_pool1d, avg_pool2d,
    avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
    adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d,
    lp_pool1d, lp_pool2d, lp_pool3d,
    # sliding blocks, resampling
    fold, unfold, interpolate, upsample, upsample_nearest, upsample_bilinear,
    pixel_shuffle, pixel_unshuffle, channel_shuffle,
)

__all__ = [_name for _name in dir() if not _name.startswith("_")]

from ember._C._nn.functional import (  # noqa: F401,E402
    # sampling grids, fractional pooling
    grid_sample, affine_grid, fractional_max_pool2d, fractional_max_pool3d,
    fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices,
)

from ember._C._nn.functional import pdist  # noqa: F401,E402  (the op: ember::pdist)

__all__ = [_name for _name in dir() if not _name.startswith("_")]

from ember._C._nn.functional import (  # noqa: F401,E402
    # attention (torch 2.1's, and torch 1.13's private form)
    scaled_dot_product_attention, _scaled_dot_product_attention,
)

__all__ = [_name for _name in dir() if not _name.startswith("_")]
