// The binding of ember::nn::functional's losses (ember._C._nn.functional): torch.nn.functional's
// signatures, with the deprecated size_average / reduce pair and the reduction names turned into
// Options. The C++ functional forms hold the argument checks.
#include "nn_functional.h"

namespace ember::python::nnf {

namespace {
// The reduction argument of the losses that have the legacy pair.
#define LEGACY_ARGS arg("size_average") = py::none(), arg("reduce") = py::none()

template <class Options>
Options with_reduction(Options o, py::handle size_average, py::handle reduce,
                       const std::string& reduction) {
  o.reduction(resolve_reduction(size_average, reduce, reduction));
  return o;
}
}  // namespace

void init_loss(py::module_& f) {
  // Losses of (input, target) whose only option is the reduction.
  using PairFn = Tensor (*)(const Tensor&, const Tensor&, const nn::L1LossOptions&);
  static const std::pair<const char*, PairFn> pairs[] = {
      {"l1_loss", &F::l1_loss},
      {"mse_loss",
       [](const Tensor& x, const Tensor& t, const nn::L1LossOptions& o) {
         return F::mse_loss(x, t, nn::MSELossOptions(o.reduction()));
       }},
      {"multilabel_margin_loss",
       [](const Tensor& x, const Tensor& t, const nn::L1LossOptions& o) {
         return F::multilabel_margin_loss(x, t, nn::MultiLabelMarginLossOptions(o.reduction()));
       }},
      {"soft_margin_loss", [](const Tensor& x, const Tensor& t, const nn::L1LossOptions& o) {
         return F::soft_margin_loss(x, t, nn::SoftMarginLossOptions(o.reduction()));
       }}};
  for (const auto& [name, fn] : pairs) {
    f.def(name,
          keep_self(name,
                    [fn = fn](const Tensor& input, const Tensor& target, py::handle size_average,
                              py::handle reduce, const std::string& reduction) {
                      return fn(
                          input, target,
                          nn::L1LossOptions(resolve_reduction(size_average, reduce, reduction)));
                    }),
          arg("input"), arg("target"), LEGACY_ARGS, arg("reduction") = "mean");
  }
  f.def("smooth_l1_loss",
        keep_self("smooth_l1_loss",
                  [](const Tensor& input, const Tensor& target, py::handle size_average,
                     py::handle reduce, const std::string& reduction, double beta) {
                    return F::smooth_l1_loss(
                        input, target,
                        nn::SmoothL1LossOptions(resolve_reduction(size_average, reduce, reduction))
                            .beta(beta));
                  }),
        arg("input"), arg("target"), LEGACY_ARGS, arg("reduction") = "mean", arg("beta") = 1.0);
  f.def("huber_loss",
        keep_self("huber_loss",
                  [](const Tensor& input, const Tensor& target, const std::string& reduction,
                     double delta) {
                    return F::huber_loss(
                        input, target,
                        nn::HuberLossOptions(reduction_enum(reduction)).delta(delta));
                  }),
        arg("input"), arg("target"), arg("reduction") = "mean", arg("delta") = 1.0);
  f.def("cross_entropy",
        keep_self("cross_entropy",
                  [](const Tensor& input, const Tensor& target, py::handle weight,
                     py::handle size_average, int64_t ignore_index, py::handle reduce,
                     const std::string& reduction, double label_smoothing) {
                    return F::cross_entropy(
                        input, target,
                        with_reduction(F::CrossEntropyFuncOptions()
                                           .weight(opt_tensor(weight, "cross_entropy", "weight"))
                                           .ignore_index(ignore_index)
                                           .label_smoothing(label_smoothing),
                                       size_average, reduce, reduction));
                  }),
        arg("input"), arg("target"), arg("weight") = py::none(), arg("size_average") = py::none(),
        arg("ignore_index") = -100, arg("reduce") = py::none(), arg("reduction") = "mean",
        arg("label_smoothing") = 0.0);
  f.def(
      "nll_loss",
      keep_self(
          "nll_loss",
          [](const Tensor& input, const Tensor& target, py::handle weight, py::handle size_average,
             int64_t ignore_index, py::handle reduce, const std::string& reduction) {
            return F::nll_loss(input, target,
                               with_reduction(F::NLLLossFuncOptions()
                                                  .weight(opt_tensor(weight, "nll_loss", "weight"))
                                                  .ignore_index(ignore_index),
                                              size_average, reduce, reduction));
          }),
      arg("input"), arg("target"), arg("weight") = py::none(), arg("size_average") = py::none(),
      arg("ignore_index") = -100, arg("reduce") = py::none(), arg("reduction") = "mean");
  f.def("poisson_nll_loss",
        keep_self("poisson_nll_loss",
                  [](const Tensor& input, const Tensor& target, bool log_input, bool full,
                     py::handle size_average, double eps, py::handle reduce,
                     const std::string& reduction) {
                    return F::poisson_nll_loss(
                        input, target,
                        with_reduction(
                            F::PoissonNLLLossFuncOptions().log_input(log_input).full(full).eps(eps),
                            size_average, reduce, reduction));
                  }),
        arg("input"), arg("target"), arg("log_input") = true, arg("full") = false,
        arg("size_average") = py::none(), arg("eps") = 1e-8, arg("reduce") = py::none(),
        arg("reduction") = "mean");
  f.def("gaussian_nll_loss",
        keep_self("gaussian_nll_loss",
                  [](const Tensor& input, const Tensor& target, const Tensor& var, bool full,
                     double eps, const std::string& reduction) {
                    return F::gaussian_nll_loss(
                        input, target, var,
                        F::GaussianNLLLossFuncOptions().full(full).eps(eps).reduction(
                            reduction_enum(reduction)));
                  }),
        arg("input"), arg("target"), arg("var"), arg("full") = false, arg("eps") = 1e-6,
        arg("reduction") = "mean");
  f.def("kl_div",
        keep_self("kl_div",
                  [](const Tensor& input, const Tensor& target, py::handle size_average,
                     py::handle reduce, const std::string& reduction, bool log_target) {
                    F::KLDivFuncOptions o;
                    if (reduction == "batchmean" && size_average.is_none() && reduce.is_none()) {
                      o.reduction(enumtype::kBatchMean{});
                    } else {
                      auto r = resolve_reduction(size_average, reduce, reduction);
                      std::visit([&](auto e) { o.reduction(e); }, r);
                    }
                    return F::kl_div(input, target, o.log_target(log_target));
                  }),
        arg("input"), arg("target"), LEGACY_ARGS, arg("reduction") = "mean",
        arg("log_target") = false);
  f.def("binary_cross_entropy",
        keep_self("binary_cross_entropy",
                  [](const Tensor& input, const Tensor& target, py::handle weight,
                     py::handle size_average, py::handle reduce, const std::string& reduction) {
                    return F::binary_cross_entropy(
                        input, target,
                        with_reduction(F::BinaryCrossEntropyFuncOptions().weight(
                                           opt_tensor(weight, "binary_cross_entropy", "weight")),
                                       size_average, reduce, reduction));
                  }),
        arg("input"), arg("target"), arg("weight") = py::none(), LEGACY_ARGS,
        arg("reduction") = "mean");
  f.def("binary_cross_entropy_with_logits",
        keep_self("binary_cross_entropy_with_logits",
                  [](const Tensor& input, const Tensor& target, py::handle weight,
                     py::handle size_average, py::handle reduce, const std::string& reduction,
                     py::handle pos_weight) {
                    const char* fn = "binary_cross_entropy_with_logits";
                    return F::binary_cross_entropy_with_logits(
                        input, target,
                        with_reduction(F::BinaryCrossEntropyWithLogitsFuncOptions()
                                           .weight(opt_tensor(weight, fn, "weight"))
                                           .pos_weight(opt_tensor(pos_weight, fn, "pos_weight")),
                                       size_average, reduce, reduction));
                  }),
        arg("input"), arg("target"), arg("weight") = py::none(), LEGACY_ARGS,
        arg("reduction") = "mean", arg("pos_weight") = py::none());
  f.def(
      "cosine_embedding_loss",
      keep_self("cosine_embedding_loss",
                [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                   py::handle size_average, py::handle reduce, const std::string& reduction) {
                  return F::cosine_embedding_loss(
                      input1, input2, target,
                      with_reduction(F::CosineEmbeddingLossFuncOptions().margin(margin),
                                     size_average, reduce, reduction));
                }),
      arg("input1"), arg("input2"), arg("target"), arg("margin") = 0.0, LEGACY_ARGS,
      arg("reduction") = "mean");
  f.def(
      "margin_ranking_loss",
      keep_self("margin_ranking_loss",
                [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                   py::handle size_average, py::handle reduce, const std::string& reduction) {
                  return F::margin_ranking_loss(
                      input1, input2, target,
                      with_reduction(F::MarginRankingLossFuncOptions().margin(margin), size_average,
                                     reduce, reduction));
                }),
      arg("input1"), arg("input2"), arg("target"), arg("margin") = 0.0, LEGACY_ARGS,
      arg("reduction") = "mean");
  f.def("hinge_embedding_loss",
        keep_self("hinge_embedding_loss",
                  [](const Tensor& input, const Tensor& target, double margin,
                     py::handle size_average, py::handle reduce, const std::string& reduction) {
                    return F::hinge_embedding_loss(
                        input, target,
                        with_reduction(F::HingeEmbeddingLossFuncOptions().margin(margin),
                                       size_average, reduce, reduction));
                  }),
        arg("input"), arg("target"), arg("margin") = 1.0, LEGACY_ARGS, arg("reduction") = "mean");
  f.def("multilabel_soft_margin_loss",
        keep_self("multilabel_soft_margin_loss",
                  [](const Tensor& input, const Tensor& target, py::handle weight,
                     py::handle size_average, py::handle reduce, const std::string& reduction) {
                    return F::multilabel_soft_margin_loss(
                        input, target,
                        with_reduction(F::MultiLabelSoftMarginLossFuncOptions().weight(opt_tensor(
                                           weight, "multilabel_soft_margin_loss", "weight")),
                                       size_average, reduce, reduction));
                  }),
        arg("input"), arg("target"), arg("weight") = py::none(), LEGACY_ARGS,
        arg("reduction") = "mean");
  f.def("multi_margin_loss",
        keep_self("multi_margin_loss",
                  [](const Tensor& input, const Tensor& target, double p, double margin,
                     py::handle weight, py::handle size_average, py::handle reduce,
                     const std::string& reduction) {
                    // A fractional p is passed as 0, which the functional rejects like any p but 1
                    // and 2.
                    int64_t ip = p == double(int64_t(p)) ? int64_t(p) : 0;
                    return F::multi_margin_loss(
                        input, target,
                        with_reduction(F::MultiMarginLossFuncOptions().p(ip).margin(margin).weight(
                                           opt_tensor(weight, "multi_margin_loss", "weight")),
                                       size_average, reduce, reduction));
                  }),
        arg("input"), arg("target"), arg("p") = 1, arg("margin") = 1.0, arg("weight") = py::none(),
        LEGACY_ARGS, arg("reduction") = "mean");
  f.def(
      "triplet_margin_loss",
      keep_self("triplet_margin_loss",
                [](const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                   double margin, double p, double eps, bool swap, py::handle size_average,
                   py::handle reduce, const std::string& reduction) {
                  return F::triplet_margin_loss(
                      anchor, positive, negative,
                      with_reduction(
                          F::TripletMarginLossFuncOptions().margin(margin).p(p).eps(eps).swap(swap),
                          size_average, reduce, reduction));
                }),
      arg("anchor"), arg("positive"), arg("negative"), arg("margin") = 1.0, arg("p") = 2.0,
      arg("eps") = 1e-6, arg("swap") = false, LEGACY_ARGS, arg("reduction") = "mean");
  f.def(
      "triplet_margin_with_distance_loss",
      keep_self(
          "triplet_margin_with_distance_loss",
          [](const Tensor& anchor, const Tensor& positive, const Tensor& negative,
             py::object distance_function, double margin, bool swap, const std::string& reduction) {
            auto o =
                F::TripletMarginWithDistanceLossFuncOptions().margin(margin).swap(swap).reduction(
                    reduction_enum(reduction));
            if (!distance_function.is_none()) {
              o.distance_function([distance_function](const Tensor& a, const Tensor& b) {
                py::object r = distance_function(wrap_obj(a), wrap_obj(b));
                return to_tensor(r.ptr(), "triplet_margin_with_distance_loss", "distance_function");
              });
            }
            return F::triplet_margin_with_distance_loss(anchor, positive, negative, o);
          }),
      arg("anchor"), arg("positive"), arg("negative"), py::kw_only(),
      arg("distance_function") = py::none(), arg("margin") = 1.0, arg("swap") = false,
      arg("reduction") = "mean");
  f.def("ctc_loss",
        keep_self("ctc_loss",
                  [](const Tensor& log_probs, const Tensor& targets, py::handle input_lengths,
                     py::handle target_lengths, int64_t blank, const std::string& reduction,
                     bool zero_infinity) {
                    const char* fn = "ctc_loss";
                    auto lengths = [&](py::handle h, const char* name) {
                      if (is_tensor(h.ptr())) return unwrap(h.ptr());
                      DimVector v = to_int_list(h.ptr(), fn, name);
                      return ember::tensor(std::vector<int64_t>(v.begin(), v.end()));
                    };
                    return F::ctc_loss(log_probs, targets, lengths(input_lengths, "input_lengths"),
                                       lengths(target_lengths, "target_lengths"),
                                       F::CTCLossFuncOptions()
                                           .blank(blank)
                                           .reduction(reduction_enum(reduction))
                                           .zero_infinity(zero_infinity));
                  }),
        arg("log_probs"), arg("targets"), arg("input_lengths"), arg("target_lengths"),
        arg("blank") = 0, arg("reduction") = "mean", arg("zero_infinity") = false);
}

#undef LEGACY_ARGS

}  // namespace ember::python::nnf

namespace ember::python {
void init_nn_ops(py::module_& m) {
  py::module_ f = m.def_submodule("_nn", "kernels behind ember.nn").def_submodule("functional");
  nnf::init_loss(f);
}
}  // namespace ember::python
