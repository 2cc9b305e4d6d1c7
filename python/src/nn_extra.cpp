// The binding of grid_sample, affine_grid and fractional max pooling (_C._nn.functional, with
// the raw ops on _C and _C._nn as torch has them) and of the native ops native_batch_norm,
// native_layer_norm and constant_pad_nd (on _C).
#include "ember/factory.h"
#include "ember/linalg_extra.h"
#include "ember/nn/functional/sampling.h"
#include "ember/nn_ops.h"
#include "ember/shape_ops.h"
#include "ember/stats.h"
#include "nn_functional.h"

namespace ember::python {
namespace {

using nnf::opt_tensor;
namespace F = ember::nn::functional;
using py::arg;

std::vector<int64_t> n_ints(py::handle o, size_t n, const char* fn, const char* name) {
  std::vector<int64_t> v = nnf::int_vector(o, fn, name);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  EMBER_CHECK(v.size() == n, "[", fn, "] ", name, " must be an int or a tuple of ", n,
              " ints, got ", v.size(), " values");
  return v;
}

std::optional<bool> align_arg(py::handle o, const char* fn) {
  if (o.is_none()) {
    PyErr_WarnEx(PyExc_UserWarning,
                 (std::string("Default ") + fn +
                  " behavior has changed to align_corners=False since 1.3.0. Please specify "
                  "align_corners=True if the old behavior is desired. See the documentation of " +
                  fn + " for details.")
                     .c_str(),
                 1);
    return std::nullopt;
  }
  return to_bool(o.ptr(), fn, "align_corners");
}

/// F.fractional_max_pool{2,3}d's arguments as the options of the C++ functional form.
std::tuple<Tensor, Tensor> fractional(int nd, const Tensor& x, py::handle kernel_size,
                                      py::handle output_size, py::handle output_ratio,
                                      py::handle samples) {
  const char* fn = nd == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
  if (output_size.is_none() && output_ratio.is_none()) {
    throw py::value_error(std::string(fn) +
                          " requires specifying either an output_size or an output_ratio");
  }
  std::optional<std::vector<double>> ratio;
  if (!output_ratio.is_none()) {
    ratio.emplace();
    if (PyFloat_Check(output_ratio.ptr()) || PyLong_Check(output_ratio.ptr())) {
      ratio->push_back(to_double(output_ratio.ptr(), fn, "output_ratio"));
    } else {
      py::sequence seq = py::reinterpret_borrow<py::sequence>(output_ratio);
      for (auto item : seq) ratio->push_back(to_double(item.ptr(), fn, "output_ratio"));
    }
  }
  Tensor s = samples.is_none() ? Tensor() : to_tensor(samples.ptr(), fn, "_random_samples");
  auto run = [&](auto opts) {
    if (!output_size.is_none()) {
      opts.output_size(n_ints(output_size, size_t(nd), fn, "output_size"));
    } else {
      opts.output_ratio(*ratio);
    }
    opts._random_samples(s);
    return opts;
  };
  if (nd == 2) {
    return F::fractional_max_pool2d_with_indices(
        x, run(nn::FractionalMaxPool2dFuncOptions(n_ints(kernel_size, 2, fn, "kernel_size"))));
  }
  return F::fractional_max_pool3d_with_indices(
      x, run(nn::FractionalMaxPool3dFuncOptions(n_ints(kernel_size, 3, fn, "kernel_size"))));
}

void def_fractional(py::module_& f, int nd) {
  const char* name = nd == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
  const char* with =
      nd == 2 ? "fractional_max_pool2d_with_indices" : "fractional_max_pool3d_with_indices";
  f.def(
      name,
      [nd](const Tensor& x, py::handle k, py::handle os, py::handle ratio, bool return_indices,
           py::handle samples) -> py::object {
        auto [y, idx] = fractional(nd, x, k, os, ratio, samples);
        if (return_indices) return py::make_tuple(wrap_obj(y), wrap_obj(idx));
        return wrap_obj(y);
      },
      arg("input"), arg("kernel_size"), arg("output_size") = py::none(),
      arg("output_ratio") = py::none(), arg("return_indices") = false,
      arg("_random_samples") = py::none());
  f.def(
      with,
      [nd](const Tensor& x, py::handle k, py::handle os, py::handle ratio, bool,
           py::handle samples) {
        auto [y, idx] = fractional(nd, x, k, os, ratio, samples);
        return py::make_tuple(wrap_obj(y), wrap_obj(idx));
      },
      arg("input"), arg("kernel_size"), arg("output_size") = py::none(),
      arg("output_ratio") = py::none(), arg("return_indices") = false,
      arg("_random_samples") = py::none());
}

}  // namespace

void init_nn_extra(py::module_& m) {
  py::module_ nn = m.attr("_nn");
  py::module_ f = nn.attr("functional");
  // F.pdist is the op itself (ember::pdist, ember/stats.h).
  f.def(
      "pdist", [](const Tensor& input, double p) { return ember::pdist(input, p); },
      py::arg("input"), py::arg("p") = 2.0);

  f.def(
      "grid_sample",
      [](const Tensor& input, const Tensor& grid, const std::string& mode,
         const std::string& padding_mode, py::handle align_corners) {
        if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
          throw py::value_error(
              "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
              "'bicubic', but got: '" +
              mode + "'");
        }
        if (padding_mode != "zeros" && padding_mode != "border" && padding_mode != "reflection") {
          throw py::value_error(
              "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
              "'reflection', but got: '" +
              padding_mode + "'");
        }
        auto ac = align_arg(align_corners, "grid_sample");
        return F::grid_sample(
            input, grid,
            nn::GridSampleFuncOptions().mode(mode).padding_mode(padding_mode).align_corners(ac));
      },
      arg("input"), arg("grid"), arg("mode") = "bilinear", arg("padding_mode") = "zeros",
      arg("align_corners") = py::none());
  f.def(
      "affine_grid",
      [](const Tensor& theta, py::handle size, py::handle align_corners) {
        DimVector s = to_int_list(size.ptr(), "affine_grid", "size");
        auto ac = align_arg(align_corners, "affine_grid");
        return F::affine_grid(theta, s, ac.value_or(false));
      },
      arg("theta"), arg("size"), arg("align_corners") = py::none());
  def_fractional(f, 2);
  def_fractional(f, 3);

