// Convolution through oneDNN 2.x primitives. Creating a primitive costs far more than running a
// small one, so primitives (with their reorders) are cached by geometry, dtype and thread count
// (oneDNN's OpenMP kernels split the work for the thread count seen at creation).
#include "kernels/cpu/nn/conv_dnnl.h"

#include <omp.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <tuple>
#include <vector>

#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

dnnl::engine& cpu_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

memory::data_type dnnl_type(ScalarType dt) {
  return dt == kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
}

tag plain_tag(int ndims) {
  switch (ndims) {
    case 1:
      return tag::a;
    case 3:
      return tag::abc;
    case 4:
      return tag::abcd;
    case 5:
      return tag::abcde;
    default:
      return tag::abcdef;
  }
}

struct Key {
  ConvPass pass;
  ScalarType dt;
  bool bias;
  int threads;
  std::vector<int64_t> dims;
  bool operator<(const Key& o) const {
    return std::tie(pass, dt, bias, threads, dims) <
           std::tie(o.pass, o.dt, o.bias, o.threads, o.dims);
  }
};

// One cached pass: the primitive, the plain ("user") descs of its two inputs and output, the
// descs the primitive chose, and the reorders between them where they differ.
struct Entry {
  dnnl::primitive prim;
  memory::desc user[3], chosen[3], bias_md, scratchpad;
  std::optional<dnnl::reorder> to_chosen[2], to_user;
  int arg[3] = {0, 0, 0};
};

struct Descs {
  memory::desc x, w, y, bias;
  memory::dims strides, dilates, pad_l, pad_r;
};

Descs make_descs(const ConvGeom& g, ScalarType dt, bool any, bool bias) {
  const auto t = dnnl_type(dt);
  Descs d;
  memory::dims xd{g.n, g.c}, yd{g.n, g.k}, wd;
  if (g.groups > 1)
    wd = {g.groups, g.k / g.groups, g.c / g.groups};
  else
    wd = {g.k, g.c};
  for (int i = 0; i < g.nd; ++i) {
    xd.push_back(g.in[i]);
    yd.push_back(g.out[i]);
    wd.push_back(g.kernel[i]);
    d.strides.push_back(g.stride[i]);
    d.dilates.push_back(g.dilation[i] - 1);
    d.pad_l.push_back(g.pad_l[i]);
    d.pad_r.push_back(g.pad_r[i]);
  }
  auto md = [&](const memory::dims& dims) {
    return any ? memory::desc(dims, t, tag::any)
               : memory::desc(dims, t, plain_tag(int(dims.size())));
  };
  d.x = md(xd);
  d.y = md(yd);
  d.w = md(wd);
  if (bias) d.bias = memory::desc({g.k}, t, tag::a);
  return d;
}

std::shared_ptr<Entry> create(ConvPass pass, const ConvGeom& g, ScalarType dt, bool bias) {
  auto& eng = cpu_engine();
  // format_tag::any lets oneDNN pick its blocked layouts (reordered to and from the plain ones),
  // as PyTorch does: the blocked kernels outrun the plain-layout ones by far.
  const Descs any = make_descs(g, dt, true, bias);
  const Descs plain = make_descs(g, dt, false, bias);
  const auto algo = dnnl::algorithm::convolution_direct;
  auto e = std::make_shared<Entry>();
  // User scratchpads (from ember's allocator, per call) keep concurrent calls of one cached
  // primitive from sharing oneDNN's per-library scratch memory.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::desc fwd_desc(dnnl::prop_kind::forward_training, algo, any.x, any.w,
                                           any.bias, any.y, any.strides, any.dilates, any.pad_l,
                                           any.pad_r);
  dnnl::convolution_forward::primitive_desc fwd_pd(fwd_desc, attr, eng);
  switch (pass) {
    case ConvPass::Forward: {
      e->prim = dnnl::convolution_forward(fwd_pd);
      e->scratchpad = fwd_pd.scratchpad_desc();
      e->user[0] = plain.x, e->user[1] = plain.w, e->user[2] = plain.y;
      e->chosen[0] = fwd_pd.src_desc(), e->chosen[1] = fwd_pd.weights_desc();
      e->chosen[2] = fwd_pd.dst_desc();
      e->arg[0] = DNNL_ARG_SRC, e->arg[1] = DNNL_ARG_WEIGHTS, e->arg[2] = DNNL_ARG_DST;
      if (bias) e->bias_md = fwd_pd.bias_desc();
      break;
    }
    case ConvPass::BackwardData: {
      dnnl::convolution_backward_data::desc d(algo, any.x, any.w, any.y, any.strides, any.dilates,
                                              any.pad_l, any.pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(d, attr, eng, fwd_pd);
      e->prim = dnnl::convolution_backward_data(pd);
      e->scratchpad = pd.scratchpad_desc();
      e->user[0] = plain.y, e->user[1] = plain.w, e->user[2] = plain.x;
      e->chosen[0] = pd.diff_dst_desc(), e->chosen[1] = pd.weights_desc();
      e->chosen[2] = pd.diff_src_desc();
      e->arg[0] = DNNL_ARG_DIFF_DST, e->arg[1] = DNNL_ARG_WEIGHTS, e->arg[2] = DNNL_ARG_DIFF_SRC;
      break;
    }
    case ConvPass::BackwardWeights: {
      dnnl::convolution_backward_weights::desc d(algo, any.x, any.w, any.bias, any.y, any.strides,
                                                 any.dilates, any.pad_l, any.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(d, attr, eng, fwd_pd);
      e->prim = dnnl::convolution_backward_weights(pd);
      e->scratchpad = pd.scratchpad_desc();
      e->user[0] = plain.x, e->user[1] = plain.y, e->user[2] = plain.w;
      e->chosen[0] = pd.src_desc(), e->chosen[1] = pd.diff_dst_desc();
      e->chosen[2] = pd.diff_weights_desc();
      e->arg[0] = DNNL_ARG_SRC, e->arg[1] = DNNL_ARG_DIFF_DST, e->arg[2] = DNNL_ARG_DIFF_WEIGHTS;
      if (bias) e->bias_md = pd.diff_bias_desc();
      break;
    }
  }
  for (int i = 0; i < 2; ++i)
    if (e->chosen[i] != e->user[i])
      e->to_chosen[i] =
          dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->user[i], eng, e->chosen[i]));
  if (e->chosen[2] != e->user[2])
    e->to_user = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e->chosen[2], eng, e->user[2]));
  return e;
}

