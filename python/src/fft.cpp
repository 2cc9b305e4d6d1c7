// The binding of torch.fft (the _C._fft submodule), stft/istft and the window functions (on _C,
// so they appear as ember.stft, ember.hann_window, ...) and the Tensor.stft/istft methods.
// out= is written here: the result is computed, then copied into out (an empty out is resized),
// after torch's check that the out dtype is complex (or real) as the result is.
#include <string>

#include "core/tensor_util.h"
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

std::optional<int64_t> opt_int(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return std::nullopt;
  return to_int(o.ptr(), fn, name);
}

std::optional<std::vector<int64_t>> opt_ints(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return std::nullopt;
  DimVector d = to_int_list(o.ptr(), fn, name);
  return std::vector<int64_t>(d.begin(), d.end());
}

OptionalIntArrayRef as_ref(const std::optional<std::vector<int64_t>>& v) {
  if (!v) return std::nullopt;
  return IntArrayRef(*v);
}

std::optional<std::string> opt_norm(py::handle o, const char* fn) {
  if (o.is_none()) return std::nullopt;
  return to_string(o.ptr(), fn, "norm");
}

fft::Norm as_norm(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return std::string_view(*s);
}

const Tensor& input_arg(py::handle o, const char* fn) { return to_tensor(o.ptr(), fn, "input"); }

/// Returns `r`, or writes it into out= (which must be complex exactly when `r` is).
py::object finish(py::handle out, const Tensor& r, const char* name) {
  if (out.is_none()) return wrap_obj(r);
  Tensor& o = const_cast<Tensor&>(to_tensor(out.ptr(), name, "out"));
  if (r.is_complex()) {
    EMBER_CHECK(o.is_complex(), "[fft.", name, "] ", name,
                " expects a complex output tensor, but got ", toString(o.dtype()));
  } else {
    EMBER_CHECK(isFloatingType(o.dtype()), "[fft.", name, "] ", name,
                " expects a floating point output tensor, but got ", toString(o.dtype()));
  }
  write_out(o, r, name);
  return py::reinterpret_borrow<py::object>(out);
}

/// Runs `f` without the GIL for large inputs.
template <class F>
Tensor nogil(const Tensor& x, F&& f) {
  return maybe_without_gil(x.numel(), std::forward<F>(f));
}

using Fn1 = Tensor (*)(const Tensor&, std::optional<int64_t>, int64_t, fft::Norm);
using FnN = Tensor (*)(const Tensor&, OptionalIntArrayRef, OptionalIntArrayRef, fft::Norm);
using Fn2 = Tensor (*)(const Tensor&, OptionalIntArrayRef, IntArrayRef, fft::Norm);

template <Fn1 F>
py::object call_1d(const char* name, py::handle input, py::handle n, int64_t dim, py::handle norm,
                   py::handle out) {
  const Tensor& x = input_arg(input, name);
  const std::optional<int64_t> nn = opt_int(n, name, "n");
  const std::optional<std::string> ns = opt_norm(norm, name);
  return finish(out, nogil(x, [&] { return F(x, nn, dim, as_norm(ns)); }), name);
}

template <FnN F>
py::object call_nd(const char* name, py::handle input, py::handle s, py::handle dim,
                   py::handle norm, py::handle out) {
  const Tensor& x = input_arg(input, name);
  const auto ss = opt_ints(s, name, "s");
  const auto dd = opt_ints(dim, name, "dim");
  const std::optional<std::string> ns = opt_norm(norm, name);
  return finish(out, nogil(x, [&] { return F(x, as_ref(ss), as_ref(dd), as_norm(ns)); }), name);
}

template <Fn2 F>
py::object call_2d(const char* name, py::handle input, py::handle s, py::handle dim,
                   py::handle norm, py::handle out) {
  const Tensor& x = input_arg(input, name);
  const auto ss = opt_ints(s, name, "s");
  // dim=None means every dim for the 2-D functions too (torch forwards it to the n-D form).
  const auto dd = opt_ints(dim, name, "dim");
  const std::optional<std::string> ns = opt_norm(norm, name);
  if (!dd) {
    std::vector<int64_t> all;
    for (int64_t i = 0; i < x.dim(); ++i) all.push_back(i);
    if (ss) {
      all.clear();
      for (int64_t i = x.dim() - int64_t(ss->size()); i < x.dim(); ++i) all.push_back(i);
    }
    return finish(out, nogil(x, [&] { return F(x, as_ref(ss), IntArrayRef(all), as_norm(ns)); }),
                  name);
  }
  return finish(out, nogil(x, [&] { return F(x, as_ref(ss), IntArrayRef(*dd), as_norm(ns)); }),
                name);
}

