// The Transformer encoder layer's inference fast path (PyTorch 1.12's BetterTransformer) and the
// packing of padded batches.
//
// Note [Encoder fast path]
// The layer runs on a 2-D buffer of rows (tokens × E): a dense batch is (B·L, E), a ragged one
// the packed rows of its sequences (sum L_i, E). Everything but attention is row-wise, so the
// projections, the feed-forward block and the fused add + layer norm run once on the whole
// buffer; attention runs per sequence on strided (H, L_i, D) views of the packed q/k/v
// projection, sequences spread over threads. A TransformerEncoder packs a padded batch once for
// all its layers, so padded positions are never computed and come back as zeros.
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/autograd.h"
#include "ember/blas.h"
#include "ember/factory.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/functional/transformer.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"

namespace ember {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// softmax(q kᵀ + mask) v for one sequence: q (already scaled), k, v are (H, L, D) views;
/// `mask` broadcasts to (H, L, L): bool (true = masked out) or additive. Result (H, L, D).
Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  Tensor s = bmm(q, k.transpose(1, 2));
  if (mask.defined()) {
    if (mask.scalar_type() == kBool)
      s.masked_fill_(mask, kNegInf);
    else
      s.add_(mask);
  }
  return bmm(softmax(s, -1), v);
}

struct LayerWeights {
  int64_t embed_dim, num_heads;
  const Tensor &qkv_w, &qkv_b, &proj_w, &proj_b;
  bool use_gelu, norm_first;
  double eps;
  const Tensor &n1w, &n1b, &n2w, &n2b, &f1w, &f1b, &f2w, &f2b;
};

/// Self-attention block on rows `x` (T, E) of sequences of `lengths`; `seq_mask(i)` is the mask
/// of sequence i (or undefined).
template <class MaskFn>
Tensor attention_block(const LayerWeights& w, const Tensor& x, const std::vector<int64_t>& lengths,
                       const MaskFn& seq_mask) {
  const int64_t E = w.embed_dim, H = w.num_heads, D = E / H, T = x.size(0);
  Tensor qkv = linear(x, w.qkv_w, w.qkv_b);  // (T, 3E)
  qkv.narrow(1, 0, E).mul_(1.0 / std::sqrt(double(D)));
  Tensor out = empty({T, E}, x.options());
  std::vector<int64_t> offsets(lengths.size() + 1, 0);
  for (size_t i = 0; i < lengths.size(); ++i) offsets[i + 1] = offsets[i] + lengths[i];
  const int64_t n = int64_t(lengths.size());
  auto run = [&](int64_t i) {
    const int64_t L = lengths[size_t(i)];
    if (L == 0) return;
    Tensor blk = qkv.narrow(0, offsets[size_t(i)], L);
    auto heads = [&](int64_t j) { return blk.narrow(1, j * E, E).view({L, H, D}).transpose(0, 1); };
    Tensor o = attend(heads(0), heads(1), heads(2), seq_mask(i));
    out.narrow(0, offsets[size_t(i)], L).view({L, H, D}).transpose(0, 1).copy_(o);
  };
  // Sequences across threads (grad mode is per thread: workers run under no_grad too).
  const int64_t work_per_seq = lengths.empty() ? 0 : (T / n) * (T / n) * E;
  if (get_num_threads() > 1 && n > 1 && work_per_seq >= 4096) {
    parallel_for(0, n, 1, [&](int64_t b, int64_t e) {
      NoGradGuard g;
      for (int64_t i = b; i < e; ++i) run(i);
    });
  } else {
    for (int64_t i = 0; i < n; ++i) run(i);
  }
  return linear(out, w.proj_w, w.proj_b);
}

Tensor ffn_block(const LayerWeights& w, const Tensor& x) {
  Tensor h = linear(x, w.f1w, w.f1b);
  h = w.use_gelu ? gelu(h) : relu_(h);
  return linear(h, w.f2w, w.f2b);
}

