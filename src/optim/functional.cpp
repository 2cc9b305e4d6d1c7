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

  // Adds one parameter of a group that check_group validated: slots[0] is the param, slots[1]
  // the grad; undefined slots are unused.
  void add(std::initializer_list<Tensor> slots) {
    Entry e;
    int s = 0;
    for (const Tensor& t : slots) e.orig[s++] = t;
    const Tensor& p = e.orig[0];
    dtype_ = p.scalar_type();
    bool same_layout = dense_nonoverlapping(p);
    for (int k = 1; k < nslots_; ++k)
      if (e.orig[k].defined()) same_layout = same_layout && e.orig[k].strides() == p.strides();
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

}  // namespace

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled) {
  const char* op = decoupled ? "adamw_step" : "adam_step";
  const size_t n = params.size();
  check_group(op, params, grads, {&exp_avgs, &exp_avg_sqs, amsgrad ? &max_exp_avg_sqs : nullptr},
              {steps.size()});
  if (on_device(params))
    return device::adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr,
                             beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled);
  MultiTensor mt(op, 5, {true, false, true, true, true});
  std::vector<AdamScalars> sc(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add({params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
            amsgrad ? max_exp_avg_sqs[i] : Tensor()});
    sc[i] = adam_scalars(steps[i], lr, beta1, beta2);
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
    const A bc2s = A(sc[i].bias_correction2_sqrt), neg_step = A(-sc[i].step_size);
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
  check_group(op, params, grads, {momentum != 0 ? &momentum_buffers : nullptr}, {}, true);
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
    mt.add({params[i], grads[i], momentum != 0 ? momentum_buffers[i] : Tensor()});
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
  check_group(op, params, grads, {&state_sums}, {steps.size()});
  if (on_device(params))
    return generic::adagrad_step(params, grads, state_sums, steps, lr, weight_decay, lr_decay, eps,
                                 maximize);
  MultiTensor mt(op, 3, {true, false, true});
  std::vector<double> clr(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add({params[i], grads[i], state_sums[i]});
    clr[i] = adagrad_lr(lr, lr_decay, steps[i]);
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
  check_group(
      op, params, grads,
      {&square_avgs, centered ? &grad_avgs : nullptr, momentum > 0 ? &momentum_buffers : nullptr});
  if (on_device(params))
    return generic::rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers, lr, alpha,
                                 eps, weight_decay, momentum, centered, maximize);
  MultiTensor mt(op, 5, {true, false, true, true, true});
  for (size_t i = 0; i < n; ++i)
    mt.add({params[i], grads[i], square_avgs[i], centered ? grad_avgs[i] : Tensor(),
            momentum > 0 ? momentum_buffers[i] : Tensor()});
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
  check_group(op, params, grads, {&square_avgs, &acc_deltas});
  if (on_device(params))
    return generic::adadelta_step(params, grads, square_avgs, acc_deltas, lr, rho, eps,
                                  weight_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  for (size_t i = 0; i < n; ++i) mt.add({params[i], grads[i], square_avgs[i], acc_deltas[i]});
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
  check_group(op, params, grads, {&exp_avgs, &exp_infs}, {steps.size()});
  if (on_device(params))
    return generic::adamax_step(params, grads, exp_avgs, exp_infs, steps, lr, beta1, beta2, eps,
                                weight_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  std::vector<double> clr(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add({params[i], grads[i], exp_avgs[i], exp_infs[i]});
    clr[i] = bias_corrected_lr(lr, beta1, steps[i]);
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
  check_group(op, params, grads, {&exp_avgs, &exp_avg_sqs}, {mu_products.size(), steps.size()});
  if (on_device(params))
    return generic::nadam_step(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, lr, beta1,
                               beta2, eps, weight_decay, momentum_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  std::vector<NadamScalars> sc(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add({params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]});
    sc[i] = nadam_scalars(mu_products[i], steps[i], lr, beta1, beta2, momentum_decay);
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* m = slot<T>(p, 2);
    T* v = slot<T>(p, 3);
    const A wd = A(weight_decay), b1 = A(beta1), omb1 = A(1 - beta1), b2 = A(beta2);
    const A omb2 = A(1 - beta2), ep = A(eps), bc = A(sc[i].bias_correction2);
    const A cg = A(sc[i].grad_coef), ca = A(sc[i].avg_coef);
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
  check_group(op, params, grads, {&exp_avgs, &exp_avg_sqs}, {steps.size()});
  if (on_device(params))
    return generic::radam_step(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps,
                               weight_decay, maximize);
  MultiTensor mt(op, 4, {true, false, true, true});
  std::vector<RadamScalars> sc(n);
  for (size_t i = 0; i < n; ++i) {
    mt.add({params[i], grads[i], exp_avgs[i], exp_avg_sqs[i]});
    // rect < 0 marks the un-rectified (SGD with momentum) update of the first steps.
    sc[i] = radam_scalars(steps[i], beta1, beta2);
  }
  mt.run([&](auto tag, size_t i, void* const* p, int64_t b, int64_t e) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using A = acc_t<T>;
    T* param = slot<T>(p, 0);
    const T* grad = slot<T>(p, 1);
    T* m = slot<T>(p, 2);
    T* v = slot<T>(p, 3);
    const A wd = A(weight_decay), b1 = A(beta1), omb1 = A(1 - beta1), b2 = A(beta2);
    const A omb2 = A(1 - beta2), ep = A(eps), c1 = A(sc[i].bias_correction1),
            c2s = A(sc[i].bias_correction2_sqrt), l = A(lr), r = A(sc[i].rect);
    const bool has_wd = weight_decay != 0, rectified = sc[i].rect >= 0;
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
