// tensor_split, flip/roll, repeat/tile, diag*, pad, one_hot, meshgrid, searchsorted, histc.
#include "pyember.h"

namespace ember::python {
namespace {

/// An int or a sequence of ints (PyTorch's int[] arguments take a bare int too).
DimVector int_or_list(py::handle h, const char* fn, const char* arg) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return DimVector{to_int(h.ptr(), fn, arg)};
  return to_int_list(h.ptr(), fn, arg);
}

/// `*sizes` or one sequence: x.repeat(2, 3) or x.repeat((2, 3)).
DimVector varargs_ints(const py::args& args, const char* fn, const char* arg) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return to_int_list(args[0].ptr(), fn, arg);
  DimVector out;
  for (py::handle h : args) out.push_back(to_int(h.ptr(), fn, arg));
  return out;
}

std::vector<Tensor> tensor_args(const py::args& args, const char* fn) {
  py::handle seq = args;
  if (args.size() == 1 && !is_tensor(args[0].ptr())) seq = args[0];
  EMBER_CHECK_TYPE(PyList_Check(seq.ptr()) || PyTuple_Check(seq.ptr()), fn,
                   "(): expected Tensors or a sequence of Tensors, got ",
                   Py_TYPE(seq.ptr())->tp_name);
  std::vector<Tensor> out;
  for (py::handle h : seq) out.push_back(to_tensor(h.ptr(), fn, "tensors"));
  return out;
}

py::tuple to_tuple(const std::vector<Tensor>& ts) {
  py::tuple r(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) r[i] = wrap_obj(ts[i]);
  return r;
}

std::vector<Tensor> split(const Tensor& x, py::handle ios, int64_t dim) {
  if (is_tensor(ios.ptr())) return tensor_split(x, unwrap(ios.ptr()), dim);
  if (PyLong_Check(ios.ptr()))
    return tensor_split(x, to_int(ios.ptr(), "tensor_split", "sections"), dim);
  return tensor_split(x, IntArrayRef(to_int_list(ios.ptr(), "tensor_split", "indices")), dim);
}

Tensor roll_py(const Tensor& x, py::handle shifts, py::handle dims) {
  DimVector s = int_or_list(shifts, "roll", "shifts");
  DimVector d = dims.is_none() ? DimVector{} : int_or_list(dims, "roll", "dims");
  return maybe_without_gil(x.numel(), [&] { return roll(x, s, d); });
}

Tensor interleave_py(const Tensor& x, py::handle repeats, std::optional<int64_t> dim,
                     std::optional<int64_t> output_size) {
  if (repeats.is_none()) return repeat_interleave(x, output_size);
  if (is_tensor(repeats.ptr()))
    return repeat_interleave(x, unwrap(repeats.ptr()), dim, output_size);
  return repeat_interleave(x, to_int(repeats.ptr(), "repeat_interleave", "repeats"), dim,
                           output_size);
}

/// A tensor or number argument as a tensor (numbers become 0-dim tensors of their own type).
Tensor tensor_or_number(py::handle h, const char* fn, const char* arg, bool* was_scalar) {
  *was_scalar = !is_tensor(h.ptr());
  if (!*was_scalar) return unwrap(h.ptr());
  return scalar_tensor(to_scalar(h.ptr(), fn, arg));
}

}  // namespace

