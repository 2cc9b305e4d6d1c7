"""The mapping table: how each op_db entry is called in ember, and what ember is held to.

Keys are OpInfo names; `name[variant]` targets one variant (variant_test_name), a bare name
covers all variants of that name. An op with no entry is called the way torch spells it:
`torch.nn.functional.gelu` becomes `ember.nn.functional.gelu`, and a name torch has only on
tensors (`contiguous`, `T`) becomes the same method or property of the ember tensor.

Op fields:
  supported  dtypes whose forward results must match torch on every sample. This is the
             regression gate: `run.py --check` fails when one of them does not fully pass.
  call       how ember spells the op, when torch's spelling is not it:
               "linalg.det"  a function under the ember module
               ".contiguous" a Tensor method, called unbound as Tensor.contiguous(input, ...)
               "@mT"         a property of the input tensor
  adapt      f(fn, input, *args, **kwargs) calling the resolved `fn` with a sample's arguments,
             for OpInfos that wrap the op in a lambda with another argument order.
  unmapped   the reason the op has no ember counterpart (it is then not run).
  compare    "values" (default) or "meta": shapes and dtypes only, for random or
             uninitialised results.
  reference  "float64": float32 samples are held to torch's float64 result rounded to
             float32, for ops whose float32 result in torch is itself off by more than the
             tolerance (ember computes them more accurately).
  grad, fwd_ad, vmap
             dtypes held to gradient, forward-AD and vmap checks, where the OpInfo says the
             op supports them and its forward passes: ember's vjp with a random grad output,
             and its jvp with random tangents, against torch's (vmap: not run yet).
"""

from dataclasses import dataclass, replace

F32 = frozenset({"float32"})
F64 = frozenset({"float64"})
FLOAT = F32 | F64
NONE = frozenset()


@dataclass(frozen=True)
class Op:
    supported: frozenset = NONE
    call: str = None
    adapt: object = None
    unmapped: str = ""
    compare: str = "values"
    reference: str = ""
    grad: frozenset = NONE
    fwd_ad: frozenset = NONE
    vmap: frozenset = NONE


def op(supported=NONE, **fields):
    return Op(frozenset(supported), **fields)


def meta(supported=NONE, **fields):
    """A random or uninitialised result: compare shapes and dtypes only."""
    return Op(frozenset(supported), compare="meta", **fields)


def unmapped(reason):
    return Op(unmapped=reason)


def _slice(f, x, dim=0, start=None, end=None, step=1):
    # aten::slice has no Python function in torch either; indexing is its public spelling.
    return f(x, (slice(None),) * dim + (slice(start, end, step),))


def _ember_pairwise_distance():
    import ember
    return ember.nn.PairwiseDistance()


def _swap01(f, a, b, *args, **kwargs):
    return f(b, a, *args, **kwargs)


