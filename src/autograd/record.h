#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Recording an op]
// An op that computes with its own kernel (a primitive) records itself at its definition site:
//
//   Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
//     autograd::OpRecorder rec("index_select", {self});   // differentiable inputs, in order
//     Tensor out = ...kernel...;                           // runs with recording paused
//     if (rec) {
//       rec.args(dim, self.sizes());                       // the rules' non-tensor arguments
//       rec.record(out, [](autograd::VjpCtx& c) {
//         return autograd::variable_list{zeros(c.args().ints(1), c.grads[0].options())
//                                            .index_add(c.args().i(0), c.saved[0], c.grads[0])};
//       }, {index}, [](autograd::JvpCtx& c) {
//         return autograd::variable_list{index_select(c.tangents[0], c.args().i(0), c.saved[0])};
//       });
//     }
//     return out;
//   }
//
// - The recorder is active when grad mode is on and an input requires grad, or when a
//   forward-AD level holds a tangent for an input. While it lives (until record()), ops called
//   by the implementation are not recorded: a primitive is one node.
// - The vjp gets one gradient per recorded output (zeros when none flowed) and returns one
//   gradient per input (undefined when not needed; `c.needs(i)`). It may return gradients in
//   the broadcast shape or the promoted dtype: the node sums them to the input's shape, takes
//   the real part for a real input and casts to the input's dtype.
// - `saved` are tensors the rules read (inputs, outputs or tensors the forward computed);
//   backward checks that they were not modified in place since. Non-tensor state is passed with
//   `rec.args(...)` (Note [Rules as data]).
// - The jvp gets the tangents of the inputs at one forward-AD level (undefined for an input
//   without one) and returns the output tangents. Without a jvp, the tangent is computed from
//   the vjp by differentiating it again (exact, about three times the work).
// - Ops whose composite implementation is made of recorded ops need no recorder at all.
// - Complex gradients follow the conjugate-Wirtinger convention: for y = f(z) holomorphic,
//   grad_z = grad_y * conj(f'(z)).

// Note [Rules as data]
// A rule (vjp or jvp) is a plain function of its context: the gradients or tangents, the saved
// tensors and the op's non-tensor arguments (`RuleArgs`, recorded with `rec.args(...)`).
// VjpFn/JvpFn are function pointers, so a lambda that captures anything does not compile:
// - every tensor a rule reads is a saved tensor, version-checked in backward; none hides in a
//   capture where an in-place change would go unnoticed;
// - a node is data (op name, args, saved tensors, edges) that a graph tracer or exporter can
//   read, and recording builds no std::function (no allocation for the captures).
// Args are stored by value in a small variant (ints, floats, bools, Scalars, dtypes, int lists,
// lists of int lists, strings); an enum is stored as its integer (`c.args().e<E>(k)`).

#include <concepts>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "ember/autograd.h"

