// Bindings of the C++ distributions (ember/distributions.h) as _C._distributions: thin classes
// with torch.distributions' method names. The Python package ember.distributions does not use
// them; they expose the C++ API to tests and scripts.
#include "ember/distributions.h"
#include "pyember.h"

namespace ember::python {

namespace {

namespace D = ember::distributions;

DimVector sample_shape(py::handle o, const char* fn) {
  if (o.is_none()) return {};
  return to_int_list(o.ptr(), fn, "sample_shape");
}

py::object size_of(IntArrayRef s) { return py::reinterpret_steal<py::object>(make_size(s)); }

}  // namespace

void init_distributions(py::module_& m) {
  using py::arg;
  py::module_ d = m.def_submodule("_distributions", "C++ probability distributions");

  py::class_<D::Distribution>(d, "Distribution")
      .def_property_readonly(
          "batch_shape", [](const D::Distribution& self) { return size_of(self.batch_shape()); })
      .def_property_readonly(
          "event_shape", [](const D::Distribution& self) { return size_of(self.event_shape()); })
      .def_property_readonly("has_rsample", &D::Distribution::has_rsample)
      .def(
          "sample",
          [](const D::Distribution& self, py::handle shape, py::handle gen) {
            return self.sample(sample_shape(shape, "sample"), to_generator(gen.ptr(), "sample"));
          },
          arg("sample_shape") = py::tuple(), py::kw_only(), arg("generator") = py::none())
      .def(
          "rsample",
          [](const D::Distribution& self, py::handle shape, py::handle gen) {
            return self.rsample(sample_shape(shape, "rsample"), to_generator(gen.ptr(), "rsample"));
          },
          arg("sample_shape") = py::tuple(), py::kw_only(), arg("generator") = py::none())
      .def("log_prob", &D::Distribution::log_prob, arg("value"))
      .def("entropy", &D::Distribution::entropy)
      .def_property_readonly("mean", &D::Distribution::mean)
      .def_property_readonly("variance", &D::Distribution::variance)
      .def_property_readonly("stddev", &D::Distribution::stddev);

  py::class_<D::Normal, D::Distribution>(d, "Normal")
      .def(py::init<const Tensor&, const Tensor&, bool>(), arg("loc"), arg("scale"),
           arg("validate_args") = true)
      .def_property_readonly("loc", &D::Normal::loc)
      .def_property_readonly("scale", &D::Normal::scale)
      .def("cdf", &D::Normal::cdf, arg("value"))
      .def("icdf", &D::Normal::icdf, arg("value"));
  py::class_<D::Uniform, D::Distribution>(d, "Uniform")
      .def(py::init<const Tensor&, const Tensor&, bool>(), arg("low"), arg("high"),
           arg("validate_args") = true)
      .def_property_readonly("low", &D::Uniform::low)
      .def_property_readonly("high", &D::Uniform::high);
  py::class_<D::Bernoulli, D::Distribution>(d, "Bernoulli")
      .def(py::init<const std::optional<Tensor>&, const std::optional<Tensor>&, bool>(),
           arg("probs") = py::none(), arg("logits") = py::none(), arg("validate_args") = true)
      .def_property_readonly("probs", &D::Bernoulli::probs)
      .def_property_readonly("logits", &D::Bernoulli::logits);
  py::class_<D::Categorical, D::Distribution>(d, "Categorical")
      .def(py::init<const std::optional<Tensor>&, const std::optional<Tensor>&, bool>(),
           arg("probs") = py::none(), arg("logits") = py::none(), arg("validate_args") = true)
      .def_property_readonly("probs", &D::Categorical::probs)
      .def_property_readonly("logits", &D::Categorical::logits)
      .def_property_readonly("num_events", &D::Categorical::num_events);
  py::class_<D::Poisson, D::Distribution>(d, "Poisson")
      .def(py::init<const Tensor&, bool>(), arg("rate"), arg("validate_args") = true)
      .def_property_readonly("rate", &D::Poisson::rate);
  py::class_<D::Gamma, D::Distribution>(d, "Gamma")
      .def(py::init<const Tensor&, const Tensor&, bool>(), arg("concentration"), arg("rate"),
           arg("validate_args") = true)
      .def_property_readonly("concentration", &D::Gamma::concentration)
      .def_property_readonly("rate", &D::Gamma::rate);
  py::class_<D::Dirichlet, D::Distribution>(d, "Dirichlet")
      .def(py::init<const Tensor&, bool>(), arg("concentration"), arg("validate_args") = true)
      .def_property_readonly("concentration", &D::Dirichlet::concentration);
  py::class_<D::MultivariateNormal, D::Distribution>(d, "MultivariateNormal")
      .def(py::init<const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
                    const std::optional<Tensor>&, bool>(),
           arg("loc"), arg("covariance_matrix") = py::none(), arg("precision_matrix") = py::none(),
           arg("scale_tril") = py::none(), arg("validate_args") = true)
      .def_property_readonly("loc", &D::MultivariateNormal::loc)
      .def_property_readonly("scale_tril", &D::MultivariateNormal::scale_tril)
      .def_property_readonly("covariance_matrix", &D::MultivariateNormal::covariance_matrix)
      .def_property_readonly("precision_matrix", &D::MultivariateNormal::precision_matrix);
}

}  // namespace ember::python