TABLE = {
    # ---- OpInfos that wrap the op in a lambda ----
    "slice": op(call=".__getitem__", adapt=_slice),
    # torch's float32 polygamma loses digits near the negative poles (sin(pi x) in float).
    "polygamma": op(adapt=_swap01, reference="float64"),
    "special.polygamma": op(adapt=_swap01, reference="float64"),
    "einsum": op(adapt=_swap01),
    "where": op(adapt=lambda f, x, condition, other: f(condition, x, other)),
    "zero_": op(call=".zero_", adapt=lambda f, x: f(x.clone())),
    "resize_": op(call=".resize_", adapt=lambda f, x, shape: f(x.clone(), shape)),
    "resize_as_": op(call=".resize_as_", adapt=lambda f, x, other: f(x.clone(), other)),
    "nn.functional.embedding": op(adapt=_swap01),
    "nn.functional.embedding_bag": op(adapt=_swap01),
    "linalg.lstsq[grad_oriented]": op(adapt=lambda f, a, b, driver: f(a, b, driver=driver)[0]),
    "linalg.pinv[singular]": op(adapt=lambda f, a, b: f(a @ b.mT)),
    # The sample's distance function is torch's own module: call ember's.
    "nn.functional.triplet_margin_with_distance_loss": op(
        adapt=lambda f, a, p, n, distance_function=None, **kw: f(
            a, p, n, distance_function=None if distance_function is None
            else _ember_pairwise_distance(), **kw)),
    # ---- torch's float32 result is less accurate than the tolerance ----
    "matrix_exp": op(reference="float64"),
    # ---- random or uninitialised results ----
    "uniform": meta(call=".uniform_"),
    "bernoulli": meta(),
    "multinomial": meta(),
    "normal": meta(),
    "normal[number_mean]": meta(adapt=_swap01),
    "randn": meta(),
    "randn_like": meta(),
    "rand_like": meta(),
    "randint_like": meta(),
    "empty": meta(),
    "empty_like": meta(),
    "new_empty": meta(),
    "new_empty_strided": meta(),
    "nn.functional.dropout": meta(),
    "nn.functional.dropout2d": meta(),
    "nn.functional.dropout3d": meta(),
    "nn.functional.feature_alpha_dropout[with_train]": meta(),
    "nn.functional.rrelu": meta(),
    "nn.functional.fractional_max_pool2d": meta(),
    "nn.functional.fractional_max_pool3d": meta(),
    "nn.functional._scaled_dot_product_attention": meta(FLOAT),
    "svd_lowrank": meta(adapt=lambda f, a, b, **kw: f(a @ b.mT, **kw)),
    "pca_lowrank": meta(adapt=lambda f, a, b, **kw: f(a @ b.mT, **kw)),
    # ---- no ember counterpart ----
    "sparse.sampled_addmm": unmapped("sparse tensors"),
    "to_sparse": unmapped("sparse tensors"),
}


def supported(dtypes, names):
    """Adds dtypes to the `supported` set of each whitespace-separated key in names."""
    for key in names.split():
        entry = TABLE.get(key, Op())
        TABLE[key] = replace(entry, supported=entry.supported | dtypes)


