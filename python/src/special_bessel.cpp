// The binding of torch.special: the Bessel, Airy, error and normal functions, as fast calls
// f(input, *, out=None) in the _C._special submodule under torch.special's names.
#include <utility>

#include "ember/special.h"
#include "pyember.h"

namespace ember::python {

namespace {

struct SpecialUnary {
  const char* name;
  Tensor (*fn)(const Tensor&);
  Tensor& (*out)(Tensor&, const Tensor&);
};

Tensor& i0_out_fn(Tensor& out, const Tensor& x) { return ember::i0_out(out, x); }

const SpecialUnary kOps[] = {
#define EMBER_ROW(n) {#n, &ember::special::n, &ember::special::n##_out},
    EMBER_ROW(i0e) EMBER_ROW(i1) EMBER_ROW(i1e) EMBER_ROW(ndtr) EMBER_ROW(ndtri) EMBER_ROW(log_ndtr)
        EMBER_ROW(erfcx) EMBER_ROW(bessel_j0) EMBER_ROW(bessel_j1) EMBER_ROW(bessel_y0)
            EMBER_ROW(bessel_y1) EMBER_ROW(modified_bessel_i0) EMBER_ROW(modified_bessel_i1)
                EMBER_ROW(modified_bessel_k0) EMBER_ROW(modified_bessel_k1)
                    EMBER_ROW(scaled_modified_bessel_k0) EMBER_ROW(scaled_modified_bessel_k1)
                        EMBER_ROW(spherical_bessel_j0) EMBER_ROW(airy_ai)
#undef EMBER_ROW
                            {"i0", &ember::special::i0, &i0_out_fn},
};
constexpr int kNumOps = int(sizeof(kOps) / sizeof(kOps[0]));

const Params& params(int i) {
  static std::vector<Params> v = [] {
    std::vector<Params> r;
    for (const SpecialUnary& op : kOps)
      r.emplace_back(op.name, std::initializer_list<const char*>{"input", "*", "out"});
    return r;
  }();
  return v[size_t(i)];
}

template <int I>
PyObject* special_unary(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  const SpecialUnary& op = kOps[I];
  PyObject* a[2] = {};
  params(I).parse(args, nargs, kwnames, a, 1);
  const Tensor& x = to_tensor(a[0], op.name, "input");
  if (a[1] && a[1] != Py_None) {
    Tensor& o = const_cast<Tensor&>(to_tensor(a[1], op.name, "out"));
    maybe_without_gil(x.numel(), [&] { return &op.out(o, x); });
    return return_self(a[1]);
  }
  return wrap(maybe_without_gil(x.numel(), [&] { return op.fn(x); }));
  EMBER_PY_END
}

template <int... I>
void register_all(py::module_& m, std::integer_sequence<int, I...>) {
  static FastFn fns[] = {special_unary<I>...};
  for (int i = 0; i < kNumOps; ++i) add_function(m, new_method_def(kOps[i].name, fns[i]));
}

}  // namespace

void init_special_bessel(py::module_& m) {
  py::module_ sp = m.attr("_special").cast<py::module_>();
  register_all(sp, std::make_integer_sequence<int, kNumOps>{});
}

}  // namespace ember::python
