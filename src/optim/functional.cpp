// Multi-tensor optimizer steps (include/ember/optim/functional.h).
//
// Note [Fused optimizer step]
// Each step gathers, per parameter, its slots (param, grad, states) and runs one loop over the
// elements of all parameters of the group: chunks of kChunk elements from every parameter are
// spread over the OpenMP pool in one parallel region, and each chunk does the whole update
// (moments, denominators, parameter) while its data is in cache. The per-element math repeats
// torch 1.13's single-tensor step operation by operation, with the scalars rounded to the
// parameter's compute type as torch's tensor-scalar ops do, so float32 results agree to rounding.
// Slots that share the parameter's dense layout are used in place; others go through contiguous
// copies that are written back. Groups off the CPU take the device path (Note [Device optimizer
// step] in functional_device.cpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/parallel_internal.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/half.h"
#include "ember/optim/functional.h"
#include "ember/tensor_impl.h"
#include "ember/version.h"
#include "optim/functional_device.h"

// The vectorized Adam loop for the baseline ISA and for AVX2 (see fused_simd.h).
#if defined(__x86_64__) && defined(__GNUC__)
#define EMBER_OPTIM_SIMD 1
#define EMBER_OPTIM_ISA sse
#define EMBER_OPTIM_VBYTES 16
#include "optim/fused_simd.h"
#undef EMBER_OPTIM_ISA
#undef EMBER_OPTIM_VBYTES
#pragma GCC push_options
#pragma GCC target("avx2")
#define EMBER_OPTIM_ISA avx2
#define EMBER_OPTIM_VBYTES 32
#include "optim/fused_simd.h"
#undef EMBER_OPTIM_ISA
#undef EMBER_OPTIM_VBYTES
#pragma GCC pop_options
#else
#define EMBER_OPTIM_SIMD 0
#endif

namespace ember::optim::functional {
namespace {

constexpr int kMaxSlots = 6;
constexpr int64_t kChunk = 16384;

// Whether `t` covers exactly numel() elements of memory from element 0 (any dim order).
bool dense_nonoverlapping(const Tensor& t) {
  if (t.is_contiguous()) return true;
  const int64_t d = t.dim();
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < d; ++i)
    if (t.size(i) != 1) perm.push_back(i);
  std::sort(perm.begin(), perm.end(),
            [&](int64_t a, int64_t b) { return t.stride(a) < t.stride(b); });
  int64_t expect = 1;
  for (int64_t i : perm) {
    if (t.stride(i) != expect) return false;
    expect *= t.size(i);
  }
  return true;
}

// The parameters of one step and their slots; see Note [Fused optimizer step].
class MultiTensor {
 public:
  // `writes[s]`: slot s is written by the update (copied back when it used a copy).
  MultiTensor(const char* op, int nslots, std::initializer_list<bool> writes)
      : op_(op), nslots_(nslots) {
    int s = 0;
    for (bool w : writes) writes_[s++] = w;
  }

