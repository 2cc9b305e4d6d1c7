// CPU kernels of the fused attention ops: the per-ISA tiles (attention_kernels.cpp) run over
// (batch, query block) tasks in the forward and (batch, key block) tasks in the backward.
#include <algorithm>
#include <string_view>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/parallel.h"
#include "ember/version.h"
#include "kernels/cpu/attention/attention.h"
#include "kernels/stubs/attention.h"

namespace ember {

EMBER_DEFINE_KERNEL(flash_attention_fwd_stub);
EMBER_DEFINE_KERNEL(flash_attention_bwd_stub);

namespace cpu {
namespace {

const AttentionKernels& attention_kernels() {
  static const AttentionKernels k = [] {
    AttentionKernels r;
    const std::string_view cap = cpu_capability();
    if (cap == "avx512")
      cap_avx512::register_attention_kernels(r);
    else if (cap == "avx2")
      cap_avx2::register_attention_kernels(r);
    else
      cap_default::register_attention_kernels(r);
    return r;
  }();
  return k;
}

template <class T>
const AttentionKernelsT<T>& kernels_of();
template <>
const AttentionKernelsT<float>& kernels_of<float>() {
  return attention_kernels().f;
}
template <>
const AttentionKernelsT<double>& kernels_of<double>() {
  return attention_kernels().d;
}

/// Runs task(t) for t in [0, n) on up to get_num_threads() workers, round robin, so that the
/// cheap and dear blocks of a causal mask spread evenly.
template <class F>
void run_tasks(int64_t n, const F& task) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), n));
  parallel_for(0, workers, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w)
      for (int64_t t = w; t < n; t += workers) task(w, t);
  });
}

/// The common part of the parameters; fills `mask_off` with each batch's mask offset.
template <class T>
FlashParams<T> make_params(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                           bool causal, double scale, std::vector<int64_t>& mask_off, int64_t& B) {
  FlashParams<T> p;
  p.q = q.data_ptr<T>();
  p.k = k.data_ptr<T>();
  p.v = v.data_ptr<T>();
  p.L = q.size(-2);
  p.S = k.size(-2);
  p.E = q.size(-1);
  p.Ev = v.size(-1);
  p.causal = causal;
  p.scale = T(scale);
  const int64_t nb = q.dim() - 2;
  B = 1;
  for (int64_t d = 0; d < nb; ++d) B *= q.size(d);
  if (mask.defined()) {
    mask_off.assign(size_t(B), 0);
    for (int64_t b = 0; b < B; ++b) {
      int64_t rem = b, off = 0;
      for (int64_t d = nb - 1; d >= 0; --d) {
        off += (rem % mask.size(d)) * mask.stride(d);
        rem /= mask.size(d);
      }
      mask_off[size_t(b)] = off;
    }
    p.mask_bool = mask.dtype() == kBool;
    p.mask = p.mask_bool ? static_cast<const void*>(mask.data_ptr<bool>())
                         : static_cast<const void*>(mask.data_ptr<T>());
    p.mask_off = mask_off.data();
    p.mask_sl = mask.stride(-2);
    p.mask_ss = mask.stride(-1);
  }
  return p;
}

template <class T>
void fwd_run(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, Tensor& out,
             Tensor& lse, bool causal, double scale) {
  std::vector<int64_t> off;
  int64_t B = 0;
  FlashParams<T> p = make_params<T>(q, k, v, mask, causal, scale, off, B);
  p.out = out.data_ptr<T>();
  p.out_lse = lse.data_ptr<T>();
  p.bq = 128;
  p.bk = 256;
  const AttentionKernelsT<T>& kern = kernels_of<T>();
  const int64_t nqb = (p.L + p.bq - 1) / p.bq;
  const int64_t wsz = p.bq * p.bk + p.bq * p.Ev + 3 * p.bq;
  std::vector<std::vector<T>> ws(size_t(std::max(1, get_num_threads())));
  run_tasks(B * nqb, [&](int64_t w, int64_t t) {
    std::vector<T>& buf = ws[size_t(w)];
    if (buf.empty()) buf.resize(size_t(wsz));
    const int64_t b = t / nqb, i0 = (t % nqb) * p.bq;
    kern.fwd(p, b, i0, std::min(p.L, i0 + p.bq), buf.data());
  });
}

