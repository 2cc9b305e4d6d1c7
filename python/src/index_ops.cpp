// index_select, gather/scatter, index_add/copy/fill, masked_*, nonzero, take, put, index_put:
// module functions (with out= where torch has it), Tensor methods and in-place forms.
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

Tensor& out_tensor(py::handle out, const char* fn) {
  return const_cast<Tensor&>(to_tensor(out.ptr(), fn, "out"));
}

/// Runs `f` (returning a new tensor) or `f_out` into `out`, returning the Python result.
template <class F, class G>
py::object with_out(py::handle out, int64_t work, F f, G f_out, const char* fn) {
  if (out.is_none()) return wrap_obj(maybe_without_gil(work, f));
  Tensor& o = out_tensor(out, fn);
  maybe_without_gil(work, [&] { return &f_out(o); });
  return py::reinterpret_borrow<py::object>(out);
}

/// A masked_fill/index_fill value as a 0-dim tensor, so a value that requires grad keeps it.
Tensor value_tensor(py::handle v, const char* fn) {
  if (is_tensor(v.ptr())) {
    const Tensor& t = unwrap(v.ptr());
    EMBER_CHECK(t.dim() == 0, "[", fn, "] ", fn,
                " only supports a 0-dimensional value tensor, "
                "but got tensor with ",
                t.dim(), " dimension(s).");
    return t;
  }
  return Tensor();
}

/// A scatter/masked_fill value: a number or a 0-dim tensor.
Scalar value_arg(py::handle v, const char* fn) {
  Tensor t = value_tensor(v, fn);
  return t.defined() ? t.item() : to_scalar(v.ptr(), fn, "value");
}

std::vector<std::optional<Tensor>> index_list(py::handle indices, const char* fn) {
  EMBER_CHECK_TYPE(PyList_Check(indices.ptr()) || PyTuple_Check(indices.ptr()), fn,
                   "(): argument 'indices' must be tuple of Tensors, not ",
                   Py_TYPE(indices.ptr())->tp_name);
  std::vector<std::optional<Tensor>> r;
  // As torch 1.13's Python binding, every entry must be a tensor (None is a TypeError).
  for (py::handle h : indices) {
    EMBER_CHECK_TYPE(is_tensor(h.ptr()), "expected Tensor as element ", r.size(),
                     " in argument 1, but got ", Py_TYPE(h.ptr())->tp_name);
    r.emplace_back(unwrap(h.ptr()));
  }
  return r;
}

py::object self_obj(py::handle self) { return py::reinterpret_borrow<py::object>(self); }

}  // namespace