  // Adds one parameter: slots[0] is the param, slots[1] the grad; undefined slots are unused.
  void add(size_t index, std::initializer_list<Tensor> slots) {
    Entry e;
    int s = 0;
    for (const Tensor& t : slots) e.orig[s++] = t;
    const Tensor& p = e.orig[0];
    EMBER_CHECK(p.defined(), "[", op_, "] parameter ", index, " is undefined");
    EMBER_CHECK(p.device().is_cpu(), "[", op_, "] expected CPU tensors, got parameter ", index,
                " on ", p.device());
    EMBER_CHECK(isFloatingType(p.scalar_type()), "[", op_, "] parameter ", index,
                " must be a floating tensor, got ", p.scalar_type());
    EMBER_CHECK(!p.is_inference() || InferenceMode::is_enabled(), "[", op_, "] parameter ", index,
                " is an inference tensor: it cannot be updated in place outside "
                "InferenceMode");
    if (dtype_ == ScalarType::Undefined) dtype_ = p.scalar_type();
    EMBER_CHECK(p.scalar_type() == dtype_, "[", op_, "] all parameters of a group must have the ",
                "same dtype, got ", dtype_, " and ", p.scalar_type(), " (parameter ", index, ")");
    bool same_layout = dense_nonoverlapping(p);
    for (int k = 1; k < nslots_; ++k) {
      const Tensor& t = e.orig[k];
      if (!t.defined()) continue;
      const char* what = k == 1 ? "gradient" : "state";
      EMBER_CHECK(t.sizes() == p.sizes(), "[", op_, "] the ", what, " of parameter ", index,
                  " has shape ", t.sizes(), " but the parameter has shape ", p.sizes());
      EMBER_CHECK(t.scalar_type() == p.scalar_type(), "[", op_, "] the ", what, " of parameter ",
                  index, " has dtype ", t.scalar_type(), " but the parameter has dtype ",
                  p.scalar_type());
      EMBER_CHECK(t.device() == p.device(), "[", op_, "] the ", what, " of parameter ", index,
                  " is on ", t.device(), " but the parameter is on ", p.device());
      same_layout = same_layout && t.strides() == p.strides();
    }
    for (int k = 0; k < nslots_; ++k) {
      const Tensor& t = e.orig[k];
      if (!t.defined()) continue;
      e.work[k] = (same_layout || t.is_contiguous()) ? t : t.contiguous();
      e.ptr[k] = e.work[k].data_ptr();
    }
    e.n = p.numel();
    entries_.push_back(std::move(e));
  }

  size_t size() const { return entries_.size(); }

  // Runs f(T* tag, entry index, void* const* ptrs, begin, end) over all elements, in parallel.
  template <class F>
  void run(const F& f) {
    std::vector<std::array<int64_t, 3>> chunks;  // entry, begin, end
    int64_t total = 0;
    for (size_t i = 0; i < entries_.size(); ++i) {
      for (int64_t b = 0; b < entries_[i].n; b += kChunk)
        chunks.push_back({int64_t(i), b, std::min(entries_[i].n, b + kChunk)});
      total += entries_[i].n;
    }
    auto body = [&](auto tag) {
      const int64_t grain = total < 4 * kChunk ? int64_t(chunks.size()) + 1 : 1;
      parallel_for(0, int64_t(chunks.size()), grain, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
          const auto& ch = chunks[size_t(c)];
          f(tag, size_t(ch[0]), entries_[size_t(ch[0])].ptr, ch[1], ch[2]);
        }
      });
    };
    switch (dtype_) {
      case ScalarType::Float:
        body(static_cast<float*>(nullptr));
        break;
      case ScalarType::Double:
        body(static_cast<double*>(nullptr));
        break;
      case ScalarType::BFloat16:
        body(static_cast<BFloat16*>(nullptr));
        break;
      case ScalarType::Half:
        body(static_cast<Half*>(nullptr));
        break;
      case ScalarType::Undefined:
        break;
      default:
        EMBER_THROW(Error, "[", op_, "] unsupported parameter dtype ", dtype_,
                    " (float32, float64, bfloat16 and float16 are supported)");
    }
    finish();
  }

 private:
  struct Entry {
    Tensor orig[kMaxSlots];
    Tensor work[kMaxSlots];
    void* ptr[kMaxSlots] = {};
    int64_t n = 0;
  };

  // Copies results made in contiguous copies back, and marks the in-place writes.
  void finish() {
    NoGradGuard no_grad;
    for (Entry& e : entries_) {
      for (int k = 0; k < nslots_; ++k) {
        if (!writes_[k] || !e.orig[k].defined()) continue;
        if (e.work[k].unsafeGetTensorImpl() != e.orig[k].unsafeGetTensorImpl())
          e.orig[k].copy_(e.work[k]);
        else
          e.orig[k].unsafeGetTensorImpl()->bump_version(op_);
      }
    }
  }

  const char* op_;
  int nslots_;
  bool writes_[kMaxSlots] = {};
  ScalarType dtype_ = ScalarType::Undefined;
  std::vector<Entry> entries_;
};

