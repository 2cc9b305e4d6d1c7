// Batching rules of the nn family: convolution and pooling fold the batch into N, norms and
// losses reduce per batch element (Note [Batching rules]).

#include "ember/conv.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "func/batching.h"

namespace ember::func {

namespace {

using Results = std::vector<Tensor>;
#define RULE(name) Results rule_##name(const BoxedCall& c, const TransformLevel& l)

const char* nm(const BoxedCall& c) { return op_info(c.op).id; }
std::optional<Tensor> opt(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

Results to_results(const Tensor& t) { return {t}; }
Results to_results(const std::tuple<Tensor, Tensor>& t) { return {std::get<0>(t), std::get<1>(t)}; }

// Spatial ops take (N, C, *spatial) or (C, *spatial): a batched input folds the vmap batch into
// N (or becomes N), the op runs once, and the results unfold. Batched weights loop.
template <class F>
Results fold(const BoxedCall& c, const TransformLevel& l, int64_t spatial,
             std::vector<Tensor> others, F f) {
  const Tensor& input = arg_tensor(c, 0);
  bool others_batched = false;
  for (const Tensor& o : others) others_batched |= batched_at(o, l);
  if (others_batched) {
    std::vector<Tensor> args{input};
    args.insert(args.end(), others.begin(), others.end());
    return loop_over_batch(args, l, [&](const std::vector<Tensor>& a) -> Results {
      std::vector<Tensor> rest(a.begin() + 1, a.end());
      return f(a[0], rest);
    });
  }
  Tensor x = front(input, l).v;
  const bool has_n = input.dim() == spatial + 2;
  const int64_t b = x.size(0);
  if (has_n) x = x.flatten(0, 1);
  std::vector<Tensor> outs = f(x, others);
  for (Tensor& o : outs) {
    if (has_n) {
      std::vector<int64_t> s{b, input.size(0)};
      for (int64_t d = 1; d < o.dim(); ++d) s.push_back(o.size(d));
      o = o.reshape(s);
    }
    o = wrap0(o, l);
  }
  return outs;
}

#define CONV_RULE(name, N)                                                 \
  RULE(name) {                                                             \
    auto st = arg_ints(c, 3), pa = arg_ints(c, 4), di = arg_ints(c, 5);    \
    int64_t g = arg_int(c, 6);                                             \
    return fold(c, l, N, {arg_tensor(c, 1), arg_tensor(c, 2)},             \
                [&](const Tensor& x, const std::vector<Tensor>& o) {       \
                  return Results{name(x, o[0], opt(o[1]), st, pa, di, g)}; \
                });                                                        \
  }
CONV_RULE(conv1d, 1)
CONV_RULE(conv2d, 2)
CONV_RULE(conv3d, 3)
#undef CONV_RULE
#define CONV_MODE_RULE(name, fn, N)                                                        \
  RULE(name) {                                                                             \
    auto st = arg_ints(c, 3), di = arg_ints(c, 5);                                         \
    std::string pa = arg_str(c, 4);                                                        \
    int64_t g = arg_int(c, 6);                                                             \
    return fold(c, l, N, {arg_tensor(c, 1), arg_tensor(c, 2)},                             \
                [&](const Tensor& x, const std::vector<Tensor>& o) {                       \
                  return Results{fn(x, o[0], opt(o[1]), st, std::string_view(pa), di, g)}; \
                });                                                                        \
  }
CONV_MODE_RULE(conv1d_1, conv1d, 1)
CONV_MODE_RULE(conv2d_1, conv2d, 2)
CONV_MODE_RULE(conv3d_1, conv3d, 3)
#undef CONV_MODE_RULE

#define MAXPOOL_RULE(name, N)                                                            \
  RULE(name) {                                                                           \
    auto k = arg_ints(c, 1), s = arg_ints(c, 2), p = arg_ints(c, 3), d = arg_ints(c, 4); \
    bool ceil = arg_bool(c, 5);                                                          \
    return fold(c, l, N, {}, [&](const Tensor& x, const std::vector<Tensor>&) {          \
      return to_results(name(x, k, s, p, d, ceil));                                      \
    });                                                                                  \
  }
MAXPOOL_RULE(max_pool1d, 1)
MAXPOOL_RULE(max_pool2d, 2)
MAXPOOL_RULE(max_pool3d, 3)
MAXPOOL_RULE(max_pool1d_with_indices, 1)
MAXPOOL_RULE(max_pool2d_with_indices, 2)
MAXPOOL_RULE(max_pool3d_with_indices, 3)
#undef MAXPOOL_RULE

#define AVGPOOL_RULE(name, N)                                                   \
  RULE(name) {                                                                  \
    auto k = arg_ints(c, 1), s = arg_ints(c, 2), p = arg_ints(c, 3);            \
    bool ceil = arg_bool(c, 4), cip = arg_bool(c, 5);                           \
    auto div = arg_opt_int(c, 6);                                               \
    return fold(c, l, N, {}, [&](const Tensor& x, const std::vector<Tensor>&) { \
      return Results{name(x, k, s, p, ceil, cip, div)};                         \
    });                                                                         \
  }
AVGPOOL_RULE(avg_pool2d, 2)
AVGPOOL_RULE(avg_pool3d, 3)
#undef AVGPOOL_RULE
RULE(avg_pool1d) {
  auto k = arg_ints(c, 1), s = arg_ints(c, 2), p = arg_ints(c, 3);
  bool ceil = arg_bool(c, 4), cip = arg_bool(c, 5);
  return fold(c, l, 1, {}, [&](const Tensor& x, const std::vector<Tensor>&) {
    return Results{avg_pool1d(x, k, s, p, ceil, cip)};
  });
}
#define ADAPTIVE_RULE(name, N)                                                  \
  RULE(name) {                                                                  \
    auto o = arg_ints(c, 1);                                                    \
    return fold(c, l, N, {}, [&](const Tensor& x, const std::vector<Tensor>&) { \
      return to_results(name(x, o));                                            \
    });                                                                         \
  }
ADAPTIVE_RULE(adaptive_avg_pool1d, 1)
ADAPTIVE_RULE(adaptive_avg_pool2d, 2)
ADAPTIVE_RULE(adaptive_avg_pool3d, 3)
ADAPTIVE_RULE(adaptive_max_pool1d, 1)
ADAPTIVE_RULE(adaptive_max_pool2d, 2)
ADAPTIVE_RULE(adaptive_max_pool3d, 3)
#undef ADAPTIVE_RULE

// Per-batch-element reduction of an unreduced loss (batch first).
Tensor reduce_loss(const Tensor& none, int64_t reduction) {
  if (reduction == Reduction::None) return none;
  Tensor f = none.reshape({none.size(0), -1});
  return reduction == Reduction::Sum ? f.sum(IntArrayRef{1}) : f.mean(IntArrayRef{1});
}

RULE(nll_loss) {
  const Tensor &input = arg_tensor(c, 0), &target = arg_tensor(c, 1), &w = arg_tensor(c, 2);
  const int64_t reduction = arg_int(c, 3), ii = arg_int(c, 4);
  if (batched_at(w, l))
    return loop_over_batch({input, target, w}, l, [&](const std::vector<Tensor>& a) {
      return Results{nll_loss(a[0], a[1], a[2], reduction, ii)};
    });
  Tensor x = front_or_expand(input, l), t = front_or_expand(target, l);
  const int64_t b = x.size(0);
  Tensor none;
  if (input.dim() == 1) {
    none = nll_loss(x, t, w, Reduction::None, ii);
  } else {
    none = nll_loss(x.flatten(0, 1), t.flatten(0, 1), w, Reduction::None, ii);
    std::vector<int64_t> s{b};
    for (int64_t d = 0; d < target.dim(); ++d) s.push_back(target.size(d));
    none = none.reshape(s);
  }
  if (reduction == Reduction::None) return {wrap0(none, l)};
  Tensor total = none.reshape({b, -1}).sum(IntArrayRef{1});
  if (reduction == Reduction::Sum) return {wrap0(total, l)};
  // Mean: divide by the summed weights of the targets that are not ignored.
  Tensor keep = ne(t, Scalar(ii));
  Tensor wt = keep.to(x.dtype());
  if (w.defined()) {
    Tensor safe = where(keep, t, zeros_like(t));
    wt = wt * w.index_select(0, safe.reshape({-1})).reshape(safe.sizes());
  }
  return {wrap0(total / wt.reshape({b, -1}).sum(IntArrayRef{1}), l)};
}

RULE(binary_cross_entropy) {
  const Tensor& w = arg_tensor(c, 2);
  Tensor x = front_or_expand(arg_tensor(c, 0), l), t = front_or_expand(arg_tensor(c, 1), l);
  Tensor pw = w.defined() ? front_or_expand(w.expand(arg_tensor(c, 0).sizes()), l) : Tensor();
  return {wrap0(reduce_loss(binary_cross_entropy(x, t, pw, Reduction::None), arg_int(c, 3)), l)};
}
RULE(smooth_l1_loss) {
  Tensor x = front_or_expand(arg_tensor(c, 0), l), t = front_or_expand(arg_tensor(c, 1), l);
  return {wrap0(reduce_loss(smooth_l1_loss(x, t, Reduction::None, arg_double(c, 3)), arg_int(c, 2)),
                l)};
}

RULE(native_layer_norm) {
  const Tensor &input = arg_tensor(c, 0), &w = arg_tensor(c, 2), &b = arg_tensor(c, 3);
  std::vector<int64_t> shape = arg_ints(c, 1);
  const double eps = arg_double(c, 4);
  if (!batched_at(w, l) && !batched_at(b, l)) {
    auto [o, m, r] = native_layer_norm(front_or_expand(input, l), shape, w, b, eps);
    return {wrap0(o, l), wrap0(m, l), wrap0(r, l)};
  }
  auto [o, m, r] = native_layer_norm(input, shape, Tensor(), Tensor(), eps);
  if (w.defined()) o = o * w;
  if (b.defined()) o = o + b;
  return {o, m, r};
}

RULE(group_norm) {
  const Tensor &input = arg_tensor(c, 0), &w = arg_tensor(c, 2), &b = arg_tensor(c, 3);
  const int64_t groups = arg_int(c, 1);
  const double eps = arg_double(c, 4);
  const bool affine_batched = batched_at(w, l) || batched_at(b, l);
  Tensor x = front(input, l).v;
  Tensor o = group_norm(x.flatten(0, 1), groups, affine_batched ? Tensor() : w,
                        affine_batched ? Tensor() : b, eps);
  o = wrap0(o.reshape(x.sizes()), l);
  if (affine_batched) {
    std::vector<int64_t> shape{input.size(1)};
    for (int64_t d = 2; d < input.dim(); ++d) shape.push_back(1);
    if (w.defined()) o = o * w.reshape(shape);
    if (b.defined()) o = o + b.reshape(shape);
  }
  return {o};
}

// Batch norm folds the vmap batch into the channels, so each batch element keeps its own
// statistics; running statistics must then be batched too (an unbatched buffer cannot take a
// batched update: functorch's rule, which points to replace_all_batch_norm_modules_).
RULE(native_batch_norm) {
  const Tensor &input = arg_tensor(c, 0), &w = arg_tensor(c, 1), &b = arg_tensor(c, 2),
               &rm = arg_tensor(c, 3), &rv = arg_tensor(c, 4);
  const bool training = arg_bool(c, 5);
  const double momentum = arg_double(c, 6), eps = arg_double(c, 7);
  const bool stats_batched = batched_at(rm, l) || batched_at(rv, l);
  if (!training && rm.defined() && !stats_batched && !batched_at(w, l) && !batched_at(b, l)) {
    // Eval saves no statistics (empty tensors): only the output is batched.
    Tensor m, r;
    Results out = fold(c, l, input.dim() - 2, {}, [&](const Tensor& x, const std::vector<Tensor>&) {
      auto [o, mm, rr] = native_batch_norm(x, w, b, rm, rv, false, momentum, eps);
      m = mm;
      r = rr;
      return Results{o};
    });
    return {out[0], m, r};
  }
  EMBER_CHECK(!(training && rm.defined() && !stats_batched), "[batch_norm] vmap: ",
              "batch norm in training mode would update its unbatched running_mean / "
              "running_var in place with batched values. Use track_running_stats=False, "
              "batch the buffers (stack_module_state), or run the module in eval mode.");
  const int64_t B = l.batch_size, C = input.size(1);
  Tensor x = front_or_expand(input, l);  // (B, N, C, *)
  std::vector<int64_t> s{x.size(1), B * C};
  for (int64_t d = 3; d < x.dim(); ++d) s.push_back(x.size(d));
  Tensor xf = x.transpose(0, 1).reshape(s);  // (N, B*C, *)
  auto flat_param = [&](const Tensor& p) {
    return p.defined() ? front_or_expand(p, l).reshape({B * C}) : Tensor();
  };
  Tensor frm = rm.defined() ? front(rm, l).v.view({B * C}) : Tensor();
  Tensor frv = rv.defined() ? front(rv, l).v.view({B * C}) : Tensor();
  auto [o, m, r] =
      native_batch_norm(xf, flat_param(w), flat_param(b), frm, frv, training, momentum, eps);
  std::vector<int64_t> os{x.size(1), B, C};
  for (int64_t d = 3; d < x.dim(); ++d) os.push_back(x.size(d));
  Tensor out = o.reshape(os).transpose(0, 1);
  return {wrap0(out, l), wrap0(m.reshape({B, C}), l), wrap0(r.reshape({B, C}), l)};
}

RULE(embedding) {
  const Tensor &w = arg_tensor(c, 0), &idx = arg_tensor(c, 1);
  const int64_t pad = arg_int(c, 2);
  const bool scale = arg_bool(c, 3), sparse = arg_bool(c, 4);
  if (!batched_at(w, l)) return {wrap0(embedding(w, front(idx, l).v, pad, scale, sparse), l)};
  return loop_over_batch({w, idx}, l, [&](const std::vector<Tensor>& a) {
    return Results{embedding(a[0], a[1], pad, scale, sparse)};
  });
}

RULE(im2col) {
  auto k = arg_ints(c, 1), d = arg_ints(c, 2), p = arg_ints(c, 3), s = arg_ints(c, 4);
  return fold(c, l, 2, {}, [&](const Tensor& x, const std::vector<Tensor>&) {
    return Results{im2col(x, k, d, p, s)};
  });
}
// pad: constant padding works on any rank; the other modes take (N, C, *) or (C, *), so the
// vmap batch folds into N.
RULE(pad) {
  std::vector<int64_t> pads = arg_ints(c, 1);
  std::string mode = arg_str(c, 2);
  std::optional<double> value;
  if (!arg_none(c, 3)) value = arg_double(c, 3);
  if (mode == "constant") return {wrap0(pad(front(arg_tensor(c, 0), l).v, pads, mode, value), l)};
  return fold(c, l, int64_t(pads.size() / 2), {}, [&](const Tensor& x, const std::vector<Tensor>&) {
    return Results{pad(x, pads, mode, value)};
  });
}

template <bool Normal>
Results random_like(const BoxedCall& c, const TransformLevel& l) {
  const Tensor& t = arg_tensor(c, 0);
  TensorOptions o = TensorOptions().dtype(arg_dtype(c, 1).value_or(t.dtype()));
  PlainRandomFactories plain;
  if (l.randomness == Randomness::Different) {
    Tensor p = front_or_expand(t, l);
    return {wrap0(Normal ? randn(p.sizes(), o) : rand(p.sizes(), o), l)};
  }
  return {Normal ? randn(t.sizes(), o) : rand(t.sizes(), o)};
}
// Random factories under randomness="different" (batching.cpp: random_factory): the batch
// size in front of the sizes.
std::vector<int64_t> batch_sizes(const BoxedCall& c, size_t k, const TransformLevel& l) {
  std::vector<int64_t> s{l.batch_size};
  for (int64_t d : arg_ints(c, k)) s.push_back(d);
  return s;
}
TensorOptions factory_opts(const BoxedCall& c, size_t k) {
  TensorOptions o;
  if (auto dt = arg_dtype(c, k); dt && *dt != ScalarType::Undefined) o = o.dtype(*dt);
  return o;
}
RULE(rand) { return {wrap0(rand(batch_sizes(c, 0, l), factory_opts(c, 2)), l)}; }
RULE(rand_1) { return {wrap0(rand(batch_sizes(c, 0, l), factory_opts(c, 1)), l)}; }
RULE(randn) { return {wrap0(randn(batch_sizes(c, 0, l), factory_opts(c, 2)), l)}; }
RULE(randn_1) { return {wrap0(randn(batch_sizes(c, 0, l), factory_opts(c, 1)), l)}; }
RULE(randint) {
  return {
      wrap0(randint(arg_int(c, 0), arg_int(c, 1), batch_sizes(c, 2, l), factory_opts(c, 4)), l)};
}
RULE(randint_1) {
  return {
      wrap0(randint(arg_int(c, 0), arg_int(c, 1), batch_sizes(c, 2, l), factory_opts(c, 3)), l)};
}
RULE(rand_like) { return random_like<false>(c, l); }
RULE(randn_like) { return random_like<true>(c, l); }

#undef RULE

}  // namespace

void register_nn_rules() {
#define R(name) register_batch_rule(OpId::name, rule_##name)
  R(conv1d);
  R(conv2d);
  R(conv3d);
  R(conv1d_1);
  R(conv2d_1);
  R(conv3d_1);
  R(max_pool1d);
  R(max_pool2d);
  R(max_pool3d);
  R(max_pool1d_with_indices);
  R(max_pool2d_with_indices);
  R(max_pool3d_with_indices);
  R(avg_pool1d);
  R(avg_pool2d);
  R(avg_pool3d);
  R(adaptive_avg_pool1d);
  R(adaptive_avg_pool2d);
  R(adaptive_avg_pool3d);
  R(adaptive_max_pool1d);
  R(adaptive_max_pool2d);
  R(adaptive_max_pool3d);
  R(nll_loss);
  R(binary_cross_entropy);
  R(smooth_l1_loss);
  R(native_layer_norm);
  R(group_norm);
  R(native_batch_norm);
  R(rand_like);
  R(randn_like);
  R(rand);
  R(rand_1);
  R(randn);
  R(randn_1);
  R(randint);
  R(randint_1);
  R(im2col);
  R(pad);
#undef R
  register_batch_rule(OpId::embedding, rule_embedding, /*loop=*/true);
}

}  // namespace ember::func
