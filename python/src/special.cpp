// The binding of torch.special's remaining functions into `_C._special` (entr, xlog1py, zeta,
// the orthogonal polynomials), and of frexp / ldexp on `_C` with their Tensor methods. The new
// list ops (sinc, logaddexp, gcd, igamma, ...) are bound with their families in elementwise.cpp.
#include "ember/special.h"
#include "ember/float_bits.h"
#include "ops/elementwise/elementwise_core.h"
#include "pyember.h"

namespace ember::python {

namespace {

using py::arg;

/// Returns `fn(nullptr)`, or writes through `fn(&out)` and returns the out object itself.
template <class F>
py::object with_out(py::handle out, const char* op, int64_t numel, F&& fn) {
  if (out.is_none()) return wrap_obj(maybe_without_gil(numel, [&] { return fn(nullptr); }));
  Tensor& o = const_cast<Tensor&>(to_tensor(out.ptr(), op, "out"));
  maybe_without_gil(numel, [&] {
    fn(&o);
    return 0;
  });
  return py::reinterpret_borrow<py::object>(out);
}

const Tensor& tensor_arg(py::handle h, const char* fn, const char* name, int pos) {
  EMBER_CHECK_TYPE(is_tensor(h.ptr()), fn, "(): argument '", name, "' (position ", pos,
                   ") must be Tensor, not ", Py_TYPE(h.ptr())->tp_name);
  return unwrap(h.ptr());
}

/// One operand of a binary special function: a tensor or a Python number.
struct Operand {
  const Tensor* t = nullptr;
  Scalar s;
  Tensor as_tensor() const { return t ? *t : wrap_scalar(s); }
};

Operand operand(py::handle h, const char* fn, const char* name, int pos) {
  TensorOrScalar ts;
  EMBER_CHECK_TYPE(to_tensor_or_scalar(h.ptr(), ts), fn, "(): argument '", name, "' (position ",
                   pos, ") must be Tensor or Number, not ", Py_TYPE(h.ptr())->tp_name);
  Operand r;
  r.t = ts.tensor;
  r.s = ts.scalar;
  return r;
}

using UnaryFn = Tensor (*)(const Tensor&);
using UnaryOutFn = Tensor& (*)(Tensor&, const Tensor&);
using BinaryTT = Tensor (*)(const Tensor&, const Tensor&);
using BinaryTS = Tensor (*)(const Tensor&, const Scalar&);
using BinaryST = Tensor (*)(const Scalar&, const Tensor&);
using BinaryOut = Tensor& (*)(Tensor&, const Tensor&, const Tensor&);

struct BinarySpecial {
  const char* name;
  const char* other;  // the second argument's name
  BinaryTT tt;
  BinaryTS ts;
  BinaryST st;
  BinaryOut out;
};

#define EMBER_SPECIAL_BINARY_ROW(fn, other)                                                   \
  BinarySpecial {                                                                             \
#fn, other, static_cast < BinaryTT>(&special::fn), static_cast < BinaryTS>(&special::fn), \
        static_cast < BinaryST>(&special::fn), &special::fn##_out                             \
  }
const BinarySpecial kBinary[] = {
    EMBER_SPECIAL_BINARY_ROW(xlog1py, "other"),
    EMBER_SPECIAL_BINARY_ROW(zeta, "other"),
    EMBER_SPECIAL_BINARY_ROW(chebyshev_polynomial_t, "n"),
    EMBER_SPECIAL_BINARY_ROW(chebyshev_polynomial_u, "n"),
    EMBER_SPECIAL_BINARY_ROW(chebyshev_polynomial_v, "n"),
    EMBER_SPECIAL_BINARY_ROW(chebyshev_polynomial_w, "n"),
    EMBER_SPECIAL_BINARY_ROW(shifted_chebyshev_polynomial_t, "n"),
    EMBER_SPECIAL_BINARY_ROW(shifted_chebyshev_polynomial_u, "n"),
    EMBER_SPECIAL_BINARY_ROW(shifted_chebyshev_polynomial_v, "n"),
    EMBER_SPECIAL_BINARY_ROW(shifted_chebyshev_polynomial_w, "n"),
    EMBER_SPECIAL_BINARY_ROW(hermite_polynomial_h, "n"),
    EMBER_SPECIAL_BINARY_ROW(hermite_polynomial_he, "n"),
    EMBER_SPECIAL_BINARY_ROW(laguerre_polynomial_l, "n"),
    EMBER_SPECIAL_BINARY_ROW(legendre_polynomial_p, "n"),
};
#undef EMBER_SPECIAL_BINARY_ROW

py::object call_binary(const BinarySpecial& f, py::handle a, py::handle b, py::handle out) {
  Operand x = operand(a, f.name, "input", 1), y = operand(b, f.name, f.other, 2);
  EMBER_CHECK_TYPE(x.t || y.t, f.name, "(): at least one of the arguments must be a Tensor");
  int64_t numel = std::max(x.t ? x.t->numel() : 1, y.t ? y.t->numel() : 1);
  return with_out(out, f.name, numel, [&](Tensor* o) -> Tensor {
    if (o) return f.out(*o, x.as_tensor(), y.as_tensor());
    if (x.t && y.t) return f.tt(*x.t, *y.t);
    if (x.t) return f.ts(*x.t, y.s);
    return f.st(x.s, *y.t);
  });
}

// ---- frexp / ldexp ----

py::object frexp_call(py::handle input, py::handle out) {
  const Tensor& x = tensor_arg(input, "frexp", "input", 1);
  if (out.is_none()) {
    auto [m, e] = maybe_without_gil(x.numel(), [&] { return ember::frexp(x); });
    return return_type("frexp", py::make_tuple(wrap_obj(m), wrap_obj(e)));
  }
  py::sequence outs = py::reinterpret_borrow<py::sequence>(out);
  EMBER_CHECK_TYPE(py::isinstance<py::sequence>(out) && py::len(outs) == 2,
                   "frexp(): argument 'out' must be a tuple of 2 Tensors");
  Tensor& m = const_cast<Tensor&>(to_tensor(outs[0].ptr(), "frexp", "out"));
  Tensor& e = const_cast<Tensor&>(to_tensor(outs[1].ptr(), "frexp", "out"));
  maybe_without_gil(x.numel(), [&] {
    ember::frexp_out(m, e, x);
    return 0;
  });
  return return_type("frexp", py::make_tuple(outs[0], outs[1]));
}

py::object ldexp_call(py::handle input, py::handle other, py::handle out) {
  const Tensor& x = tensor_arg(input, "ldexp", "input", 1);
  const Tensor& y = tensor_arg(other, "ldexp", "other", 2);
  return with_out(out, "ldexp", x.numel(), [&](Tensor* o) -> Tensor {
    return o ? ember::ldexp_out(*o, x, y) : ember::ldexp(x, y);
  });
}

}  // namespace

void init_special(py::module_& m) {
  py::module_ s = m.attr("_special");
  s.def(
      "entr",
      [](py::handle input, py::handle out) {
        const Tensor& x = tensor_arg(input, "entr", "input", 1);
        return with_out(out, "entr", x.numel(), [&](Tensor* o) -> Tensor {
          return o ? special::entr_out(*o, x) : special::entr(x);
        });
      },
      arg("input"), py::kw_only(), arg("out") = py::none(),
      "-x log(x) elementwise: 0 at 0, -inf for x < 0.");
  for (const BinarySpecial& f : kBinary) {
    s.def(
        f.name,
        [&f](py::handle a, py::handle b, py::handle out) { return call_binary(f, a, b, out); },
        arg("input"), arg(f.other), py::kw_only(), arg("out") = py::none());
  }

  m.def("frexp", &frexp_call, arg("input"), py::kw_only(), arg("out") = py::none(),
        "Mantissa in [0.5, 1) and int32 exponent with input = mantissa * 2^exponent.");
  m.def("ldexp", &ldexp_call, arg("input"), arg("other"), py::kw_only(), arg("out") = py::none(),
        "input * 2^other.");

  py::object T = m.attr("Tensor");
  T.attr("frexp") = py::cpp_function([](py::handle self) { return frexp_call(self, py::none()); },
                                     py::is_method(T), py::name("frexp"));
  T.attr("ldexp") = py::cpp_function(
      [](py::handle self, py::handle other) { return ldexp_call(self, other, py::none()); },
      py::is_method(T), py::name("ldexp"), arg("other"));
  T.attr("ldexp_") = py::cpp_function(
      [](py::handle self, py::handle other) {
        Tensor& x = unwrap(self.ptr());
        const Tensor& y = tensor_arg(other, "ldexp_", "other", 1);
        maybe_without_gil(x.numel(), [&] { return &x.ldexp_(y); });
        return py::reinterpret_borrow<py::object>(self);
      },
      py::is_method(T), py::name("ldexp_"), arg("other"));
}

}  // namespace ember::python
