// The binding of the recurrent layers and cells (ember._C._nn), with torch._VF's signatures:
// lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
// the shared forward of the RNN modules (rnn_forward) and the packed-sequence utilities
// (ember.nn.utils.rnn keeps PackedSequence a namedtuple and passes its four fields).
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

/// A list of tensors as a Python list.
py::list tensor_pylist(const std::vector<Tensor>& ts) {
  py::list out;
  for (const Tensor& t : ts) out.append(wrap_obj(t));
  return out;
}

/// The sequences argument of pad_sequence / pack_sequence: a tensor (its rows) or an iterable
/// of tensors.
std::vector<Tensor> sequences(py::handle seqs, const char* fn) {
  if (is_tensor(seqs.ptr())) return unwrap(seqs.ptr()).unbind(0);
  EMBER_CHECK(py::isinstance<py::iterable>(seqs), "[", fn,
              "] Expected iterable for input sequences, but got arg of type: ",
              Py_TYPE(seqs.ptr())->tp_name);
  std::vector<Tensor> out;
  for (py::handle h : seqs) {
    EMBER_CHECK_TYPE(is_tensor(h.ptr()), "[", fn, "] expected a sequence of Tensors, got ",
                     Py_TYPE(h.ptr())->tp_name);
    out.push_back(unwrap(h.ptr()));
  }
  return out;
}

/// Lengths as an int64 tensor (a tensor or a sequence of ints).
Tensor lengths_tensor(py::handle lengths, const char* fn) {
  if (is_tensor(lengths.ptr())) return unwrap(lengths.ptr());
  DimVector v = to_int_list(lengths.ptr(), fn, "lengths");
  return ember::tensor(std::vector<int64_t>(v.begin(), v.end()));
}

py::tuple packed_fields(const nn::utils::rnn::PackedSequence& p) {
  return py::make_tuple(wrap_obj(p.data()), wrap_obj(p.batch_sizes()), wrap_obj(p.sorted_indices()),
                        wrap_obj(p.unsorted_indices()));
}