# ---- the regression gate: ops that pass every sample ----
# A bare name covers every variant: mark `name[variant]` alone when only some variants pass.
supported(FLOAT, """
    abs acos acosh asin asinh atan atanh ceil cos cosh erf erfc erfinv exp exp2 expm1 floor frac
    log log10 log1p log2 neg positive reciprocal round rsqrt sgn sigmoid sign sin sinh sqrt
    square tan tanh trunc nan_to_num logit conj conj_physical resolve_conj resolve_neg real
    isfinite isinf isposinf isneginf isreal isnan signbit
""")  # unary elementwise
supported(FLOAT, """
    add sub mul div true_divide floor_divide remainder fmod pow float_power atan2 copysign
    nextafter hypot xlogy maximum minimum fmax fmin clamp clamp_max clamp_min lerp addcmul addcdiv
    where __radd__ __rmul__ __rmod__ __rpow__ __rsub__
    eq ne lt le gt ge isclose allclose equal logical_and logical_or logical_xor logical_not
""")  # binary, ternary and comparison elementwise
supported(FLOAT, """
    nn.functional.relu nn.functional.relu6 nn.functional.hardswish nn.functional.leaky_relu
    nn.functional.elu nn.functional.celu nn.functional.selu nn.functional.silu
    nn.functional.hardsigmoid nn.functional.logsigmoid nn.functional.mish nn.functional.softsign
    nn.functional.tanhshrink nn.functional.threshold nn.functional.softshrink
    nn.functional.hardshrink nn.functional.hardtanh nn.functional.gelu nn.functional.softplus
""")  # activations
supported(FLOAT, """
    chunk contiguous clone expand expand_as diagonal narrow permute split split_with_sizes select
    slice ravel reshape reshape_as view view_as flatten unflatten unbind unfold movedim unsqueeze
    transpose t T H mT mH squeeze as_strided
    to bfloat16 bool byte char double float half int long short
""")  # views, copies and conversions
supported(FLOAT, """
    cat stack hstack vstack dstack column_stack atleast_1d atleast_2d atleast_3d tril triu
""")  # joins and triangles
supported(FLOAT, """
    arange linspace logspace zeros ones eye empty zeros_like ones_like full_like empty_like
    new_zeros new_ones new_full new_empty zero_
    uniform randn randn_like rand_like multinomial normal normal[number_mean] bernoulli
""")  # factories and random
supported(F32, "broadcast_shapes")  # the OpInfo runs it for float32 only
supported(FLOAT, """
    sum mean prod nansum nanmean amax amin argmax argmin aminmax count_nonzero all any
    max[reduction_with_dim] max[reduction_no_dim] max[binary]
    min[reduction_with_dim] min[reduction_no_dim] min[binary]
    var std var_mean std_mean logsumexp norm norm[fro] norm[inf] dist
""")  # reductions
supported(FLOAT, """
    cumsum cumprod cummax cummin logcumsumexp softmax log_softmax nn.functional.softmin
    sort argsort msort topk kthvalue median nanmedian mode quantile nanquantile
    unique unique_consecutive
""")  # scans, softmax, sorting, order statistics
supported(FLOAT, """
    __getitem__ index_put index_select gather scatter scatter_add index_add index_copy index_fill
    masked_fill masked_select masked_scatter nonzero argwhere take take_along_dim put
    scatter_reduce[sum] scatter_reduce[prod] scatter_reduce[mean] scatter_reduce[amin]
    scatter_reduce[amax]
""")  # indexing ops
supported(FLOAT, """
    broadcast_to broadcast_tensors combinations cartesian_prod diag diag_embed diagonal_scatter
    flip fliplr flipud roll rot90 select_scatter slice_scatter tensor_split histc bucketize
    searchsorted repeat tile repeat_interleave diagflat meshgrid nn.functional.pad[constant]
    nn.functional.pad[reflect] nn.functional.pad[replicate] nn.functional.pad[circular]
    diff block_diag
""")  # shape ops
supported(FLOAT, """
    matmul __rmatmul__ mm bmm addmm addmm[decomposed] addmv addr addbmm baddbmm mv dot vdot
    outer inner tensordot einsum kron cross trace
""")  # matrix products
supported(FLOAT, """
    cholesky cholesky_inverse cholesky_solve lu_unpack qr triangular_solve svd pinverse logdet
    linalg.cross linalg.det linalg.cholesky linalg.cholesky_ex linalg.cond linalg.eig
    linalg.eigvals linalg.eigh linalg.eigvalsh linalg.householder_product linalg.lstsq
    linalg.matrix_power linalg.multi_dot linalg.norm linalg.matrix_norm linalg.qr linalg.slogdet
    linalg.vector_norm linalg.lu_factor linalg.lu_factor_ex linalg.lu linalg.lu_solve linalg.inv
    linalg.inv_ex linalg.solve linalg.solve_ex linalg.solve_triangular
    linalg.matrix_rank linalg.pinv linalg.pinv[singular] linalg.svd
    linalg.svdvals linalg.lstsq[grad_oriented]
""")  # linear algebra
supported(FLOAT, "matrix_exp")


GRAD, FWD = 1, 2


def differentiable(dtypes, kinds, names):
    """Adds dtypes to the `grad` (GRAD) and/or `fwd_ad` (FWD) sets of each key in names."""
    for key in names.split():
        # A variant key inherits its bare name's entry (lookup() prefers the variant).
        entry = TABLE.get(key) or TABLE.get(key.split("[")[0], Op())
        if kinds & GRAD:
            entry = replace(entry, grad=entry.grad | dtypes)
        if kinds & FWD:
            entry = replace(entry, fwd_ad=entry.fwd_ad | dtypes)
        TABLE[key] = entry


