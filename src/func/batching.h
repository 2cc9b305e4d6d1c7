#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Batching rules]
// Under vmap every op entry (EMBER_OP) with a batched argument runs the op's batching rule
// instead of its body. A rule is a function of the boxed call (the op's arguments in the order
// its EMBER_OP line lists them) and the vmap level; it unwraps the batched arguments to their
// physical tensors, calls ember ops on those (moving the batch dim to the front and shifting
// dim arguments by one), and returns the results, which it wraps again at the level. Rules are
// written with ember ops only, so autograd, forward AD and lower vmap levels apply to what they
// call with no extra code (Note [Reverse mode under vmap]).
// - The elementwise family has one rule, at the generic elementwise path (broadcast by padding
//   the batched operands to the logical rank, batch first).
// - Composite ops (kComposite) need no rule: their body runs on the wrappers and the primitives
//   it calls are batched.
// - A primitive without a rule raises NotImplementedError naming the op; ops whose output shape
//   depends on the data, out= forms, and random ops under randomness="error" raise
//   RuntimeError. tests/python/test_func_vmap.py lists the primitives without a rule.
// - A rule that loops over the batch says so where it is registered (kLoop): it is counted in
//   `batch_rule_is_loop`.

#include <optional>
#include <string>
#include <vector>

#include "core/op_table.h"
#include "func/batched.h"
#include "ops/call_path.h"

namespace ember::func {

using dispatch::BoxedCall;

/// A batching rule: the results of `call` at vmap level `lvl`.
using BatchRule = std::vector<Tensor> (*)(const BoxedCall& call, const TransformLevel& lvl);

/// The rule of `op`, or null.
BatchRule batch_rule(OpId op);
/// Whether `op`'s rule loops over the batch (a declared fallback).
bool batch_rule_is_loop(OpId op);

/// Rule helpers: argument k of the call.
const Tensor& arg_tensor(const BoxedCall& c, size_t k);
int64_t arg_int(const BoxedCall& c, size_t k);
double arg_double(const BoxedCall& c, size_t k);
bool arg_bool(const BoxedCall& c, size_t k);
Scalar arg_scalar(const BoxedCall& c, size_t k);
bool arg_none(const BoxedCall& c, size_t k);
std::vector<int64_t> arg_ints(const BoxedCall& c, size_t k);
std::optional<ScalarType> arg_dtype(const BoxedCall& c, size_t k);
std::optional<int64_t> arg_opt_int(const BoxedCall& c, size_t k);
std::string arg_str(const BoxedCall& c, size_t k);
const std::vector<Tensor>& arg_tensors(const BoxedCall& c, size_t k);

/// `t`'s physical tensor with the batch dim of `lvl` first, or `t` itself when it is not
/// batched at `lvl` (then `batched` is false).
struct Front {
  Tensor v;
  bool batched = false;
};
Front front(const Tensor& t, const TransformLevel& lvl);
/// As front(), expanding an unbatched tensor to the batch size.
Tensor front_or_expand(const Tensor& t, const TransformLevel& lvl);
/// Wraps a physical result whose batch dim is first.
Tensor wrap0(const Tensor& physical, const TransformLevel& lvl);
/// Whether `t` is batched at `lvl`.
bool batched_at(const Tensor& t, const TransformLevel& lvl);
/// Logical dim `d` of a rank-`rank` tensor as a dim of its batch-first physical tensor.
int64_t phys_dim(int64_t d, int64_t rank, const char* op);
std::vector<int64_t> phys_dims(const std::vector<int64_t>& dims, int64_t rank, const char* op);

/// Runs `f` once per batch element on the unbatched slices and stacks the results (the declared
/// loop fallback). `f` receives each argument's slice (or the argument itself when unbatched).
std::vector<Tensor> loop_over_batch(
    const std::vector<Tensor>& args, const TransformLevel& lvl,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f);

/// While alive, random factories draw one plain (unbatched) sample even under
/// randomness="different" (a rule that builds the batched sample itself uses it).
class PlainRandomFactories {
 public:
  PlainRandomFactories();
  ~PlainRandomFactories();
  PlainRandomFactories(const PlainRandomFactories&) = delete;
  PlainRandomFactories& operator=(const PlainRandomFactories&) = delete;

 private:
  bool prev_;
};

/// Registers the rules of one family file (called once, from batching.cpp).
void register_batch_rule(OpId op, BatchRule rule, bool loop = false);
void register_core_rules();
void register_nn_rules();

}  // namespace ember::func