// The compute type of a storage type: float for the half types.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
T* slot(void* const* p, int k) {
  return static_cast<T*>(p[k]);
}

// Whether the CPU kernels run with AVX2 (or better): the Adam loop then uses 32-byte vectors.
bool use_avx2() {
  static const bool yes = std::strcmp(cpu_capability(), "default") != 0;
  return yes;
}

// Calls f(std::true_type) or f(std::false_type): a runtime option as a compile-time flag.
template <class F>
void with_bool(bool b, const F& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

void check_lists(const char* op, size_t n, std::initializer_list<size_t> sizes) {
  for (size_t s : sizes)
    EMBER_CHECK_VALUE(s == n, "[", op, "] expected lists of ", n,
                      " entries (one per parameter), got one of ", s);
}

}  // namespace

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled) {
  const char* op = decoupled ? "adamw_step" : "adam_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
  if (amsgrad) check_lists(op, n, {max_exp_avg_sqs.size()});
  if (on_device(params))
    return device::adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr,
                             beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled);
  MultiTensor mt(op, 5, {true, false, true, true, true});
  std::vector<double> step_size(n), bc2_sqrt(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add(i, {params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
               amsgrad ? max_exp_avg_sqs[i] : Tensor()});
    EMBER_CHECK(!amsgrad || max_exp_avg_sqs[i].defined(), "[", op,
                "] amsgrad needs max_exp_avg_sqs");
    step_size[i] = lr / (1 - std::pow(beta1, steps[i]));
    bc2_sqrt[i] = std::sqrt(1 - std::pow(beta2, steps[i]));
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* __restrict param = slot<T>(p, 0);
    const T* __restrict grad = slot<T>(p, 1);
    T* __restrict m = slot<T>(p, 2);
    T* __restrict v = slot<T>(p, 3);
    T* __restrict vmax = slot<T>(p, 4);
    const A b1 = A(beta1), omb1 = A(1 - beta1), b2 = A(beta2), omb2 = A(1 - beta2);
    const A wd = A(weight_decay), decay = A(1 - lr * weight_decay), ep = A(eps);
    const A bc2s = A(bc2_sqrt[i]), neg_step = A(-step_size[i]);
    // The options become template flags so that the inner loop has no branches (vectorized).
    with_bool(maximize, [&](auto kMax) {
      with_bool(!decoupled && weight_decay != 0, [&](auto kL2) {
        with_bool(decoupled, [&](auto kDec) {
          with_bool(vmax != nullptr, [&](auto kAms) {
#if EMBER_OPTIM_SIMD
            if constexpr (std::is_same_v<T, A>) {
              auto loop = use_avx2() ? avx2::adam_loop<A, kMax, kL2, kDec, kAms>
                                     : sse::adam_loop<A, kMax, kL2, kDec, kAms>;
              loop(param + b, grad + b, m + b, v + b, vmax ? vmax + b : nullptr, e - b, b1, omb1,
                   b2, omb2, wd, decay, ep, bc2s, neg_step);
              return;
            }
#endif
            for (int64_t j = b; j < e; ++j) {
              A g = A(grad[j]);
              if constexpr (kMax) g = -g;
              A x = A(param[j]);
              if constexpr (kL2) g = g + wd * x;
              if constexpr (kDec) x = x * decay;
              A mj = A(m[j]) * b1 + omb1 * g;
              A vj = A(v[j]) * b2 + omb2 * (g * g);
              m[j] = T(mj);
              v[j] = T(vj);
              A vd = vj;
              if constexpr (kAms) {
                A mx = A(vmax[j]);
                mx = ((vj > mx) | (vj != vj)) ? vj : mx;  // torch.maximum propagates NaN
                vmax[j] = T(mx);
                vd = mx;
              }
              A denom = std::sqrt(vd) / bc2s + ep;
              param[j] = T(x + neg_step * (mj / denom));
            }
          });
        });
      });
    });
  });
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize) {
  const char* op = "sgd_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size()});
  if (momentum != 0) check_lists(op, n, {momentum_buffers.size()});
  if (on_device(params))
    return device::sgd_step(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay,
                            nesterov, maximize);
  MultiTensor mt(op, 3, {true, false, true});
  std::vector<char> first(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (momentum != 0 && !momentum_buffers[i].defined()) {
      // torch clones the decayed gradient on the first step; the kernel writes it.
      momentum_buffers[i] = zeros_like(params[i]);
      first[i] = 1;
    }
    mt.add(i, {params[i], grads[i], momentum != 0 ? momentum_buffers[i] : Tensor()});
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* buf = slot<T>(p, 2);
    const A wd = A(weight_decay), mom = A(momentum), omd = A(1 - dampening), nlr = A(-lr);
    with_bool(maximize, [&](auto kMax) {
      with_bool(weight_decay != 0, [&](auto kWd) {
        with_bool(buf != nullptr, [&](auto kBuf) {
          with_bool(first[i] != 0, [&](auto kInit) {
            with_bool(nesterov, [&](auto kNest) {
              T* __restrict pp = param;
              const T* __restrict gp = grad;
              T* __restrict bp = buf;
              for (int64_t j = b; j < e; ++j) {
                A d = A(gp[j]);
                if constexpr (kMax) d = -d;
                A x = A(pp[j]);
                if constexpr (kWd) d = d + wd * x;
                if constexpr (kBuf) {
                  A bj;
                  if constexpr (kInit)
                    bj = d;
                  else
                    bj = A(bp[j]) * mom + omd * d;
                  bp[j] = T(bj);
                  if constexpr (kNest)
                    d = d + mom * A(T(bj));
                  else
                    d = A(T(bj));
                }
                pp[j] = T(x + nlr * d);
              }
            });
          });
        });
      });
    });
  });
}

