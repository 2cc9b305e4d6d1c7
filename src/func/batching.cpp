// The vmap layer of the call path: finds batched arguments and runs batching rules
// (Note [Batching rules]); the one rule of the elementwise family.

#include "func/batching.h"

#include <array>
#include <functional>

#include "ember/error.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember::func {

namespace {
struct RuleRow {
  BatchRule rule = nullptr;
  bool loop = false;
};
std::array<RuleRow, kNumOps>& rules() {
  static std::array<RuleRow, kNumOps> r{};
  return r;
}
}  // namespace

void register_batch_rule(OpId op, BatchRule rule, bool loop) {
  rules()[size_t(op)] = RuleRow{rule, loop};
}
BatchRule batch_rule(OpId op) { return rules()[size_t(op)].rule; }
bool batch_rule_is_loop(OpId op) { return rules()[size_t(op)].loop; }

// ---------------------------------------------------------------------------------------------
// Argument helpers
// ---------------------------------------------------------------------------------------------

namespace {
const Tensor& undefined_tensor() {
  static const Tensor t;
  return t;
}
[[noreturn]] void bad_arg(const BoxedCall& c, size_t k, const char* want) {
  EMBER_INTERNAL_ASSERT(false, "[", op_info(c.op).id, "] batching rule: argument ", k, " is not ",
                        want);
  std::abort();
}
}  // namespace

const Tensor& arg_tensor(const BoxedCall& c, size_t k) {
  if (k >= c.args.size() || std::holds_alternative<std::monostate>(c.args[k]))
    return undefined_tensor();
  if (const Tensor* t = std::get_if<Tensor>(&c.args[k])) return *t;
  bad_arg(c, k, "a tensor");
}
int64_t arg_int(const BoxedCall& c, size_t k) {
  if (const int64_t* v = std::get_if<int64_t>(&c.args[k])) return *v;
  if (const bool* v = std::get_if<bool>(&c.args[k])) return *v;
  bad_arg(c, k, "an int");
}
double arg_double(const BoxedCall& c, size_t k) {
  if (const double* v = std::get_if<double>(&c.args[k])) return *v;
  if (const int64_t* v = std::get_if<int64_t>(&c.args[k])) return double(*v);
  bad_arg(c, k, "a float");
}
bool arg_bool(const BoxedCall& c, size_t k) {
  if (const bool* v = std::get_if<bool>(&c.args[k])) return *v;
  bad_arg(c, k, "a bool");
}
Scalar arg_scalar(const BoxedCall& c, size_t k) {
  const dispatch::IValue& v = c.args[k];
  if (const Scalar* s = std::get_if<Scalar>(&v)) return *s;
  if (const double* s = std::get_if<double>(&v)) return Scalar(*s);
  if (const int64_t* s = std::get_if<int64_t>(&v)) return Scalar(*s);
  if (const bool* s = std::get_if<bool>(&v)) return Scalar(*s);
  bad_arg(c, k, "a Scalar");
}
bool arg_none(const BoxedCall& c, size_t k) {
  return k >= c.args.size() || std::holds_alternative<std::monostate>(c.args[k]);
}
std::vector<int64_t> arg_ints(const BoxedCall& c, size_t k) {
  if (arg_none(c, k)) return {};
  if (const auto* v = std::get_if<std::vector<int64_t>>(&c.args[k])) return *v;
  if (const int64_t* v = std::get_if<int64_t>(&c.args[k])) return {*v};
  bad_arg(c, k, "an int list");
}
std::optional<ScalarType> arg_dtype(const BoxedCall& c, size_t k) {
  if (arg_none(c, k)) return std::nullopt;
  if (const ScalarType* v = std::get_if<ScalarType>(&c.args[k])) return *v;
  bad_arg(c, k, "a dtype");
}
std::optional<int64_t> arg_opt_int(const BoxedCall& c, size_t k) {
  if (arg_none(c, k)) return std::nullopt;
  return arg_int(c, k);
}
std::string arg_str(const BoxedCall& c, size_t k) {
  if (const std::string* v = std::get_if<std::string>(&c.args[k])) return *v;
  bad_arg(c, k, "a string");
}
const std::vector<Tensor>& arg_tensors(const BoxedCall& c, size_t k) {
  if (const auto* v = std::get_if<std::vector<Tensor>>(&c.args[k])) return *v;
  bad_arg(c, k, "a tensor list");
}

bool batched_at(const Tensor& t, const TransformLevel& lvl) {
  return is_batched(t) && batch_info(t).level == lvl.level;
}