void init_shape(py::module_& m) {
  using py::arg;
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // ---- splitting, flipping, rolling, repeating ----
  m.def(
      "tensor_split",
      [](const Tensor& x, py::handle ios, int64_t dim) { return to_tuple(split(x, ios, dim)); },
      arg("input"), arg("indices_or_sections"), arg("dim") = 0);
  cls.def(
      "tensor_split",
      [](const Tensor& x, py::handle ios, int64_t dim) { return to_tuple(split(x, ios, dim)); },
      arg("indices_or_sections"), arg("dim") = 0);
  m.def(
      "flip",
      [](const Tensor& x, py::handle dims) {
        DimVector d = int_or_list(dims, "flip", "dims");
        return maybe_without_gil(x.numel(), [&] { return flip(x, d); });
      },
      arg("input"), arg("dims"));
  cls.def("flip", [](const Tensor& x, py::args dims) {
    DimVector d = varargs_ints(dims, "flip", "dims");
    return maybe_without_gil(x.numel(), [&] { return flip(x, d); });
  });
  m.def(
      "fliplr", [](const Tensor& x) { return fliplr(x); }, arg("input"));
  m.def(
      "flipud", [](const Tensor& x) { return flipud(x); }, arg("input"));
  cls.def("fliplr", [](const Tensor& x) { return fliplr(x); });
  cls.def("flipud", [](const Tensor& x) { return flipud(x); });
  m.def("roll", &roll_py, arg("input"), arg("shifts"), arg("dims") = py::none());
  cls.def("roll", &roll_py, arg("shifts"), arg("dims") = py::none());
  auto rot = [](const Tensor& x, int64_t k, py::handle dims) {
    return rot90(x, k, to_int_list(dims.ptr(), "rot90", "dims"));
  };
  m.def("rot90", rot, arg("input"), arg("k") = 1, arg("dims") = py::make_tuple(0, 1));
  cls.def("rot90", rot, arg("k") = 1, arg("dims") = py::make_tuple(0, 1));
  cls.def("repeat", [](const Tensor& x, py::args reps) {
    EMBER_CHECK_TYPE(reps.size() > 0,
                     "repeat() missing 1 required positional arguments: "
                     "\"repeats\"");
    DimVector r = varargs_ints(reps, "repeat", "repeats");
    return maybe_without_gil(x.numel(), [&] { return repeat(x, r); });
  });
  m.def(
      "tile",
      [](const Tensor& x, py::handle dims) { return tile(x, int_or_list(dims, "tile", "dims")); },
      arg("input"), arg("dims"));
  cls.def("tile", [](const Tensor& x, py::args dims) {
    return tile(x, varargs_ints(dims, "tile", "dims"));
  });
  m.def("repeat_interleave", &interleave_py, arg("input"), arg("repeats") = py::none(),
        arg("dim") = py::none(), py::kw_only(), arg("output_size") = py::none());
  cls.def(
      "repeat_interleave",
      [](const Tensor& x, py::handle repeats, std::optional<int64_t> dim,
         std::optional<int64_t> output_size) {
        EMBER_CHECK_TYPE(!repeats.is_none(),
                         "repeat_interleave(): argument 'repeats' must be int or "
                         "Tensor, not NoneType");
        return interleave_py(x, repeats, dim, output_size);
      },
      arg("repeats"), arg("dim") = py::none(), py::kw_only(), arg("output_size") = py::none());

  // ---- index factories ----
  for (bool lower : {true, false}) {
    const char* name = lower ? "tril_indices" : "triu_indices";
    m.def(
        name,
        [lower, name](int64_t row, int64_t col, int64_t offset, py::handle dtype, py::handle device,
                      py::handle, py::handle) {
          TensorOptions o(to_dtype(dtype.ptr(), name).value_or(kLong));
          if (auto d = to_device(device.ptr(), name)) o = o.device(*d);
          return lower ? tril_indices(row, col, offset, o) : triu_indices(row, col, offset, o);
        },
        arg("row"), arg("col"), arg("offset") = 0, py::kw_only(), arg("dtype") = py::none(),
        arg("device") = py::none(), arg("layout") = py::none(), arg("requires_grad") = py::none());
  }

  // ---- diagonals, scatters into views, one_hot ----
  m.def(
      "diag",
      [](const Tensor& x, int64_t k, py::handle out) -> py::object {
        if (out.is_none()) return wrap_obj(diag(x, k));
        diag_out(const_cast<Tensor&>(to_tensor(out.ptr(), "diag", "out")), x, k);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("diagonal") = 0, py::kw_only(), arg("out") = py::none());
  cls.def(
      "diag", [](const Tensor& x, int64_t k) { return diag(x, k); }, arg("diagonal") = 0);
  m.def(
      "diag_embed",
      [](const Tensor& x, int64_t o, int64_t d1, int64_t d2) { return diag_embed(x, o, d1, d2); },
      arg("input"), arg("offset") = 0, arg("dim1") = -2, arg("dim2") = -1);
  cls.def(
      "diag_embed",
      [](const Tensor& x, int64_t o, int64_t d1, int64_t d2) { return diag_embed(x, o, d1, d2); },
      arg("offset") = 0, arg("dim1") = -2, arg("dim2") = -1);
  m.def(
      "diagflat", [](const Tensor& x, int64_t o) { return diagflat(x, o); }, arg("input"),
      arg("offset") = 0);
  cls.def(
      "diagflat", [](const Tensor& x, int64_t o) { return diagflat(x, o); }, arg("offset") = 0);
  auto dscat = [](const Tensor& x, const Tensor& src, int64_t o, int64_t d1, int64_t d2) {
    return diagonal_scatter(x, src, o, d1, d2);
  };
  m.def("diagonal_scatter", dscat, arg("input"), arg("src"), arg("offset") = 0, arg("dim1") = 0,
        arg("dim2") = 1);
  cls.def("diagonal_scatter", dscat, arg("src"), arg("offset") = 0, arg("dim1") = 0,
          arg("dim2") = 1);
  auto sscat = [](const Tensor& x, const Tensor& src, int64_t d, int64_t i) {
    return select_scatter(x, src, d, i);
  };
  m.def("select_scatter", sscat, arg("input"), arg("src"), arg("dim"), arg("index"));
  cls.def("select_scatter", sscat, arg("src"), arg("dim"), arg("index"));
  auto slscat = [](const Tensor& x, const Tensor& src, int64_t d, std::optional<int64_t> start,
                   std::optional<int64_t> end,
                   int64_t step) { return slice_scatter(x, src, d, start, end, step); };
  m.def("slice_scatter", slscat, arg("input"), arg("src"), arg("dim") = 0,
        arg("start") = py::none(), arg("end") = py::none(), arg("step") = 1);
  cls.def("slice_scatter", slscat, arg("src"), arg("dim") = 0, arg("start") = py::none(),
          arg("end") = py::none(), arg("step") = 1);

  // ---- broadcasting, grids, products ----
  m.def(
      "broadcast_to",
      [](const Tensor& x, py::handle size) {
        return broadcast_to(x, to_int_list(size.ptr(), "broadcast_to", "size"));
      },
      arg("input"), arg("size"));
  cls.def(
      "broadcast_to",
      [](const Tensor& x, py::handle size) {
        return broadcast_to(x, to_int_list(size.ptr(), "broadcast_to", "size"));
      },
      arg("size"));
  m.def("broadcast_tensors", [](py::args a) {
    return to_tuple(broadcast_tensors(tensor_args(a, "broadcast_tensors")));
  });
  m.def(
      "meshgrid",
      [](py::args a, py::handle indexing) {
        std::string ix =
            indexing.is_none() ? "ij" : to_string(indexing.ptr(), "meshgrid", "indexing");
        return to_tuple(meshgrid(tensor_args(a, "meshgrid"), ix));
      },
      py::kw_only(), arg("indexing") = py::none());
  auto diff_fn = [](const Tensor& x, int64_t n, int64_t dim, std::optional<Tensor> prepend,
                    std::optional<Tensor> append) { return diff(x, n, dim, prepend, append); };
  m.def("diff", diff_fn, arg("input"), arg("n") = 1, arg("dim") = -1, arg("prepend") = py::none(),
        arg("append") = py::none());
  cls.def("diff", diff_fn, arg("n") = 1, arg("dim") = -1, arg("prepend") = py::none(),
          arg("append") = py::none());
  m.def("block_diag", [](py::args a) { return block_diag(tensor_args(a, "block_diag")); });
  m.def("cartesian_prod",
        [](py::args a) { return cartesian_prod(tensor_args(a, "cartesian_prod")); });
  m.def(
      "combinations", [](const Tensor& x, int64_t r, bool wr) { return combinations(x, r, wr); },
      arg("input"), arg("r") = 2, arg("with_replacement") = false);

  // ember._C._nn: the nn bindings add to it (nn.functional's pad and one_hot are in
  // nn_functional.cpp).
  m.def_submodule("_nn", "kernels behind ember.nn.functional");

  // ---- searching and counting ----
  m.def(
      "searchsorted",
      [](const Tensor& seq, py::handle input, bool out_int32, bool right,
         std::optional<std::string> side, py::handle out,
         std::optional<Tensor> sorter) -> py::object {
        bool scalar = false;
        Tensor v = tensor_or_number(input, "searchsorted", "input", &scalar);
        std::optional<std::string_view> sv;
        if (side) sv = *side;
        if (scalar)
          return wrap_obj(searchsorted(seq, to_scalar(input.ptr()), out_int32, right, sv, sorter));
        if (out.is_none()) return wrap_obj(searchsorted(seq, v, out_int32, right, sv, sorter));
        searchsorted_out(const_cast<Tensor&>(to_tensor(out.ptr(), "searchsorted", "out")), seq, v,
                         out_int32, right, sv, sorter);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("sorted_sequence"), arg("input"), py::kw_only(), arg("out_int32") = false,
      arg("right") = false, arg("side") = py::none(), arg("out") = py::none(),
      arg("sorter") = py::none());
  m.def(
      "bucketize",
      [](py::handle input, const Tensor& boundaries, bool out_int32, bool right,
         py::handle out) -> py::object {
        bool scalar = false;
        Tensor v = tensor_or_number(input, "bucketize", "input", &scalar);
        if (scalar)
          return wrap_obj(bucketize(to_scalar(input.ptr()), boundaries, out_int32, right));
        if (out.is_none()) return wrap_obj(bucketize(v, boundaries, out_int32, right));
        bucketize_out(const_cast<Tensor&>(to_tensor(out.ptr(), "bucketize", "out")), v, boundaries,
                      out_int32, right);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("boundaries"), py::kw_only(), arg("out_int32") = false,
      arg("right") = false, arg("out") = py::none());
  m.def(
      "histc",
      [](const Tensor& x, int64_t bins, const Scalar& lo, const Scalar& hi,
         py::handle out) -> py::object {
        if (out.is_none()) return wrap_obj(histc(x, bins, lo, hi));
        histc_out(const_cast<Tensor&>(to_tensor(out.ptr(), "histc", "out")), x, bins, lo, hi);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("bins") = 100, arg("min") = 0, arg("max") = 0, py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "histc",
      [](const Tensor& x, int64_t bins, const Scalar& lo, const Scalar& hi) {
        return histc(x, bins, lo, hi);
      },
      arg("bins") = 100, arg("min") = 0, arg("max") = 0);
  auto binc = [](const Tensor& x, std::optional<Tensor> w, int64_t minlength) {
    return bincount(x, w, minlength);
  };
  m.def("bincount", binc, arg("input"), arg("weights") = py::none(), arg("minlength") = 0);
  cls.def("bincount", binc, arg("weights") = py::none(), arg("minlength") = 0);
}

}  // namespace ember::python