void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& state_sums, const std::vector<double>& steps,
                  double lr, double weight_decay, double lr_decay, double eps, bool maximize) {
  const char* op = "adagrad_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), state_sums.size(), steps.size()});
  if (on_device(params))
    return generic::adagrad_step(params, grads, state_sums, steps, lr, weight_decay, lr_decay, eps,
                                 maximize);
  MultiTensor mt(op, 3, {true, false, true});
  std::vector<double> clr(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add(i, {params[i], grads[i], state_sums[i]});
    clr[i] = lr / (1 + (steps[i] - 1) * lr_decay);
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* sum = slot<T>(p, 2);
    const A wd = A(weight_decay), ep = A(eps), nclr = A(-clr[i]);
    const bool has_wd = weight_decay != 0;
    for (int64_t j = b; j < e; ++j) {
      A g = A(grad[j]);
      if (maximize) g = -g;
      A x = A(param[j]);
      if (has_wd) g = g + wd * x;
      A s = A(sum[j]) + g * g;
      sum[j] = T(s);
      A std_ = std::sqrt(A(T(s))) + ep;
      param[j] = T(x + nclr * (g / std_));
    }
  });
}

void rmsprop_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                  const std::vector<Tensor>& momentum_buffers, double lr, double alpha, double eps,
                  double weight_decay, double momentum, bool centered, bool maximize) {
  const char* op = "rmsprop_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), square_avgs.size()});
  if (centered) check_lists(op, n, {grad_avgs.size()});
  if (momentum > 0) check_lists(op, n, {momentum_buffers.size()});
  if (on_device(params))
    return generic::rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers, lr, alpha,
                                 eps, weight_decay, momentum, centered, maximize);
  MultiTensor mt(op, 5, {true, false, true, true, true});
  for (size_t i = 0; i < n; ++i) {
    Tensor ga = centered ? grad_avgs[i] : Tensor();
    Tensor mb = momentum > 0 ? momentum_buffers[i] : Tensor();
    EMBER_CHECK(!centered || ga.defined(), "[", op, "] centered needs grad_avgs");
    EMBER_CHECK(momentum <= 0 || mb.defined(), "[", op, "] momentum needs momentum_buffers");
    mt.add(i, {params[i], grads[i], square_avgs[i], ga, mb});
  }
  mt.run([&](auto tag, size_t, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* sq = slot<T>(p, 2);
    T* gavg = slot<T>(p, 3);
    T* buf = slot<T>(p, 4);
    const A wd = A(weight_decay), al = A(alpha), omal = A(1 - alpha), ep = A(eps);
    const A mom = A(momentum), nlr = A(-lr);
    const bool has_wd = weight_decay != 0;
    for (int64_t j = b; j < e; ++j) {
      A g = A(grad[j]);
      if (maximize) g = -g;
      A x = A(param[j]);
      if (has_wd) g = g + wd * x;
      A s = A(T(A(sq[j]) * al + omal * (g * g)));
      sq[j] = T(s);
      A avg;
      if (gavg) {
        A ga = A(T(A(gavg[j]) * al + omal * g));
        gavg[j] = T(ga);
        avg = std::sqrt(A(T(s - ga * ga)));
      } else {
        avg = std::sqrt(s);
      }
      avg = A(T(avg)) + ep;
      if (buf) {
        A bj = A(T(A(buf[j]) * mom + g / avg));
        buf[j] = T(bj);
        param[j] = T(x + nlr * bj);
      } else {
        param[j] = T(x + nlr * (g / avg));
      }
    }
  });
}