# ---- gradients and forward-AD tangents that match torch on every sample (float64) ----
# Not marked: __rpow__ (torch 1.13's Tensor.__rpow__ detaches the other operand; ember
# differentiates it); the tangents of cholesky_inverse and triangular_solve (torch 1.13's jvps
# disagree with its own vjps and with finite differences; ember's agree with both, see
# tests/python/test_autograd_linalg.py).
differentiable(F64, GRAD | FWD, """
    abs acos acosh add clamp_max clamp_min mul sub addmm addmm[decomposed] addmv addbmm baddbmm
    dot vdot bmm mv addr addcmul addcdiv asin asinh atan atan2 atanh broadcast_to
    broadcast_tensors block_diag combinations cartesian_prod ceil cholesky_solve chunk clone
    contiguous clamp positive conj conj_physical resolve_conj resolve_neg copysign cos cosh
    cross cumsum cumprod cummax cummin diff div[no_rounding_mode] div[trunc_rounding]
    div[floor_rounding] true_divide exp expand expand_as diag diag_embed diagonal
    diagonal_scatter fmax fmin fmod remainder frac floor flip fliplr flipud log1p kthvalue log
    log10 log2 lu_unpack masked_fill masked_scatter masked_select matrix_exp matmul
    max[reduction_with_dim] max[reduction_no_dim] median nanmedian var_mean std_mean
    meshgrid[variadic_tensors] meshgrid[list_of_tensors] min[reduction_with_dim]
    min[reduction_no_dim] quantile nanquantile max[binary] maximum min[binary] minimum softmax
    softmax[with_dtype] nn.functional.softmin nn.functional.softmin[with_dtype] as_strided
    nn.functional.relu nn.functional.pad[constant] nn.functional.pad[reflect]
    nn.functional.pad[replicate] nn.functional.pad[circular] nn.functional.hardswish
    nn.functional.leaky_relu nn.functional.elu nn.functional.celu nn.functional.selu
    nn.functional.silu nn.functional.hardsigmoid nn.functional.logsigmoid nn.functional.mish
    nn.functional.softsign nn.functional.tanhshrink nn.functional.threshold to topk
    nn.functional.softshrink nn.functional.hardshrink nn.functional.hardtanh nn.functional.gelu
    nn.functional.relu6 mm mode narrow neg dist outer permute pow float_power qr real roll rot90
    round round[decimals_0] round[decimals_3] round[decimals_neg_3] sin sinh sign sgn split
    split[list_args] split_with_sizes __radd__ __rmul__ __rmatmul__ __rmod__ __rsub__ select
    select_scatter slice slice_scatter tan tanh tensor_split trunc exp2 expm1 nan_to_num
    reciprocal rsqrt sqrt square lerp einsum svd ravel reshape reshape_as view view_as
    atleast_1d atleast_2d atleast_3d flatten unflatten column_stack pinverse gather index_fill
    index_copy index_select index_add __getitem__ index_put sort put take scatter double
    scatter_add stack hstack hypot cat unbind vstack dstack unfold msort movedim repeat squeeze
    take_along_dim tile unsqueeze xlogy zero_ logsumexp trace transpose T H mT mH tril triu kron
    inner tensordot sigmoid erf erfc erfinv logdet log_softmax log_softmax[dtype] logit where
    norm norm[nuc] norm[fro] norm[inf] t nn.functional.softplus amax amin mean nanmean std var
    prod sum nansum repeat_interleave diagflat scatter_reduce[sum] scatter_reduce[mean]
    scatter_reduce[amin] scatter_reduce[amax] linalg.cross linalg.det linalg.det[singular]
    linalg.cholesky linalg.cholesky_ex linalg.cond linalg.eig linalg.eigvals linalg.eigh
    linalg.eigvalsh linalg.householder_product linalg.lstsq[grad_oriented] linalg.matrix_power
    linalg.multi_dot linalg.norm linalg.norm[subgradients_at_zero] linalg.matrix_norm linalg.qr
    linalg.slogdet linalg.vector_norm linalg.lu_factor linalg.lu_factor_ex linalg.lu
    linalg.lu_solve linalg.inv linalg.inv_ex linalg.solve linalg.solve_ex
    linalg.solve_triangular linalg.pinv linalg.pinv[singular] linalg.pinv[hermitian] linalg.svd
    linalg.svdvals
""")
differentiable(F64, GRAD, """
    cholesky cholesky_inverse triangular_solve bfloat16 float half logcumsumexp
    scatter_reduce[prod] linalg.lstsq
""")


