// CPU kernels of the fused recurrent gate ops: the per-ISA row kernels (rnn_kernels.cpp) run
// over batch rows in parallel.
#include <algorithm>
#include <string_view>

#include "core/parallel_internal.h"
#include "ember/version.h"
#include "kernels/cpu/nn/rnn.h"
#include "kernels/stubs/rnn.h"

namespace ember {

EMBER_DEFINE_KERNEL(lstm_gates_fwd_stub);
EMBER_DEFINE_KERNEL(lstm_gates_bwd_stub);
EMBER_DEFINE_KERNEL(gru_gates_fwd_stub);
EMBER_DEFINE_KERNEL(gru_gates_bwd_stub);

namespace cpu {
namespace {

// The row kernels of the running CPU's capability, chosen once.
const RnnKernels& rnn_kernels() {
  static const RnnKernels k = [] {
    RnnKernels r;
    const std::string_view cap = cpu_capability();
    if (cap == "avx512")
      cap_avx512::register_rnn_kernels(r);
    else if (cap == "avx2")
      cap_avx2::register_rnn_kernels(r);
    else
      cap_default::register_rnn_kernels(r);
    return r;
  }();
  return k;
}

template <class T>
const RnnKernelsT<T>& kernels_of();
template <>
const RnnKernelsT<float>& kernels_of<float>() {
  return rnn_kernels().f;
}
template <>
const RnnKernelsT<double>& kernels_of<double>() {
  return rnn_kernels().d;
}

/// Rows of one parallel task: about 4k cell elements (each a handful of exp/tanh).
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(1, H)); }

template <class T>
void lstm_fwd_run(const Tensor& ig, const Tensor& hg, const Tensor& cx, Tensor& hy, Tensor& cy,
                  Tensor& ws) {
  const RnnKernelsT<T>& k = kernels_of<T>();
  const int64_t B = cx.size(0), H = cx.size(1);
  const T *pi = ig.data_ptr<T>(), *ph = hg.data_ptr<T>(), *pc = cx.data_ptr<T>();
  T *py = hy.data_ptr<T>(), *pcy = cy.data_ptr<T>(),
    *pw = ws.defined() ? ws.data_ptr<T>() : nullptr;
  parallel_for(0, B, row_grain(H),
               [&](int64_t b0, int64_t b1) { k.lstm_fwd(pi, ph, pc, py, pcy, pw, b0, b1, H); });
}

template <class T>
void lstm_bwd_run(const Tensor& ghy, const Tensor& gcy, const Tensor& ws, const Tensor& cx,
                  const Tensor& cy, Tensor& dg, Tensor& dcx) {
  const RnnKernelsT<T>& k = kernels_of<T>();
  const int64_t B = cx.size(0), H = cx.size(1);
  const T *pgh = ghy.data_ptr<T>(), *pgc = gcy.data_ptr<T>(), *pw = ws.data_ptr<T>(),
          *pc = cx.data_ptr<T>(), *pcy = cy.data_ptr<T>();
  T *pdg = dg.data_ptr<T>(), *pdc = dcx.data_ptr<T>();
  parallel_for(0, B, row_grain(H), [&](int64_t b0, int64_t b1) {
    k.lstm_bwd(pgh, pgc, pw, pc, pcy, pdg, pdc, b0, b1, H);
  });
}

template <class T>
void gru_fwd_run(const Tensor& ig, const Tensor& hg, const Tensor& hx, Tensor& hy, Tensor& ws) {
  const RnnKernelsT<T>& k = kernels_of<T>();
  const int64_t B = hx.size(0), H = hx.size(1);
  const T *pi = ig.data_ptr<T>(), *ph = hg.data_ptr<T>(), *px = hx.data_ptr<T>();
  T *py = hy.data_ptr<T>(), *pw = ws.defined() ? ws.data_ptr<T>() : nullptr;
  parallel_for(0, B, row_grain(H),
               [&](int64_t b0, int64_t b1) { k.gru_fwd(pi, ph, px, py, pw, b0, b1, H); });
}

template <class T>
void gru_bwd_run(const Tensor& ghy, const Tensor& ws, const Tensor& hx, Tensor& dig, Tensor& dhg,
                 Tensor& dhx) {
  const RnnKernelsT<T>& k = kernels_of<T>();
  const int64_t B = hx.size(0), H = hx.size(1);
  const T *pg = ghy.data_ptr<T>(), *pw = ws.data_ptr<T>(), *px = hx.data_ptr<T>();
  T *pdi = dig.data_ptr<T>(), *pdh = dhg.data_ptr<T>(), *pdx = dhx.data_ptr<T>();
  parallel_for(0, B, row_grain(H),
               [&](int64_t b0, int64_t b1) { k.gru_bwd(pg, pw, px, pdi, pdh, pdx, b0, b1, H); });
}

// The ops accept float32 and float64 only.
void lstm_fwd(const Tensor& ig, const Tensor& hg, const Tensor& cx, Tensor& hy, Tensor& cy,
              Tensor& ws) {
  if (ig.dtype() == kFloat)
    lstm_fwd_run<float>(ig, hg, cx, hy, cy, ws);
  else
    lstm_fwd_run<double>(ig, hg, cx, hy, cy, ws);
}

void lstm_bwd(const Tensor& ghy, const Tensor& gcy, const Tensor& ws, const Tensor& cx,
              const Tensor& cy, Tensor& dg, Tensor& dcx) {
  if (ws.dtype() == kFloat)
    lstm_bwd_run<float>(ghy, gcy, ws, cx, cy, dg, dcx);
  else
    lstm_bwd_run<double>(ghy, gcy, ws, cx, cy, dg, dcx);
}

void gru_fwd(const Tensor& ig, const Tensor& hg, const Tensor& hx, Tensor& hy, Tensor& ws) {
  if (ig.dtype() == kFloat)
    gru_fwd_run<float>(ig, hg, hx, hy, ws);
  else
    gru_fwd_run<double>(ig, hg, hx, hy, ws);
}

void gru_bwd(const Tensor& ghy, const Tensor& ws, const Tensor& hx, Tensor& dig, Tensor& dhg,
             Tensor& dhx) {
  if (ws.dtype() == kFloat)
    gru_bwd_run<float>(ghy, ws, hx, dig, dhg, dhx);
  else
    gru_bwd_run<double>(ghy, ws, hx, dig, dhg, dhx);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(lstm_gates_fwd_stub, kCPU, cpu::lstm_fwd);
EMBER_REGISTER_KERNEL(lstm_gates_bwd_stub, kCPU, cpu::lstm_bwd);
EMBER_REGISTER_KERNEL(gru_gates_fwd_stub, kCPU, cpu::gru_fwd);
EMBER_REGISTER_KERNEL(gru_gates_bwd_stub, kCPU, cpu::gru_bwd);

}  // namespace ember