void adadelta_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& acc_deltas,
                   double lr, double rho, double eps, double weight_decay, bool maximize) {
  const char* op = "adadelta_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), square_avgs.size(), acc_deltas.size()});
  if (on_device(params))
    return generic::adadelta_step(params, grads, square_avgs, acc_deltas, lr, rho, eps,
                                  weight_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  for (size_t i = 0; i < n; ++i) mt.add(i, {params[i], grads[i], square_avgs[i], acc_deltas[i]});
  mt.run([&](auto tag, size_t, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* sq = slot<T>(p, 2);
    T* acc = slot<T>(p, 3);
    const A wd = A(weight_decay), r = A(rho), omr = A(1 - rho), ep = A(eps), nlr = A(-lr);
    const bool has_wd = weight_decay != 0;
    for (int64_t j = b; j < e; ++j) {
      A g = A(grad[j]);
      if (maximize) g = -g;
      A x = A(param[j]);
      if (has_wd) g = g + wd * x;
      A s = A(T(A(sq[j]) * r + omr * (g * g)));
      sq[j] = T(s);
      A std_ = std::sqrt(A(T(s + ep)));
      A delta = A(T(A(T(std::sqrt(A(T(A(acc[j]) + ep))) / std_)) * g));
      acc[j] = T(A(acc[j]) * r + omr * (delta * delta));
      param[j] = T(x + nlr * delta);
    }
  });
}

void adamax_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_infs,
                 const std::vector<double>& steps, double lr, double beta1, double beta2,
                 double eps, double weight_decay, bool maximize) {
  const char* op = "adamax_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_infs.size(), steps.size()});
  if (on_device(params))
    return generic::adamax_step(params, grads, exp_avgs, exp_infs, steps, lr, beta1, beta2, eps,
                                weight_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  std::vector<double> clr(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add(i, {params[i], grads[i], exp_avgs[i], exp_infs[i]});
    clr[i] = lr / (1 - std::pow(beta1, steps[i]));
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* m = slot<T>(p, 2);
    T* u = slot<T>(p, 3);
    const A wd = A(weight_decay), b1 = A(beta1), omb1 = A(1 - beta1), b2 = A(beta2);
    const A ep = A(eps), nclr = A(-clr[i]);
    const bool has_wd = weight_decay != 0;
    for (int64_t j = b; j < e; ++j) {
      A g = A(grad[j]);
      if (maximize) g = -g;
      A x = A(param[j]);
      if (has_wd) g = g + wd * x;
      A mj = A(T(A(m[j]) * b1 + omb1 * g));
      m[j] = T(mj);
      A a = A(T(A(u[j]) * b2)), c = A(T(std::abs(g) + ep));
      A uj = (a >= c || std::isnan(a)) ? a : c;  // amax propagates NaN
      u[j] = T(uj);
      param[j] = T(x + nclr * (mj / uj));
    }
  });
}

