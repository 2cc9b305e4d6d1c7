// CPU kernels of the loss ops: target checks and tables, and the CTC alpha/beta recursions.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/error.h"
#include "kernels/stubs/loss.h"

namespace ember {

EMBER_DEFINE_KERNEL(nll_check_targets_stub);
EMBER_DEFINE_KERNEL(margin_check_targets_stub);
EMBER_DEFINE_KERNEL(multilabel_margin_targets_stub);
EMBER_DEFINE_KERNEL(ctc_loss_stub);

namespace cpu {
namespace {

// Every target is checked before any arithmetic reads it (IndexError, as PyTorch).
void nll_check_targets(const Tensor& target, int64_t n_classes, int64_t ignore_index) {
  const int64_t* p = target.data_ptr<int64_t>();
  for (int64_t i = 0, n = target.numel(); i < n; ++i) {
    EMBER_CHECK_INDEX(p[i] == ignore_index || (p[i] >= 0 && p[i] < n_classes), "Target ", p[i],
                      " is out of bounds.");
  }
}

void margin_check_targets(const Tensor& target, int64_t n_classes, const char* op) {
  const int64_t* p = target.data_ptr<int64_t>();
  for (int64_t i = 0, n = target.numel(); i < n; ++i)
    EMBER_CHECK_INDEX(p[i] >= 0 && p[i] < n_classes, "[", op, "] target ", p[i],
                      " is out of range for ", n_classes, " classes");
}

// Duplicates count twice, as PyTorch's loop.
void multilabel_margin_targets(const Tensor& target, Tensor& counts, Tensor& is_target,
                               const char* op) {
  const int64_t N = target.size(0), C = target.size(1);
  const int64_t* tp = target.data_ptr<int64_t>();
  double* cp = counts.data_ptr<double>();
  double* ip = is_target.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < C; ++k) {
      const int64_t j = tp[n * C + k];
      if (j < 0) break;
      EMBER_CHECK_INDEX(j < C, "[", op, "] target ", j, " is out of range for ", C, " classes");
      cp[n * C + j] += 1;
      ip[n * C + j] = 1;
    }
  }
}

// ---- CTC ----

// Note [CTC recursion]
// The extended target l' interleaves blanks: l'_s = blank for even s, target[(s-1)/2] for odd s.
// alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) [when l'_s is not
// blank and differs from l'_{s-2}]) + lp_t(l'_s); the loss is -logsumexp(alpha_{T-1}(S'-1),
// alpha_{T-1}(S'-2)). beta runs the same recursion backwards; the gradient of the loss w.r.t.
// lp_t(c) is exp(lp_t(c)) - exp(-nll) * sum_{s: l'_s = c} exp(alpha_t(s) + beta_t(s) - lp_t(c))
// as PyTorch's (the gradient of log_probs assuming they are log_softmax outputs).

double lse(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  const double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

struct CtcSample {
  std::vector<int64_t> target;
  int64_t T = 0;
};

/// -log p(target | lp) of one sample and, when `grad` is given, d nll / d lp for its (T, C)
/// slice (unscaled). `lp` is (Tmax, C) with row stride `ts`.
template <class T>
double ctc_one(const T* lp, int64_t ts, int64_t C, const CtcSample& s, int64_t blank,
               double* grad) {
  const int64_t L = int64_t(s.target.size()), S = 2 * L + 1, Tn = s.T;
  auto lab = [&](int64_t k) { return k % 2 == 0 ? blank : s.target[size_t(k / 2)]; };
  const double ninf = -INFINITY;
  std::vector<double> alpha(size_t(Tn * S), ninf), beta(size_t(Tn * S), ninf);
  if (Tn == 0) return L == 0 ? 0.0 : INFINITY;
  alpha[0] = double(lp[lab(0)]);
  if (S > 1) alpha[1] = double(lp[lab(1)]);
  for (int64_t t = 1; t < Tn; ++t) {
    for (int64_t k = 0; k < S; ++k) {
      double a = alpha[size_t((t - 1) * S + k)];
      if (k >= 1) a = lse(a, alpha[size_t((t - 1) * S + k - 1)]);
      if (k >= 2 && lab(k) != blank && lab(k) != lab(k - 2))
        a = lse(a, alpha[size_t((t - 1) * S + k - 2)]);
      alpha[size_t(t * S + k)] = a == ninf ? ninf : a + double(lp[t * ts + lab(k)]);
    }
  }
  double ll = alpha[size_t((Tn - 1) * S + S - 1)];
  if (S > 1) ll = lse(ll, alpha[size_t((Tn - 1) * S + S - 2)]);
  const double nll = -ll;
  if (!grad) return nll;
  beta[size_t((Tn - 1) * S + S - 1)] = double(lp[(Tn - 1) * ts + lab(S - 1)]);
  if (S > 1) beta[size_t((Tn - 1) * S + S - 2)] = double(lp[(Tn - 1) * ts + lab(S - 2)]);
  for (int64_t t = Tn - 2; t >= 0; --t) {
    for (int64_t k = 0; k < S; ++k) {
      double b = beta[size_t((t + 1) * S + k)];
      if (k + 1 < S) b = lse(b, beta[size_t((t + 1) * S + k + 1)]);
      if (k + 2 < S && lab(k) != blank && lab(k) != lab(k + 2))
        b = lse(b, beta[size_t((t + 1) * S + k + 2)]);
      beta[size_t(t * S + k)] = b == ninf ? ninf : b + double(lp[t * ts + lab(k)]);
    }
  }
  std::vector<double> acc(static_cast<size_t>(C));
  for (int64_t t = 0; t < Tn; ++t) {
    std::fill(acc.begin(), acc.end(), ninf);
    for (int64_t k = 0; k < S; ++k) {
      const size_t i = size_t(t * S + k);
      acc[size_t(lab(k))] = lse(acc[size_t(lab(k))], alpha[i] + beta[i]);
    }
    for (int64_t c = 0; c < C; ++c) {
      const double l = double(lp[t * ts + c]);
      grad[t * C + c] = std::exp(l) - std::exp(acc[size_t(c)] + nll - l);
    }
  }
  return nll;
}

void ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
              IntArrayRef target_lengths, int64_t blank, bool zero_infinity, Tensor& nll,
              Tensor& grad) {
  const int64_t N = log_probs.size(1), C = log_probs.size(2);
  // Every label is checked before any recursion runs.
  const int64_t* tp = targets.data_ptr<int64_t>();
  const bool padded = targets.dim() == 2;
  std::vector<CtcSample> samples(static_cast<size_t>(N));
  int64_t pos = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t Li = target_lengths[size_t(n)];
    samples[size_t(n)].T = input_lengths[size_t(n)];
    const int64_t* src;
    if (padded) {
      src = tp + n * targets.size(1);
    } else {
      src = tp + pos;
      pos += Li;
    }
    for (int64_t k = 0; k < Li; ++k) {
      EMBER_CHECK_INDEX(src[k] >= 0 && src[k] < C, "[ctc_loss] target label ", src[k],
                        " out of range for ", C, " classes");
      samples[size_t(n)].target.push_back(src[k]);
    }
  }
  const bool want_grad = grad.defined();
  double* out = nll.data_ptr<double>();
  std::vector<double> gbuf;
  for (int64_t n = 0; n < N; ++n) {
    const CtcSample& s = samples[size_t(n)];
    double* gp = nullptr;
    if (want_grad) {
      gbuf.assign(size_t(std::max<int64_t>(1, s.T * C)), 0.0);
      gp = gbuf.data();
    }
    out[n] = log_probs.dtype() == kFloat
                 ? ctc_one(log_probs.data_ptr<float>() + n * C, N * C, C, s, blank, gp)
                 : ctc_one(log_probs.data_ptr<double>() + n * C, N * C, C, s, blank, gp);
    const bool inf = std::isinf(out[n]);
    if (zero_infinity && inf) out[n] = 0;
    if (want_grad && !(zero_infinity && inf)) {
      double* g = grad.data_ptr<double>();
      for (int64_t t = 0; t < s.T; ++t)
        for (int64_t c = 0; c < C; ++c) g[(t * N + n) * C + c] = gbuf[size_t(t * C + c)];
    }
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(nll_check_targets_stub, kCPU, cpu::nll_check_targets);
EMBER_REGISTER_KERNEL(margin_check_targets_stub, kCPU, cpu::margin_check_targets);
EMBER_REGISTER_KERNEL(multilabel_margin_targets_stub, kCPU, cpu::multilabel_margin_targets);
EMBER_REGISTER_KERNEL(ctc_loss_stub, kCPU, cpu::ctc_loss);

}  // namespace ember