void init_index_ops(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // index_select / gather / take / take_along_dim
  m.def(
      "index_select",
      [](const Tensor& x, int64_t dim, const Tensor& idx, py::handle out) {
        return with_out(
            out, idx.numel() * 64, [&] { return index_select(x, dim, idx); },
            [&](Tensor& o) -> Tensor& { return index_select_out(o, x, dim, idx); }, "index_select");
      },
      arg("input"), arg("dim"), arg("index"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "index_select",
      [](const Tensor& x, int64_t dim, const Tensor& idx) {
        return maybe_without_gil(idx.numel() * 64, [&] { return index_select(x, dim, idx); });
      },
      arg("dim"), arg("index"));
  m.def(
      "gather",
      [](const Tensor& x, int64_t dim, const Tensor& idx, bool sg, py::handle out) {
        return with_out(
            out, idx.numel(), [&] { return gather(x, dim, idx, sg); },
            [&](Tensor& o) -> Tensor& { return gather_out(o, x, dim, idx, sg); }, "gather");
      },
      arg("input"), arg("dim"), arg("index"), py::kw_only(), arg("sparse_grad") = false,
      arg("out") = py::none());
  cls.def(
      "gather",
      [](const Tensor& x, int64_t dim, const Tensor& idx, bool sg) {
        return maybe_without_gil(idx.numel(), [&] { return gather(x, dim, idx, sg); });
      },
      arg("dim"), arg("index"), py::kw_only(), arg("sparse_grad") = false);
  m.def(
      "take",
      [](const Tensor& x, const Tensor& idx, py::handle out) {
        return with_out(
            out, idx.numel(), [&] { return take(x, idx); },
            [&](Tensor& o) -> Tensor& { return take_out(o, x, idx); }, "take");
      },
      arg("input"), arg("index"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "take", [](const Tensor& x, const Tensor& idx) { return take(x, idx); }, arg("index"));
  m.def(
      "take_along_dim",
      [](const Tensor& x, const Tensor& idx, std::optional<int64_t> dim, py::handle out) {
        return with_out(
            out, idx.numel(), [&] { return take_along_dim(x, idx, dim); },
            [&](Tensor& o) -> Tensor& { return take_along_dim_out(o, x, idx, dim); },
            "take_along_dim");
      },
      arg("input"), arg("indices"), arg("dim") = py::none(), py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "take_along_dim",
      [](const Tensor& x, const Tensor& idx, std::optional<int64_t> dim) {
        return take_along_dim(x, idx, dim);
      },
      arg("indices"), arg("dim") = py::none());

  // scatter family
  auto scatter_any = [](Tensor& self, int64_t dim, const Tensor& idx, py::handle src,
                        std::optional<std::string> reduce) {
    const bool is_t = is_tensor(src.ptr());
    if (reduce) {
      if (is_t) {
        self.scatter_(dim, idx, unwrap(src.ptr()), *reduce);
      } else {
        self.scatter_(dim, idx, value_arg(src, "scatter"), *reduce);
      }
    } else if (is_t) {
      self.scatter_(dim, idx, unwrap(src.ptr()));
    } else {
      self.scatter_(dim, idx, value_arg(src, "scatter"));
    }
  };
  m.def(
      "scatter",
      [scatter_any](const Tensor& x, int64_t dim, const Tensor& idx, py::handle src,
                    py::handle value, std::optional<std::string> reduce, py::handle out) {
        py::handle s = src.is_none() ? value : src;
        EMBER_CHECK_TYPE(!s.is_none(), "scatter() missing required argument 'src' or 'value'");
        Tensor r = x.clone();
        scatter_any(r, dim, idx, s, reduce);
        if (out.is_none()) return wrap_obj(r);
        write_out(out_tensor(out, "scatter"), r, "scatter");
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("dim"), arg("index"), arg("src") = py::none(), py::kw_only(),
      arg("value") = py::none(), arg("reduce") = py::none(), arg("out") = py::none());
  cls.def(
      "scatter",
      [scatter_any](const Tensor& x, int64_t dim, const Tensor& idx, py::handle src,
                    py::handle value, std::optional<std::string> reduce) {
        py::handle s = src.is_none() ? value : src;
        EMBER_CHECK_TYPE(!s.is_none(), "scatter() missing required argument 'src' or 'value'");
        Tensor r = x.clone();
        scatter_any(r, dim, idx, s, reduce);
        return r;
      },
      arg("dim"), arg("index"), arg("src") = py::none(), py::kw_only(), arg("value") = py::none(),
      arg("reduce") = py::none());
  cls.def(
      "scatter_",
      [scatter_any](py::handle self, int64_t dim, const Tensor& idx, py::handle src,
                    py::handle value, std::optional<std::string> reduce) {
        py::handle s = src.is_none() ? value : src;
        EMBER_CHECK_TYPE(!s.is_none(), "scatter_() missing required argument 'src' or 'value'");
        scatter_any(unwrap(self.ptr()), dim, idx, s, reduce);
        return self_obj(self);
      },
      arg("dim"), arg("index"), arg("src") = py::none(), py::kw_only(), arg("value") = py::none(),
      arg("reduce") = py::none());
  m.def(
      "scatter_add",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src, py::handle out) {
        Tensor r = scatter_add(x, dim, idx, src);
        if (out.is_none()) return wrap_obj(r);
        write_out(out_tensor(out, "scatter_add"), r, "scatter_add");
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("dim"), arg("index"), arg("src"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "scatter_add",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src) {
        return scatter_add(x, dim, idx, src);
      },
      arg("dim"), arg("index"), arg("src"));
  cls.def(
      "scatter_add_",
      [](py::handle self, int64_t dim, const Tensor& idx, const Tensor& src) {
        unwrap(self.ptr()).scatter_add_(dim, idx, src);
        return self_obj(self);
      },
      arg("dim"), arg("index"), arg("src"));
  m.def(
      "scatter_reduce",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src,
         const std::string& reduce, bool include_self, py::handle out) {
        Tensor r = scatter_reduce(x, dim, idx, src, reduce, include_self);
        if (out.is_none()) return wrap_obj(r);
        write_out(out_tensor(out, "scatter_reduce"), r, "scatter_reduce");
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("dim"), arg("index"), arg("src"), arg("reduce"), py::kw_only(),
      arg("include_self") = true, arg("out") = py::none());
  cls.def(
      "scatter_reduce",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src,
         const std::string& reduce,
         bool include_self) { return scatter_reduce(x, dim, idx, src, reduce, include_self); },
      arg("dim"), arg("index"), arg("src"), arg("reduce"), py::kw_only(),
      arg("include_self") = true);
  cls.def(
      "scatter_reduce_",
      [](py::handle self, int64_t dim, const Tensor& idx, const Tensor& src,
         const std::string& reduce, bool include_self) {
        unwrap(self.ptr()).scatter_reduce_(dim, idx, src, reduce, include_self);
        return self_obj(self);
      },
      arg("dim"), arg("index"), arg("src"), arg("reduce"), py::kw_only(),
      arg("include_self") = true);

  // index_add / index_copy / index_fill
  m.def(
      "index_add",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src, const Scalar& alpha,
         py::handle out) {
        Tensor r = index_add(x, dim, idx, src, alpha);
        if (out.is_none()) return wrap_obj(r);
        write_out(out_tensor(out, "index_add"), r, "index_add");
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("dim"), arg("index"), arg("source"), py::kw_only(), arg("alpha") = 1,
      arg("out") = py::none());
  cls.def(
      "index_add",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src, const Scalar& alpha) {
        return index_add(x, dim, idx, src, alpha);
      },
      arg("dim"), arg("index"), arg("source"), py::kw_only(), arg("alpha") = 1);
  cls.def(
      "index_add_",
      [](py::handle self, int64_t dim, const Tensor& idx, const Tensor& src, const Scalar& alpha) {
        unwrap(self.ptr()).index_add_(dim, idx, src, alpha);
        return self_obj(self);
      },
      arg("dim"), arg("index"), arg("source"), py::kw_only(), arg("alpha") = 1);
  m.def(
      "index_copy",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src, py::handle out) {
        Tensor r = index_copy(x, dim, idx, src);
        if (out.is_none()) return wrap_obj(r);
        write_out(out_tensor(out, "index_copy"), r, "index_copy");
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("dim"), arg("index"), arg("source"), py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "index_copy",
      [](const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src) {
        return index_copy(x, dim, idx, src);
      },
      arg("dim"), arg("index"), arg("source"));
  cls.def(
      "index_copy_",
      [](py::handle self, int64_t dim, const Tensor& idx, const Tensor& src) {
        unwrap(self.ptr()).index_copy_(dim, idx, src);
        return self_obj(self);
      },
      arg("dim"), arg("index"), arg("source"));
  m.def(
      "index_fill",
      [](const Tensor& x, int64_t dim, const Tensor& idx, py::handle v) {
        Tensor t = value_tensor(v, "index_fill");
        return t.defined() ? index_fill(x, dim, idx, t)
                           : index_fill(x, dim, idx, value_arg(v, "index_fill"));
      },
      arg("input"), arg("dim"), arg("index"), arg("value"));
  cls.def(
      "index_fill",
      [](const Tensor& x, int64_t dim, const Tensor& idx, py::handle v) {
        Tensor t = value_tensor(v, "index_fill");
        return t.defined() ? index_fill(x, dim, idx, t)
                           : index_fill(x, dim, idx, value_arg(v, "index_fill"));
      },
      arg("dim"), arg("index"), arg("value"));
  cls.def(
      "index_fill_",
      [](py::handle self, int64_t dim, const Tensor& idx, py::handle v) {
        Tensor t = value_tensor(v, "index_fill_");
        if (t.defined())
          unwrap(self.ptr()).index_fill_(dim, idx, t);
        else
          unwrap(self.ptr()).index_fill_(dim, idx, value_arg(v, "index_fill_"));
        return self_obj(self);
      },
      arg("dim"), arg("index"), arg("value"));

  // masked_*
  m.def(
      "masked_fill",
      [](const Tensor& x, const Tensor& mask, py::handle v) {
        Tensor t = value_tensor(v, "masked_fill");
        return t.defined() ? masked_fill(x, mask, t)
                           : masked_fill(x, mask, value_arg(v, "masked_fill"));
      },
      arg("input"), arg("mask"), arg("value"));
  cls.def(
      "masked_fill",
      [](const Tensor& x, const Tensor& mask, py::handle v) {
        Tensor t = value_tensor(v, "masked_fill");
        return t.defined() ? masked_fill(x, mask, t)
                           : masked_fill(x, mask, value_arg(v, "masked_fill"));
      },
      arg("mask"), arg("value"));
  cls.def(
      "masked_fill_",
      [](py::handle self, const Tensor& mask, py::handle v) {
        Tensor t = value_tensor(v, "masked_fill_");
        if (t.defined())
          unwrap(self.ptr()).masked_fill_(mask, t);
        else
          unwrap(self.ptr()).masked_fill_(mask, value_arg(v, "masked_fill_"));
        return self_obj(self);
      },
      arg("mask"), arg("value"));
  m.def(
      "masked_select",
      [](const Tensor& x, const Tensor& mask, py::handle out) {
        return with_out(
            out, x.numel(), [&] { return masked_select(x, mask); },
            [&](Tensor& o) -> Tensor& { return masked_select_out(o, x, mask); }, "masked_select");
      },
      arg("input"), arg("mask"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "masked_select", [](const Tensor& x, const Tensor& mask) { return masked_select(x, mask); },
      arg("mask"));
  m.def(
      "masked_scatter",
      [](const Tensor& x, const Tensor& mask, const Tensor& src) {
        return masked_scatter(x, mask, src);
      },
      arg("input"), arg("mask"), arg("source"));
  cls.def(
      "masked_scatter",
      [](const Tensor& x, const Tensor& mask, const Tensor& src) {
        return masked_scatter(x, mask, src);
      },
      arg("mask"), arg("source"));
  cls.def(
      "masked_scatter_",
      [](py::handle self, const Tensor& mask, const Tensor& src) {
        unwrap(self.ptr()).masked_scatter_(mask, src);
        return self_obj(self);
      },
      arg("mask"), arg("source"));

  // nonzero / argwhere
  auto nonzero_py = [](const Tensor& x, py::handle out, bool as_tuple) -> py::object {
    if (as_tuple) {
      std::vector<Tensor> parts = nonzero_numpy(x);
      py::tuple t(parts.size());
      for (size_t i = 0; i < parts.size(); ++i) t[i] = wrap_obj(parts[i]);
      return std::move(t);
    }
    return with_out(
        out, x.numel(), [&] { return nonzero(x); },
        [&](Tensor& o) -> Tensor& { return nonzero_out(o, x); }, "nonzero");
  };
  m.def("nonzero", nonzero_py, arg("input"), py::kw_only(), arg("out") = py::none(),
        arg("as_tuple") = false);
  cls.def(
      "nonzero",
      [nonzero_py](const Tensor& x, bool as_tuple) { return nonzero_py(x, py::none(), as_tuple); },
      py::kw_only(), arg("as_tuple") = false);
  m.def(
      "argwhere", [](const Tensor& x) { return argwhere(x); }, arg("input"));
  cls.def("argwhere", [](const Tensor& x) { return argwhere(x); });

  // put / index_put
  m.def(
      "put",
      [](const Tensor& x, const Tensor& idx, const Tensor& src, bool acc) {
        return put(x, idx, src, acc);
      },
      arg("input"), arg("index"), arg("source"), arg("accumulate") = false);
  cls.def(
      "put",
      [](const Tensor& x, const Tensor& idx, const Tensor& src, bool acc) {
        return put(x, idx, src, acc);
      },
      arg("index"), arg("source"), arg("accumulate") = false);
  cls.def(
      "put_",
      [](py::handle self, const Tensor& idx, const Tensor& src, bool acc) {
        unwrap(self.ptr()).put_(idx, src, acc);
        return self_obj(self);
      },
      arg("index"), arg("source"), arg("accumulate") = false);
  m.def(
      "index_put",
      [](const Tensor& x, py::handle indices, const Tensor& v, bool acc) {
        auto ix = index_list(indices, "index_put");
        return maybe_without_gil(x.numel(), [&] { return index_put(x, ix, v, acc); });
      },
      arg("input"), arg("indices"), arg("values"), arg("accumulate") = false);
  cls.def(
      "index_put",
      [](const Tensor& x, py::handle indices, const Tensor& v, bool acc) {
        auto ix = index_list(indices, "index_put");
        return index_put(x, ix, v, acc);
      },
      arg("indices"), arg("values"), arg("accumulate") = false);
  auto index_put_py = [](py::handle self, py::handle indices, const Tensor& v, bool acc) {
    auto ix = index_list(indices, "index_put_");
    Tensor& t = unwrap(self.ptr());
    maybe_without_gil(v.numel(), [&] { return &index_put_(t, ix, v, acc); });
    return self_obj(self);
  };
  cls.def("index_put_", index_put_py, arg("indices"), arg("values"), arg("accumulate") = false);
  m.def("index_put_", index_put_py, arg("input"), arg("indices"), arg("values"),
        arg("accumulate") = false);
}

}  // namespace ember::python