template <class T>
void bwd_run(const Tensor& go, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
             const Tensor& lse, const Tensor& mask, Tensor& gq, Tensor& gk, Tensor& gv, bool causal,
             double scale) {
  std::vector<int64_t> off;
  int64_t B = 0;
  FlashParams<T> p = make_params<T>(q, k, v, mask, causal, scale, off, B);
  p.go = go.data_ptr<T>();
  p.lse = lse.data_ptr<T>();
  p.gk = gk.data_ptr<T>();
  p.gv = gv.data_ptr<T>();
  p.bq = 128;
  p.bk = 128;
  const int64_t L = p.L, Ev = p.Ev;
  // delta = rowsum(dO ∘ O), the softmax backward's correction per query.
  std::vector<T> delta(size_t(B * L));
  {
    const T *po = out.data_ptr<T>(), *pg = p.go;
    parallel_for(0, B * L, std::max<int64_t>(1, 16384 / std::max<int64_t>(Ev, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     T s = 0;
                     for (int64_t c = 0; c < Ev; ++c) s += po[r * Ev + c] * pg[r * Ev + c];
                     delta[size_t(r)] = s;
                   }
                 });
  }
  p.delta = delta.data();
  // Key blocks of one batch are split into C chunks when there are fewer batches than threads;
  // chunk c > 0 accumulates its dQ into a buffer of its own, summed at the end.
  const int64_t nkb = (p.S + p.bk - 1) / p.bk;
  const int64_t nt = get_num_threads();
  const int64_t C = std::max<int64_t>(1, std::min<int64_t>(nkb, (nt + B - 1) / B));
  const int64_t qn = gq.numel();
  std::vector<T> part(size_t((C - 1) * qn), T(0));
  T* pgq = gq.data_ptr<T>();
  const AttentionKernelsT<T>& kern = kernels_of<T>();
  std::vector<std::vector<T>> ws(size_t(std::max(1, get_num_threads())));
  run_tasks(B * C, [&](int64_t w, int64_t t) {
    std::vector<T>& buf = ws[size_t(w)];
    if (buf.empty()) buf.resize(size_t(2 * p.bq * p.bk));
    const int64_t b = t / C, c = t % C;
    T* dq = c == 0 ? pgq : part.data() + (c - 1) * qn;
    for (int64_t kb = c; kb < nkb; kb += C)
      kern.bwd(p, b, kb * p.bk, std::min(p.S, (kb + 1) * p.bk), dq, buf.data());
  });
  if (C > 1)
    parallel_for(0, qn, 16384, [&](int64_t a, int64_t e) {
      for (int64_t c = 1; c < C; ++c) {
        const T* src = part.data() + (c - 1) * qn;
        for (int64_t i = a; i < e; ++i) pgq[i] += src[i];
      }
    });
}

void flash_fwd_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                   Tensor& out, Tensor& lse, bool causal, double scale) {
  if (q.dtype() == kDouble)
    fwd_run<double>(q, k, v, mask, out, lse, causal, scale);
  else
    fwd_run<float>(q, k, v, mask, out, lse, causal, scale);
}

void flash_bwd_cpu(const Tensor& go, const Tensor& q, const Tensor& k, const Tensor& v,
                   const Tensor& out, const Tensor& lse, const Tensor& mask, Tensor& gq, Tensor& gk,
                   Tensor& gv, bool causal, double scale) {
  if (q.dtype() == kDouble)
    bwd_run<double>(go, q, k, v, out, lse, mask, gq, gk, gv, causal, scale);
  else
    bwd_run<float>(go, q, k, v, out, lse, mask, gq, gk, gv, causal, scale);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(flash_attention_fwd_stub, kCPU, cpu::flash_fwd_cpu);
EMBER_REGISTER_KERNEL(flash_attention_bwd_stub, kCPU, cpu::flash_bwd_cpu);

}  // namespace ember
