#include "kernels/cpu/elementwise/elementwise.h"

#include "kernels/cpu/capability.h"
#include "kernels/cpu/elementwise/streaming.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numeric>
#include <string>

#include "core/parallel_internal.h"
#include "ember/error.h"

namespace ember::cpu {

ElementwisePlan make_plan(const Tensor& out, ArrayRef<const Tensor*> inputs) {
  ElementwisePlan p;
  const int nt = 1 + int(inputs.size());
  EMBER_INTERNAL_ASSERT(nt <= ElementwisePlan::kMaxOperands);
  p.ntensors = nt;
  const int64_t nd = out.dim();
  p.numel = out.numel();
  p.out_bytes = p.numel * int64_t(out.itemsize());

  // Fast path: contiguous operands of out's shape and one-element operands make one 1-D run.
  if (out.is_contiguous()) {
    bool flat = true;
    for (size_t k = 0; k < inputs.size() && flat; ++k) {
      const Tensor& t = *inputs[k];
      flat = t.numel() == 1 || (t.is_contiguous() && t.sizes() == out.sizes());
    }
    if (flat) {
      p.shape.assign(1, p.numel);
      p.strides[0].assign(1, int64_t(out.itemsize()));
      p.data[0] = static_cast<char*>(out.data_ptr());
      for (int k = 1; k < nt; ++k) {
        const Tensor& t = *inputs[k - 1];
        p.strides[k].assign(1, t.numel() == 1 ? 0 : int64_t(t.itemsize()));
        p.data[k] = static_cast<char*>(t.data_ptr());
      }
      return p;
    }
  }

  // Byte strides of every operand in out's dims (slowest first), broadcast inputs get 0.
  std::array<DimVector, ElementwisePlan::kMaxOperands> st;
  const Tensor* ops[ElementwisePlan::kMaxOperands] = {&out};
  for (int k = 1; k < nt; ++k) ops[k] = inputs[k - 1];
  for (int k = 0; k < nt; ++k) {
    const Tensor& t = *ops[k];
    st[k].assign(size_t(nd), 0);
    int64_t isz = int64_t(t.itemsize());
    int64_t off = nd - t.dim();
    IntArrayRef ts = t.sizes(), tst = t.strides();
    for (int64_t d = 0; d < t.dim(); ++d) st[k][off + d] = ts[d] == 1 ? 0 : tst[d] * isz;
    p.data[k] = static_cast<char*>(t.data_ptr());
  }

  // Order dims fastest-first: by the output's stride, ties broken by the inputs'. Size-1 dims
  // vanish in coalescing anyway.
  DimVector perm(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) perm[d] = nd - 1 - d;
  auto faster = [&](int64_t a, int64_t b) {  // true if dim a should come before dim b
    for (int k = 0; k < nt; ++k) {
      int64_t sa = st[k][a], sb = st[k][b];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa < sb;
    }
    return false;
  };
  // Insertion sort keeps the natural order among ties (dims are few).
  for (int64_t i = 1; i < nd; ++i) {
    for (int64_t j = i; j > 0 && faster(perm[j], perm[j - 1]); --j) std::swap(perm[j], perm[j - 1]);
  }

  p.shape.clear();
  for (int k = 0; k < nt; ++k) p.strides[k].clear();
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = perm[i];
    int64_t size = out.sizes()[d];
    if (size == 1) continue;
    if (!p.shape.empty()) {
      // Merge with the previous (faster) dim when every operand steps through it evenly.
      size_t last = p.shape.size() - 1;
      bool can = true;
      for (int k = 0; k < nt && can; ++k) can = st[k][d] == p.strides[k][last] * p.shape[last];
      if (can) {
        p.shape[last] *= size;
        continue;
      }
    }
    p.shape.push_back(size);
    for (int k = 0; k < nt; ++k) p.strides[k].push_back(st[k][d]);
  }
  if (p.shape.empty()) {
    p.shape.push_back(p.numel == 0 ? 0 : 1);
    for (int k = 0; k < nt; ++k) p.strides[k].push_back(0);
  }
  return p;
}

