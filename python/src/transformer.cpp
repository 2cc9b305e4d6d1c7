// The binding of the Transformer encoder layer's inference fast path
// (_C._transformer_encoder_layer_fwd, as torch._transformer_encoder_layer_fwd), the packing of a
// padded batch that TransformerEncoder uses to skip padding, and _C._add_layer_norm.
#include "ember/nn/functional/transformer.h"
#include "ember/nn/functional/attention.h"
#include "nn_functional.h"

namespace ember::python {
namespace {
using nnf::opt_tensor;
using py::arg;
}  // namespace

void init_transformer(py::module_& m) {
  m.def(
      "_transformer_encoder_layer_fwd",
      [](const Tensor& src, int64_t embed_dim, int64_t num_heads, const Tensor& qkv_weight,
         py::handle qkv_bias, const Tensor& proj_weight, py::handle proj_bias, bool use_gelu,
         bool norm_first, double eps, py::handle norm_weight_1, py::handle norm_bias_1,
         py::handle norm_weight_2, py::handle norm_bias_2, const Tensor& ffn_weight_1,
         py::handle ffn_bias_1, const Tensor& ffn_weight_2, py::handle ffn_bias_2, py::handle mask,
         py::handle mask_type, py::handle seq_lengths) {
        const char* fn = "_transformer_encoder_layer_fwd";
        auto t = [fn](py::handle h, const char* name) { return opt_tensor(h, fn, name); };
        std::optional<int64_t> mt;
        if (!mask_type.is_none()) mt = to_int(mask_type.ptr(), fn, "mask_type");
        return _transformer_encoder_layer_fwd(
            src, embed_dim, num_heads, qkv_weight, t(qkv_bias, "qkv_bias"), proj_weight,
            t(proj_bias, "proj_bias"), use_gelu, norm_first, eps, t(norm_weight_1, "norm_weight_1"),
            t(norm_bias_1, "norm_bias_1"), t(norm_weight_2, "norm_weight_2"),
            t(norm_bias_2, "norm_bias_2"), ffn_weight_1, t(ffn_bias_1, "ffn_bias_1"), ffn_weight_2,
            t(ffn_bias_2, "ffn_bias_2"), t(mask, "mask"), mt, t(seq_lengths, "seq_lengths"));
      },
      arg("src"), arg("embed_dim"), arg("num_heads"), arg("qkv_weight"), arg("qkv_bias"),
      arg("proj_weight"), arg("proj_bias"), arg("use_gelu"), arg("norm_first"), arg("eps"),
      arg("norm_weight_1"), arg("norm_bias_1"), arg("norm_weight_2"), arg("norm_bias_2"),
      arg("ffn_weight_1"), arg("ffn_bias_1"), arg("ffn_weight_2"), arg("ffn_bias_2"),
      arg("mask") = py::none(), arg("mask_type") = py::none(), py::kw_only(),
      arg("seq_lengths") = py::none());
  m.def(
      "_transformer_pack_padded",
      [](const Tensor& padded, const Tensor& key_padding_mask) {
        auto [packed, lengths] = _transformer_pack_padded(padded, key_padding_mask);
        return py::make_tuple(wrap_obj(packed), wrap_obj(lengths));
      },
      arg("padded"), arg("key_padding_mask"));
  m.def("_transformer_unpack_padded", &_transformer_unpack_padded, arg("packed"),
        arg("key_padding_mask"));
  m.def(
      "_add_layer_norm",
      [](const Tensor& input, const Tensor& residual, py::handle normalized_shape,
         py::handle weight, py::handle bias, double eps) {
        const char* fn = "_add_layer_norm";
        DimVector ns = to_int_list(normalized_shape.ptr(), fn, "normalized_shape");
        return _add_layer_norm(input, residual, ns, opt_tensor(weight, fn, "weight"),
                               opt_tensor(bias, fn, "bias"), eps);
      },
      arg("input"), arg("residual"), arg("normalized_shape"), arg("weight"), arg("bias"),
      arg("eps"));
}

}  // namespace ember::python