Front front(const Tensor& t, const TransformLevel& lvl) {
  auto [v, bd] = unwrap_level(t, lvl.level);
  if (!bd) return {t, false};
  return {*bd == 0 ? v : v.movedim(*bd, 0), true};
}

Tensor front_or_expand(const Tensor& t, const TransformLevel& lvl) {
  Front f = front(t, lvl);
  if (f.batched || !t.defined()) return f.v;
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  sizes.insert(sizes.begin(), lvl.batch_size);
  return t.unsqueeze(0).expand(sizes);
}

Tensor wrap0(const Tensor& physical, const TransformLevel& lvl) {
  return make_batched(physical, 0, lvl);
}

int64_t phys_dim(int64_t d, int64_t rank, const char* op) {
  int64_t r = std::max<int64_t>(rank, 1);
  EMBER_CHECK_INDEX(d >= -r && d < r, "[", op,
                    "] Dimension out of range (expected to be in range of [", -r, ", ", r - 1,
                    "], but got ", d, ")");
  return (d < 0 ? d + r : d) + 1;
}

std::vector<int64_t> phys_dims(const std::vector<int64_t>& dims, int64_t rank, const char* op) {
  std::vector<int64_t> r;
  r.reserve(dims.size());
  for (int64_t d : dims) r.push_back(phys_dim(d, rank, op));
  return r;
}

