#pragma once
/// Reverse- and forward-mode automatic differentiation, with libtorch's names:
/// `ember::autograd::{Node, grad, backward, Function, AutogradContext, forward_ad, gradcheck}`
/// and the grad-mode guards `NoGradGuard`, `AutoGradMode`, `InferenceMode`.
///
/// Note [Autograd graph]
/// - A tensor produced by a recorded op holds `grad_fn()`, the Node that maps the gradients of
///   that op's outputs to the gradients of its inputs. A node's `next_edges()` point at the
///   nodes of its inputs: their grad_fn (for results of ops) or a grad accumulator (for leaves
///   that require grad). Nodes are owned by the tensors and nodes downstream of them.
/// - Backward runs one pass over the nodes reachable from the roots, in dependency order (ties
///   by creation order, latest first), summing the gradients that arrive at a node before it
///   runs. Saved tensors are freed as soon as a node has run unless `retain_graph`.
/// - Every rule is written with ember ops, so a backward under `create_graph` is itself
///   recorded and can be differentiated again.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// ---------------------------------------------------------------------------------------------
// Grad mode
// ---------------------------------------------------------------------------------------------

/// Thread-local switch for recording ops into the autograd graph.
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// Sets grad mode for a scope and restores it after.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

/// Disables grad mode for a scope (`torch.no_grad()`).
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

/// Inference mode: no recording, no version-counter checks against later autograd use; tensors
/// created inside are inference tensors and may not be saved for backward later.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled();

 private:
  bool prev_grad_;
  bool prev_inference_;
};

namespace autograd {

using variable_list = std::vector<Tensor>;
using edge_list = std::vector<struct Edge>;

/// A gradient edge: the node that takes a gradient and which of its inputs the gradient is.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return function != nullptr; }
};

/// Shape, dtype and device of one input of a node (an output of the forward op).
struct InputMetadata {
  std::vector<int64_t> shape;
  ScalarType dtype = ScalarType::Float;
  Device device{kCPU};
  bool defined = true;
  /// Zeros of this shape and dtype (an undefined gradient made concrete).
  Tensor zeros() const;
};

/// A node of the backward graph (PyTorch's `torch::autograd::Node`).
class Node : public std::enable_shared_from_this<Node> {
 public:
  /// Hook on the gradients arriving at the node: may return replacements (empty keeps them).
  using PreHook = std::function<variable_list(const variable_list& grad_outputs)>;
  /// Hook after the node ran: sees (grad_inputs, grad_outputs), may replace grad_inputs.
  using PostHook = std::function<variable_list(const variable_list& grad_inputs,
                                               const variable_list& grad_outputs)>;

  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Maps gradients w.r.t. the forward outputs to gradients w.r.t. the forward inputs.
  virtual variable_list apply(variable_list&& grads) = 0;
  /// Display name, e.g. "MulBackward0".
  virtual std::string name() const = 0;
  /// Frees saved tensors (after a backward without retain_graph).
  virtual void release_variables() {}
  /// Whether a saved tensor was freed (a second backward through it is an error).
  virtual bool released() const { return false; }

  variable_list operator()(variable_list&& grads) { return apply(std::move(grads)); }

  const edge_list& next_edges() const { return next_edges_; }
  edge_list& mutable_next_edges() { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  size_t num_outputs() const { return next_edges_.size(); }
  /// Number of forward outputs (gradients this node receives).
  size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_[i]; }
  uint32_t add_input_metadata(const Tensor& t);
  void add_input_metadata_undefined();
  /// Creation order: later nodes run first among ready ones.
  uint64_t sequence_nr() const { return sequence_nr_; }
  void set_sequence_nr(uint64_t s) { sequence_nr_ = s; }

  /// Whether the gradient for input `i` of the forward op is needed.
  bool should_compute_output(size_t i) const {
    return i < next_edges_.size() && next_edges_[i].is_valid();
  }

  unsigned register_prehook(PreHook h);
  unsigned register_hook(PostHook h);
  /// Hooks registered on the tensor that is forward output `output_nr` (run before prehooks).
  unsigned register_tensor_prehook(uint32_t output_nr, std::function<Tensor(const Tensor&)> h);
  void remove_hook(unsigned handle);
  /// The retain_grad hook of output `output_nr` (runs after tensor hooks).
  void set_retains_grad_hook(uint32_t output_nr, std::function<void(const Tensor&)> h);

  /// Forward-op stack trace recorded under anomaly mode (empty otherwise).
  const std::string& anomaly_trace() const { return anomaly_trace_; }
  void set_anomaly_trace(std::string s) { anomaly_trace_ = std::move(s); }
  /// Parent node (the node whose backward created this one) under anomaly mode.
  std::weak_ptr<Node> anomaly_parent;

  // Used by the engine.
  variable_list run_prehooks(variable_list grads);
  variable_list run_posthooks(variable_list grad_inputs, const variable_list& grad_outputs);
  bool has_hooks() const { return !hooks_.empty(); }