/// dtype / device / requires_grad of a factory call.
TensorOptions factory_options(py::handle dtype, py::handle device, bool requires_grad,
                              const char* fn) {
  TensorOptions o;
  if (!dtype.is_none()) o = o.dtype(to_dtype(dtype.ptr(), fn));
  if (!device.is_none()) {
    if (auto d = to_device(device.ptr(), fn)) o = o.device(*d);
  }
  return o.requires_grad(requires_grad);
}

double d_arg(py::handle d, const char* fn) {
  if (is_tensor(d.ptr())) return unwrap(d.ptr()).item<double>();
  return to_double(d.ptr(), fn, "d");
}

void py_warn(const std::string& message) {
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

std::optional<Tensor> opt_tensor(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return std::nullopt;
  return to_tensor(o.ptr(), fn, name);
}

Tensor stft_call(const Tensor& x, int64_t n_fft, py::handle hop, py::handle win, py::handle window,
                 bool center, const std::string& pad_mode, bool normalized, py::handle onesided,
                 py::handle return_complex) {
  const auto w = opt_tensor(window, "stft", "window");
  const std::optional<bool> os =
      onesided.is_none() ? std::nullopt
                         : std::optional<bool>(to_bool(onesided.ptr(), "stft", "onesided"));
  const std::optional<bool> rc =
      return_complex.is_none()
          ? std::nullopt
          : std::optional<bool>(to_bool(return_complex.ptr(), "stft", "return_complex"));
  if (!rc && !x.is_complex() && !(w && w->is_complex())) {
    py_warn(
        "stft will soon require the return_complex parameter be given for real inputs, and "
        "will further require that return_complex=True in a future PyTorch release.");
  }
  const auto h = opt_int(hop, "stft", "hop_length");
  const auto wl = opt_int(win, "stft", "win_length");
  return nogil(
      x, [&] { return ember::stft(x, n_fft, h, wl, w, center, pad_mode, normalized, os, rc); });
}

Tensor istft_call(const Tensor& x, int64_t n_fft, py::handle hop, py::handle win, py::handle window,
                  bool center, bool normalized, py::handle onesided, py::handle length,
                  bool return_complex) {
  const auto w = opt_tensor(window, "istft", "window");
  const std::optional<bool> os =
      onesided.is_none() ? std::nullopt
                         : std::optional<bool>(to_bool(onesided.ptr(), "istft", "onesided"));
  const auto h = opt_int(hop, "istft", "hop_length");
  const auto wl = opt_int(win, "istft", "win_length");
  const auto len = opt_int(length, "istft", "length");
  if (!x.is_complex()) {
    py_warn(
        "istft will require a complex-valued input tensor in a future PyTorch release. Matching "
        "the output from stft with return_complex=True. ");
  }
  Tensor y = nogil(x, [&] {
    return ember::istft(x, n_fft, h, wl, w, center, normalized, os, len, return_complex);
  });
  // torch pads a result shorter than `length` with zeros, and says so.
  if (len) {
    const int64_t frames = x.is_complex() ? x.size(-1) : x.size(-2);
    const int64_t total = n_fft + h.value_or(n_fft >> 2) * (frames - 1);
    if ((center ? n_fft / 2 : 0) + *len > total) {
      py_warn(
          "The length of signal is shorter than the length parameter. Result is being padded "
          "with zeros in the tail. Please check your center and hop_length settings.");
    }
  }
  return y;
}

}  // namespace

