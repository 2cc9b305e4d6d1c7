// Batched wrappers (Note [Batched tensors]) and moving batch dims between the wrapped and the
// physical form.

#include "func/batched.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "core/dispatch_state.h"
#include "ember/error.h"
#include "ember/storage.h"
#include "ember/tensor_impl.h"
#include "ops/call_path.h"

namespace ember::func {

namespace {

// The allocator a BatchedStorage names: it marks the storage as a wrapper's and refuses to
// allocate (nothing may allocate memory "for" a wrapper).
struct BatchedTag final : Allocator {
  DataPtr allocate(size_t) override {
    EMBER_THROW(Error, "[vmap] a batched tensor has no memory of its own");
  }
  void copy_data(void*, const void*, size_t) const override {
    EMBER_THROW(Error, "[vmap] a batched tensor has no memory of its own");
  }
};
BatchedTag g_tag;

// Live wrappers, on every thread. While there are any, the call path's Vmap layer stays on
// process-wide, so an op on a wrapper that escaped its vmap reaches the layer and raises
// (rather than running a kernel on a tensor without memory). With no wrapper alive the layer
// costs nothing outside vmap.
std::atomic<int64_t> g_live{0};
std::mutex g_live_mutex;
void count_wrapper(int64_t delta) {
  if (delta > 0 ? g_live.fetch_add(1) == 0 : g_live.fetch_sub(1) == 1) {
    std::lock_guard<std::mutex> g(g_live_mutex);
    dispatch::set_global_layer(dispatch::kVmap, g_live.load() > 0);
  }
}

struct BatchedStorage final : StorageImpl {
  BatchedStorage(BatchInfo i)
      : StorageImpl(DataPtr(nullptr, nullptr, nullptr, i.value.device()), 0, &g_tag),
        info(std::move(i)) {
    count_wrapper(1);
  }
  ~BatchedStorage() override { count_wrapper(-1); }
  BatchInfo info;
};

}  // namespace

bool is_batched(const Tensor& t) {
  if (!t.defined()) return false;
  const StorageImpl* s = t.unsafeGetTensorImpl()->storage().unsafeGetStorageImpl();
  return s && s->allocator() == &g_tag;
}

const BatchInfo& batch_info(const Tensor& t) {
  return static_cast<const BatchedStorage*>(
             t.unsafeGetTensorImpl()->storage().unsafeGetStorageImpl())
      ->info;
}

Tensor make_batched(const Tensor& value, int64_t bdim, const TransformLevel& lvl) {
  EMBER_INTERNAL_ASSERT(bdim >= 0 && bdim < value.dim(), "batch dim out of range");
  DimVector sizes, strides;
  for (int64_t d = 0; d < value.dim(); ++d) {
    if (d == bdim) continue;
    sizes.push_back(value.size(d));
    strides.push_back(value.stride(d));
  }
  Storage s(make_intrusive<BatchedStorage>(BatchInfo{value, bdim, lvl.level, lvl.generation}));
  auto impl = make_intrusive<TensorImpl>(std::move(s), value.dtype(), sizes, strides, 0);
  impl->set_conj(value.is_conj());
  return Tensor(std::move(impl));
}

void check_not_escaped(const Tensor& t, const char* op) {
  if (!is_batched(t)) return;
  const BatchInfo& i = batch_info(t);
  EMBER_CHECK(live_level(i.level, i.generation) != nullptr, "[", op,
              "] a batched tensor was used outside the vmap that created it (it escaped its "
              "transform, e.g. by being stored in a global or returned through a side "
              "channel). Return values from the vmapped function instead.");
}

std::pair<Tensor, std::optional<int64_t>> unwrap_level(const Tensor& t, int64_t level) {
  if (is_batched(t)) {
    const BatchInfo& i = batch_info(t);
    if (i.level == level) return {i.value, i.bdim};
  }
  return {t, std::nullopt};
}

std::vector<const TransformLevel*> active_vmap_levels() {
  std::vector<const TransformLevel*> r;
  for (const TransformLevel& l : transform_stack())
    if (l.kind == TransformKind::Vmap) r.push_back(&l);
  return r;
}

Decomposed decompose(const Tensor& t) {
  Decomposed d;
  Tensor cur = t;
  std::vector<std::pair<const TransformLevel*, int64_t>> chain;  // outer wrapper first
  while (is_batched(cur)) {
    check_not_escaped(cur, "vmap");
    const BatchInfo& i = batch_info(cur);
    chain.emplace_back(live_level(i.level, i.generation), i.bdim);
    cur = i.value;
  }
  d.physical = cur;
  // Innermost wrapper first: its bdim is physical; an outer one counts in the coordinates of
  // the tensor below it, which lack the dims of the wrappers inside.
  std::vector<int64_t> removed;  // physical dims taken by inner wrappers, ascending
  for (size_t k = chain.size(); k-- > 0;) {
    int64_t pd = chain[k].second;
    for (int64_t q : removed)
      if (pd >= q) ++pd;
    removed.insert(std::upper_bound(removed.begin(), removed.end(), pd), pd);
    d.dims.emplace_back(chain[k].first, pd);
  }
  std::sort(d.dims.begin(), d.dims.end(),
            [](const auto& a, const auto& b) { return a.first->level < b.first->level; });
  return d;
}

Tensor compose(const Decomposed& d) {
  Tensor cur = d.physical;
  std::vector<int64_t> done;
  for (const auto& [lvl, pd] : d.dims) {
    int64_t b = pd;
    for (int64_t q : done)
      if (q < pd) --b;
    cur = make_batched(cur, b, *lvl);
    done.push_back(pd);
  }
  return cur;
}

Tensor strip_levels(const Tensor& t, const std::vector<const TransformLevel*>& levels) {
  if (levels.empty()) return t;
  Decomposed d = decompose(t);
  Tensor p = d.physical;
  // Materialise the levels `t` lacks as new leading dims.
  std::vector<int64_t> lead(levels.size(), -1);
  for (size_t k = 0; k < levels.size(); ++k) {
    for (auto& [lvl, pd] : d.dims)
      if (lvl == levels[k]) lead[k] = pd;
  }
  for (size_t k = 0; k < levels.size(); ++k) {
    if (lead[k] >= 0) continue;
    std::vector<int64_t> sizes(p.sizes().begin(), p.sizes().end());
    sizes.insert(sizes.begin(), levels[k]->batch_size);
    p = p.unsqueeze(0).expand(sizes);
    for (auto& e : d.dims) ++e.second;
    for (auto& l : lead)
      if (l >= 0) ++l;
    lead[k] = 0;
  }
  // Permute: the stripped levels first (in the given order), then the rest as they were.
  std::vector<int64_t> perm(lead.begin(), lead.end());
  for (int64_t q = 0; q < p.dim(); ++q)
    if (std::find(lead.begin(), lead.end(), q) == lead.end()) perm.push_back(q);
  std::vector<int64_t> where(size_t(p.dim()));
  for (size_t k = 0; k < perm.size(); ++k) where[size_t(perm[k])] = int64_t(k);
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k) identity &= perm[k] == int64_t(k);
  Decomposed r;
  r.physical = identity ? p : p.permute(perm);
  for (auto& [lvl, pd] : d.dims) {
    if (std::find(levels.begin(), levels.end(), lvl) != levels.end()) continue;
    r.dims.emplace_back(lvl, where[size_t(pd)]);
  }
  return compose(r);
}

Tensor unstrip_levels(const Tensor& t, const std::vector<const TransformLevel*>& levels) {
  if (levels.empty()) return t;
  Decomposed d = decompose(t);
  std::vector<int64_t> logical;
  for (int64_t q = 0; q < d.physical.dim(); ++q) {
    bool taken = false;
    for (auto& e : d.dims) taken |= e.second == q;
    if (!taken) logical.push_back(q);
  }
  EMBER_INTERNAL_ASSERT(logical.size() >= levels.size(), "unstrip: too few leading dims");
  for (size_t k = 0; k < levels.size(); ++k) d.dims.emplace_back(levels[k], logical[k]);
  std::sort(d.dims.begin(), d.dims.end(),
            [](const auto& a, const auto& b) { return a.first->level < b.first->level; });
  return compose(d);
}

}  // namespace ember::func