  // The raw ops, as torch.grid_sampler / torch.affine_grid_generator / torch._C._nn.*.
  m.def(
      "grid_sampler",
      [](const Tensor& input, const Tensor& grid, int64_t interp, int64_t pad, bool ac) {
        return grid_sampler(input, grid, interp, pad, ac);
      },
      arg("input"), arg("grid"), arg("interpolation_mode"), arg("padding_mode"),
      arg("align_corners"));
  m.def(
      "affine_grid_generator",
      [](const Tensor& theta, py::handle size, bool ac) {
        DimVector s = to_int_list(size.ptr(), "affine_grid_generator", "size");
        return affine_grid_generator(theta, s, ac);
      },
      arg("theta"), arg("size"), arg("align_corners"));
  for (int nd : {2, 3}) {
    nn.def(
        nd == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d",
        [nd](const Tensor& x, py::handle k, py::handle os, const Tensor& samples) {
          const char* fn = nd == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
          std::vector<int64_t> kk = n_ints(k, size_t(nd), fn, "kernel_size");
          std::vector<int64_t> oo = n_ints(os, size_t(nd), fn, "output_size");
          auto [y, idx] = nd == 2 ? fractional_max_pool2d(x, kk, oo, samples)
                                  : fractional_max_pool3d(x, kk, oo, samples);
          return py::make_tuple(wrap_obj(y), wrap_obj(idx));
        },
        arg("input"), arg("kernel_size"), arg("output_size"), arg("random_samples"));
  }

  // ---- native ops ----
  m.def(
      "native_batch_norm",
      [](const Tensor& input, py::handle weight, py::handle bias, py::handle running_mean,
         py::handle running_var, bool training, double momentum, double eps) {
        const char* fn = "native_batch_norm";
        auto [y, mean, invstd] =
            native_batch_norm(input, opt_tensor(weight, fn, "weight"), opt_tensor(bias, fn, "bias"),
                              opt_tensor(running_mean, fn, "running_mean"),
                              opt_tensor(running_var, fn, "running_var"), training, momentum, eps);
        return py::make_tuple(wrap_obj(y), wrap_obj(mean), wrap_obj(invstd));
      },
      arg("input"), arg("weight"), arg("bias"), arg("running_mean"), arg("running_var"),
      arg("training"), arg("momentum"), arg("eps"));
  m.def(
      "native_layer_norm",
      [](const Tensor& input, py::handle normalized_shape, py::handle weight, py::handle bias,
         double eps) {
        const char* fn = "native_layer_norm";
        DimVector ns = to_int_list(normalized_shape.ptr(), fn, "normalized_shape");
        auto [y, mean, rstd] = native_layer_norm(input, ns, opt_tensor(weight, fn, "weight"),
                                                 opt_tensor(bias, fn, "bias"), eps);
        return py::make_tuple(wrap_obj(y), wrap_obj(mean), wrap_obj(rstd));
      },
      arg("input"), arg("normalized_shape"), arg("weight"), arg("bias"), arg("eps"));
  m.def(
      "constant_pad_nd",
      [](const Tensor& input, py::handle pad, py::handle value) {
        DimVector p = to_int_list(pad.ptr(), "constant_pad_nd", "pad");
        return constant_pad_nd(input, p, to_scalar(value.ptr(), "constant_pad_nd", "value"));
      },
      arg("input"), arg("pad"), arg("value") = 0);
}

}  // namespace ember::python