namespace ember::autograd {

/// One non-tensor argument of a recorded op (Note [Rules as data]); monostate is "None".
using RuleArg = std::variant<std::monostate, int64_t, double, bool, Scalar, ScalarType,
                             std::vector<int64_t>, std::vector<std::vector<int64_t>>, std::string>;

/// Converts one argument given to OpRecorder::args to its stored form.
template <class T>
RuleArg to_rule_arg(const T& v) {
  using D = std::decay_t<T>;
  static_assert(!std::is_same_v<D, Tensor>,
                "a rule reads tensors through the saved list (Note [Rules as data])");
  if constexpr (std::is_same_v<D, RuleArg>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    return v;
  } else if constexpr (std::is_integral_v<D>) {
    return int64_t(v);
  } else if constexpr (std::is_enum_v<D> && !std::is_same_v<D, ScalarType>) {
    return int64_t(v);
  } else if constexpr (std::is_floating_point_v<D>) {
    return double(v);
  } else if constexpr (std::is_same_v<D, Scalar> || std::is_same_v<D, ScalarType>) {
    return v;
  } else if constexpr (std::is_convertible_v<const D&, std::string_view>) {
    return std::string(std::string_view(v));
  } else if constexpr (std::is_same_v<D, OptionalIntArrayRef>) {
    if (!v.has_value()) return std::monostate{};
    return std::vector<int64_t>(v->begin(), v->end());
  } else if constexpr (requires {
                         v.has_value();
                         *v;
                       }) {
    if (!v.has_value()) return std::monostate{};
    return to_rule_arg(*v);
  } else if constexpr (requires {
                         { *v.begin() } -> std::convertible_to<int64_t>;
                       }) {
    return std::vector<int64_t>(v.begin(), v.end());
  } else {
    std::vector<std::vector<int64_t>> r;
    for (const auto& e : v) r.emplace_back(e.begin(), e.end());
    return r;
  }
}

/// The non-tensor arguments of a recorded op, read by its rules by position.
class RuleArgs {
 public:
  template <class... A>
  void set(const A&... a) {
    v_.clear();
    v_.reserve(sizeof...(A));
    (v_.push_back(to_rule_arg(a)), ...);
  }
  size_t size() const { return v_.size(); }
  const RuleArg& operator[](size_t k) const { return at(k); }
  /// Whether argument k is None (an empty optional).
  bool is_none(size_t k) const { return std::holds_alternative<std::monostate>(at(k)); }
  int64_t i(size_t k) const { return get<int64_t>(k); }
  double f(size_t k) const { return get<double>(k); }
  bool b(size_t k) const { return get<bool>(k); }
  const Scalar& scalar(size_t k) const { return get<Scalar>(k); }
  ScalarType dtype(size_t k) const { return get<ScalarType>(k); }
  const std::vector<int64_t>& ints(size_t k) const { return get<std::vector<int64_t>>(k); }
  const std::vector<std::vector<int64_t>>& int_lists(size_t k) const {
    return get<std::vector<std::vector<int64_t>>>(k);
  }
  const std::string& str(size_t k) const { return get<std::string>(k); }
  template <class E>
  E e(size_t k) const {
    return static_cast<E>(i(k));
  }
  /// An optional int list: nullopt for None.
  OptionalIntArrayRef opt_ints(size_t k) const {
    if (is_none(k)) return std::nullopt;
    return IntArrayRef(ints(k));
  }

 private:
  const RuleArg& at(size_t k) const;
  template <class T>
  const T& get(size_t k) const {
    const T* p = std::get_if<T>(&at(k));
    if (!p) bad_type(k);
    return *p;
  }
  [[noreturn]] void bad_type(size_t k) const;
  std::vector<RuleArg> v_;
};

/// Thread-local autograd state (grad mode, pause, forward-AD levels).
struct AutogradTLS {
  bool grad_enabled = true;
  bool paused = false;
  bool inference = false;
  int fw_levels = 0;           ///< number of active forward-AD levels
  uint64_t fw_suppressed = 0;  ///< level bit set while that level's tangents are computed
};
AutogradTLS& tls();

/// One branch for the common case: nothing can be recorded on this thread.
inline bool recording_possible() {
  const AutogradTLS& t = tls();
  return !t.paused && (t.grad_enabled || t.fw_levels > 0);
}

struct VjpCtx {
  variable_list grads;  ///< one per recorded output (zeros when none flowed)
  variable_list saved;  ///< the saved tensors, version-checked
  std::vector<bool> needs_grad;
  const RuleArgs* rule_args = nullptr;
  /// Whether input `i` needs a gradient.
  bool needs(size_t i) const { return i < needs_grad.size() && needs_grad[i]; }
  /// The op's non-tensor arguments (OpRecorder::args).
  const RuleArgs& args() const { return *rule_args; }
};

struct JvpCtx {
  variable_list tangents;  ///< per input at this level; undefined when the input has none
  variable_list inputs;    ///< primal inputs
  variable_list outputs;   ///< primal outputs
  variable_list saved;
  const RuleArgs* rule_args = nullptr;
  /// The tangent of input `i`, or zeros of its shape.
  Tensor tangent_or_zeros(size_t i) const;
  /// The op's non-tensor arguments (OpRecorder::args).
  const RuleArgs& args() const { return *rule_args; }
};

/// A backward rule: input gradients from the context (Note [Rules as data]).
using VjpFn = variable_list (*)(VjpCtx&);
/// A forward rule: output tangents from the context.
using JvpFn = variable_list (*)(JvpCtx&);

class OpRecorder {
 public:
  /// `name` is the op name ("index_select"); the node is named like PyTorch's
  /// ("IndexSelectBackward0"). `inputs` are the differentiable inputs. A name ending in '_'
  /// marks an in-place op on inputs[0]: it is checked (leaf that requires grad) right here,
  /// before the kernel writes. `name` must be a string literal (it outlives the op).
  OpRecorder(const char* name, std::initializer_list<Tensor> inputs);
  OpRecorder(const char* name, const variable_list& inputs);
  ~OpRecorder();
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  /// Whether the op must be recorded.
  explicit operator bool() const { return active_; }
  /// Whether reverse mode is recording (an input requires grad under grad mode).
  bool reverse() const { return reverse_; }
  /// Whether input `i` gets a gradient in reverse mode. A rule saves a tensor that only other
  /// inputs' gradients read just when those are needed, as PyTorch (x @ w saves x for w's
  /// gradient only), so an in-place change to it is not an error otherwise.
  bool input_needs_grad(size_t i) const;

