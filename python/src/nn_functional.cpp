// The binding of ember::nn::functional (ember._C._nn.functional): torch.nn.functional's
// signatures and defaults over the C++ functional forms, which hold the argument checks and
// errors. ember/nn/functional.py re-exports these functions. This file: activations, linear,
// dropout, normalization, embeddings, distances, padding, and nn warnings as UserWarning;
// losses are bound in nn_ops.cpp, convolution / pooling / resampling in conv.cpp.
#include "nn_functional.h"

namespace ember::python {
namespace nnf {

namespace {

// nn warnings become Python UserWarnings at the caller's line; a warning filtered into an error
// propagates as that error.
void python_warning(const std::string& message) {
  py::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

Tensor& mut(const Tensor& t) { return const_cast<Tensor&>(t); }

// torch's implicit softmax dim (deprecated): 0 for 0-, 1- and 3-D inputs, else 1.
int64_t softmax_dim(py::handle dim, const Tensor& input, const char* name) {
  if (!dim.is_none()) return to_int(dim.ptr(), name, "dim");
  nn::warn(std::string("Implicit dimension choice for ") + name +
           " has been deprecated. Change the call to include dim=X as an argument.");
  int64_t n = input.dim();
  return (n == 0 || n == 1 || n == 3) ? 0 : 1;
}

nn::EmbeddingBagMode bag_mode(const std::string& mode) {
  if (mode == "sum") return enumtype::kSum{};
  if (mode == "mean") return enumtype::kMean{};
  EMBER_CHECK_VALUE(mode == "max", "[embedding_bag] mode has to be one of sum, mean or max");
  return enumtype::kMax{};
}

F::PadFuncOptions::mode_t pad_mode(const std::string& mode) {
  if (mode == "constant") return enumtype::kConstant{};
  if (mode == "reflect") return enumtype::kReflect{};
  if (mode == "replicate") return enumtype::kReplicate{};
  EMBER_CHECK_T(NotImplementedError, mode == "circular", "[pad] Unrecognised padding mode ", mode);
  return enumtype::kCircular{};
}

}  // namespace

std::string legacy_reduction(py::handle size_average, py::handle reduce,
                             const std::string& reduction) {
  if (size_average.is_none() && reduce.is_none()) return reduction;
  // Python truthiness, as torch's `if size_average and reduce` (a tensor of several elements
  // raises its own "ambiguous" error).
  auto truthy = [](py::handle h) {
    int r = PyObject_IsTrue(h.ptr());
    if (r < 0) throw py::error_already_set();
    return r == 1;
  };
  bool avg = size_average.is_none() || truthy(size_average);
  bool red = reduce.is_none() || truthy(reduce);
  std::string ret = avg && red ? "mean" : red ? "sum" : "none";
  nn::warn("size_average and reduce args will be deprecated, please use reduction='" + ret +
           "' instead.");
  return ret;
}

nn::detail::loss_reduction_t reduction_enum(const std::string& reduction) {
  if (reduction == "none") return enumtype::kNone{};
  if (reduction == "sum") return enumtype::kSum{};
  if (reduction == "elementwise_mean")
    nn::warn("reduction='elementwise_mean' is deprecated, please use reduction='mean' instead.");
  else
    EMBER_CHECK_VALUE(reduction == "mean", "[nn] ", reduction,
                      " is not a valid value for reduction");
  return enumtype::kMean{};
}

void init_activation(py::module_& f) {
  // Activations with an `inplace` flag and no other option.
  struct Plain {
    const char* name;
    Tensor (*fn)(const Tensor&);
    Tensor& (*fn_)(Tensor&);
  };
  static const Plain plain[] = {
      {"relu", [](const Tensor& x) { return F::relu(x); }, &ember::relu_},
      {"relu6", [](const Tensor& x) { return F::relu6(x); }, &ember::relu6_},
      {"selu", [](const Tensor& x) { return F::selu(x); }, &ember::selu_},
      {"silu", &F::silu, &ember::silu_},
      {"mish", &F::mish, &ember::mish_},
      {"hardsigmoid", &F::hardsigmoid, &ember::hardsigmoid_},
      {"hardswish", &F::hardswish, &ember::hardswish_},
  };
  for (const Plain& p : plain) {
    f.def(
        p.name,
        keep_self(p.name, [p](const Tensor& input,
                              bool inplace) { return inplace ? p.fn_(mut(input)) : p.fn(input); }),
        arg("input"), arg("inplace") = false);
  }
  f.def(
      "relu_",
      keep_self("relu_", [](const Tensor& input) { return F::relu(input, nn::ReLUOptions(true)); }),
      arg("input"));
  f.def(
      "selu_",
      keep_self("selu_", [](const Tensor& input) { return F::selu(input, nn::SELUOptions(true)); }),
      arg("input"));
  static const std::pair<const char*, Tensor (*)(const Tensor&)> unary[] = {
      {"softsign", &F::softsign},
      {"tanhshrink", &F::tanhshrink},
      {"logsigmoid", &F::logsigmoid},
      {"sigmoid", [](const Tensor& x) { return ember::sigmoid(x); }},
      {"tanh", [](const Tensor& x) { return ember::tanh(x); }},
  };
  for (const auto& [name, fn] : unary) f.def(name, fn, arg("input"));

  f.def("leaky_relu",
        keep_self("leaky_relu",
                  [](const Tensor& input, double negative_slope, bool inplace) {
                    return F::leaky_relu(
                        input,
                        nn::LeakyReLUOptions().negative_slope(negative_slope).inplace(inplace));
                  }),
        arg("input"), arg("negative_slope") = 0.01, arg("inplace") = false);
  f.def("leaky_relu_",
        keep_self("leaky_relu_",
                  [](const Tensor& input, double negative_slope) {
                    return F::leaky_relu(
                        input, nn::LeakyReLUOptions().negative_slope(negative_slope).inplace(true));
                  }),
        arg("input"), arg("negative_slope") = 0.01);
  f.def("elu",
        keep_self("elu",
                  [](const Tensor& input, double alpha, bool inplace) {
                    return F::elu(input, nn::ELUOptions().alpha(alpha).inplace(inplace));
                  }),
        arg("input"), arg("alpha") = 1.0, arg("inplace") = false);
  f.def("elu_",
        keep_self("elu_",
                  [](const Tensor& input, double alpha) {
                    return F::elu(input, nn::ELUOptions().alpha(alpha).inplace(true));
                  }),
        arg("input"), arg("alpha") = 1.0);
  f.def("celu",
        keep_self("celu",
                  [](const Tensor& input, double alpha, bool inplace) {
                    return F::celu(input, nn::CELUOptions().alpha(alpha).inplace(inplace));
                  }),
        arg("input"), arg("alpha") = 1.0, arg("inplace") = false);
  f.def("celu_",
        keep_self("celu_",
                  [](const Tensor& input, double alpha) {
                    return F::celu(input, nn::CELUOptions().alpha(alpha).inplace(true));
                  }),
        arg("input"), arg("alpha") = 1.0);
  f.def("gelu",
        keep_self("gelu",
                  [](const Tensor& input, const std::string& approximate) {
                    return F::gelu(input, nn::GELUOptions().approximate(approximate));
                  }),
        arg("input"), arg("approximate") = "none");
  f.def("softplus",
        keep_self("softplus",
                  [](const Tensor& input, double beta, double threshold) {
                    return F::softplus(input,
                                       nn::SoftplusOptions().beta(beta).threshold(threshold));
                  }),
        arg("input"), arg("beta") = 1.0, arg("threshold") = 20.0);
  f.def("hardtanh",
        keep_self("hardtanh",
                  [](const Tensor& input, double min_val, double max_val, bool inplace) {
                    return F::hardtanh(
                        input,
                        nn::HardtanhOptions().min_val(min_val).max_val(max_val).inplace(inplace));
                  }),
        arg("input"), arg("min_val") = -1.0, arg("max_val") = 1.0, arg("inplace") = false);
  f.def("hardtanh_",
        keep_self("hardtanh_",
                  [](const Tensor& input, double min_val, double max_val) {
                    return F::hardtanh(
                        input,
                        nn::HardtanhOptions().min_val(min_val).max_val(max_val).inplace(true));
                  }),
        arg("input"), arg("min_val") = -1.0, arg("max_val") = 1.0);
  f.def("hardshrink",
        keep_self("hardshrink",
                  [](const Tensor& input, double lambd) {
                    return F::hardshrink(input, nn::HardshrinkOptions(lambd));
                  }),
        arg("input"), arg("lambd") = 0.5);
  f.def("softshrink",
        keep_self("softshrink",
                  [](const Tensor& input, double lambd) {
                    return F::softshrink(input, nn::SoftshrinkOptions(lambd));
                  }),
        arg("input"), arg("lambd") = 0.5);
  f.def("threshold",
        keep_self("threshold",
                  [](const Tensor& input, double threshold, double value, bool inplace) {
                    return F::threshold(input,
                                        nn::ThresholdOptions(threshold, value).inplace(inplace));
                  }),
        arg("input"), arg("threshold"), arg("value"), arg("inplace") = false);
  f.def("threshold_",
        keep_self("threshold_",
                  [](const Tensor& input, double threshold, double value) {
                    return F::threshold(input,
                                        nn::ThresholdOptions(threshold, value).inplace(true));
                  }),
        arg("input"), arg("threshold"), arg("value"));

  // ---- softmax family: dim None picks torch's deprecated implicit dim ----
  using SoftmaxFn = Tensor (*)(const Tensor&, const F::SoftmaxFuncOptions&);
  static const std::pair<const char*, SoftmaxFn> softmaxes[] = {
      {"softmax", &F::softmax}, {"softmin", &F::softmin}, {"log_softmax", &F::log_softmax}};
  for (const auto& [name, fn] : softmaxes) {
    f.def(name,
          keep_self(
              name,
              [name = name, fn = fn](const Tensor& input, py::handle dim,
                                     py::handle /*_stacklevel*/, std::optional<ScalarType> dtype) {
                return fn(input, F::SoftmaxFuncOptions(softmax_dim(dim, input, name)).dtype(dtype));
              }),
          arg("input"), arg("dim") = py::none(), arg("_stacklevel") = 3, arg("dtype") = py::none());
  }

  // ---- composites ----
  f.def("prelu", &F::prelu, arg("input"), arg("weight"));
  f.def("glu",
        keep_self("glu", [](const Tensor& input, int64_t dim) { return F::glu(input, dim); }),
        arg("input"), arg("dim") = -1);
  f.def("rrelu",
        keep_self("rrelu",
                  [](const Tensor& input, double lower, double upper, bool training, bool inplace) {
                    return F::rrelu(
                        input,
                        F::RReLUFuncOptions().lower(lower).upper(upper).training(training).inplace(
                            inplace));
                  }),
        arg("input"), arg("lower") = 1.0 / 8, arg("upper") = 1.0 / 3, arg("training") = false,
        arg("inplace") = false);
  f.def("rrelu_",
        keep_self(
            "rrelu_",
            [](const Tensor& input, double lower, double upper, bool training) {
              return F::rrelu(
                  input,
                  F::RReLUFuncOptions().lower(lower).upper(upper).training(training).inplace(true));
            }),
        arg("input"), arg("lower") = 1.0 / 8, arg("upper") = 1.0 / 3, arg("training") = false);
}

void init_attention(py::module_& f) {
  f.def("multi_head_attention_forward",
        keep_self(
            "multi_head_attention_forward",
            [](const Tensor& query, const Tensor& key, const Tensor& value,
               int64_t embed_dim_to_check, int64_t num_heads, py::handle in_proj_weight,
               py::handle in_proj_bias, py::handle bias_k, py::handle bias_v, bool add_zero_attn,
               double dropout_p, const Tensor& out_proj_weight, py::handle out_proj_bias,
               bool training, py::handle key_padding_mask, bool need_weights, py::handle attn_mask,
               bool use_separate_proj_weight, py::handle q_proj_weight, py::handle k_proj_weight,
               py::handle v_proj_weight, py::handle static_k, py::handle static_v,
               bool average_attn_weights, bool batch_first) {
              const char* fn = "multi_head_attention_forward";
              auto t = [fn](py::handle h, const char* name) { return opt_tensor(h, fn, name); };
              F::MultiheadAttentionForwardFuncOptions o(
                  embed_dim_to_check, num_heads, t(in_proj_weight, "in_proj_weight"),
                  t(in_proj_bias, "in_proj_bias"), t(bias_k, "bias_k"), t(bias_v, "bias_v"),
                  add_zero_attn, dropout_p, out_proj_weight, t(out_proj_bias, "out_proj_bias"));
              o.training(training)
                  .key_padding_mask(t(key_padding_mask, "key_padding_mask"))
                  .need_weights(need_weights)
                  .attn_mask(t(attn_mask, "attn_mask"))
                  .use_separate_proj_weight(use_separate_proj_weight)
                  .q_proj_weight(t(q_proj_weight, "q_proj_weight"))
                  .k_proj_weight(t(k_proj_weight, "k_proj_weight"))
                  .v_proj_weight(t(v_proj_weight, "v_proj_weight"))
                  .static_k(t(static_k, "static_k"))
                  .static_v(t(static_v, "static_v"))
                  .average_attn_weights(average_attn_weights)
                  .batch_first(batch_first);
              auto [out, weights] = F::multi_head_attention_forward(query, key, value, o);
              return py::make_tuple(wrap_obj(out), wrap_obj(weights));
            }),
        arg("query"), arg("key"), arg("value"), arg("embed_dim_to_check"), arg("num_heads"),
        arg("in_proj_weight"), arg("in_proj_bias"), arg("bias_k"), arg("bias_v"),
        arg("add_zero_attn"), arg("dropout_p"), arg("out_proj_weight"), arg("out_proj_bias"),
        arg("training") = true, arg("key_padding_mask") = py::none(), arg("need_weights") = true,
        arg("attn_mask") = py::none(), arg("use_separate_proj_weight") = false,
        arg("q_proj_weight") = py::none(), arg("k_proj_weight") = py::none(),
        arg("v_proj_weight") = py::none(), arg("static_k") = py::none(),
        arg("static_v") = py::none(), arg("average_attn_weights") = true, py::kw_only(),
        arg("batch_first") = false);
}

void init_layers(py::module_& f) {
  // ---- linear ----
  f.def("linear",
        keep_self("linear",
                  [](const Tensor& input, const Tensor& weight, py::handle bias) {
                    return F::linear(input, weight, opt_tensor(bias, "linear", "bias"));
                  }),
        arg("input"), arg("weight"), arg("bias") = py::none());
  f.def("bilinear",
        keep_self(
            "bilinear",
            [](const Tensor& input1, const Tensor& input2, const Tensor& weight, py::handle bias) {
              return F::bilinear(input1, input2, weight, opt_tensor(bias, "bilinear", "bias"));
            }),
        arg("input1"), arg("input2"), arg("weight"), arg("bias") = py::none());

  // ---- dropout ----
  using DropoutFn = Tensor (*)(const Tensor&, const F::DropoutFuncOptions&);
  static const std::pair<const char*, DropoutFn> dropouts[] = {{"dropout", &F::dropout},
                                                               {"dropout1d", &F::dropout1d},
                                                               {"dropout2d", &F::dropout2d},
                                                               {"dropout3d", &F::dropout3d}};
  for (const auto& [name, fn] : dropouts) {
    f.def(name,
          keep_self(name,
                    [fn = fn](const Tensor& input, double p, bool training, bool inplace) {
                      return fn(input,
                                F::DropoutFuncOptions().p(p).training(training).inplace(inplace));
                    }),
          arg("input"), arg("p") = 0.5, arg("training") = true, arg("inplace") = false);
  }
  using AlphaFn = Tensor (*)(const Tensor&, const F::AlphaDropoutFuncOptions&);
  static const std::pair<const char*, AlphaFn> alphas[] = {
      {"alpha_dropout", &F::alpha_dropout}, {"feature_alpha_dropout", &F::feature_alpha_dropout}};
  for (const auto& [name, fn] : alphas) {
    f.def(name,
          keep_self(name,
                    [fn = fn](const Tensor& input, double p, bool training, bool inplace) {
                      return fn(input, F::AlphaDropoutFuncOptions().p(p).training(training).inplace(
                                           inplace));
                    }),
          arg("input"), arg("p") = 0.5, arg("training") = false, arg("inplace") = false);
  }

  // ---- normalization ----
  f.def("batch_norm",
        keep_self("batch_norm",
                  [](const Tensor& input, py::handle running_mean, py::handle running_var,
                     py::handle weight, py::handle bias, bool training,
                     std::optional<double> momentum, double eps) {
                    const char* fn = "batch_norm";
                    return F::batch_norm(input, opt_tensor(running_mean, fn, "running_mean"),
                                         opt_tensor(running_var, fn, "running_var"),
                                         F::BatchNormFuncOptions()
                                             .weight(opt_tensor(weight, fn, "weight"))
                                             .bias(opt_tensor(bias, fn, "bias"))
                                             .training(training)
                                             .momentum(momentum)
                                             .eps(eps));
                  }),
        arg("input"), arg("running_mean"), arg("running_var"), arg("weight") = py::none(),
        arg("bias") = py::none(), arg("training") = false, arg("momentum") = 0.1,
        arg("eps") = 1e-5);
  f.def("instance_norm",
        keep_self("instance_norm",
                  [](const Tensor& input, py::handle running_mean, py::handle running_var,
                     py::handle weight, py::handle bias, bool use_input_stats, double momentum,
                     double eps) {
                    const char* fn = "instance_norm";
                    return F::instance_norm(
                        input, F::InstanceNormFuncOptions()
                                   .running_mean(opt_tensor(running_mean, fn, "running_mean"))
                                   .running_var(opt_tensor(running_var, fn, "running_var"))
                                   .weight(opt_tensor(weight, fn, "weight"))
                                   .bias(opt_tensor(bias, fn, "bias"))
                                   .use_input_stats(use_input_stats)
                                   .momentum(momentum)
                                   .eps(eps));
                  }),
        arg("input"), arg("running_mean") = py::none(), arg("running_var") = py::none(),
        arg("weight") = py::none(), arg("bias") = py::none(), arg("use_input_stats") = true,
        arg("momentum") = 0.1, arg("eps") = 1e-5);
  f.def("layer_norm",
        keep_self("layer_norm",
                  [](const Tensor& input, py::handle normalized_shape, py::handle weight,
                     py::handle bias, double eps) {
                    const char* fn = "layer_norm";
                    return F::layer_norm(input,
                                         F::LayerNormFuncOptions(
                                             int_vector(normalized_shape, fn, "normalized_shape"))
                                             .weight(opt_tensor(weight, fn, "weight"))
                                             .bias(opt_tensor(bias, fn, "bias"))
                                             .eps(eps));
                  }),
        arg("input"), arg("normalized_shape"), arg("weight") = py::none(), arg("bias") = py::none(),
        arg("eps") = 1e-5);
  f.def("group_norm",
        keep_self("group_norm",
                  [](const Tensor& input, int64_t num_groups, py::handle weight, py::handle bias,
                     double eps) {
                    const char* fn = "group_norm";
                    return F::group_norm(input, F::GroupNormFuncOptions(num_groups)
                                                    .weight(opt_tensor(weight, fn, "weight"))
                                                    .bias(opt_tensor(bias, fn, "bias"))
                                                    .eps(eps));
                  }),
        arg("input"), arg("num_groups"), arg("weight") = py::none(), arg("bias") = py::none(),
        arg("eps") = 1e-5);
  f.def("local_response_norm",
        keep_self("local_response_norm",
                  [](const Tensor& input, int64_t size, double alpha, double beta, double k) {
                    return F::local_response_norm(
                        input, F::LocalResponseNormFuncOptions(size).alpha(alpha).beta(beta).k(k));
                  }),
        arg("input"), arg("size"), arg("alpha") = 1e-4, arg("beta") = 0.75, arg("k") = 1.0);
  f.def(
      "normalize",
      [](const Tensor& input, double p, int64_t dim, double eps, py::handle out) -> py::object {
        Tensor r = F::normalize(input, F::NormalizeFuncOptions().p(p).dim(dim).eps(eps));
        if (out.is_none()) return wrap_obj(r);
        unwrap(out.ptr()).copy_(r);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("p") = 2.0, arg("dim") = 1, arg("eps") = 1e-12, arg("out") = py::none());

  // ---- embeddings ----
  f.def("embedding",
        keep_self("embedding",
                  [](const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx,
                     std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq,
                     bool sparse) {
                    return F::embedding(input, weight,
                                        F::EmbeddingFuncOptions()
                                            .padding_idx(padding_idx)
                                            .max_norm(max_norm)
                                            .norm_type(norm_type)
                                            .scale_grad_by_freq(scale_grad_by_freq)
                                            .sparse(sparse));
                  }),
        arg("input"), arg("weight"), arg("padding_idx") = py::none(), arg("max_norm") = py::none(),
        arg("norm_type") = 2.0, arg("scale_grad_by_freq") = false, arg("sparse") = false);
  f.def(
      "embedding_bag",
      [](Tensor input, Tensor weight, py::handle offsets, std::optional<double> max_norm,
         double norm_type, bool scale_grad_by_freq, const std::string& mode, bool sparse,
         py::handle per_sample_weights, bool include_last_offset,
         std::optional<int64_t> padding_idx) {
        const char* fn = "embedding_bag";
        // The argument order torch 1.13 still accepts with a warning: (weight, input, ...).
        if (weight.scalar_type() == kLong && input.is_floating_point()) {
          nn::warn(
              "Argument order of nn.functional.embedding_bag was changed. Usage "
              "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
              "`embedding_bag(input, weight, ...)`.");
          std::swap(input, weight);
        }
        return F::embedding_bag(
            input, weight,
            F::EmbeddingBagFuncOptions()
                .offsets(opt_tensor(offsets, fn, "offsets"))
                .max_norm(max_norm)
                .norm_type(norm_type)
                .scale_grad_by_freq(scale_grad_by_freq)
                .mode(bag_mode(mode))
                .sparse(sparse)
                .per_sample_weights(opt_tensor(per_sample_weights, fn, "per_sample_weights"))
                .include_last_offset(include_last_offset)
                .padding_idx(padding_idx));
      },
      arg("input"), arg("weight"), arg("offsets") = py::none(), arg("max_norm") = py::none(),
      arg("norm_type") = 2.0, arg("scale_grad_by_freq") = false, arg("mode") = "mean",
      arg("sparse") = false, arg("per_sample_weights") = py::none(),
      arg("include_last_offset") = false, arg("padding_idx") = py::none());
  f.def("one_hot", &F::one_hot, arg("tensor"), arg("num_classes") = -1);

  // ---- distances, padding ----
  f.def("cosine_similarity",
        keep_self("cosine_similarity",
                  [](const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
                    return F::cosine_similarity(x1, x2,
                                                F::CosineSimilarityFuncOptions().dim(dim).eps(eps));
                  }),
        arg("x1"), arg("x2"), arg("dim") = 1, arg("eps") = 1e-8);
  f.def("pairwise_distance",
        keep_self("pairwise_distance",
                  [](const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
                    return F::pairwise_distance(
                        x1, x2, F::PairwiseDistanceFuncOptions().p(p).eps(eps).keepdim(keepdim));
                  }),
        arg("x1"), arg("x2"), arg("p") = 2.0, arg("eps") = 1e-6, arg("keepdim") = false);
  f.def("pad",
        keep_self("pad",
                  [](const Tensor& input, py::handle pad, const std::string& mode,
                     std::optional<double> value) {
                    auto o = F::PadFuncOptions(int_vector(pad, "pad", "pad")).mode(pad_mode(mode));
                    if (value) o.value(*value);
                    return F::pad(input, o);
                  }),
        arg("input"), arg("pad"), arg("mode") = "constant", arg("value") = py::none());
}

}  // namespace nnf

void init_nn_functional(py::module_& nn) {
  py::module_ f = nn.def_submodule("functional", "ember::nn::functional with torch's signatures");
  nn::set_warning_handler(&nnf::python_warning);
  // Registered after the module-wide translator, so tried before it.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const nn::AssertionError& e) {
      PyErr_SetString(PyExc_AssertionError, e.what());
    }
  });
  nnf::init_activation(f);
  nnf::init_attention(f);
  nnf::init_layers(f);
}

}  // namespace ember::python
