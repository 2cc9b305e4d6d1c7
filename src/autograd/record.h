#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Recording an op]
// An op that computes with its own kernel (a primitive) records itself at its definition site:
//
//   Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
//     autograd::OpRecorder rec("index_select", {self});   // differentiable inputs, in order
//     Tensor out = ...kernel...;                           // runs with recording paused
//     if (rec) rec.record(out, [dim, sizes = self.sizes().vec()](autograd::VjpCtx& c) {
//       return autograd::variable_list{zeros(sizes, c.grads[0].options())
//                                          .index_add(dim, c.saved[0], c.grads[0])};
//     }, {index}, [dim](autograd::JvpCtx& c) {
//       return autograd::variable_list{index_select(c.tangents[0], dim, c.saved[0])};
//     });
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
// - `saved` are tensors the rules read (inputs or outputs); backward checks that they were not
//   modified in place since. Non-tensor state is captured by the lambdas.
// - The jvp gets the tangents of the inputs at one forward-AD level (undefined for an input
//   without one) and returns the output tangents. Without a jvp, the tangent is computed from
//   the vjp by differentiating it again (exact, about three times the work).
// - Ops whose composite implementation is made of recorded ops need no recorder at all.
// - Complex gradients follow the conjugate-Wirtinger convention: for y = f(z) holomorphic,
//   grad_z = grad_y * conj(f'(z)).

#include <functional>
#include <initializer_list>

#include "ember/autograd.h"

namespace ember::autograd {

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
  /// Whether input `i` needs a gradient.
  bool needs(size_t i) const { return i < needs_grad.size() && needs_grad[i]; }
};

struct JvpCtx {
  variable_list tangents;  ///< per input at this level; undefined when the input has none
  variable_list inputs;    ///< primal inputs
  variable_list outputs;   ///< primal outputs
  variable_list saved;
  /// The tangent of input `i`, or zeros of its shape.
  Tensor tangent_or_zeros(size_t i) const;
};

using VjpFn = std::function<variable_list(VjpCtx&)>;
using JvpFn = std::function<variable_list(JvpCtx&)>;

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
  uint32_t version_before_ = 0;
  bool inplace_ = false;  ///< the name ends in '_': inputs[0] is written in place
  bool active_ = false;
  bool reverse_ = false;
  bool forward_ = false;
  bool paused_ = false;
  int overload_ = 0;
};

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
