// The binding of scaled_dot_product_attention (_C._nn.functional, torch 2.1's signature), of
// torch 1.13's _scaled_dot_product_attention, and of the private attention ops on _C.
#include "ember/nn/functional/attention.h"
#include "nn_functional.h"

namespace ember::python {
namespace {
using nnf::opt_tensor;
using py::arg;

py::tuple pair(const std::tuple<Tensor, Tensor>& r) {
  return py::make_tuple(wrap_obj(std::get<0>(r)), wrap_obj(std::get<1>(r)));
}
}  // namespace

void init_attention(py::module_& m) {
  py::module_ f = m.attr("_nn").attr("functional");
  f.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, py::handle mask, double dropout_p,
         bool is_causal, std::optional<double> scale) {
        return ember::scaled_dot_product_attention(
            q, k, v, opt_tensor(mask, "scaled_dot_product_attention", "attn_mask"), dropout_p,
            is_causal, scale);
      },
      arg("query"), arg("key"), arg("value"), arg("attn_mask") = py::none(), arg("dropout_p") = 0.0,
      arg("is_causal") = false, py::kw_only(), arg("scale") = py::none());
  f.def(
      "_scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, py::handle mask, double dropout_p,
         bool need_attn_weights, bool is_causal) {
        Tensor m = opt_tensor(mask, "_scaled_dot_product_attention", "attn_mask");
        return pair(ember::_scaled_dot_product_attention(q, k, v, m, dropout_p, need_attn_weights,
                                                         is_causal));
      },
      arg("query"), arg("key"), arg("value"), arg("attn_mask") = py::none(), arg("dropout_p") = 0.0,
      arg("need_attn_weights") = false, arg("is_causal") = false);

  // The private ops, as torch._scaled_dot_product_* (torch 2.1 names).
  m.def(
      "_scaled_dot_product_attention_math",
      [](const Tensor& q, const Tensor& k, const Tensor& v, py::handle mask, double dropout_p,
         bool is_causal, py::handle dropout_mask, std::optional<double> scale) {
        const char* fn = "_scaled_dot_product_attention_math";
        return pair(ember::_scaled_dot_product_attention_math(
            q, k, v, opt_tensor(mask, fn, "attn_mask"), dropout_p, is_causal,
            opt_tensor(dropout_mask, fn, "dropout_mask"), scale));
      },
      arg("query"), arg("key"), arg("value"), arg("attn_mask") = py::none(), arg("dropout_p") = 0.0,
      arg("is_causal") = false, arg("dropout_mask") = py::none(), py::kw_only(),
      arg("scale") = py::none());
  m.def(
      "_scaled_dot_product_flash_attention_for_cpu",
      [](const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p, bool is_causal,
         py::handle mask, std::optional<double> scale) {
        return pair(ember::_scaled_dot_product_flash_attention_for_cpu(
            q, k, v, dropout_p, is_causal,
            opt_tensor(mask, "_scaled_dot_product_flash_attention_for_cpu", "attn_mask"), scale));
      },
      arg("query"), arg("key"), arg("value"), arg("dropout_p") = 0.0, arg("is_causal") = false,
      py::kw_only(), arg("attn_mask") = py::none(), arg("scale") = py::none());
  m.def(
      "_scaled_dot_product_flash_attention_for_cpu_backward",
      [](const Tensor& go, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
         const Tensor& lse, double dropout_p, bool is_causal, py::handle mask,
         std::optional<double> scale) {
        auto [gq, gk, gv] = ember::_scaled_dot_product_flash_attention_for_cpu_backward(
            go, q, k, v, out, lse, dropout_p, is_causal,
            opt_tensor(mask, "_scaled_dot_product_flash_attention_for_cpu_backward", "attn_mask"),
            scale);
        return py::make_tuple(wrap_obj(gq), wrap_obj(gk), wrap_obj(gv));
      },
      arg("grad_out"), arg("query"), arg("key"), arg("value"), arg("out"), arg("logsumexp"),
      arg("dropout_p"), arg("is_causal"), py::kw_only(), arg("attn_mask") = py::none(),
      arg("scale") = py::none());
}

}  // namespace ember::python