 private:
  struct HookEntry {
    unsigned handle;
    int kind;  // 0 tensor pre, 1 retain-grad, 2 pre, 3 post
    uint32_t output_nr;
    std::function<Tensor(const Tensor&)> tensor_hook;
    std::function<void(const Tensor&)> retain_hook;
    PreHook pre;
    PostHook post;
  };
  edge_list next_edges_;
  std::vector<InputMetadata> input_metadata_;
  uint64_t sequence_nr_;
  std::vector<HookEntry> hooks_;
  std::string anomaly_trace_;
};

/// Computes and returns the gradients of `outputs` w.r.t. `inputs` (sum over outputs of
/// vjp with `grad_outputs`), without touching `.grad`. `retain_graph` defaults to
/// `create_graph`. An input that the outputs do not depend on is an error unless allow_unused
/// (then its gradient is undefined, or zeros when `materialize_grads`).
variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                   bool allow_unused = false, bool materialize_grads = false);

/// Accumulates the gradients of `tensors` into the `.grad` of the leaves (or only of `inputs`).
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const variable_list& inputs = {});

/// Anomaly mode: records each op's creation trace, and a backward that produces NaN names the
/// forward op and where it was created.
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled, bool check_nan = true);
  static bool should_check_nan();
};

/// Enables anomaly mode for a scope (`torch.autograd.detect_anomaly()`).
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool check_nan = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
  bool prev_nan_;
};

/// Sets the label attached to nodes created under anomaly mode (the Python binding passes the
/// Python stack here; C++ callers may pass their own context).
void set_anomaly_context(std::function<std::string()> provider);

// ---------------------------------------------------------------------------------------------
// Custom functions
// ---------------------------------------------------------------------------------------------

/// State shared by forward and backward of a custom Function.
class AutogradContext {
 public:
  /// Tensors needed in backward; checked against in-place modification when read.
  void save_for_backward(variable_list to_save);
  /// Inputs modified in place by forward.
  void mark_dirty(const variable_list& inputs);
  /// Outputs that have no gradient (integer results, indices, ...).
  void mark_non_differentiable(const variable_list& outputs);
  /// When false, undefined output gradients reach backward as undefined tensors, not zeros.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  /// The saved tensors (error after they were freed by a backward without retain_graph).
  variable_list get_saved_variables() const;
  /// Whether input `i` (counting tensor arguments of forward) needs a gradient.
  bool needs_input_grad(size_t i) const;
  /// Named non-tensor state (PyTorch's `ctx->saved_data`, restricted to scalars).
  std::unordered_map<std::string, Scalar> saved_data;
  /// Arbitrary state (not version-checked).
  std::vector<std::shared_ptr<void>> saved_any;

 private:
  friend struct CppFunctionImpl;
  friend struct CppFunctionNode;
  std::shared_ptr<struct SavedTensorsState> saved_;
  variable_list to_save_;
  std::vector<const TensorImpl*> dirty_;
  std::vector<const TensorImpl*> non_differentiable_;
  std::vector<bool> needs_input_grad_;
  bool materialize_grads_ = true;
  bool has_freed_ = false;
};

/// The non-template machinery behind Function<T>.
struct CppFunctionImpl {
  using BackwardFn = std::function<variable_list(AutogradContext*, variable_list)>;
  using JvpFn = std::function<variable_list(AutogradContext*, variable_list)>;
  /// Wires the outputs of a custom forward into the graph (name is the class name).
  static variable_list wrap_outputs(const std::string& name, const variable_list& inputs,
                                    variable_list outputs, std::shared_ptr<AutogradContext> ctx,
                                    BackwardFn backward, JvpFn jvp);
  /// Prepares the context before forward runs (needs_input_grad).
  static void prepare(AutogradContext& ctx, const variable_list& inputs);
  /// Whether the call must be recorded (grad mode on and an input requires grad, or tangents).
  static bool is_recording(const variable_list& inputs);
};

namespace detail {
inline void collect(variable_list&) {}
template <class A, class... R>
void collect(variable_list& v, A&& a, R&&... rest) {
  using D = std::decay_t<A>;
  if constexpr (std::is_same_v<D, Tensor>)
    v.push_back(a);
  else if constexpr (std::is_same_v<D, variable_list>)
    v.insert(v.end(), a.begin(), a.end());
  collect(v, std::forward<R>(rest)...);
}
inline variable_list to_list(const Tensor& t) { return {t}; }
inline variable_list to_list(const variable_list& v) { return v; }
template <class T, class = void>
struct has_jvp : std::false_type {};
template <class T>
struct has_jvp<T, std::void_t<decltype(&T::jvp)>> : std::true_type {};
}  // namespace detail