template <class MaskFn>
Tensor encoder_layer_rows(const LayerWeights& w, const Tensor& x,
                          const std::vector<int64_t>& lengths, const MaskFn& seq_mask) {
  const std::vector<int64_t> ns = {w.embed_dim};
  if (w.norm_first) {
    Tensor a = attention_block(w, layer_norm(x, ns, w.n1w, w.n1b, w.eps), lengths, seq_mask);
    a.add_(x);
    Tensor f = ffn_block(w, layer_norm(a, ns, w.n2w, w.n2b, w.eps));
    return f.add_(a);
  }
  Tensor y = _add_layer_norm(x, attention_block(w, x, lengths, seq_mask), ns, w.n1w, w.n1b, w.eps);
  return _add_layer_norm(y, ffn_block(w, y), ns, w.n2w, w.n2b, w.eps);
}

/// True where `key_padding_mask` marks a real (non-padding) token.
Tensor keep_mask(const Tensor& kpm) {
  return kpm.scalar_type() == kBool ? logical_not(kpm) : eq(kpm, Scalar(0.0));
}

void check_pack_args(const Tensor& padded_or_packed, const Tensor& kpm, bool packed,
                     const char* fn) {
  EMBER_CHECK(kpm.defined() && kpm.dim() == 2, fn, "key_padding_mask must be 2-D (B, L), got ",
              kpm.defined() ? kpm.dim() : 0, "-D");
  EMBER_CHECK_TYPE(kpm.scalar_type() == kBool || kpm.is_floating_point(), fn,
                   "key_padding_mask must be bool or floating point, got ",
                   dtype_name(kpm.scalar_type()));
  if (packed) {
    EMBER_CHECK(padded_or_packed.dim() == 2, fn, "packed rows must be 2-D (T, E), got ",
                padded_or_packed.dim(), "-D");
  } else {
    EMBER_CHECK(padded_or_packed.dim() == 3 && padded_or_packed.size(0) == kpm.size(0) &&
                    padded_or_packed.size(1) == kpm.size(1),
                fn, "expected a padded batch (B, L, E) matching key_padding_mask (", kpm.size(0),
                ", ", kpm.size(1), "), got ", padded_or_packed.dim(), "-D input");
  }
}

}  // namespace

std::tuple<Tensor, Tensor> _transformer_pack_padded(const Tensor& padded,
                                                    const Tensor& key_padding_mask) {
  const char* fn = "[_transformer_pack_padded] ";
  check_pack_args(padded, key_padding_mask, false, fn);
  Tensor keep = keep_mask(key_padding_mask);
  Tensor idx = keep.reshape({-1}).nonzero().reshape({-1});
  const int64_t B = padded.size(0), L = padded.size(1), E = padded.size(2);
  Tensor packed = padded.reshape({B * L, E}).index_select(0, idx);
  return {packed, keep.sum(std::vector<int64_t>{1}, false, kLong)};
}

Tensor _transformer_unpack_padded(const Tensor& packed, const Tensor& key_padding_mask) {
  const char* fn = "[_transformer_unpack_padded] ";
  check_pack_args(packed, key_padding_mask, true, fn);
  Tensor keep = keep_mask(key_padding_mask);
  Tensor idx = keep.reshape({-1}).nonzero().reshape({-1});
  EMBER_CHECK(idx.size(0) == packed.size(0), fn, "the mask keeps ", idx.size(0),
              " tokens but the packed rows are ", packed.size(0));
  const int64_t B = key_padding_mask.size(0), L = key_padding_mask.size(1), E = packed.size(1);
  Tensor out = zeros({B * L, E}, packed.options());
  out.index_copy_(0, idx, packed);
  return out.view({B, L, E});
}

