// Batching rule of the fused attention primitive (Note [Batching rules]): the vmap batch becomes
// one more leading dim of query, key and value, which the kernel already treats as a batch.

#include <algorithm>
#include <optional>

#include "ember/nn/functional/attention.h"
#include "func/batching.h"

namespace ember::func {

namespace {

std::vector<Tensor> rule_flash_attention(const BoxedCall& c, const TransformLevel& l) {
  const Tensor &q = arg_tensor(c, 0), &k = arg_tensor(c, 1), &v = arg_tensor(c, 2);
  const int64_t rank = std::max({q.dim(), k.dim(), v.dim()});
  // Batch first, then every operand padded to one rank so that the leading dims line up.
  auto phys = [&](const Tensor& t) {
    Tensor p = front_or_expand(t, l);
    while (p.dim() < rank + 1) p = p.unsqueeze(1);
    return p;
  };
  Tensor pq = phys(q), pk = phys(k), pv = phys(v);
  DimVector batch(pq.sizes().slice(0, size_t(rank - 1)));
  for (const Tensor* t : {&pk, &pv})
    for (int64_t d = 0; d < rank - 1; ++d)
      batch[size_t(d)] = std::max(batch[size_t(d)], t->size(d));
  auto full = [&](const Tensor& t) {
    DimVector s(batch);
    s.push_back(t.size(-2));
    s.push_back(t.size(-1));
    return t.expand(IntArrayRef(s));
  };
  Tensor mask = arg_tensor(c, 5);
  if (mask.defined() && batched_at(mask, l)) {
    const int64_t mrank = mask.dim();
    mask = front(mask, l).v;
    for (int64_t d = mrank; d < rank; ++d) mask = mask.unsqueeze(1);
  }
  std::optional<double> scale;
  if (!arg_none(c, 6)) scale = arg_double(c, 6);
  auto [out, lse] = _scaled_dot_product_flash_attention_for_cpu(
      full(pq), full(pk), full(pv), arg_double(c, 3), arg_bool(c, 4), mask, scale);
  return {wrap0(out, l), wrap0(lse, l)};
}

struct Register {
  Register() {
    register_batch_rule(OpId::_scaled_dot_product_flash_attention_for_cpu, rule_flash_attention);
  }
} g_register;

}  // namespace
}  // namespace ember::func