/// A user-defined differentiable op (libtorch's `torch::autograd::Function<T>`):
///   struct MyFn : Function<MyFn> {
///     static Tensor forward(AutogradContext* ctx, Tensor x, ...);
///     static variable_list backward(AutogradContext* ctx, variable_list grad_outputs);
///     static variable_list jvp(AutogradContext* ctx, variable_list tangents);  // optional
///   };
///   Tensor y = MyFn::apply(x, ...);
/// backward returns one gradient per forward argument (undefined for non-tensors).
template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto ctx = std::make_shared<AutogradContext>();
    variable_list inputs;
    detail::collect(inputs, args...);
    CppFunctionImpl::prepare(*ctx, inputs);
    using Out = decltype(T::forward(ctx.get(), std::forward<Args>(args)...));
    Out out;
    {
      AutoGradMode no_grad(false);
      out = T::forward(ctx.get(), std::forward<Args>(args)...);
    }
    // Gradients are returned per forward argument; map them onto the tensor arguments.
    std::vector<int> tensor_pos;
    int k = 0;
    ((std::is_same_v<std::decay_t<Args>, Tensor> ? tensor_pos.push_back(k++) : void(k++)), ...);
    CppFunctionImpl::BackwardFn bw = [tensor_pos, nargs = int(sizeof...(Args))](AutogradContext* c,
                                                                                variable_list g) {
      variable_list r = T::backward(c, std::move(g));
      if (int(r.size()) == nargs && nargs != int(tensor_pos.size())) {
        variable_list t;
        for (int p : tensor_pos) t.push_back(r[size_t(p)]);
        return t;
      }
      return r;
    };
    CppFunctionImpl::JvpFn jv;
    if constexpr (detail::has_jvp<T>::value) {
      jv = [](AutogradContext* c, variable_list t) { return T::jvp(c, std::move(t)); };
    }
    variable_list wrapped = CppFunctionImpl::wrap_outputs(
        demangled_name(), inputs, detail::to_list(out), ctx, std::move(bw), std::move(jv));
    if constexpr (std::is_same_v<Out, Tensor>)
      return wrapped[0];
    else
      return wrapped;
  }

 private:
  static std::string demangled_name();
};

/// Demangled C++ type name (for node names of custom functions).
std::string demangle(const char* mangled);

template <class T>
std::string Function<T>::demangled_name() {
  std::string n = demangle(typeid(T).name());
  auto p = n.rfind("::");
  return (p == std::string::npos ? n : n.substr(p + 2)) + "Backward";
}

// ---------------------------------------------------------------------------------------------
// Finite-difference checks
// ---------------------------------------------------------------------------------------------

/// Options of gradcheck (PyTorch's defaults).
struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  bool check_forward_ad = false;
  bool check_backward_ad = true;
  bool check_undefined_grad = true;
  bool raise_exception = true;
};

/// Compares the analytical Jacobian of `fn` (by vjp, and by jvp when check_forward_ad) with a
/// central finite difference at `inputs` (float64/complex128 inputs that require grad).
/// Complex inputs and outputs use the conjugate-Wirtinger convention. Returns false (or throws
/// GradcheckError when raise_exception) on a mismatch, naming the output, input and element.
bool gradcheck(const std::function<variable_list(const variable_list&)>& fn,
               const variable_list& inputs, const GradcheckOptions& opts = {});
/// gradcheck of the vjp of `fn` (second derivatives), with random grad_outputs.
bool gradgradcheck(const std::function<variable_list(const variable_list&)>& fn,
                   const variable_list& inputs, const GradcheckOptions& opts = {});

namespace forward_ad {

/// Enters a new forward-AD level for a scope; levels nest (innermost is the highest number).
class dual_level {
 public:
  dual_level();
  ~dual_level();
  dual_level(const dual_level&) = delete;
  dual_level& operator=(const dual_level&) = delete;
  uint64_t level() const { return level_; }

 private:
  uint64_t level_;
};

/// Enters a level and returns its number (pair with exit_dual_level).
uint64_t enter_dual_level();
void exit_dual_level(uint64_t level);
/// The innermost active level (error when none).
uint64_t current_level();

/// A view of `primal` carrying `tangent` at `level` (default: the innermost level).
Tensor make_dual(const Tensor& primal, const Tensor& tangent,
                 std::optional<uint64_t> level = std::nullopt);
/// The primal (a view without the tangent at `level`) and the tangent (undefined if none).
std::pair<Tensor, Tensor> unpack_dual(const Tensor& t,
                                      std::optional<uint64_t> level = std::nullopt);

}  // namespace forward_ad
}  // namespace autograd

namespace utils {
/// Activation checkpointing: runs `fn` without saving intermediates; backward reruns it (with
/// the RNG state of the first run) to get gradients. Outputs equal those of fn(inputs).
autograd::variable_list checkpoint(
    const std::function<autograd::variable_list(const autograd::variable_list&)>& fn,
    const autograd::variable_list& inputs, bool preserve_rng_state = true);
}  // namespace utils

}  // namespace ember
