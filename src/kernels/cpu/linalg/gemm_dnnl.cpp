// oneDNN matmul for 16-bit float operands (see gemm_dnnl.h). As for convolutions, creating a
// primitive costs far more than running a small one, so primitives are cached by problem, scale
// factors and thread count. oneDNN 2.x runs bfloat16 products natively from AVX-512 on; on
// other CPUs it has no implementation or only a reference one, and callers fall back (Note
// [16-bit float GEMM] in strided_gemm.cpp).
#include "kernels/cpu/linalg/gemm_dnnl.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/parallel_internal.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/kernel_registry.h"

namespace ember::cpu {
namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

memory::data_type dnnl_type(ScalarType t) {
  if (t == kBFloat16) return memory::data_type::bf16;
  if (t == kHalf) return memory::data_type::f16;
  return memory::data_type::f32;
}

struct Entry {
  dnnl::matmul prim;
  memory::desc a, b, c, scratchpad;
};

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// The descs of one operand: a broadcast batch (stride 0) becomes a batch dim of 1.
memory::desc operand_desc(ScalarType dt, int64_t batch, int64_t rows, int64_t cols, MatStrides s) {
  const bool bcast = s.bs == 0 || batch == 1;
  const int64_t span = std::max<int64_t>({1, s.rs * rows, s.cs * cols});
  return memory::desc({bcast ? 1 : batch, rows, cols}, dnnl_type(dt),
                      {bcast ? span : s.bs, s.rs, s.cs});
}

/// A fast primitive for the problem, or null when oneDNN has none (or only its reference one).
std::shared_ptr<Entry> create(ScalarType ab, ScalarType cdt, int64_t batch, int64_t m, int64_t n,
                              int64_t k, MatStrides sa, MatStrides sb, int64_t cbs, int64_t crs,
                              float alpha, float beta) {
  auto e = std::make_shared<Entry>();
  e->a = operand_desc(ab, batch, m, k, sa);
  e->b = operand_desc(ab, batch, k, n, sb);
  e->c = memory::desc({batch, m, n}, dnnl_type(cdt), {batch == 1 ? m * crs : cbs, crs, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.f) attr.set_output_scales(0, {alpha});
  if (beta != 0.f) {
    dnnl::post_ops po;
    po.append_sum(beta);
    attr.set_post_ops(po);
  }
  try {
    dnnl::matmul::desc d(e->a, e->b, e->c);
    dnnl::matmul::primitive_desc pd(d, attr, cpu_engine());
    if (std::string_view(pd.impl_info_str()).find("ref") != std::string_view::npos) return nullptr;
    e->prim = dnnl::matmul(pd);
    e->scratchpad = pd.scratchpad_desc();
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return e;
}

constexpr size_t kMaxEntries = 256;  // bounded: a new problem past the bound clears the cache

std::shared_ptr<Entry> lookup(ScalarType ab, ScalarType cdt, int64_t batch, int64_t m, int64_t n,
                              int64_t k, MatStrides sa, MatStrides sb, int64_t cbs, int64_t crs,
                              float alpha, float beta) {
  static std::mutex mu;
  // A null entry is cached too: a problem oneDNN cannot run is not re-created every call.
  static std::map<std::vector<int64_t>, std::shared_ptr<Entry>> cache;
  std::vector<int64_t> key{int64_t(ab),
                           int64_t(cdt),
                           batch,
                           m,
                           n,
                           k,
                           sa.bs,
                           sa.rs,
                           sa.cs,
                           sb.bs,
                           sb.rs,
                           sb.cs,
                           cbs,
                           crs,
                           f32_bits(alpha),
                           f32_bits(beta),
                           get_num_threads()};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto e = create(ab, cdt, batch, m, n, k, sa, sb, cbs, crs, alpha, beta);
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(std::move(key), std::move(e)).first->second;
}

}  // namespace

bool dnnl_gemm_available(ScalarType ab) {
  auto probe = [](ScalarType t) {
    const int64_t s = 64;
    return create(t, kFloat, 1, s, s, s, {0, s, 1}, {0, s, 1}, s * s, s, 1.f, 0.f) != nullptr;
  };
  static const bool bf16 = probe(kBFloat16);
  static const bool f16 = probe(kHalf);
  return ab == kBFloat16 ? bf16 : ab == kHalf ? f16 : false;
}

bool dnnl_gemm(ScalarType ab, ScalarType cdt, int64_t batch, int64_t m, int64_t n, int64_t k,
               const void* a, MatStrides sa, const void* b, MatStrides sb, void* c, int64_t cbs,
               int64_t crs, float alpha, float beta) {
  if (!dnnl_gemm_available(ab)) return false;
  std::shared_ptr<Entry> e = lookup(ab, cdt, batch, m, n, k, sa, sb, cbs, crs, alpha, beta);
  if (!e) return false;
  // oneDNN's OpenMP runtime reads the calling thread's thread count.
  if (omp_get_max_threads() != get_num_threads()) omp_set_num_threads(get_num_threads());
  auto& eng = cpu_engine();
  dnnl::stream s(eng);
  std::unordered_map<int, memory> args;
  args.emplace(DNNL_ARG_SRC, memory(e->a, eng, const_cast<void*>(a)));
  args.emplace(DNNL_ARG_WEIGHTS, memory(e->b, eng, const_cast<void*>(b)));
  args.emplace(DNNL_ARG_DST, memory(e->c, eng, c));
  Tensor scratch;
  if (const size_t bytes = e->scratchpad.get_size()) {
    scratch = empty_tensor({int64_t(bytes)}, kByte);
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(e->scratchpad, eng, scratch.data_ptr()));
  }
  e->prim.execute(s, args);
  s.wait();
  return true;
}

void convert_matrix(ScalarType from, const void* src, MatStrides ss, ScalarType to, void* dst,
                    MatStrides ds, int64_t batch, int64_t rows, int64_t cols) {
  ElementwiseFn fn = kernels().get_cast(from, to);
  EMBER_INTERNAL_ASSERT(fn, "no cast kernel");
  const int64_t fi = int64_t(elementSize(from)), ti = int64_t(elementSize(to));
  const int64_t strides[2] = {ti, ss.cs * fi};
  const char* s0 = static_cast<const char*>(src);
  char* d0 = static_cast<char*>(dst);
  // One row per call of the cast loop: a unit-stride row takes its vector path.
  parallel_for(0, batch * rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, cols)),
               [&](int64_t r0, int64_t r1) {
                 const OpParams params{};
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t i = r / rows, j = r % rows;
                   char* data[2] = {d0 + (i * ds.bs + j * ds.rs) * ti,
                                    const_cast<char*>(s0) + (i * ss.bs + j * ss.rs) * fi};
                   fn(data, strides, cols, params);
                 }
               });
}

}  // namespace ember::cpu