# ---- nn: convolution, pooling, resampling, normalization, dropout, embedding, losses ----
supported(FLOAT, """
    nn.functional.cross_entropy nn.functional.normalize nn.functional.cosine_similarity
    nn.functional.adaptive_avg_pool1d nn.functional.adaptive_avg_pool2d
    nn.functional.adaptive_avg_pool3d nn.functional.adaptive_max_pool1d
    nn.functional.adaptive_max_pool2d nn.functional.adaptive_max_pool3d nn.functional.avg_pool1d
    nn.functional.binary_cross_entropy_with_logits nn.functional.conv_transpose1d
    nn.functional.conv1d nn.functional.group_norm nn.functional.instance_norm
    nn.functional.layer_norm nn.functional.local_response_norm nn.functional.unfold
    nn.functional.interpolate[nearest] nn.functional.interpolate[linear]
    nn.functional.interpolate[bilinear] nn.functional.interpolate[bicubic]
    nn.functional.interpolate[trilinear] nn.functional.interpolate[area]
    nn.functional.upsample_bilinear nn.functional.soft_margin_loss
    nn.functional.upsample_nearest nn.functional.margin_ranking_loss
    nn.functional.multi_margin_loss nn.functional.multilabel_margin_loss
    nn.functional.multilabel_soft_margin_loss nn.functional.avg_pool2d nn.functional.max_pool1d
    nn.functional.avg_pool3d
    nn.functional.max_pool2d nn.functional.max_pool3d nn.functional.max_unpool1d
    nn.functional.max_unpool1d[grad] nn.functional.max_unpool2d nn.functional.max_unpool2d[grad]
    nn.functional.max_unpool3d nn.functional.max_unpool3d[grad] nn.functional.linear
    nn.functional.bilinear nn.functional.glu nn.functional.prelu nn.functional.rrelu
    nn.functional.triplet_margin_loss nn.functional.binary_cross_entropy
    nn.functional.smooth_l1_loss nn.functional.l1_loss nn.functional.dropout
    nn.functional.dropout2d nn.functional.dropout3d
    nn.functional.feature_alpha_dropout[with_train]
    nn.functional.feature_alpha_dropout[without_train] nn.functional.embedding
    nn.functional.embedding_bag nn.functional.mse_loss nn.functional.ctc_loss
    nn.functional.cosine_embedding_loss nn.functional.nll_loss nn.functional.gaussian_nll_loss
    nn.functional.hinge_embedding_loss nn.functional.huber_loss nn.functional.poisson_nll_loss
    nn.functional.pairwise_distance nn.functional.pixel_shuffle nn.functional.pixel_unshuffle
    nn.functional.kl_div nn.functional.conv1d nn.functional.group_norm
    nn.functional.interpolate[nearest] nn.functional.max_pool1d nn.functional.max_unpool1d
    nn.functional.linear nn.functional.glu nn.functional.l1_loss
""")
# float32 differs from torch by more than the tolerance on some samples (oneDNN sums in
# another order): float64 only.
supported(F64, """
    nn.functional.conv_transpose2d nn.functional.conv_transpose3d nn.functional.conv2d
""")
differentiable(F64, GRAD | FWD, """
    nn.functional.normalize nn.functional.cosine_similarity nn.functional.adaptive_avg_pool1d
    nn.functional.adaptive_avg_pool2d nn.functional.adaptive_avg_pool3d
    nn.functional.adaptive_max_pool1d nn.functional.adaptive_max_pool2d
    nn.functional.adaptive_max_pool3d nn.functional.avg_pool1d
    nn.functional.binary_cross_entropy_with_logits nn.functional.conv_transpose1d
    nn.functional.conv_transpose2d nn.functional.conv_transpose3d nn.functional.conv2d
    nn.functional.instance_norm nn.functional.layer_norm nn.functional.local_response_norm
    nn.functional.unfold nn.functional.interpolate[linear] nn.functional.interpolate[bilinear]
    nn.functional.interpolate[bicubic] nn.functional.interpolate[trilinear]
    nn.functional.interpolate[area] nn.functional.upsample_bilinear
    nn.functional.soft_margin_loss nn.functional.upsample_nearest
    nn.functional.margin_ranking_loss nn.functional.multilabel_soft_margin_loss
    nn.functional.avg_pool2d nn.functional.avg_pool3d nn.functional.max_pool2d
    nn.functional.max_pool3d
    nn.functional.max_unpool1d[grad] nn.functional.max_unpool2d[grad]
    nn.functional.max_unpool3d[grad] nn.functional.bilinear
    nn.functional.prelu nn.functional.triplet_margin_loss nn.functional.binary_cross_entropy
    nn.functional.smooth_l1_loss nn.functional.feature_alpha_dropout[without_train]
    nn.functional.mse_loss nn.functional.cosine_embedding_loss nn.functional.gaussian_nll_loss
    nn.functional.hinge_embedding_loss nn.functional.huber_loss nn.functional.poisson_nll_loss
    nn.functional.pairwise_distance nn.functional.pixel_shuffle nn.functional.pixel_unshuffle
    nn.functional.kl_div
""")
differentiable(F64, GRAD, """
    nn.functional.cross_entropy nn.functional.conv1d nn.functional.multi_margin_loss
    nn.functional.multilabel_margin_loss nn.functional.max_pool1d nn.functional.linear
    nn.functional.ctc_loss nn.functional.nll_loss
""")
differentiable(F64, FWD, """
    nn.functional.interpolate[nearest] nn.functional.glu nn.functional.l1_loss
""")
# Gradients or tangents only (their other mode is marked above or does not pass).
differentiable(F64, GRAD, """
    nn.functional.group_norm nn.functional.interpolate[nearest] nn.functional.max_unpool1d
    nn.functional.glu nn.functional.l1_loss
""")
differentiable(F64, FWD, "nn.functional.conv1d nn.functional.max_pool1d nn.functional.linear")
# max_unpool's plain OpInfos repeat indices (overlapping pooling windows), so which tangent lands
# on a repeated output position is write order, not semantics (torch's own OpInfo skips these
# forward-AD checks); only their [grad] variants, with unique indices, hold tangents to torch.
differentiable(F64, GRAD, "nn.functional.max_unpool2d nn.functional.max_unpool3d")


