// softmax / log_softmax: validation, dtype handling and the parallel split; the fused loops are
// in kernels/cpu/softmax_kernels.cpp (Note [Fused softmax]). float16/bfloat16 are computed in
// float32 and rounded once at the end, as PyTorch.
#include <algorithm>

#include "autograd/record.h"
#include "core/parallel_internal.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/sort.h"
#include "kernels/cpu/kernel_registry.h"
#include "kernels/cpu/softmax.h"
#include "ops/call_path.h"

namespace ember {
namespace cpu {
SoftmaxKernels g_softmax_kernels;
const SoftmaxKernels& softmax_kernels() {
  (void)kernels();  // registers every family of the selected capability, softmax included
  return g_softmax_kernels;
}
}  // namespace cpu

namespace {

constexpr int64_t kGrain = 32768;     // elements per task
constexpr int64_t kInnerBlock = 256;  // inner columns per task along a non-last dim

template <class T>
void run_softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log,
                 cpu::SoftmaxLastDimFn<T> lastdim, cpu::SoftmaxInnerFn<T> vertical) {
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrain / n),
                 [&](int64_t b, int64_t e) { lastdim(x, y, b, e, n, log); });
    return;
  }
  const int64_t blocks = (inner + kInnerBlock - 1) / kInnerBlock;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrain / (n * kInnerBlock)),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t o = t / blocks, c = (t % blocks) * kInnerBlock;
                   vertical(x, y, o, o + 1, n, inner, c, std::min(inner, c + kInnerBlock), log);
                 }
               });
}

/// The result dtype of softmax(self, dtype) after validation; `dim` is wrapped.
ScalarType softmax_meta(const Tensor& self, int64_t& dim, std::optional<ScalarType> dtype,
                        const char* op) {
  EMBER_CHECK(self.defined(), "[", op, "] input tensor is undefined");
  EMBER_CHECK(self.is_cpu(), "[", op, "] only CPU tensors are supported, got ",
              self.device().str());
  dim = wrap_dim(dim, self.dim(), op);
  const ScalarType dt = dtype.value_or(self.dtype());
  // PyTorch returns a zero-size result before its dtype check (an empty int64 softmax works).
  EMBER_CHECK(isFloatingType(dt) || self.numel() == 0, "[", op,
              "] \"softmax_kernel_impl\" not implemented for '", dtype_name(dt), "' (input ",
              dtype_name(self.dtype()), ")");
  return dt;
}

/// Computes softmax of `self` into `dst`, a contiguous tensor of self's shape and the compute
/// dtype (float or double) of `dt`.
void softmax_into(Tensor& dst, const Tensor& self, int64_t dim, ScalarType dt, bool log) {
  if (self.numel() == 0) return;
  const ScalarType ct = dt == kDouble ? kDouble : kFloat;
  // dtype= casts the input first (a float input asked for bfloat16 is rounded to it), then the
  // math runs in float or double.
  Tensor x = self.to(dt).to(ct).resolve_conj().contiguous();
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    if (d > dim) inner *= x.size(d);
  }
  const cpu::SoftmaxKernels& k = cpu::softmax_kernels();
  if (ct == kFloat)
    run_softmax<float>(x.data_ptr<float>(), dst.data_ptr<float>(), outer, n, inner, log,
                       k.lastdim_f, k.inner_f);
  else
    run_softmax<double>(x.data_ptr<double>(), dst.data_ptr<double>(), outer, n, inner, log,
                        k.lastdim_d, k.inner_d);
}

Tensor softmax_impl(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  const ScalarType dt = softmax_meta(self, dim, dtype, op);
  const ScalarType ct = dt == kDouble ? kDouble : kFloat;
  Tensor y = empty_tensor(self.sizes(), ct);
  softmax_into(y, self, dim, dt, log);
  return ct == dt ? y : y.to(dt);
}

Tensor& softmax_out_impl(Tensor& out, const Tensor& self, int64_t dim,
                         std::optional<ScalarType> dtype, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  const ScalarType dt = softmax_meta(self, dim, dtype, op);
  EMBER_CHECK(out.dtype() == dt, "[", op, "] expected out dtype ", dtype_name(dt), ", got ",
              dtype_name(out.dtype()));
  if (out.sizes() != self.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(self.sizes()));
    resize_output(out, self.sizes());
  }
  const ScalarType ct = dt == kDouble ? kDouble : kFloat;
  // Write straight into a contiguous out that does not alias the input.
  if (out.is_contiguous() && ct == dt && !out.is_alias_of(self)) {
    softmax_into(out, self, dim, dt, log);
    out.unsafeGetTensorImpl()->bump_version();
    return out;
  }
  Tensor y = empty_tensor(self.sizes(), ct);
  softmax_into(y, self, dim, dt, log);
  return out.copy_(y);
}

}  // namespace

namespace {
// softmax: dx = y * (g - sum(g * y)); log_softmax: dx = g - exp(y) * sum(g) (over `dim`).
// The rules read only the output, so they hold for any dtype= too.
Tensor softmax_rec(const Tensor& self, int64_t dim0, std::optional<ScalarType> dtype, bool log) {
  autograd::OpRecorder rec(log ? "log_softmax" : "softmax", {self});
  Tensor out = softmax_impl(self, dim0, dtype, log);
  if (rec) {
    rec.args(wrap_dim(dim0, self.dim(), log ? "log_softmax" : "softmax"), log);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Tensor &g = c.grads[0], &y = c.saved[0];
          if (c.args().b(1)) return autograd::variable_list{g - exp(y) * g.sum({dim}, true)};
          return autograd::variable_list{y * (g - (g * y).sum({dim}, true))};
        },
        {out},
        [](autograd::JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Tensor& y = c.outputs[0];
          const Tensor t = c.tangent_or_zeros(0).to(y.dtype());
          if (c.args().b(1)) return autograd::variable_list{t - (exp(y) * t).sum({dim}, true)};
          return autograd::variable_list{y * (t - (y * t).sum({dim}, true))};
        });
  }
  return out;
}
}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(softmax, self, dim, dtype);
  return softmax_rec(self, dim, dtype, false);
}
Tensor& softmax_out(Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(softmax_out, out, self, dim, dtype);
  autograd::check_out_not_differentiable("softmax", {self});
  return softmax_out_impl(out, self, dim, dtype, false);
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(log_softmax, self, dim, dtype);
  return softmax_rec(self, dim, dtype, true);
}
Tensor& log_softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                        std::optional<ScalarType> dtype) {
  EMBER_OP(log_softmax_out, out, self, dim, dtype);
  autograd::check_out_not_differentiable("log_softmax", {self});
  return softmax_out_impl(out, self, dim, dtype, true);
}

Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::log_softmax(*this, dim, dtype);
}

}  // namespace ember