void init_fft(py::module_& m) {
  py::module_ fm = m.attr("_fft");

#define EMBER_FFT_1D(name)                                                               \
  fm.def(                                                                                \
      #name,                                                                             \
      [](py::handle input, py::handle n, int64_t dim, py::handle norm, py::handle out) { \
        return call_1d<&fft::name>(#name, input, n, dim, norm, out);                     \
      },                                                                                 \
      arg("input"), arg("n") = py::none(), arg("dim") = -1, arg("norm") = py::none(),    \
      py::kw_only(), arg("out") = py::none());
  EMBER_FFT_1D(fft)
  EMBER_FFT_1D(ifft)
  EMBER_FFT_1D(rfft)
  EMBER_FFT_1D(irfft)
  EMBER_FFT_1D(hfft)
  EMBER_FFT_1D(ihfft)
#undef EMBER_FFT_1D

#define EMBER_FFT_2D(name)                                                                  \
  fm.def(                                                                                   \
      #name,                                                                                \
      [](py::handle input, py::handle s, py::handle dim, py::handle norm, py::handle out) { \
        return call_2d<&fft::name>(#name, input, s, dim, norm, out);                        \
      },                                                                                    \
      arg("input"), arg("s") = py::none(), arg("dim") = py::make_tuple(-2, -1),             \
      arg("norm") = py::none(), py::kw_only(), arg("out") = py::none());
  EMBER_FFT_2D(fft2)
  EMBER_FFT_2D(ifft2)
  EMBER_FFT_2D(rfft2)
  EMBER_FFT_2D(irfft2)
  EMBER_FFT_2D(hfft2)
  EMBER_FFT_2D(ihfft2)
#undef EMBER_FFT_2D

#define EMBER_FFT_ND(name)                                                                    \
  fm.def(                                                                                     \
      #name,                                                                                  \
      [](py::handle input, py::handle s, py::handle dim, py::handle norm, py::handle out) {   \
        return call_nd<&fft::name>(#name, input, s, dim, norm, out);                          \
      },                                                                                      \
      arg("input"), arg("s") = py::none(), arg("dim") = py::none(), arg("norm") = py::none(), \
      py::kw_only(), arg("out") = py::none());
  EMBER_FFT_ND(fftn)
  EMBER_FFT_ND(ifftn)
  EMBER_FFT_ND(rfftn)
  EMBER_FFT_ND(irfftn)
  EMBER_FFT_ND(hfftn)
  EMBER_FFT_ND(ihfftn)
#undef EMBER_FFT_ND

#define EMBER_FFT_FREQ(name)                                                                       \
  fm.def(                                                                                          \
      #name,                                                                                       \
      [](int64_t n, py::handle d, py::handle out, py::handle dtype, py::handle layout,             \
         py::handle device, bool requires_grad) {                                                  \
        (void)layout;                                                                              \
        const TensorOptions o = factory_options(dtype, device, requires_grad, #name);              \
        Tensor r = fft::name(n, d_arg(d, #name), o);                                               \
        if (out.is_none()) return wrap_obj(r);                                                     \
        Tensor& ot = const_cast<Tensor&>(to_tensor(out.ptr(), #name, "out"));                      \
        write_out(ot, r, #name);                                                                   \
        return py::reinterpret_borrow<py::object>(out);                                            \
      },                                                                                           \
      arg("n"), arg("d") = 1.0, py::kw_only(), arg("out") = py::none(), arg("dtype") = py::none(), \
      arg("layout") = py::none(), arg("device") = py::none(), arg("requires_grad") = false);
  EMBER_FFT_FREQ(fftfreq)
  EMBER_FFT_FREQ(rfftfreq)
#undef EMBER_FFT_FREQ

  fm.def(
      "fftshift",
      [](py::handle input, py::handle dim) {
        const Tensor& x = input_arg(input, "fftshift");
        const auto dd = opt_ints(dim, "fftshift", "dim");
        return fft::fftshift(x, as_ref(dd));
      },
      arg("input"), arg("dim") = py::none());
  fm.def(
      "ifftshift",
      [](py::handle input, py::handle dim) {
        const Tensor& x = input_arg(input, "ifftshift");
        const auto dd = opt_ints(dim, "ifftshift", "dim");
        return fft::ifftshift(x, as_ref(dd));
      },
      arg("input"), arg("dim") = py::none());

  // ---- stft / istft ----
  m.def("stft", &stft_call, arg("input"), arg("n_fft"), arg("hop_length") = py::none(),
        arg("win_length") = py::none(), arg("window") = py::none(), arg("center") = true,
        arg("pad_mode") = "reflect", arg("normalized") = false, arg("onesided") = py::none(),
        arg("return_complex") = py::none(), "Short-time Fourier transform (torch.stft).");
  m.def("istft", &istft_call, arg("input"), arg("n_fft"), arg("hop_length") = py::none(),
        arg("win_length") = py::none(), arg("window") = py::none(), arg("center") = true,
        arg("normalized") = false, arg("onesided") = py::none(), arg("length") = py::none(),
        arg("return_complex") = false, "Inverse short-time Fourier transform (torch.istft).");
  py::object T = m.attr("Tensor");
  T.attr("stft") = py::cpp_function(
      [](py::handle self, int64_t n_fft, py::handle hop, py::handle win, py::handle window,
         bool center, const std::string& pad_mode, bool normalized, py::handle onesided,
         py::handle return_complex) {
        return stft_call(unwrap(self.ptr()), n_fft, hop, win, window, center, pad_mode, normalized,
                         onesided, return_complex);
      },
      py::is_method(T), py::name("stft"), arg("n_fft"), arg("hop_length") = py::none(),
      arg("win_length") = py::none(), arg("window") = py::none(), arg("center") = true,
      arg("pad_mode") = "reflect", arg("normalized") = false, arg("onesided") = py::none(),
      arg("return_complex") = py::none());
  T.attr("istft") = py::cpp_function(
      [](py::handle self, int64_t n_fft, py::handle hop, py::handle win, py::handle window,
         bool center, bool normalized, py::handle onesided, py::handle length,
         bool return_complex) {
        return istft_call(unwrap(self.ptr()), n_fft, hop, win, window, center, normalized, onesided,
                          length, return_complex);
      },
      py::is_method(T), py::name("istft"), arg("n_fft"), arg("hop_length") = py::none(),
      arg("win_length") = py::none(), arg("window") = py::none(), arg("center") = true,
      arg("normalized") = false, arg("onesided") = py::none(), arg("length") = py::none(),
      arg("return_complex") = false);

  // ---- windows ----
#define EMBER_WINDOW_KW                                                    \
  py::kw_only(), arg("dtype") = py::none(), arg("layout") = py::none(),    \
                 arg("device") = py::none(), arg("requires_grad") = false, \
                 arg("pin_memory") = false
#define EMBER_WINDOW_2(name)                                                                   \
  m.def(                                                                                       \
      #name,                                                                                   \
      [](int64_t n, bool periodic, py::handle dtype, py::handle layout, py::handle device,     \
         bool requires_grad, bool pin_memory) {                                                \
        (void)layout;                                                                          \
        (void)pin_memory;                                                                      \
        return ember::name(n, periodic, factory_options(dtype, device, requires_grad, #name)); \
      },                                                                                       \
      arg("window_length"), arg("periodic") = true, EMBER_WINDOW_KW);
  EMBER_WINDOW_2(hann_window)
  EMBER_WINDOW_2(blackman_window)
  EMBER_WINDOW_2(bartlett_window)
#undef EMBER_WINDOW_2
  m.def(
      "hamming_window",
      [](int64_t n, bool periodic, double alpha, double beta, py::handle dtype, py::handle layout,
         py::handle device, bool requires_grad, bool pin_memory) {
        (void)layout;
        (void)pin_memory;
        return ember::hamming_window(
            n, periodic, alpha, beta,
            factory_options(dtype, device, requires_grad, "hamming_window"));
      },
      arg("window_length"), arg("periodic") = true, arg("alpha") = 0.54, arg("beta") = 0.46,
      EMBER_WINDOW_KW);
  m.def(
      "kaiser_window",
      [](int64_t n, bool periodic, double beta, py::handle dtype, py::handle layout,
         py::handle device, bool requires_grad, bool pin_memory) {
        (void)layout;
        (void)pin_memory;
        return ember::kaiser_window(n, periodic, beta,
                                    factory_options(dtype, device, requires_grad, "kaiser_window"));
      },
      arg("window_length"), arg("periodic") = true, arg("beta") = 12.0, EMBER_WINDOW_KW);
#undef EMBER_WINDOW_KW
}

}  // namespace ember::python
