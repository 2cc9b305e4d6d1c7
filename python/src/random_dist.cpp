// Bindings of the gamma-family functions with an integer parameter (polygamma, mvlgamma) and of
// the distribution samplers (random.h): _standard_gamma, _sample_dirichlet, poisson, binomial
// and the reparameterisation gradients. lgamma and digamma come with the unary family.
#include "ember/random.h"
#include "pyember.h"

namespace ember::python {

namespace {

/// `fn()` as a new tensor, or written into the `out=` tensor (returned).
template <class F>
py::object result_or_out(const Tensor& x, py::handle out, const char* op, F&& fn) {
  if (!out.is_none()) {
    Tensor& o = const_cast<Tensor&>(to_tensor(out.ptr(), op, "out"));
    maybe_without_gil(x.numel(), [&] {
      write_out(o, fn(), op);
      return 0;
    });
    return py::reinterpret_borrow<py::object>(out);
  }
  return wrap_obj(maybe_without_gil(x.numel(), std::forward<F>(fn)));
}

}  // namespace

void init_random_dist(py::module_& m) {
  using py::arg;
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));
  auto self_obj = [](py::handle s) { return py::reinterpret_borrow<py::object>(s); };

  m.def(
      "polygamma",
      [](int64_t n, const Tensor& x, py::handle out) {
        return result_or_out(x, out, "polygamma", [&] { return ember::polygamma(n, x); });
      },
      arg("n"), arg("input"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "polygamma",
      [](const Tensor& x, int64_t n) {
        return maybe_without_gil(x.numel(), [&] { return x.polygamma(n); });
      },
      arg("n"));
  cls.def(
      "polygamma_",
      [self_obj](py::handle s, int64_t n) {
        Tensor& x = unwrap(s.ptr());
        maybe_without_gil(x.numel(), [&] { return &x.polygamma_(n); });
        return self_obj(s);
      },
      arg("n"));
  m.def(
      "mvlgamma",
      [](const Tensor& x, int64_t p, py::handle out) {
        return result_or_out(x, out, "mvlgamma", [&] { return ember::mvlgamma(x, p); });
      },
      arg("input"), arg("p"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "mvlgamma",
      [](const Tensor& x, int64_t p) {
        return maybe_without_gil(x.numel(), [&] { return x.mvlgamma(p); });
      },
      arg("p"));
  cls.def(
      "mvlgamma_",
      [self_obj](py::handle s, int64_t p) {
        Tensor& x = unwrap(s.ptr());
        maybe_without_gil(x.numel(), [&] { return &x.mvlgamma_(p); });
        return self_obj(s);
      },
      arg("p"));

  m.def(
      "_standard_gamma",
      [](const Tensor& alpha, py::handle gen) {
        auto g = to_generator(gen.ptr(), "_standard_gamma");
        return maybe_without_gil(alpha.numel(), [&] { return _standard_gamma(alpha, g); });
      },
      arg("input"), arg("generator") = py::none());
  m.def(
      "_standard_gamma_grad",
      [](const Tensor& self, const Tensor& output) {
        return maybe_without_gil(self.numel(), [&] { return _standard_gamma_grad(self, output); });
      },
      arg("input"), arg("output"));
  m.def(
      "_sample_dirichlet",
      [](const Tensor& alpha, py::handle gen) {
        auto g = to_generator(gen.ptr(), "_sample_dirichlet");
        return maybe_without_gil(alpha.numel(), [&] { return _sample_dirichlet(alpha, g); });
      },
      arg("input"), arg("generator") = py::none());
  m.def(
      "_dirichlet_grad",
      [](const Tensor& x, const Tensor& alpha, const Tensor& total) {
        return maybe_without_gil(x.numel(), [&] { return _dirichlet_grad(x, alpha, total); });
      },
      arg("x"), arg("alpha"), arg("total"));
  m.def(
      "poisson",
      [](const Tensor& rates, py::handle gen) {
        auto g = to_generator(gen.ptr(), "poisson");
        return maybe_without_gil(rates.numel(), [&] { return poisson(rates, g); });
      },
      arg("input"), arg("generator") = py::none());
  m.def(
      "binomial",
      [](const Tensor& count, const Tensor& prob, py::handle gen) {
        auto g = to_generator(gen.ptr(), "binomial");
        return maybe_without_gil(count.numel(), [&] { return binomial(count, prob, g); });
      },
      arg("count"), arg("prob"), arg("generator") = py::none());
}

}  // namespace ember::python