namespace {
// Runs elements [begin, end) of the flattened iteration space.
void run_range(const ElementwisePlan& p, ElementwiseFn fn, const OpParams& params, int64_t begin,
               int64_t end) {
  const int nt = p.ntensors;
  const int64_t nd = int64_t(p.shape.size());
  int64_t idx[64];
  EMBER_INTERNAL_ASSERT(nd <= 64);
  char* ptr[ElementwisePlan::kMaxOperands];
  int64_t inner[ElementwisePlan::kMaxOperands];
  int64_t rem = begin;
  for (int64_t d = 0; d < nd; ++d) {
    idx[d] = rem % p.shape[d];
    rem /= p.shape[d];
  }
  for (int k = 0; k < nt; ++k) {
    ptr[k] = p.data[k];
    for (int64_t d = 0; d < nd; ++d) ptr[k] += idx[d] * p.strides[k][d];
    inner[k] = p.strides[k][0];
  }
  int64_t i = begin;
  while (i < end) {
    int64_t n = std::min(p.shape[0] - idx[0], end - i);
    fn(ptr, inner, n, params);
    i += n;
    if (i >= end) break;
    // Advance: finish dim 0, then carry into the slower dims.
    for (int k = 0; k < nt; ++k) ptr[k] += n * p.strides[k][0];
    idx[0] += n;
    for (int64_t d = 0; d < nd - 1 && idx[d] == p.shape[d]; ++d) {
      idx[d] = 0;
      ++idx[d + 1];
      for (int k = 0; k < nt; ++k) ptr[k] += p.strides[k][d + 1] - p.shape[d] * p.strides[k][d];
    }
  }
}
}  // namespace

void run_plan(const ElementwisePlan& p, ElementwiseFn fn, const OpParams& params, int64_t grain) {
  if (p.numel == 0) return;
  if (p.numel <= grain) {
    run_range(p, fn, params, 0, p.numel);
    return;
  }
  // Note [Streaming stores]: the decision is per op (its whole output), the flag per thread.
  const bool stream = p.out_bytes >= streaming_store_threshold();
  parallel_for(0, p.numel, grain, [&](int64_t b, int64_t e) {
    StreamingOutputScope scope(stream);
    run_range(p, fn, params, b, e);
  });
}

namespace {

int64_t default_streaming_threshold() {
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  if (const char* env = std::getenv("EMBER_STREAMING_STORES")) {
    const std::string v = env;
    EMBER_CHECK_VALUE(v == "off" || v == "on" || v == "auto",
                      "[EMBER_STREAMING_STORES] expected off, on or auto, got '", v, "'");
    if (v == "off") return kNever;
    if (v == "on") return 0;
  }
  // Half the last-level cache: a bigger output cannot stay cached for the op that reads it.
  const int64_t llc = last_level_cache_bytes();
  return llc > 0 ? std::max<int64_t>(llc / 2, 1 << 20) : int64_t(16) << 20;
}

// Read on first use, so that a bad EMBER_STREAMING_STORES throws from the op, not at load time.
std::atomic<int64_t>& stream_threshold() {
  static std::atomic<int64_t> t{default_streaming_threshold()};
  return t;
}
thread_local bool t_streaming_output = false;

}  // namespace

int64_t streaming_store_threshold() { return stream_threshold().load(std::memory_order_relaxed); }

int64_t set_streaming_store_threshold(int64_t bytes) {
  return stream_threshold().exchange(bytes, std::memory_order_relaxed);
}

bool streaming_output() { return t_streaming_output; }

StreamingOutputScope::StreamingOutputScope(bool on) : prev_(t_streaming_output) {
  t_streaming_output = on;
}
StreamingOutputScope::~StreamingOutputScope() { t_streaming_output = prev_; }

}  // namespace ember::cpu
