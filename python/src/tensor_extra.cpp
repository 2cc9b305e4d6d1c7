// The binding of the remaining tensor ops (ember/tensor_extra.h): module functions with out=
// where torch has it, Tensor methods and in-place forms, and Tensor.__rdiv__.
#include "ember/tensor_extra.h"

#include "ember/tensor_impl.h"
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

/// Returns `result`, or writes it into the `out=` tensor and returns that.
py::object result_or_out(Tensor result, py::handle out, const char* op) {
  if (out.is_none()) return wrap_obj(std::move(result));
  write_out(const_cast<Tensor&>(to_tensor(out.ptr(), op, "out")), result, op);
  return py::reinterpret_borrow<py::object>(out);
}

/// `*sizes` or one sequence: x.sum_to_size(1, 4) or x.sum_to_size((1, 4)).
DimVector varargs_ints(const py::args& args, const char* fn, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return to_int_list(args[0].ptr(), fn, what);
  DimVector out;
  for (py::handle h : args) out.push_back(to_int(h.ptr(), fn, what));
  return out;
}

/// The parts of a split as a tuple of tensors (as torch returns them).
py::tuple to_tuple(const std::vector<Tensor>& parts) {
  py::tuple r(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) r[i] = wrap_obj(parts[i]);
  return r;
}

/// h/v/dsplit's indices_or_sections: an int (sections) or a sequence of ints (indices).
template <class FI, class FL>
py::tuple split_arg(py::handle h, const char* fn, FI by_sections, FL by_indices) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()))
    return to_tuple(by_sections(to_int(h.ptr(), fn, "sections")));
  EMBER_CHECK_TYPE(PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()), fn,
                   "(): argument 'indices_or_sections' must be int or tuple of ints, not ",
                   Py_TYPE(h.ptr())->tp_name);
  DimVector idx = to_int_list(h.ptr(), fn, "indices");
  return to_tuple(by_indices(IntArrayRef(idx)));
}

/// dtype / device / requires_grad keywords as TensorOptions.
TensorOptions factory_options(py::handle dtype, py::handle device, bool requires_grad,
                              const char* fn) {
  TensorOptions o;
  if (auto dt = to_dtype(dtype.ptr(), fn)) o = o.dtype(*dt);
  if (auto dev = to_device(device.ptr(), fn)) o = o.device(*dev);
  return o.requires_grad(requires_grad);
}

py::object randint_like_py(const py::args& args, const py::kwargs& kw) {
  const char* fn = "randint_like";
  py::object input, low, high;
  py::object dtype = py::none(), device = py::none(), memory_format = py::none();
  bool requires_grad = false;
  std::vector<py::object> pos;
  for (py::handle h : args) pos.push_back(py::reinterpret_borrow<py::object>(h));
  for (auto item : kw) {
    const std::string k = py::str(item.first);
    py::object v = py::reinterpret_borrow<py::object>(item.second);
    if (k == "input") {
      input = v;
    } else if (k == "low") {
      low = v;
    } else if (k == "high") {
      high = v;
    } else if (k == "dtype") {
      dtype = v;
    } else if (k == "device") {
      device = v;
    } else if (k == "requires_grad") {
      requires_grad = to_bool(v.ptr(), fn, "requires_grad");
    } else if (k == "memory_format") {
      memory_format = v;
    } else if (k != "layout" && k != "pin_memory") {
      type_error(std::string(fn) + "() got an unexpected keyword argument '" + k + "'");
    }
  }
  size_t p = 0;
  if (!input && p < pos.size()) input = pos[p++];
  // (input, high) or (input, low, high): a lone positional int is `high`.
  if (pos.size() - p == 2) {
    low = pos[p++];
    high = pos[p++];
  } else if (pos.size() - p == 1) {
    (high ? low : high) = pos[p++];
  }
  if (p != pos.size() || !input || !high) {
    type_error(
        "randint_like() received an invalid combination of arguments: expected (Tensor "
        "input, int high, ...) or (Tensor input, int low, int high, ...)");
  }
  const Tensor& x = to_tensor(input.ptr(), fn, "input");
  const int64_t lo = low ? to_int(low.ptr(), fn, "low") : 0;
  const int64_t hi = to_int(high.ptr(), fn, "high");
  TensorOptions o = factory_options(dtype, device, false, fn);
  Tensor t = randint_like(x, lo, hi, o);
  const MemoryFormat f = to_memory_format(memory_format.ptr(), fn);
  if (f != MemoryFormat::Preserve) t = copy_as(t, f);
  if (requires_grad) t.set_requires_grad(true);
  return wrap_obj(std::move(t));
}

}  // namespace