std::vector<Tensor> loop_over_batch(
    const std::vector<Tensor>& args, const TransformLevel& lvl,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f) {
  std::vector<Tensor> fronts;
  std::vector<bool> batched;
  for (const Tensor& a : args) {
    Front fr = front(a, lvl);
    fronts.push_back(fr.v);
    batched.push_back(fr.batched);
  }
  std::vector<std::vector<Tensor>> per;
  for (int64_t b = 0; b < lvl.batch_size; ++b) {
    std::vector<Tensor> slice;
    for (size_t k = 0; k < args.size(); ++k)
      slice.push_back(batched[k] ? fronts[k].select(0, b) : fronts[k]);
    per.push_back(f(slice));
  }
  std::vector<Tensor> out;
  if (per.empty()) return out;
  for (size_t j = 0; j < per[0].size(); ++j) {
    std::vector<Tensor> col;
    for (auto& p : per) col.push_back(p[j]);
    out.push_back(wrap0(stack(col, 0), lvl));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The layer
// ---------------------------------------------------------------------------------------------

namespace {

const char* op_display(OpId op) { return op_info(op).id; }

// The innermost live level any of `ts` is batched at (null when none is batched).
const TransformLevel* top_level(ArrayRef<Tensor> ts, const char* op) {
  const TransformLevel* top = nullptr;
  for (const Tensor& t : ts) {
    if (!is_batched(t)) continue;
    check_not_escaped(t, op);
    const BatchInfo& i = batch_info(t);
    const TransformLevel* l = live_level(i.level, i.generation);
    if (!top || l->level > top->level) top = l;
  }
  return top;
}

void check_randomness(OpId op) {
  const TransformLevel* v = innermost_vmap();
  if (!v || v->randomness != Randomness::Error) return;
  EMBER_THROW(Error, "[", op_display(op),
              "] vmap: called random operation while in randomness error mode. Please either "
              "use the 'same' or 'different' randomness flags on vmap or perform the "
              "randomness operation out of vmap");
}

// A random factory (no tensor argument) under randomness="different" draws one sample per
// batch element: its rule makes a batched result. The rule's own factory call runs plainly.
thread_local bool t_in_factory_rule = false;
}  // namespace

PlainRandomFactories::PlainRandomFactories() : prev_(t_in_factory_rule) {
  t_in_factory_rule = true;
}
PlainRandomFactories::~PlainRandomFactories() { t_in_factory_rule = prev_; }

namespace {
bool random_factory(const BoxedCall& call, uint32_t traits) {
  using namespace op_trait;
  if (!(traits & kRandom) || !(traits & kFactory) || t_in_factory_rule) return false;
  const TransformLevel* v = innermost_vmap();
  if (!v || v->randomness != Randomness::Different) return false;
  for (const dispatch::IValue& a : call.args)
    if (std::holds_alternative<Tensor>(a) || std::holds_alternative<std::vector<Tensor>>(a))
      return false;
  BatchRule r = batch_rule(call.op);
  if (!r) return false;
  std::vector<Tensor> out;
  {
    PlainRandomFactories plain;
    out = r(call, *v);
  }
  dispatch::vmap_results() = std::move(out);
  return true;
}

bool redirect(const BoxedCall& call) {
  const uint32_t traits = op_info(call.op).traits;
  using namespace op_trait;
  if (traits & kRandom) check_randomness(call.op);
  const TransformLevel* lvl = nullptr;
  for (const dispatch::IValue& v : call.args) {
    const TransformLevel* l = nullptr;
    if (const Tensor* t = std::get_if<Tensor>(&v))
      l = top_level(ArrayRef<Tensor>(t, 1), op_display(call.op));
    else if (const auto* ts = std::get_if<std::vector<Tensor>>(&v))
      l = top_level(*ts, op_display(call.op));
    else if (const auto* ix = std::get_if<std::vector<indexing::TensorIndex>>(&v))
      for (const auto& i : *ix) {
        if (!i.is_tensor()) continue;
        const TransformLevel* li = top_level(ArrayRef<Tensor>(&i.tensor(), 1), op_display(call.op));
        if (li && (!l || li->level > l->level)) l = li;
      }
    if (l && (!lvl || l->level > lvl->level)) lvl = l;
  }
  if (!lvl) return random_factory(call, traits);
  const char* name = op_display(call.op);
  EMBER_CHECK(!(traits & kOut), "[", name,
              "] vmap: out= arguments are not supported inside vmap; use the functional form");
  EMBER_CHECK(!(traits & kDynamicShape), "[", name,
              "] vmap: the output shape of this op depends on the values of its input, which "
              "vmap does not support (the batch elements could have different shapes)");
  BatchRule r = batch_rule(call.op);
  if (!r) {
    if (traits & kComposite) return false;
    EMBER_THROW(NotImplementedError, "[", name,
                "] has no batching rule for vmap. Compute it outside vmap or loop over the "
                "batch.");
  }
  std::vector<Tensor> out = r(call, *lvl);
  dispatch::vmap_results() = std::move(out);
  return true;
}

// The elementwise family: operands padded to the logical rank with the batch dim first, so
// ordinary broadcasting lines the batch dims up.
bool elementwise_rule(OpId op, ArrayRef<Tensor> inputs, const OpParams& params, int mode,
                      Tensor* out, Tensor& result) {
  const char* name = op_name(op);
  const TransformLevel* lvl = top_level(inputs, name);
  if (mode == int(OutMode::Out) && out) {
    const TransformLevel* lo = top_level(ArrayRef<Tensor>(out, 1), name);
    if (lo && (!lvl || lo->level > lvl->level)) lvl = lo;
  }
  if (!lvl) return false;
  EMBER_CHECK(mode != int(OutMode::Out), "[", name,
              "] vmap: out= arguments are not supported inside vmap; use the functional form");
  int64_t rank = 0;
  for (const Tensor& t : inputs) rank = std::max(rank, t.dim());
  const bool inplace = mode == int(OutMode::InPlace);
  if (inplace) {
    EMBER_CHECK(batched_at(inputs[0], *lvl), "[", inplace_name(op),
                "] vmap: inplace arithmetic(self, *extra_args) is not possible because there "
                "exists a Tensor `other` in extra_args that has more elements than `self`. This "
                "happened due to `other` being vmapped over but `self` not being vmapped over in "
                "a vmap. Please try to use out-of-place operators instead of inplace "
                "arithmetic. If said operator is being called inside the PyTorch framework, "
                "please file a bug report instead.");
  }
  Tensor phys[3];
  for (size_t k = 0; k < inputs.size(); ++k) {
    Front f = front(inputs[k], *lvl);
    phys[k] = f.v;
    if (f.batched)
      for (int64_t d = inputs[k].dim(); d < rank; ++d) phys[k] = phys[k].unsqueeze(1);
  }
  const OutMode m = inplace ? OutMode::InPlace : OutMode::Functional;
  Tensor r;
  switch (inputs.size()) {
    case 1:
      r = elementwise(op, {phys[0]}, params, m);
      break;
    case 2:
      r = elementwise(op, {phys[0], phys[1]}, params, m);
      break;
    default:
      r = elementwise(op, {phys[0], phys[1], phys[2]}, params, m);
      break;
  }
  result = inplace ? inputs[0] : wrap0(r, *lvl);
  return true;
}

struct Install {
  Install() {
    register_core_rules();
    register_nn_rules();
    // The layer boxes every call's arguments (the rules read them).
    dispatch::set_layer_hooks(dispatch::kVmap, dispatch::LayerHooks{nullptr, nullptr, true});
    dispatch::set_vmap_hooks(dispatch::VmapHooks{redirect, elementwise_rule});
  }
} g_install;

}  // namespace
}  // namespace ember::func
