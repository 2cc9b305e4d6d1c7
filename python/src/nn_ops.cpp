// The binding of losses, normalization, dropout and embedding (ember._C._nn). Thin wrappers of
// include/ember/nn_ops.h; ember/nn/_functional_nn.py adds torch.nn.functional's argument
// handling (legacy size_average/reduce, string reductions, shape checks).
#include "ember/nn_ops.h"
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

/// An optional tensor argument: None gives an undefined tensor.
Tensor opt(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return Tensor();
  return to_tensor(o.ptr(), fn, name);
}

py::object tup(std::initializer_list<Tensor> ts) {
  py::tuple t(ts.size());
  size_t i = 0;
  for (const Tensor& x : ts) t[i++] = wrap_obj(x);
  return std::move(t);
}

}  // namespace

void init_nn_ops(py::module_& root) {
  py::module_ m = root.def_submodule("_nn", "nn kernels behind ember.nn.functional");

  // ---- linear ----
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, py::object b) {
        return wrap_obj(ember::linear(x, w, opt(b, "linear", "bias")));
      },
      arg("input"), arg("weight"), arg("bias") = py::none());
  m.def(
      "bilinear",
      [](const Tensor& x1, const Tensor& x2, const Tensor& w, py::object b) {
        return wrap_obj(ember::bilinear(x1, x2, w, opt(b, "bilinear", "bias")));
      },
      arg("input1"), arg("input2"), arg("weight"), arg("bias") = py::none());

  // ---- dropout ----
  m.def("dropout", [](const Tensor& x, double p, bool train) {
    return wrap_obj(ember::dropout(x, p, train));
  });
  m.def("dropout_", [](Tensor& x, double p, bool train) {
    ember::dropout_(x, p, train);
    return wrap_obj(x);
  });
  m.def("feature_dropout", [](const Tensor& x, double p, bool train) {
    return wrap_obj(ember::feature_dropout(x, p, train));
  });
  m.def("feature_dropout_", [](Tensor& x, double p, bool train) {
    ember::feature_dropout_(x, p, train);
    return wrap_obj(x);
  });
  m.def("alpha_dropout", [](const Tensor& x, double p, bool train) {
    return wrap_obj(ember::alpha_dropout(x, p, train));
  });
  m.def("alpha_dropout_", [](Tensor& x, double p, bool train) {
    ember::alpha_dropout_(x, p, train);
    return wrap_obj(x);
  });
  m.def("feature_alpha_dropout", [](const Tensor& x, double p, bool train) {
    return wrap_obj(ember::feature_alpha_dropout(x, p, train));
  });
  m.def("feature_alpha_dropout_", [](Tensor& x, double p, bool train) {
    ember::feature_alpha_dropout_(x, p, train);
    return wrap_obj(x);
  });

  // ---- normalization ----
  m.def("batch_norm", [](const Tensor& x, py::object w, py::object b, py::object rm, py::object rv,
                         bool training, double momentum, double eps) {
    const char* fn = "batch_norm";
    return wrap_obj(ember::batch_norm(x, opt(w, fn, "weight"), opt(b, fn, "bias"),
                                      opt(rm, fn, "running_mean"), opt(rv, fn, "running_var"),
                                      training, momentum, eps));
  });
  m.def("native_batch_norm", [](const Tensor& x, py::object w, py::object b, py::object rm,
                                py::object rv, bool training, double momentum, double eps) {
    const char* fn = "native_batch_norm";
    auto [y, m, s] = ember::native_batch_norm(x, opt(w, fn, "weight"), opt(b, fn, "bias"),
                                              opt(rm, fn, "running_mean"),
                                              opt(rv, fn, "running_var"), training, momentum, eps);
    return tup({y, m, s});
  });
  m.def("layer_norm",
        [](const Tensor& x, std::vector<int64_t> shape, py::object w, py::object b, double eps) {
          return wrap_obj(ember::layer_norm(x, shape, opt(w, "layer_norm", "weight"),
                                            opt(b, "layer_norm", "bias"), eps));
        });
  m.def("native_layer_norm",
        [](const Tensor& x, std::vector<int64_t> shape, py::object w, py::object b, double eps) {
          auto [y, mu, rs] = ember::native_layer_norm(x, shape, opt(w, "layer_norm", "weight"),
                                                      opt(b, "layer_norm", "bias"), eps);
          return tup({y, mu, rs});
        });
  m.def("group_norm", [](const Tensor& x, int64_t g, py::object w, py::object b, double eps) {
    return wrap_obj(
        ember::group_norm(x, g, opt(w, "group_norm", "weight"), opt(b, "group_norm", "bias"), eps));
  });
  m.def("instance_norm", [](const Tensor& x, py::object w, py::object b, py::object rm,
                            py::object rv, bool use_input_stats, double momentum, double eps) {
    const char* fn = "instance_norm";
    return wrap_obj(ember::instance_norm(x, opt(w, fn, "weight"), opt(b, fn, "bias"),
                                         opt(rm, fn, "running_mean"), opt(rv, fn, "running_var"),
                                         use_input_stats, momentum, eps));
  });
  m.def("local_response_norm", [](const Tensor& x, int64_t size, double a, double b, double k) {
    return wrap_obj(ember::local_response_norm(x, size, a, b, k));
  });

  // ---- embeddings ----
  m.def("embedding",
        [](const Tensor& w, const Tensor& idx, int64_t padding_idx, bool scale, bool sparse) {
          return wrap_obj(ember::embedding(w, idx, padding_idx, scale, sparse));
        });
  m.def("embedding_renorm_", [](Tensor& w, const Tensor& idx, double max_norm, double p) {
    ember::embedding_renorm_(w, idx, max_norm, p);
    return wrap_obj(w);
  });
  m.def("embedding_bag", [](const Tensor& w, const Tensor& idx, py::object offsets, bool scale,
                            int64_t mode, bool sparse, py::object psw, bool include_last_offset,
                            std::optional<int64_t> padding_idx) {
    const char* fn = "embedding_bag";
    auto [o, a, b, c] =
        ember::embedding_bag(w, idx, opt(offsets, fn, "offsets"), scale, mode, sparse,
                             opt(psw, fn, "per_sample_weights"), include_last_offset, padding_idx);
    return tup({o, a, b, c});
  });

  // ---- losses (reduction: 0 none, 1 mean, 2 sum) ----
  m.def("cross_entropy", [](const Tensor& x, const Tensor& t, py::object w, int64_t red,
                            int64_t ignore_index, double ls) {
    return wrap_obj(
        ember::cross_entropy(x, t, opt(w, "cross_entropy", "weight"), red, ignore_index, ls));
  });
  m.def("nll_loss",
        [](const Tensor& x, const Tensor& t, py::object w, int64_t red, int64_t ignore_index) {
          return wrap_obj(ember::nll_loss(x, t, opt(w, "nll_loss", "weight"), red, ignore_index));
        });
  m.def("nll_loss2d", [](const Tensor& x, const Tensor& t, py::object w, int64_t red,
                         int64_t ignore_index) {
    return wrap_obj(ember::nll_loss2d(x, t, opt(w, "nll_loss2d", "weight"), red, ignore_index));
  });
  m.def("binary_cross_entropy", [](const Tensor& x, const Tensor& t, py::object w, int64_t red) {
    return wrap_obj(
        ember::binary_cross_entropy(x, t, opt(w, "binary_cross_entropy", "weight"), red));
  });
  m.def("binary_cross_entropy_with_logits",
        [](const Tensor& x, const Tensor& t, py::object w, py::object pw, int64_t red) {
          const char* fn = "binary_cross_entropy_with_logits";
          return wrap_obj(ember::binary_cross_entropy_with_logits(x, t, opt(w, fn, "weight"),
                                                                  opt(pw, fn, "pos_weight"), red));
        });
  m.def("kl_div", [](const Tensor& x, const Tensor& t, int64_t red, bool log_target) {
    return wrap_obj(ember::kl_div(x, t, red, log_target));
  });
  m.def("mse_loss", [](const Tensor& x, const Tensor& t, int64_t red) {
    return wrap_obj(ember::mse_loss(x, t, red));
  });
  m.def("l1_loss", [](const Tensor& x, const Tensor& t, int64_t red) {
    return wrap_obj(ember::l1_loss(x, t, red));
  });
  m.def("smooth_l1_loss", [](const Tensor& x, const Tensor& t, int64_t red, double beta) {
    return wrap_obj(ember::smooth_l1_loss(x, t, red, beta));
  });
  m.def("huber_loss", [](const Tensor& x, const Tensor& t, int64_t red, double delta) {
    return wrap_obj(ember::huber_loss(x, t, red, delta));
  });
  m.def("poisson_nll_loss",
        [](const Tensor& x, const Tensor& t, bool log_input, bool full, double eps, int64_t red) {
          return wrap_obj(ember::poisson_nll_loss(x, t, log_input, full, eps, red));
        });
  m.def("gaussian_nll_loss",
        [](const Tensor& x, const Tensor& t, const Tensor& var, bool full, double eps,
           int64_t red) { return wrap_obj(ember::gaussian_nll_loss(x, t, var, full, eps, red)); });
  m.def("multi_margin_loss", [](const Tensor& x, const Tensor& t, const Scalar& p,
                                const Scalar& margin, py::object w, int64_t red) {
    return wrap_obj(
        ember::multi_margin_loss(x, t, p, margin, opt(w, "multi_margin_loss", "weight"), red));
  });
  m.def("multilabel_margin_loss", [](const Tensor& x, const Tensor& t, int64_t red) {
    return wrap_obj(ember::multilabel_margin_loss(x, t, red));
  });
  m.def("multilabel_soft_margin_loss",
        [](const Tensor& x, const Tensor& t, py::object w, int64_t red) {
          return wrap_obj(ember::multilabel_soft_margin_loss(
              x, t, opt(w, "multilabel_soft_margin_loss", "weight"), red));
        });
  m.def("soft_margin_loss", [](const Tensor& x, const Tensor& t, int64_t red) {
    return wrap_obj(ember::soft_margin_loss(x, t, red));
  });
  m.def("ctc_loss", [](const Tensor& lp, const Tensor& t, py::object il, py::object tl,
                       int64_t blank, int64_t red, bool zero_infinity) {
    if (is_tensor(il.ptr()) && is_tensor(tl.ptr()))
      return wrap_obj(
          ember::ctc_loss(lp, t, unwrap(il.ptr()), unwrap(tl.ptr()), blank, red, zero_infinity));
    DimVector a = to_int_list(il.ptr(), "ctc_loss", "input_lengths");
    DimVector b = to_int_list(tl.ptr(), "ctc_loss", "target_lengths");
    return wrap_obj(ember::ctc_loss(lp, t, a, b, blank, red, zero_infinity));
  });
  m.def("cosine_embedding_loss",
        [](const Tensor& a, const Tensor& b, const Tensor& t, double margin, int64_t red) {
          return wrap_obj(ember::cosine_embedding_loss(a, b, t, margin, red));
        });
  m.def("margin_ranking_loss",
        [](const Tensor& a, const Tensor& b, const Tensor& t, double margin, int64_t red) {
          return wrap_obj(ember::margin_ranking_loss(a, b, t, margin, red));
        });
  m.def("hinge_embedding_loss", [](const Tensor& x, const Tensor& t, double margin, int64_t red) {
    return wrap_obj(ember::hinge_embedding_loss(x, t, margin, red));
  });
  m.def("triplet_margin_loss", [](const Tensor& a, const Tensor& p, const Tensor& n, double margin,
                                  double pn, double eps, bool swap, int64_t red) {
    return wrap_obj(ember::triplet_margin_loss(a, p, n, margin, pn, eps, swap, red));
  });

  // ---- distances ----
  m.def("cosine_similarity", [](const Tensor& a, const Tensor& b, int64_t dim, double eps) {
    return wrap_obj(ember::cosine_similarity(a, b, dim, eps));
  });
  m.def("pairwise_distance",
        [](const Tensor& a, const Tensor& b, double p, double eps, bool keepdim) {
          return wrap_obj(ember::pairwise_distance(a, b, p, eps, keepdim));
        });
  m.def("normalize", [](const Tensor& x, double p, int64_t dim, double eps) {
    return wrap_obj(ember::normalize(x, p, dim, eps));
  });
}

}  // namespace ember::python
