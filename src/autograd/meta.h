#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// The autograd state of a tensor and the small operations on it that the recorder, the engine
// and the Tensor methods share.

#include <functional>
#include <memory>
#include <vector>

#include "autograd/record.h"
#include "ember/autograd.h"

namespace ember::autograd {

struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad = false;
  bool retains_grad = false;
  uint32_t output_nr = 0;
  /// Version of the shared counter when grad_fn was set (a view whose base changed since
  /// regenerates its grad_fn: Note [Views and in-place ops]).
  uint32_t attr_version = 0;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;
  /// Hooks of a leaf (run by its AccumulateGrad before accumulating).
  std::vector<std::pair<unsigned, std::function<Tensor(const Tensor&)>>> leaf_hooks;
  std::vector<std::pair<unsigned, std::function<void(const Tensor&)>>> post_acc_hooks;
  /// Forward-AD tangents, keyed by level_key().
  std::vector<std::pair<uint64_t, Tensor>> fw_grads;

  ~AutogradMeta() override {
    if (retains_grad && grad_fn) grad_fn->set_retains_grad_hook(output_nr, nullptr);
  }
};

/// The meta of `t`, or null.
inline AutogradMeta* meta(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
}
inline AutogradMeta* meta(const TensorImpl* t) {
  return static_cast<AutogradMeta*>(t->autograd_meta());
}
/// The meta of `t`, created when missing.
AutogradMeta& materialize_meta(const Tensor& t);

/// The tensor's grad_fn, regenerated first when it is a view whose base changed in place.
std::shared_ptr<Node> grad_fn_of(const Tensor& t);

/// The edge a gradient for `t` flows into: (grad_fn, output_nr) or the grad accumulator of a
/// leaf that requires grad; invalid otherwise.
Edge gradient_edge(const Tensor& t);

/// Installs the retain_grad hook of `self` on its grad_fn.
void install_retain_hook(TensorImpl* self, AutogradMeta& m);
/// Makes `t` output `output_nr` of `fn`.
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr);

/// The tangent of `t` at `level`, or undefined.
Tensor fw_grad(const Tensor& t, uint64_t level);
/// Whether `t` has any tangent at an active, non-suppressed level.
bool has_fw_grad(const Tensor& t);
/// The key tangents of `level` are stored under (level and its generation); UINT64_MAX when
/// the level is not active.
uint64_t level_key(uint64_t level);
/// Levels active on this thread, innermost last.
const std::vector<uint64_t>& active_levels();

/// Next global sequence number (node creation order).
uint64_t next_sequence_nr();

/// A tensor kept for backward, with the version it had then.
struct SavedVariable {
  Tensor data;  ///< outputs: a detached alias (no reference cycle through grad_fn)
  uint32_t version = 0;
  bool is_output = false;
  uint32_t output_nr = 0;
  /// An output's forward-AD tangents (keyed as AutogradMeta::fw_grads): the detached alias
  /// does not carry them, and forward-over-reverse needs them in the rule.
  std::vector<std::pair<uint64_t, Tensor>> fw_grads;
  /// Saves `t` (an output when it is one of `outputs`); inference tensors are refused.
  static SavedVariable save(const Tensor& t, const variable_list& outputs, const char* op);
  /// For a saved output: records the tangents `outputs` got from the forward-AD rules (called
  /// once they are computed, after save()).
  void capture_fw_grads(const variable_list& outputs);
  /// The tensor, checked against in-place modification since it was saved; an output is
  /// reconnected to `owner` under grad mode (double backward) and gets its tangents back.
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
};

/// The node that accumulates into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(intrusive_ptr<TensorImpl> var);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  const intrusive_ptr<TensorImpl>& variable() const { return var_; }

 private:
  intrusive_ptr<TensorImpl> var_;
};

/// Engine entry shared by Tensor::backward, autograd::backward and autograd::grad.
/// When `inputs` is non-empty and `accumulate` is false, returns their gradients.
variable_list run_backward(const variable_list& roots, const variable_list& grad_roots,
                           bool keep_graph, bool create_graph, const variable_list& inputs,
                           bool allow_unused, bool accumulate);

/// Anomaly mode: the creation trace of the current op (empty when anomaly mode is off).
std::string anomaly_trace_now();

/// Called by the engine when the Python binding is loaded to take/release the GIL around
/// long waits; unused in pure C++.
void check_inference_tensor_use(const Tensor& t, const char* op);

}  // namespace ember::autograd
