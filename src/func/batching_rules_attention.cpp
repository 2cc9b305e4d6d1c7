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

// The backward's tensors share their leading dims, so batch-first physical tensors do too.
std::vector<Tensor> rule_flash_attention_backward(const BoxedCall& c, const TransformLevel& l) {
  std::vector<Tensor> t;
  for (size_t i = 0; i < 6; ++i) t.push_back(front_or_expand(arg_tensor(c, i), l));
  Tensor mask = arg_tensor(c, 8);
  if (mask.defined() && batched_at(mask, l)) {
    const int64_t mrank = mask.dim();
    mask = front(mask, l).v;
    for (int64_t d = mrank; d < arg_tensor(c, 1).dim(); ++d) mask = mask.unsqueeze(1);
  }
  std::optional<double> scale;
  if (!arg_none(c, 9)) scale = arg_double(c, 9);
  auto [gq, gk, gv] = _scaled_dot_product_flash_attention_for_cpu_backward(
      t[0], t[1], t[2], t[3], t[4], t[5], arg_double(c, 6), arg_bool(c, 7), mask, scale);
  return {wrap0(gq, l), wrap0(gk, l), wrap0(gv, l)};
}

struct Register {
  Register() {
    register_batch_rule(OpId::_scaled_dot_product_flash_attention_for_cpu, rule_flash_attention);
    register_batch_rule(OpId::_scaled_dot_product_flash_attention_for_cpu_backward,
                        rule_flash_attention_backward);
  }
} g_register;

}  // namespace
}  // namespace ember::func