void init_tensor_extra(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // ---- renorm ----
  m.def(
      "renorm",
      [](const Tensor& x, const Scalar& p, int64_t dim, const Scalar& maxnorm, py::handle out) {
        return result_or_out(renorm(x, p, dim, maxnorm), out, "renorm");
      },
      arg("input"), arg("p"), arg("dim"), arg("maxnorm"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "renorm",
      [](const Tensor& x, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
        return renorm(x, p, dim, maxnorm);
      },
      arg("p"), arg("dim"), arg("maxnorm"));
  cls.def(
      "renorm_",
      [](py::handle self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
        unwrap(self.ptr()).renorm_(p, dim, maxnorm);
        return py::reinterpret_borrow<py::object>(self);
      },
      arg("p"), arg("dim"), arg("maxnorm"));

  // ---- index_reduce ----
  m.def(
      "index_reduce",
      [](const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
         const std::string& reduce, bool include_self, py::handle out) {
        Tensor r = maybe_without_gil(source.numel(), [&] {
          return index_reduce(x, dim, index, source, reduce, include_self);
        });
        return result_or_out(std::move(r), out, "index_reduce");
      },
      arg("input"), arg("dim"), arg("index"), arg("source"), arg("reduce"), py::kw_only(),
      arg("include_self") = true, arg("out") = py::none());
  cls.def(
      "index_reduce",
      [](const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
         const std::string& reduce, bool include_self) {
        return maybe_without_gil(source.numel(), [&] {
          return index_reduce(x, dim, index, source, reduce, include_self);
        });
      },
      arg("dim"), arg("index"), arg("source"), arg("reduce"), py::kw_only(),
      arg("include_self") = true);
  cls.def(
      "index_reduce_",
      [](py::handle self, int64_t dim, const Tensor& index, const Tensor& source,
         const std::string& reduce, bool include_self) {
        unwrap(self.ptr()).index_reduce_(dim, index, source, reduce, include_self);
        return py::reinterpret_borrow<py::object>(self);
      },
      arg("dim"), arg("index"), arg("source"), arg("reduce"), py::kw_only(),
      arg("include_self") = true);

  // ---- segment_reduce (torch.segment_reduce; _segment_reduce is ATen's name) ----
  auto seg = [](const Tensor& data, const std::string& reduce, std::optional<Tensor> lengths,
                std::optional<Tensor> indices, std::optional<Tensor> offsets, int64_t axis,
                bool unsafe, std::optional<Scalar> initial) {
    return maybe_without_gil(data.numel(), [&] {
      return segment_reduce(data, reduce, lengths, indices, offsets, axis, unsafe, initial);
    });
  };
  for (const char* name : {"segment_reduce", "_segment_reduce"}) {
    m.def(name, seg, arg("data"), arg("reduce"), py::kw_only(), arg("lengths") = py::none(),
          arg("indices") = py::none(), arg("offsets") = py::none(), arg("axis") = 0,
          arg("unsafe") = false, arg("initial") = py::none());
  }

  // ---- narrow_copy / rsub / fill ----
  m.def(
      "narrow_copy",
      [](const Tensor& x, int64_t dim, int64_t start, int64_t length, py::handle out) {
        return result_or_out(narrow_copy(x, dim, start, length), out, "narrow_copy");
      },
      arg("input"), arg("dim"), arg("start"), arg("length"), py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "narrow_copy",
      [](const Tensor& x, int64_t dim, int64_t start, int64_t length) {
        return narrow_copy(x, dim, start, length);
      },
      arg("dim"), arg("start"), arg("length"));
  m.def(
      "rsub",
      [](const Tensor& x, py::handle other, const Scalar& alpha) {
        if (is_tensor(other.ptr())) return rsub(x, unwrap(other.ptr()), alpha);
        return rsub(x, to_scalar(other.ptr(), "rsub", "other"), alpha);
      },
      arg("input"), arg("other"), py::kw_only(), arg("alpha") = 1);
  m.def(
      "fill",
      [](const Tensor& x, py::handle value) {
        if (is_tensor(value.ptr())) return fill(x, unwrap(value.ptr()));
        return fill(x, to_scalar(value.ptr(), "fill", "value"));
      },
      arg("input"), arg("value"));

  // ---- resize_ / resize_as_ / sum_to_size ----
  cls.def("resize_", [](py::handle self, const py::args& args, const py::kwargs& kw) {
    Tensor& t = unwrap(self.ptr());
    MemoryFormat f = MemoryFormat::Preserve;
    for (auto item : kw) {
      const std::string k = py::str(item.first);
      EMBER_CHECK_TYPE(k == "memory_format", "resize_() got an unexpected keyword argument '", k,
                       "'");
      f = to_memory_format(item.second.ptr(), "resize_");
    }
    DimVector size = varargs_ints(args, "resize_", "size");
    t.resize_(size);
    if (f == MemoryFormat::ChannelsLast || f == MemoryFormat::ChannelsLast3d) {
      // A dense permutation of the contiguous layout: the same storage suffices.
      DimVector st = format_strides(size, f);
      TensorImpl* impl = t.unsafeGetTensorImpl();
      impl->set_sizes_and_strides(size, st, impl->storage_offset());
    }
    return py::reinterpret_borrow<py::object>(self);
  });
  cls.def(
      "resize_as_",
      [](py::handle self, const Tensor& other, py::handle memory_format) {
        (void)to_memory_format(memory_format.ptr(), "resize_as_");
        unwrap(self.ptr()).resize_as_(other);
        return py::reinterpret_borrow<py::object>(self);
      },
      arg("the_template"), py::kw_only(), arg("memory_format") = py::none());
  cls.def("sum_to_size", [](const Tensor& x, const py::args& args) {
    EMBER_CHECK_TYPE(args.size() > 0,
                     "sum_to_size() missing 1 required positional arguments: ", "\"size\"");
    return sum_to_size(x, varargs_ints(args, "sum_to_size", "size"));
  });

  // ---- as_strided_scatter ----
  m.def(
      "as_strided_scatter",
      [](const Tensor& x, const Tensor& src, py::handle size, py::handle stride,
         std::optional<int64_t> offset) {
        return as_strided_scatter(x, src, to_int_list(size.ptr(), "as_strided_scatter", "size"),
                                  to_int_list(stride.ptr(), "as_strided_scatter", "stride"),
                                  offset);
      },
      arg("input"), arg("src"), arg("size"), arg("stride"), arg("storage_offset") = py::none());
  cls.def(
      "as_strided_scatter",
      [](const Tensor& x, const Tensor& src, py::handle size, py::handle stride,
         std::optional<int64_t> offset) {
        return as_strided_scatter(x, src, to_int_list(size.ptr(), "as_strided_scatter", "size"),
                                  to_int_list(stride.ptr(), "as_strided_scatter", "stride"),
                                  offset);
      },
      arg("src"), arg("size"), arg("stride"), arg("storage_offset") = py::none());

  // ---- hsplit / vsplit / dsplit ----
#define EMBER_BIND_SPLIT(name)                                                            \
  m.def(                                                                                  \
      #name,                                                                              \
      [](const Tensor& x, py::handle ios) {                                               \
        return split_arg(                                                                 \
            ios, #name, [&](int64_t s) { return name(x, s); },                            \
            [&](IntArrayRef i) { return name(x, i); });                                   \
      },                                                                                  \
      arg("input"), arg("indices_or_sections"));                                          \
  cls.def(#name, [](const Tensor& x, const py::args& args) {                              \
    EMBER_CHECK_TYPE(args.size() >= 1, #name, "() missing required argument 'sections'"); \
    if (args.size() == 1) {                                                               \
      return split_arg(                                                                   \
          args[0], #name, [&](int64_t s) { return name(x, s); },                          \
          [&](IntArrayRef i) { return name(x, i); });                                     \
    }                                                                                     \
    DimVector idx = varargs_ints(args, #name, "indices");                                 \
    return to_tuple(name(x, IntArrayRef(idx)));                                           \
  });
  EMBER_BIND_SPLIT(hsplit)
  EMBER_BIND_SPLIT(vsplit)
  EMBER_BIND_SPLIT(dsplit)
#undef EMBER_BIND_SPLIT

  // ---- new_empty_strided / randint_like ----
  cls.def(
      "new_empty_strided",
      [](const Tensor& x, py::handle size, py::handle stride, py::handle dtype, py::handle layout,
         py::handle device, bool requires_grad, bool pin_memory) {
        (void)layout;
        (void)pin_memory;
        TensorOptions o = factory_options(dtype, device, requires_grad, "new_empty_strided");
        return new_empty_strided(x, to_int_list(size.ptr(), "new_empty_strided", "size"),
                                 to_int_list(stride.ptr(), "new_empty_strided", "stride"), o);
      },
      arg("size"), arg("stride"), py::kw_only(), arg("dtype") = py::none(),
      arg("layout") = py::none(), arg("device") = py::none(), arg("requires_grad") = false,
      arg("pin_memory") = false);
  m.def("randint_like", &randint_like_py);

  // Python 2's name of the reflected division, which torch keeps on Tensor.
  cls.attr("__rdiv__") = cls.attr("__rtruediv__");
}

}  // namespace ember::python