  /// Stores the non-tensor arguments the rules read (`c.args()`); a no-op when not recording.
  template <class... A>
  void args(const A&... a) {
    if (active_) args_.set(a...);
  }

  /// Wires `outputs` (the differentiable ones, in vjp order) into the graph.
  void record(const variable_list& outputs, VjpFn vjp, const variable_list& saved = {},
              JvpFn jvp = {});
  void record(const Tensor& output, VjpFn vjp, const variable_list& saved = {}, JvpFn jvp = {});
  /// For an in-place op: `self` (inputs[0]) was modified and is the output. Rebases self's
  /// history onto the new node (through its base when self is a view). Save tensors needed
  /// before the modification yourself (a clone), before the kernel runs.
  void record_inplace(const Tensor& self, VjpFn vjp, const variable_list& saved = {},
                      JvpFn jvp = {});
  /// Outputs get a node that raises "[name] the derivative is not implemented" in backward.
  void record_not_implemented(const variable_list& outputs);

  /// Resumes recording early (normally done by record()).
  void resume();
  /// Which PyTorch overload of the op this call is: the node is named "<Op>Backward<n>"
  /// (sum(dim) is SumBackward1, Note [Node names]). Call before record().
  void set_overload(int n) { overload_ = n; }

 private:
  void init(const char* name);
  void finish(const variable_list& outputs, VjpFn vjp, const variable_list& saved, JvpFn jvp,
              bool inplace);

  const char* name_;
  variable_list inputs_;
  RuleArgs args_;
  uint32_t version_before_ = 0;
  bool inplace_ = false;  ///< the name ends in '_': inputs[0] is written in place
  bool active_ = false;
  bool reverse_ = false;
  bool forward_ = false;
  bool paused_ = false;
  int overload_ = 0;
};

/// Makes the saved tensors of the recorded-op nodes reachable from `roots` (down to nodes older
/// than `since`, a sequence number) that are `from` refer to `to` instead (functional_call:
/// Note [Substituting module tensors]).
void redirect_saved(const variable_list& roots, uint64_t since, const TensorImpl* from,
                    const Tensor& to);

/// Sums `g` down to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& g, IntArrayRef shape);

/// Checks the out= form of an op is not used with inputs that require grad (PyTorch's
/// "out=... arguments don't support automatic differentiation").
void check_out_not_differentiable(const char* op, std::initializer_list<Tensor> inputs);

/// Whether any of `ts` requires grad or holds a forward tangent (and recording is on).
bool any_needs_recording(std::initializer_list<Tensor> ts);

/// PyTorch-style node name: "index_select" -> "IndexSelectBackward0"; `overload` picks the
/// suffix ("sum", 1 -> "SumBackward1"). Note [Node names]
std::string backward_name(const char* op, int overload = 0);

}  // namespace ember::autograd