Tensor _transformer_encoder_layer_fwd(
    const Tensor& src, int64_t embed_dim, int64_t num_heads, const Tensor& qkv_weight,
    const Tensor& qkv_bias, const Tensor& proj_weight, const Tensor& proj_bias, bool use_gelu,
    bool norm_first, double eps, const Tensor& norm_weight_1, const Tensor& norm_bias_1,
    const Tensor& norm_weight_2, const Tensor& norm_bias_2, const Tensor& ffn_weight_1,
    const Tensor& ffn_bias_1, const Tensor& ffn_weight_2, const Tensor& ffn_bias_2,
    const Tensor& mask, std::optional<int64_t> mask_type, const Tensor& seq_lengths) {
  const char* fn = "[_transformer_encoder_layer_fwd] ";
  const bool packed = seq_lengths.defined();
  EMBER_CHECK(src.defined() && src.dim() == (packed ? 2 : 3), fn, "expected ",
              packed ? "packed rows (T, E)" : "a batch-first (B, L, E) input", ", got ",
              src.defined() ? src.dim() : 0, "-D src");
  EMBER_CHECK_VALUE(num_heads > 0 && embed_dim % num_heads == 0, fn, "embed_dim ", embed_dim,
                    " must be divisible by num_heads ", num_heads);
  EMBER_CHECK(src.size(-1) == embed_dim, fn, "src has ", src.size(-1),
              " features, expected embed_dim ", embed_dim);
  EMBER_CHECK(qkv_weight.dim() == 2 && qkv_weight.size(0) == 3 * embed_dim &&
                  qkv_weight.size(1) == embed_dim,
              fn, "qkv_weight must be (", 3 * embed_dim, ", ", embed_dim, ")");
  EMBER_CHECK(!(packed && mask.defined()), fn, "a mask cannot be combined with packed rows");
  const Tensor* all[] = {&src,           &qkv_weight,   &qkv_bias,      &proj_weight, &proj_bias,
                         &norm_weight_1, &norm_bias_1,  &norm_weight_2, &norm_bias_2, &ffn_weight_1,
                         &ffn_bias_1,    &ffn_weight_2, &ffn_bias_2};
  if (GradMode::is_enabled())
    for (const Tensor* t : all)
      EMBER_CHECK(!(t->defined() && t->requires_grad()), fn,
                  "is an inference path: run it under no_grad, or with no tensor requiring grad");
  NoGradGuard no_grad;

  const LayerWeights w{embed_dim,    num_heads,     qkv_weight,  qkv_bias,     proj_weight,
                       proj_bias,    use_gelu,      norm_first,  eps,          norm_weight_1,
                       norm_bias_1,  norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1,
                       ffn_weight_2, ffn_bias_2};
  std::vector<int64_t> lengths;
  Tensor x;
  if (packed) {
    EMBER_CHECK(seq_lengths.dim() == 1, fn, "seq_lengths must be 1-D");
    Tensor sl = seq_lengths.to(kLong).contiguous();
    const int64_t* p = sl.data_ptr<int64_t>();
    int64_t total = 0;
    for (int64_t i = 0; i < sl.numel(); ++i) {
      EMBER_CHECK(p[i] >= 0, fn, "seq_lengths must be non-negative");
      lengths.push_back(p[i]);
      total += p[i];
    }
    EMBER_CHECK(total == src.size(0), fn, "seq_lengths sum to ", total, " but there are ",
                src.size(0), " packed rows");
    x = src.contiguous();
    return encoder_layer_rows(w, x, lengths, [](int64_t) { return Tensor(); });
  }
  const int64_t B = src.size(0), L = src.size(1), E = embed_dim;
  lengths.assign(size_t(B), L);
  x = src.contiguous().view({B * L, E});
  Tensor m = mask;
  if (m.defined()) {
    EMBER_CHECK_TYPE(m.scalar_type() == kBool || m.is_floating_point(), fn,
                     "only bool and floating masks are supported, got ",
                     dtype_name(m.scalar_type()));
    if (m.is_floating_point() && m.scalar_type() != src.scalar_type()) m = m.to(src.scalar_type());
  }
  const int64_t type = m.defined() ? mask_type.value_or(0) : -1;
  if (type == 1) {
    EMBER_CHECK(m.dim() == 2 && m.size(0) == B && m.size(1) == L, fn,
                "the key padding mask must be (", B, ", ", L, ")");
  } else if (type == 0) {
    EMBER_CHECK(
        (m.dim() == 2 && m.size(0) == L && m.size(1) == L) ||
            (m.dim() == 3 && m.size(0) == B * num_heads && m.size(1) == L && m.size(2) == L),
        fn, "the attention mask must be (", L, ", ", L, ") or (", B * num_heads, ", ", L, ", ", L,
        ")");
  } else if (m.defined()) {
    EMBER_THROW(ValueError, fn, "mask_type must be 0 (attention mask) or 1 (key padding mask)");
  }
  auto seq_mask = [&](int64_t b) -> Tensor {
    if (type == 1) return m.select(0, b).view({1, 1, L});
    if (type == 0) return m.dim() == 2 ? m : m.narrow(0, b * num_heads, num_heads);
    return Tensor();
  };
  return encoder_layer_rows(w, x, lengths, seq_mask).view({B, L, E});
}

}  // namespace ember