nn::detail::RNNMode rnn_mode(const std::string& mode) {
  if (mode == "LSTM") return nn::detail::RNNMode::LSTM;
  if (mode == "GRU") return nn::detail::RNNMode::GRU;
  if (mode == "RNN_RELU") return nn::detail::RNNMode::RNN_RELU;
  EMBER_CHECK_VALUE(mode == "RNN_TANH", "[RNN] Unrecognized RNN mode: ", mode);
  return nn::detail::RNNMode::RNN_TANH;
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

  // The forward of RNN / LSTM / GRU (ember::nn::detail::rnn_forward); hx is None, h_0, or
  // (h_0, c_0); returns (output, h_n) or (output, (h_n, c_n)).
  nn.def(
      "rnn_forward",
      [](const std::string& mode, int64_t input_size, int64_t hidden_size, int64_t num_layers,
         bool bias, bool batch_first, double dropout, bool bidirectional, int64_t proj_size,
         py::handle flat_weights, bool training, const Tensor& input, py::handle batch_sizes,
         py::handle sorted_indices, py::handle unsorted_indices, py::handle hx) -> py::object {
        const char* fn = "rnn_forward";
        nn::detail::RNNMode m = rnn_mode(mode);
        int64_t gates = m == nn::detail::RNNMode::LSTM ? 4 : m == nn::detail::RNNMode::GRU ? 3 : 1;
        nn::detail::RNNOptionsBase o{gates,       input_size, hidden_size,   num_layers, bias,
                                     batch_first, dropout,    bidirectional, proj_size};
        std::vector<Tensor> w = tensor_list(flat_weights, fn, "flat_weights");
        std::vector<Tensor> h;
        if (is_tensor(hx.ptr()))
          h.push_back(unwrap(hx.ptr()));
        else if (!hx.is_none())
          h = tensor_list(hx, fn, "hx");
        Tensor bs = opt_tensor(batch_sizes, fn, "batch_sizes");
        Tensor si = opt_tensor(sorted_indices, fn, "sorted_indices");
        Tensor ui = opt_tensor(unsorted_indices, fn, "unsorted_indices");
        auto [out, hn] = maybe_without_gil(input.numel(), [&] {
          return nn::detail::rnn_forward(m, o, w, training, input, bs, si, ui, h);
        });
        if (m == nn::detail::RNNMode::LSTM)
          return py::make_tuple(wrap_obj(out), py::make_tuple(wrap_obj(hn[0]), wrap_obj(hn[1])));
        return py::make_tuple(wrap_obj(out), wrap_obj(hn[0]));
      },
      arg("mode"), arg("input_size"), arg("hidden_size"), arg("num_layers"), arg("bias"),
      arg("batch_first"), arg("dropout"), arg("bidirectional"), arg("proj_size"),
      arg("flat_weights"), arg("training"), arg("input"), arg("batch_sizes"), arg("sorted_indices"),
      arg("unsorted_indices"), arg("hx"));

  // ---- packed sequences (ember::nn::utils::rnn); a PackedSequence travels as its 4 fields ----
  namespace R = nn::utils::rnn;
  auto packed = [](py::handle data, py::handle batch_sizes, py::handle sorted_indices,
                   py::handle unsorted_indices) {
    const char* fn = "PackedSequence";
    return R::PackedSequence(to_tensor(data.ptr(), fn, "data"),
                             to_tensor(batch_sizes.ptr(), fn, "batch_sizes"),
                             opt_tensor(sorted_indices, fn, "sorted_indices"),
                             opt_tensor(unsorted_indices, fn, "unsorted_indices"));
  };
  nn.def(
      "packed_sequence_fields",
      [packed](py::handle data, py::handle batch_sizes, py::handle sorted_indices,
               py::handle unsorted_indices) {
        return packed_fields(packed(data, batch_sizes, sorted_indices, unsorted_indices));
      },
      arg("data"), arg("batch_sizes"), arg("sorted_indices"), arg("unsorted_indices"));
  nn.def(
      "invert_permutation",
      [](py::handle permutation) {
        return wrap_obj(
            R::invert_permutation(opt_tensor(permutation, "invert_permutation", "permutation")));
      },
      arg("permutation"));
  nn.def(
      "pack_padded_sequence",
      [](const Tensor& input, py::handle lengths, bool batch_first, bool enforce_sorted) {
        return packed_fields(R::pack_padded_sequence(
            input, lengths_tensor(lengths, "pack_padded_sequence"), batch_first, enforce_sorted));
      },
      arg("input"), arg("lengths"), arg("batch_first") = false, arg("enforce_sorted") = true);
  nn.def(
      "pad_packed_sequence",
      [packed](py::handle data, py::handle batch_sizes, py::handle sorted_indices,
               py::handle unsorted_indices, bool batch_first, double padding_value,
               std::optional<int64_t> total_length) {
        auto [padded, lengths] =
            R::pad_packed_sequence(packed(data, batch_sizes, sorted_indices, unsorted_indices),
                                   batch_first, padding_value, total_length);
        return py::make_tuple(wrap_obj(padded), wrap_obj(lengths));
      },
      arg("data"), arg("batch_sizes"), arg("sorted_indices"), arg("unsorted_indices"),
      arg("batch_first") = false, arg("padding_value") = 0.0, arg("total_length") = py::none());
  nn.def(
      "pad_sequence",
      [](py::handle seqs, bool batch_first, double padding_value) {
        return wrap_obj(
            R::pad_sequence(sequences(seqs, "pad_sequence"), batch_first, padding_value));
      },
      arg("sequences"), arg("batch_first") = false, arg("padding_value") = 0.0);
  nn.def(
      "unpad_sequence",
      [](const Tensor& padded_sequences, py::handle lengths, bool batch_first) {
        return tensor_pylist(R::unpad_sequence(
            padded_sequences, lengths_tensor(lengths, "unpad_sequence"), batch_first));
      },
      arg("padded_sequences"), arg("lengths"), arg("batch_first") = false);
  nn.def(
      "pack_sequence",
      [](py::handle seqs, bool enforce_sorted) {
        return packed_fields(R::pack_sequence(sequences(seqs, "pack_sequence"), enforce_sorted));
      },
      arg("sequences"), arg("enforce_sorted") = true);
  nn.def(
      "unpack_sequence",
      [packed](py::handle data, py::handle batch_sizes, py::handle sorted_indices,
               py::handle unsorted_indices) {
        return tensor_pylist(
            R::unpack_sequence(packed(data, batch_sizes, sorted_indices, unsorted_indices)));
      },
      arg("data"), arg("batch_sizes"), arg("sorted_indices"), arg("unsorted_indices"));

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
