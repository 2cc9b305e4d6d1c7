// unique / unique_consecutive. As torch.unique, the result is the tensor alone or a tuple of it
// with the requested inverse indices and counts, in that order.
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

py::object select(std::tuple<Tensor, Tensor, Tensor> r, bool inverse, bool counts) {
  py::object out = wrap_obj(std::move(std::get<0>(r)));
  if (!inverse && !counts) return out;
  if (inverse && counts)
    return py::make_tuple(out, wrap_obj(std::move(std::get<1>(r))),
                          wrap_obj(std::move(std::get<2>(r))));
  return py::make_tuple(out, wrap_obj(std::move(inverse ? std::get<1>(r) : std::get<2>(r))));
}

std::optional<int64_t> opt_dim(py::handle dim, const char* fn) {
  if (dim.is_none()) return std::nullopt;
  return to_int(dim.ptr(), fn, "dim");
}

py::object unique_call(const Tensor& x, bool sorted, bool inverse, bool counts, py::handle dim) {
  auto d = opt_dim(dim, "unique");
  auto r = maybe_without_gil(x.numel(), [&] {
    return d ? unique_dim(x, *d, sorted, inverse, counts) : _unique2(x, sorted, inverse, counts);
  });
  return select(std::move(r), inverse, counts);
}

py::object consecutive_call(const Tensor& x, bool inverse, bool counts, py::handle dim) {
  auto d = opt_dim(dim, "unique_consecutive");
  auto r = maybe_without_gil(x.numel(), [&] { return unique_consecutive(x, inverse, counts, d); });
  return select(std::move(r), inverse, counts);
}

}  // namespace

void init_unique(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  m.def("unique", &unique_call, arg("input"), arg("sorted") = true, arg("return_inverse") = false,
        arg("return_counts") = false, arg("dim") = py::none());
  cls.def("unique", &unique_call, arg("sorted") = true, arg("return_inverse") = false,
          arg("return_counts") = false, arg("dim") = py::none());
  m.def("unique_consecutive", &consecutive_call, arg("input"), arg("return_inverse") = false,
        arg("return_counts") = false, arg("dim") = py::none());
  cls.def("unique_consecutive", &consecutive_call, arg("return_inverse") = false,
          arg("return_counts") = false, arg("dim") = py::none());
  // The primitive behind unique, returning all three tensors (unrequested ones empty).
  m.def(
      "_unique2",
      [](const Tensor& x, bool sorted, bool inverse, bool counts) {
        auto r = maybe_without_gil(x.numel(), [&] { return _unique2(x, sorted, inverse, counts); });
        return py::make_tuple(wrap_obj(std::move(std::get<0>(r))),
                              wrap_obj(std::move(std::get<1>(r))),
                              wrap_obj(std::move(std::get<2>(r))));
      },
      arg("input"), arg("sorted") = true, arg("return_inverse") = false,
      arg("return_counts") = false);
}

}  // namespace ember::python