void nadam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                std::vector<double>& mu_products, const std::vector<double>& steps, double lr,
                double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                bool maximize) {
  const char* op = "nadam_step";
  const size_t n = params.size();
  check_lists(
      op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), mu_products.size(), steps.size()});
  if (on_device(params))
    return generic::nadam_step(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, lr, beta1,
                               beta2, eps, weight_decay, momentum_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  std::vector<double> bc2(n), c_grad(n), c_avg(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add(i, {params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]});
    const NadamScalars s =
        nadam_scalars(mu_products[i], steps[i], lr, beta1, beta2, momentum_decay);
    bc2[i] = s.bias_correction2;
    c_grad[i] = s.grad_coef;
    c_avg[i] = s.avg_coef;
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* m = slot<T>(p, 2);
    T* v = slot<T>(p, 3);
    const A wd = A(weight_decay), b1 = A(beta1), omb1 = A(1 - beta1), b2 = A(beta2);
    const A omb2 = A(1 - beta2), ep = A(eps), bc = A(bc2[i]), cg = A(c_grad[i]), ca = A(c_avg[i]);
    const bool has_wd = weight_decay != 0;
    for (int64_t j = b; j < e; ++j) {
      A g = A(grad[j]);
      if (maximize) g = -g;
      A x = A(param[j]);
      if (has_wd) g = g + wd * x;
      A mj = A(T(A(m[j]) * b1 + omb1 * g));
      A vj = A(T(A(v[j]) * b2 + omb2 * (g * g)));
      m[j] = T(mj);
      v[j] = T(vj);
      A denom = A(T(std::sqrt(A(T(vj / bc))))) + ep;
      x = A(T(x + cg * (g / denom)));
      param[j] = T(x + ca * (mj / denom));
    }
  });
}

void radam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<double>& steps, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool maximize) {
  const char* op = "radam_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
  if (on_device(params))
    return generic::radam_step(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps,
                               weight_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  std::vector<double> bc1(n), bc2s(n), rect(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add(i, {params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]});
    // rect < 0 marks the un-rectified (SGD with momentum) update of the first steps.
    const RadamScalars s = radam_scalars(steps[i], beta1, beta2);
    bc1[i] = s.bias_correction1;
    bc2s[i] = s.bias_correction2_sqrt;
    rect[i] = s.rect;
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* m = slot<T>(p, 2);
    T* v = slot<T>(p, 3);
    const A wd = A(weight_decay), b1 = A(beta1), omb1 = A(1 - beta1), b2 = A(beta2);
    const A omb2 = A(1 - beta2), ep = A(eps), c1 = A(bc1[i]), c2s = A(bc2s[i]), l = A(lr),
            r = A(rect[i]);
    const bool has_wd = weight_decay != 0, rectified = rect[i] >= 0;
    for (int64_t j = b; j < e; ++j) {
      A g = A(grad[j]);
      if (maximize) g = -g;
      A x = A(param[j]);
      if (has_wd) g = g + wd * x;
      A mj = A(T(A(m[j]) * b1 + omb1 * g));
      A vj = A(T(A(v[j]) * b2 + omb2 * (g * g)));
      m[j] = T(mj);
      v[j] = T(vj);
      A upd = A(T(A(T(mj / c1)) * l));
      if (rectified) {
        A adaptive = A(T(c2s / A(T(A(T(std::sqrt(vj))) + ep))));
        upd = A(T(A(T(upd * adaptive)) * r));
      }
      param[j] = T(x - upd);
    }
  });
}

}  // namespace ember::optim::functional