def lookup(name, variant):
    """The entry for an OpInfo (variant first, then the bare name), or the default Op()."""
    if variant and f"{name}[{variant}]" in TABLE:
        return TABLE[f"{name}[{variant}]"]
    return TABLE.get(name, Op())

# ---- fft, torch.special, complex, statistics, the remaining tensor, linalg and nn ops,
# torch.masked (passing every sample) ----
supported(FLOAT, """
    cdist sum_to_size symeig view_as_complex complex corrcoef cov deg2rad stft istft i0 frexp
    geqrf gradient isin ldexp logaddexp logaddexp2 lu lu_solve heaviside as_strided_scatter
    native_batch_norm constant_pad_nd nn.functional.fractional_max_pool2d
    nn.functional.fractional_max_pool3d nn.functional.triplet_margin_with_distance_loss
    nn.functional.batch_norm igamma igammac mvlgamma[mvlgamma_p_1] mvlgamma[mvlgamma_p_3]
    mvlgamma[mvlgamma_p_5] narrow_copy ormqr rad2deg sinc __rdiv__ rsub hsplit vsplit dsplit
    angle svd_lowrank pca_lowrank polar polygamma index_reduce
    chalf randint_like new_empty_strided histogram histogramdd renorm fill resize_ resize_as_
    trapz trapezoid cumulative_trapezoid digamma lgamma nn.functional.grid_sample
    nn.functional.pdist segment_reduce[lengths] segment_reduce[offsets] fft.fft fft.fft2
    fft.fftn fft.hfft fft.hfft2 fft.hfftn fft.rfft fft.rfft2 fft.rfftn fft.ifft fft.ifft2
    fft.ifftn fft.ihfft fft.ihfft2 fft.ihfftn fft.irfft fft.irfft2 fft.irfftn fft.fftshift
    fft.ifftshift linalg.vecdot linalg.ldl_factor linalg.ldl_factor_ex linalg.ldl_solve
    linalg.vander linalg.tensorinv special.i0e special.i1 special.i1e special.ndtr
    special.polygamma special.xlog1py special.zeta special.entr
    special.ndtri special.log_ndtr special.erfcx special.bessel_y0 special.bessel_y1
    special.chebyshev_polynomial_t special.chebyshev_polynomial_u special.chebyshev_polynomial_v
    special.chebyshev_polynomial_w special.hermite_polynomial_h special.hermite_polynomial_he
    special.laguerre_polynomial_l special.legendre_polynomial_p special.modified_bessel_i0
    special.modified_bessel_i1 special.modified_bessel_k0 special.modified_bessel_k1
    special.scaled_modified_bessel_k0 special.scaled_modified_bessel_k1
    special.shifted_chebyshev_polynomial_t special.shifted_chebyshev_polynomial_u
    special.shifted_chebyshev_polynomial_v special.shifted_chebyshev_polynomial_w
    special.spherical_bessel_j0 masked.sum masked.prod masked.cumsum masked.cumprod masked.amax
    masked.amin masked.argmax masked.argmin masked.mean masked.median masked.norm masked.var
    masked.std masked.softmax masked.log_softmax masked.softmin masked.normalize
    masked.logaddexp masked.logsumexp
""")
supported(F32, """
    special.airy_ai special.bessel_j0 special.bessel_j1
""")
supported(F64, """
    native_layer_norm linalg.tensorsolve
""")
differentiable(F64, GRAD | FWD, """
    __rdiv__ angle complex constant_pad_nd corrcoef cumulative_trapezoid deg2rad digamma dsplit
    fft.fft fft.fft2 fft.fftn fft.fftshift fft.hfft fft.hfft2 fft.hfftn fft.ifft fft.ifft2
    fft.ifftn fft.ifftshift fft.ihfft fft.ihfft2 fft.ihfftn fft.irfft fft.irfft2 fft.irfftn
    fft.rfft fft.rfft2 fft.rfftn fill frexp gradient hsplit i0 istft ldexp lgamma
    linalg.tensorinv linalg.tensorsolve linalg.vander linalg.vecdot logaddexp logaddexp2 lu
    lu_solve masked.amax masked.amin masked.cumprod masked.cumsum masked.log_softmax
    masked.logaddexp masked.logsumexp masked.mean masked.median masked.norm masked.normalize
    masked.prod masked.softmax masked.softmin masked.std masked.sum masked.var
    mvlgamma[mvlgamma_p_1] mvlgamma[mvlgamma_p_3] mvlgamma[mvlgamma_p_5] native_batch_norm
    nn.functional.batch_norm nn.functional.triplet_margin_with_distance_loss polar
    polygamma rad2deg rsub sinc special.entr
    special.erfcx special.i0e special.i1 special.i1e special.log_ndtr special.ndtr special.ndtri
    special.polygamma special.xlog1py stft sum_to_size trapezoid trapz
    view_as_complex vsplit
""")
differentiable(F64, GRAD, """
    cdist symeig cov native_layer_norm index_reduce chalf renorm nn.functional.grid_sample
    nn.functional.pdist segment_reduce[lengths] segment_reduce[offsets]
""")
# as_strided_scatter's gradient: torch 1.13's backward reads uninitialised memory (tangents only).
differentiable(F64, FWD, "as_strided_scatter")

