// The binding of the recurrent layers and cells (ember._C._nn), with torch._VF's signatures:
// lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first).
#include "ember/rnn.h"

#include "pyember.h"

namespace ember::python {
namespace {

/// A list or tuple of tensors (TypeError otherwise).
std::vector<Tensor> tensor_list(py::handle seq, const char* fn, const char* arg) {
  EMBER_CHECK_TYPE(PyList_Check(seq.ptr()) || PyTuple_Check(seq.ptr()), fn, "(): argument '", arg,
                   "' must be tuple of Tensors, not ", Py_TYPE(seq.ptr())->tp_name);
  std::vector<Tensor> out;
  for (py::handle h : seq) {
    EMBER_CHECK_TYPE(is_tensor(h.ptr()), fn, "(): expected Tensor as element ", out.size(),
                     " in argument '", arg, "', but got ", Py_TYPE(h.ptr())->tp_name);
    out.push_back(unwrap(h.ptr()));
  }
  return out;
}

/// An optional Tensor argument (None → undefined).
Tensor opt_tensor(py::handle o, const char* fn, const char* arg) {
  if (o.is_none()) return Tensor();
  return to_tensor(o.ptr(), fn, arg);
}

using CellFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&);
using LayerFn = std::tuple<Tensor, Tensor> (*)(const Tensor&, const Tensor&, ArrayRef<Tensor>, bool,
                                               int64_t, double, bool, bool, bool);

}  // namespace

void init_rnn(py::module_& m) {
  using py::arg;
  py::module_ nn = m.def_submodule("_nn", "kernels behind ember.nn.functional");

  nn.def(
      "lstm",
      [](const Tensor& input, py::handle hx, py::handle params, bool has_biases, int64_t num_layers,
         double dropout, bool train, bool bidirectional, bool batch_first) {
        const std::vector<Tensor> h = tensor_list(hx, "lstm", "hx");
        const std::vector<Tensor> p = tensor_list(params, "lstm", "params");
        return maybe_without_gil(input.numel(), [&] {
          return lstm(input, h, p, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first);
        });
      },
      arg("input"), arg("hx"), arg("params"), arg("has_biases"), arg("num_layers"), arg("dropout"),
      arg("train"), arg("bidirectional"), arg("batch_first"));

  const std::pair<const char*, LayerFn> layers[] = {
      {"gru", &gru}, {"rnn_tanh", &rnn_tanh}, {"rnn_relu", &rnn_relu}};
  for (const auto& [name, fn] : layers) {
    nn.def(
        name,
        [name = name, fn = fn](const Tensor& input, const Tensor& hx, py::handle params,
                               bool has_biases, int64_t num_layers, double dropout, bool train,
                               bool bidirectional, bool batch_first) {
          const std::vector<Tensor> p = tensor_list(params, name, "params");
          return maybe_without_gil(input.numel(), [&] {
            return fn(input, hx, p, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first);
          });
        },
        arg("input"), arg("hx"), arg("params"), arg("has_biases"), arg("num_layers"),
        arg("dropout"), arg("train"), arg("bidirectional"), arg("batch_first"));
  }

  nn.def(
      "lstm_cell",
      [](const Tensor& input, py::handle hx, const Tensor& w_ih, const Tensor& w_hh,
         py::handle b_ih, py::handle b_hh) {
        const std::vector<Tensor> h = tensor_list(hx, "lstm_cell", "hx");
        return lstm_cell(input, h, w_ih, w_hh, opt_tensor(b_ih, "lstm_cell", "b_ih"),
                         opt_tensor(b_hh, "lstm_cell", "b_hh"));
      },
      arg("input"), arg("hx"), arg("w_ih"), arg("w_hh"), arg("b_ih") = py::none(),
      arg("b_hh") = py::none());

  const std::pair<const char*, CellFn> cells[] = {{"gru_cell", &gru_cell},
                                                  {"rnn_tanh_cell", &rnn_tanh_cell},
                                                  {"rnn_relu_cell", &rnn_relu_cell}};
  for (const auto& [name, fn] : cells) {
    nn.def(
        name,
        [name = name, fn = fn](const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                               const Tensor& w_hh, py::handle b_ih, py::handle b_hh) {
          return fn(input, hx, w_ih, w_hh, opt_tensor(b_ih, name, "b_ih"),
                    opt_tensor(b_hh, name, "b_hh"));
        },
        arg("input"), arg("hx"), arg("w_ih"), arg("w_hh"), arg("b_ih") = py::none(),
        arg("b_hh") = py::none());
  }

  nn.def(
      "lstm_fused_gates",
      [](const Tensor& igates, const Tensor& hgates, const Tensor& cx) {
        return lstm_fused_gates(igates, hgates, cx);
      },
      arg("igates"), arg("hgates"), arg("cx"));
  nn.def(
      "gru_fused_gates",
      [](const Tensor& igates, const Tensor& hgates, const Tensor& hx) {
        return gru_fused_gates(igates, hgates, hx);
      },
      arg("igates"), arg("hgates"), arg("hx"));
}

}  // namespace ember::python