constexpr size_t kMaxEntries = 512;  // bounded: a new shape past the bound clears the cache

// Entries are shared: a caller keeps its entry alive while another thread clears the cache.
std::shared_ptr<Entry> lookup(ConvPass pass, const ConvGeom& g, ScalarType dt, bool bias) {
  static std::mutex mu;
  static std::map<Key, std::shared_ptr<Entry>> cache;
  Key key{pass, dt, bias, get_num_threads(), {g.nd, g.n, g.c, g.k, g.groups}};
  for (int i = 0; i < g.nd; ++i)
    for (int64_t v :
         {g.in[i], g.out[i], g.kernel[i], g.stride[i], g.pad_l[i], g.pad_r[i], g.dilation[i]})
      key.dims.push_back(v);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto e = create(pass, g, dt, bias);  // throws dnnl::error when unsupported: nothing cached
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(std::move(key), std::move(e)).first->second;
}

// Scratch memory from ember's caching allocator (a fresh malloc per call page-faults).
struct Scratch {
  Tensor buf;
  void* get(size_t bytes) {
    buf = empty_tensor({int64_t(bytes)}, kByte);
    return buf.data_ptr();
  }
};

}  // namespace

bool dnnl_conv(ConvPass pass, const ConvGeom& g, ScalarType dt, const void* a, const void* b,
               void* out, void* bias) {
  if (dt != kFloat && dt != kBFloat16) return false;
  std::shared_ptr<Entry> e;
  try {
    e = lookup(pass, g, dt, bias != nullptr);
  } catch (const dnnl::error&) {
    return false;
  }
  // oneDNN's OpenMP runtime reads the calling thread's thread count.
  if (omp_get_max_threads() != get_num_threads()) omp_set_num_threads(get_num_threads());
  auto& eng = cpu_engine();
  dnnl::stream s(eng);
  std::unordered_map<int, memory> args;
  Scratch scratch[4];
  const void* ins[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    memory user(e->user[i], eng, const_cast<void*>(ins[i]));
    if (e->to_chosen[i]) {
      memory m(e->chosen[i], eng, scratch[i].get(e->chosen[i].get_size()));
      e->to_chosen[i]->execute(s, user, m);
      args.emplace(e->arg[i], m);
    } else {
      args.emplace(e->arg[i], user);
    }
  }
  memory user_out(e->user[2], eng, out);
  memory prim_out = user_out;
  if (e->to_user) prim_out = memory(e->chosen[2], eng, scratch[2].get(e->chosen[2].get_size()));
  args.emplace(e->arg[2], prim_out);
  if (bias)
    args.emplace(pass == ConvPass::Forward ? DNNL_ARG_BIAS : DNNL_ARG_DIFF_BIAS,
                 memory(e->bias_md, eng, bias));
  if (const size_t n = e->scratchpad.get_size())
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(e->scratchpad, eng, scratch[3].get(n)));
  e->prim.execute(s, args);
  if (e->to_user) e->to_user->execute(s, prim_out, user_out);
  s.wait();
  return true;
}

}  // namespace ember::cpu
