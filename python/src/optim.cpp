// The binding of multi-tensor optimizer steps (ember._C._optim). ember.optim's classes keep
// their state as torch's do (0-dim float32 `step` tensors); these entry points increment the
// step tensors and run the group's update in one fused call with the GIL released.
#include "ember/optim/functional.h"
#include "pyember.h"

namespace ember::python {
namespace {

using TensorList = std::vector<Tensor>;
using OptTensorList = std::vector<std::optional<Tensor>>;

// step_t += 1 for each step tensor (as torch's optimizers do), returning the new values.
std::vector<double> bump_steps(const TensorList& steps) {
  NoGradGuard no_grad;
  std::vector<double> out;
  out.reserve(steps.size());
  for (Tensor t : steps) {
    EMBER_CHECK(t.defined() && t.numel() == 1, "[_optim] step counters must be 1-element tensors");
    t.add_(Scalar(1));
    out.push_back(t.item<double>());
  }
  return out;
}

int64_t total_numel(const TensorList& ps) {
  int64_t n = 0;
  for (const Tensor& p : ps) n += p.defined() ? p.numel() : 0;
  return n;
}

template <class F>
void run(const TensorList& params, F&& f) {
  if (release_gil_for(total_numel(params))) {
    py::gil_scoped_release nogil;
    f();
  } else {
    f();
  }
}

}  // namespace

void init_optim(py::module_& m) {
  auto o = m.def_submodule("_optim", "Fused multi-tensor optimizer steps");
  o.def(
      "adam_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
         const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
         const TensorList& state_steps, double lr, double beta1, double beta2, double eps,
         double weight_decay, bool amsgrad, bool maximize, bool decoupled) {
        std::vector<double> steps = bump_steps(state_steps);
        run(params, [&] {
          optim::functional::adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                                       lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
                                       decoupled);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"),
      py::arg("max_exp_avg_sqs"), py::arg("state_steps"), py::kw_only(), py::arg("lr"),
      py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("amsgrad"), py::arg("maximize"), py::arg("decoupled") = false,
      "Adam/AdamW step of a parameter group; increments state_steps");
  o.def(
      "sgd_step",
      [](const TensorList& params, const TensorList& grads, const OptTensorList& bufs_in, double lr,
         double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
        TensorList bufs;
        for (const auto& b : bufs_in) bufs.push_back(b ? *b : Tensor());
        if (momentum == 0) bufs.clear();
        run(params, [&] {
          optim::functional::sgd_step(params, grads, bufs, lr, momentum, dampening, weight_decay,
                                      nesterov, maximize);
        });
        OptTensorList out;
        for (size_t i = 0; i < params.size(); ++i)
          out.push_back(i < bufs.size() && bufs[i].defined() ? std::optional<Tensor>(bufs[i])
                                                             : std::nullopt);
        return out;
      },
      py::arg("params"), py::arg("grads"), py::arg("momentum_buffer_list"), py::kw_only(),
      py::arg("lr"), py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"),
      py::arg("nesterov"), py::arg("maximize"),
      "SGD step of a parameter group; returns the momentum buffers (created on first use)");
  o.def(
      "adagrad_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& state_sums,
         const TensorList& state_steps, double lr, double weight_decay, double lr_decay, double eps,
         bool maximize) {
        std::vector<double> steps = bump_steps(state_steps);
        run(params, [&] {
          optim::functional::adagrad_step(params, grads, state_sums, steps, lr, weight_decay,
                                          lr_decay, eps, maximize);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("state_sums"), py::arg("state_steps"),
      py::kw_only(), py::arg("lr"), py::arg("weight_decay"), py::arg("lr_decay"), py::arg("eps"),
      py::arg("maximize"), "Adagrad step of a parameter group; increments state_steps");
  o.def(
      "rmsprop_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
         const TensorList& grad_avgs, const TensorList& momentum_buffers, double lr, double alpha,
         double eps, double weight_decay, double momentum, bool centered, bool maximize) {
        run(params, [&] {
          optim::functional::rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers,
                                          lr, alpha, eps, weight_decay, momentum, centered,
                                          maximize);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("grad_avgs"),
      py::arg("momentum_buffer_list"), py::kw_only(), py::arg("lr"), py::arg("alpha"),
      py::arg("eps"), py::arg("weight_decay"), py::arg("momentum"), py::arg("centered"),
      py::arg("maximize"), "RMSprop step of a parameter group");
  o.def(
      "adadelta_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
         const TensorList& acc_deltas, double lr, double rho, double eps, double weight_decay,
         bool maximize) {
        run(params, [&] {
          optim::functional::adadelta_step(params, grads, square_avgs, acc_deltas, lr, rho, eps,
                                           weight_decay, maximize);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("acc_deltas"),
      py::kw_only(), py::arg("lr"), py::arg("rho"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("maximize"), "Adadelta step of a parameter group");
  o.def(
      "adamax_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
         const TensorList& exp_infs, const TensorList& state_steps, double lr, double beta1,
         double beta2, double eps, double weight_decay, bool maximize) {
        std::vector<double> steps = bump_steps(state_steps);
        run(params, [&] {
          optim::functional::adamax_step(params, grads, exp_avgs, exp_infs, steps, lr, beta1, beta2,
                                         eps, weight_decay, maximize);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_infs"),
      py::arg("state_steps"), py::kw_only(), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
      py::arg("eps"), py::arg("weight_decay"), py::arg("maximize"),
      "Adamax step of a parameter group; increments state_steps");
  o.def(
      "nadam_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
         const TensorList& exp_avg_sqs, const TensorList& mu_products,
         const TensorList& state_steps, double lr, double beta1, double beta2, double eps,
         double weight_decay, double momentum_decay, bool maximize) {
        std::vector<double> steps = bump_steps(state_steps);
        std::vector<double> mu;
        for (const Tensor& t : mu_products) mu.push_back(t.item<double>());
        run(params, [&] {
          optim::functional::nadam_step(params, grads, exp_avgs, exp_avg_sqs, mu, steps, lr, beta1,
                                        beta2, eps, weight_decay, momentum_decay, maximize);
        });
        NoGradGuard no_grad;
        for (size_t i = 0; i < mu_products.size(); ++i) {
          Tensor t = mu_products[i];
          t.fill_(Scalar(mu[i]));
        }
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"),
      py::arg("mu_products"), py::arg("state_steps"), py::kw_only(), py::arg("lr"),
      py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("momentum_decay"), py::arg("maximize") = false,
      "NAdam step of a parameter group; increments state_steps, updates mu_products");
  o.def(
      "radam_step",
      [](const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
         const TensorList& exp_avg_sqs, const TensorList& state_steps, double lr, double beta1,
         double beta2, double eps, double weight_decay, bool maximize) {
        std::vector<double> steps = bump_steps(state_steps);
        run(params, [&] {
          optim::functional::radam_step(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1,
                                        beta2, eps, weight_decay, maximize);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"),
      py::arg("state_steps"), py::kw_only(), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
      py::arg("eps"), py::arg("weight_decay"), py::arg("maximize") = false,
      "RAdam step of a parameter group; increments state_steps");
}

}  // namespace ember::python
