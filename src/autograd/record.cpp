// The op recorder (Note [Recording an op]), saved tensors, and in-place ops on views
// (Note [Views and in-place ops]).

#include "autograd/record.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "autograd/meta.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/reduce.h"

namespace ember::autograd {

// Note [Node names]
// Nodes are named as PyTorch 1.13 names them (what `type(y.grad_fn).__name__` and
// `grad_fn()->name()` print): the ATen op in CamelCase, a letter after a digit capitalised too
// ("log1p" -> "Log1PBackward0", "max_pool2d" -> "MaxPool2D..."), and "Backward<n>" where n is
// the overload of the op (sum() is SumBackward0, sum(dim) SumBackward1: OpRecorder::
// set_overload). Ops whose ember name differs from the ATen op behind PyTorch's node are
// listed in kNodeNames (in-place forms share the out-of-place node name).
namespace {
struct NodeName {
  const char* op;
  const char* node;
};
constexpr NodeName kNodeNames[] = {
    {"true_divide", "DivBackward0"},
    {"div_trunc", "DivBackward2"},
    {"div_floor", "DivBackward2"},
    {"clamp", "ClampBackward1"},
    {"clamp_tensor", "ClampBackward0"},
    {"lerp_scalar", "LerpBackward0"},
    {"lerp_tensor", "LerpBackward1"},
    {"square", "PowBackward0"},
    {"copy", "CloneBackward0"},
    {"copy_", "CopyBackwards"},
    {"fill", "FillBackward2"},
    {"matmul", "UnsafeViewBackward0"},
    {"max_pool2d", "MaxPool2DWithIndicesBackward0"},
    {"max_pool3d", "MaxPool3DWithIndicesBackward0"},
    {"linalg.inv", "LinalgInvExBackward0"},
    {"linalg.cholesky", "LinalgCholeskyExBackward0"},
    {"linalg.solve", "LinalgSolveExBackward0"},
    {"linalg.lu_factor", "LinalgLuFactorExBackward0"},
    {"linalg.svdvals", "LinalgSvdBackward0"},
    {"linalg.eigvalsh", "LinalgEighBackward0"},
    {"diagflat", "DiagBackward0"},
    {"repeat_interleave", "IndexSelectBackward0"},
};
}  // namespace

std::string backward_name(const char* op, int overload) {
  if (std::strcmp(op, "copy_") == 0) return "CopyBackwards";
  std::string base(op);
  if (base.size() > 1 && base.back() == '_') base.pop_back();
  if (overload == 0)
    for (const NodeName& n : kNodeNames)
      if (base == n.op) return n.node;
  std::string r;
  bool up = true;
  for (char c : base) {
    if (c == '_' || c == '.') {
      up = true;
      continue;
    }
    r += up ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    up = std::isdigit(static_cast<unsigned char>(c)) != 0;
  }
  return r + "Backward" + std::to_string(overload);
}

const RuleArg& RuleArgs::at(size_t k) const {
  EMBER_INTERNAL_ASSERT(k < v_.size(), "rule argument ", k, " of ", v_.size());
  return v_[k];
}

void RuleArgs::bad_type(size_t k) const {
  EMBER_INTERNAL_ASSERT(false, "rule argument ", k, " has another type (variant index ",
                        v_[k].index(), ")");
  std::abort();
}

Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes() == shape) return g;
  int64_t lead = g.dim() - int64_t(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    if (shape[d] == 1 && g.size(lead + d) != 1) dims.push_back(lead + d);
  Tensor r = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  if (lead > 0 || r.sizes() != shape) r = r.reshape(shape);
  return r;
}

namespace {

struct InputInfo {
  DimVector shape;
  ScalarType dtype;
  Device device;
};

/// Brings a vjp result to the input's shape, dtype and device (broadcast sums, real part, cast;
/// a copy's gradient goes back to the source's device, as PyTorch's CopyBackwards does).
Tensor fix_grad(Tensor g, const InputInfo& in) {
  if (!g.defined()) return g;
  if (g.sizes() != in.shape.ref()) g = sum_to(g, in.shape);
  if (g.is_complex() && !isComplexType(in.dtype)) g = real(g);
  if (g.dtype() != in.dtype || g.device() != in.device)
    g = g.to(TensorOptions(in.dtype).device(in.device));
  return g;
}

}  // namespace

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  if (!data.defined()) return data;
  if (data._version() != version) {
    const char* writer = data.unsafeGetTensorImpl()->version_counter()->last_writer.load();
    EMBER_CHECK(false,
                "[backward] one of the variables needed for gradient computation has "
                "been modified by an inplace operation: [",
                data.dtype(), " ", shape_str(data.sizes()), "], saved by ", owner->name(), " (its ",
                is_output ? "output " + std::to_string(output_nr) : std::string("input"),
                "), was modified by ", writer ? writer : "an in-place operation",
                ": it is at version ", data._version(), "; expected version ", version,
                " instead. Hint: clone() the tensor before modifying it in place, or use the "
                "out-of-place form of the operation.");
  }
  if (!is_output) return data;
  // Live tangents (of levels still active): Note [Saved outputs and forward AD].
  std::vector<std::pair<uint64_t, Tensor>> live;
  if (tls().fw_levels > 0) {
    for (const auto& p : fw_grads)
      if (level_key(p.first & 0xff) == p.first) live.push_back(p);
  }
  if (!GradMode::is_enabled() && live.empty()) return data;
  Tensor t = data.detach();
  // Reconnect the output to its node so a double backward sees its history.
  if (GradMode::is_enabled()) set_history(t, owner, output_nr);
  if (!live.empty()) materialize_meta(t).fw_grads = std::move(live);
  return t;
}

// Note [Saved outputs and forward AD]
// An op that saves its own output (exp, tanh, sigmoid, softmax, relu, sqrt, ...) stores a
// detached alias of it, without the output's forward-AD tangent. Forward-over-reverse (a
// backward run under a dual level, e.g. a Hessian-vector product) differentiates the rule with
// respect to that output, so the tangent is kept beside the alias and restored on unpack, as
// PyTorch's SavedVariable keeps fw_grad_.
void SavedVariable::capture_fw_grads(const variable_list& outputs) {
  if (!is_output || output_nr >= outputs.size() || !outputs[output_nr].defined()) return;
  // Detached (Note [Tangents and reference cycles]): the tangent's reverse history reaches
  // this node.
  if (AutogradMeta* m = meta(outputs[output_nr])) {
    fw_grads.clear();
    for (const auto& [key, t] : m->fw_grads) fw_grads.emplace_back(key, t.detach());
  }
}

SavedVariable SavedVariable::save(const Tensor& t, const variable_list& outputs, const char* op) {
  SavedVariable sv;
  if (!t.defined()) return sv;
  check_inference_tensor_use(t, op);
  sv.version = t._version();
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k].defined() && outputs[k].is_same(t)) {
      sv.is_output = true;
      sv.output_nr = uint32_t(k);
    }
  }
  sv.data = sv.is_output ? t.detach() : t;
  return sv;
}

struct FnNode final : Node {
  const char* op_;    // the forward op; name() derives PyTorch's node name from it
  int overload_ = 0;  // Note [Node names]
  VjpFn vjp = nullptr;
  RuleArgs args;  // Note [Rules as data]
  std::vector<SavedVariable> saved;
  std::vector<InputInfo> inputs;
  bool released_ = false;

  std::string name() const override { return backward_name(op_, overload_); }
  void release_variables() override {
    if (saved.empty()) return;
    saved.clear();
    released_ = true;
  }
  bool released() const override { return released_; }

  variable_list apply(variable_list&& grads) override {
    EMBER_CHECK(!released_,
                "[backward] Trying to backward through the graph a second time (or "
                "directly access saved tensors after they have already been freed). Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling "
                "backward. (node: ",
                name(), ")");
    VjpCtx c;
    c.rule_args = &args;
    c.grads = std::move(grads);
    for (size_t i = 0; i < c.grads.size(); ++i)
      if (!c.grads[i].defined()) c.grads[i] = input_metadata(i).zeros();
    if (!saved.empty()) {
      auto self = shared_from_this();
      c.saved.reserve(saved.size());
      for (auto& s : saved) c.saved.push_back(s.unpack(self));
    }
    c.needs_grad.resize(num_outputs());
    bool any = false;
    for (size_t i = 0; i < num_outputs(); ++i) any |= (c.needs_grad[i] = should_compute_output(i));
    if (!any) return variable_list(num_outputs());
    variable_list r = vjp(c);
    EMBER_INTERNAL_ASSERT(r.size() == inputs.size(), name(), " returned ", r.size(),
                          " gradients for ", inputs.size(), " inputs");
    for (size_t i = 0; i < r.size(); ++i)
      r[i] = c.needs_grad[i] ? fix_grad(r[i], inputs[i]) : Tensor();
    return r;
  }
};

/// Raises in backward: the op has no derivative.
struct NotImplementedNode final : Node {
  std::string op;
  std::string name() const override { return "NotImplemented"; }
  variable_list apply(variable_list&&) override {
    EMBER_CHECK_T(NotImplementedError, false, "[", op, "] the derivative for '", op,
                  "' is not implemented.");
    return {};
  }
};

// Note [Views and in-place ops]
// A view records its own node (e.g. TransposeBackward0) and shares the version counter of its
// base. When an op writes in place into a view whose base is part of a graph, the base's
// history is rebased onto a CopySlices node: the gradient of the base, with the view's region
// replaced by what the in-place op's own node makes of it. Views whose shared version moved
// since their grad_fn was set regenerate it from the base (an as_strided view of the base's
// gradient), so every alias sees the write, as in PyTorch.
namespace {

struct Geom {
  std::vector<int64_t> sizes, strides;
  int64_t offset;
};
Geom geom_of(const Tensor& t) { return {t.sizes().vec(), t.strides().vec(), t.storage_offset()}; }

bool dense_layout(const Geom& g) {
  // Non-overlapping and dense: the strides are a permutation of a contiguous layout.
  std::vector<size_t> idx(g.sizes.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(),
            [&](size_t a, size_t b) { return g.strides[a] < g.strides[b]; });
  int64_t expect = 1;
  for (size_t i : idx) {
    if (g.sizes[i] == 1) continue;
    if (g.strides[i] != expect) return false;
    expect *= g.sizes[i];
  }
  return true;
}

/// A buffer with base's sizes and strides holding `fill`, and the view's region of it.
std::pair<Tensor, Tensor> base_buffer(const Geom& base, const Geom& view, const Tensor& fill,
                                      ScalarType dtype, Device dev) {
  int64_t span = 1;
  for (size_t i = 0; i < base.sizes.size(); ++i) {
    if (base.sizes[i] == 0) span = 0;
  }
  if (span != 0) {
    span = 1;
    for (size_t i = 0; i < base.sizes.size(); ++i) span += (base.sizes[i] - 1) * base.strides[i];
  }
  Tensor flat = zeros({span}, TensorOptions().dtype(dtype).device(dev));
  Tensor b = flat.as_strided(base.sizes, base.strides, 0);
  if (fill.defined()) b.copy_(fill);
  Tensor v = flat.as_strided(view.sizes, view.strides, view.offset - base.offset);
  return {b, v};
}

/// grad of base from grad of one of its views (the regenerated view node).
struct AsStridedViewNode final : Node {
  Geom base, view;
  ScalarType dtype;
  std::string name() const override { return "AsStridedBackward0"; }
  variable_list apply(variable_list&& grads) override {
    if (!grads[0].defined()) return {Tensor()};
    auto [b, v] = base_buffer(base, view, {}, grads[0].dtype(), grads[0].device());
    v.copy_(grads[0]);
    return {b};
  }
};

struct CopySlices final : Node {
  Geom base, view;
  std::shared_ptr<Node> fn;
  std::string name() const override { return "CopySlices"; }
  void release_variables() override { fn->release_variables(); }
  bool released() const override { return fn->released(); }
  variable_list apply(variable_list&& grads) override {
    variable_list out(num_outputs());
    Tensor g = grads[0].defined() ? grads[0] : input_metadata(0).zeros();
    auto [b, v] = base_buffer(base, view, g, g.dtype(), g.device());
    variable_list r = fn->apply({v.clone()});
    if (r[0].defined())
      v.copy_(r[0]);
    else
      v.zero_();
    out[0] = b;
    for (size_t i = 1; i < r.size() && i < out.size(); ++i) out[i] = r[i];
    return out;
  }
};

}  // namespace

std::shared_ptr<Node> grad_fn_of(const Tensor& t) {
  AutogradMeta* m = meta(t);
  if (!m) return nullptr;
  if (m->grad_fn && t.is_view() && t._version() != m->attr_version) {
    Tensor base = t._base();
    Edge be = gradient_edge(base);
    if (be.is_valid()) {
      auto node = std::make_shared<AsStridedViewNode>();
      node->base = geom_of(base);
      node->view = geom_of(t);
      node->dtype = t.dtype();
      node->add_input_metadata(t);
      node->mutable_next_edges().push_back(std::move(be));
      set_history(t, node, 0);
    } else {
      m->attr_version = t._version();
    }
  }
  return m->grad_fn;
}

Tensor JvpCtx::tangent_or_zeros(size_t i) const {
  return tangents[i].defined() ? tangents[i] : zeros_like(inputs[i]);
}

namespace {
// The common case of an op under grad mode on tensors that need nothing: decided without
// copying the inputs. In-place ops always take the full path (their checks run first).
// One thread-local lookup per op (the state cannot change while the inputs are scanned).
template <class It>
bool worth_recording(const AutogradTLS& s, const char* name, It begin, It end) {
  if (s.paused || !(s.grad_enabled || s.fw_levels > 0)) return false;  // recording_possible()
  size_t len = std::strlen(name);
  if (len > 1 && name[len - 1] == '_') return true;
  const bool grad = s.grad_enabled, forward = s.fw_levels > 0;
  for (It it = begin; it != end; ++it) {
    if (!it->defined()) continue;
    if (grad && it->requires_grad()) return true;
    if (forward && has_fw_grad(*it)) return true;
  }
  return false;
}
}  // namespace

OpRecorder::OpRecorder(const char* name, std::initializer_list<Tensor> inputs) : name_(name) {
  if (!worth_recording(tls(), name, inputs.begin(), inputs.end())) return;
  inputs_.assign(inputs.begin(), inputs.end());
  init(name);
}

OpRecorder::OpRecorder(const char* name, const variable_list& inputs) : name_(name) {
  if (!worth_recording(tls(), name, inputs.begin(), inputs.end())) return;
  inputs_ = inputs;
  init(name);
}

void OpRecorder::init(const char* name) {
  AutogradTLS& s = tls();
  size_t len = std::strlen(name);
  inplace_ = len > 1 && name[len - 1] == '_' && !inputs_.empty() && inputs_[0].defined();
  if (inplace_) {
    // Checked before the kernel writes: an error must leave the tensor unchanged.
    const Tensor& self = inputs_[0];
    version_before_ = self._version();
    EMBER_CHECK(!self.is_inference() || InferenceMode::is_enabled(), "[", name,
                "] Inplace update to inference tensor outside InferenceMode is not allowed. You "
                "can make a clone to get a normal tensor before doing inplace update.");
    if (s.grad_enabled) {
      EMBER_CHECK(!(self.is_leaf() && self.requires_grad()), "[", name,
                  "] a leaf Variable that requires grad is being used in an in-place "
                  "operation.");
      Tensor base = self._base();
      EMBER_CHECK(!base.defined() || !(base.is_leaf() && base.requires_grad()), "[", name,
                  "] a view of a leaf Variable that requires grad is being used in an in-place "
                  "operation.");
    }
  }
  for (const Tensor& t : inputs_) {
    if (!t.defined()) continue;
    reverse_ = reverse_ || (s.grad_enabled && t.requires_grad());
    forward_ = forward_ || (s.fw_levels > 0 && has_fw_grad(t));
  }
  active_ = reverse_ || forward_;
  if (active_) {
    s.paused = true;
    paused_ = true;
  }
}

OpRecorder::~OpRecorder() { resume(); }

bool OpRecorder::input_needs_grad(size_t i) const {
  return reverse_ && i < inputs_.size() && inputs_[i].defined() && tls().grad_enabled &&
         inputs_[i].requires_grad();
}

void OpRecorder::resume() {
  if (paused_) {
    tls().paused = false;
    paused_ = false;
  }
}

void OpRecorder::record(const variable_list& outputs, VjpFn vjp, const variable_list& saved,
                        JvpFn jvp) {
  finish(outputs, vjp, saved, jvp, false);
}

namespace {
// A one-tensor output list for record(Tensor) and record_inplace without allocating one per op:
// a per-thread list, taken by one call at a time (a nested recording, say from a jvp rule that
// runs inside finish(), builds its own list).
class OneOutput {
 public:
  explicit OneOutput(const Tensor& t) : mine_(!busy()) {
    if (mine_) {
      busy() = true;
      slot()[0] = t;
    } else {
      own_.push_back(t);
    }
  }
  ~OneOutput() {
    if (!mine_) return;
    slot()[0] = Tensor();
    busy() = false;
  }
  OneOutput(const OneOutput&) = delete;
  OneOutput& operator=(const OneOutput&) = delete;
  const variable_list& list() const { return mine_ ? slot() : own_; }

 private:
  static variable_list& slot() {
    static thread_local variable_list l(1);
    return l;
  }
  static bool& busy() {
    static thread_local bool b = false;
    return b;
  }
  bool mine_;
  variable_list own_;
};
}  // namespace

void OpRecorder::record(const Tensor& output, VjpFn vjp, const variable_list& saved, JvpFn jvp) {
  OneOutput out(output);
  finish(out.list(), vjp, saved, jvp, false);
}
void OpRecorder::record_inplace(const Tensor& self, VjpFn vjp, const variable_list& saved,
                                JvpFn jvp) {
  if (self._version() == version_before_)
    self.unsafeGetTensorImpl()->bump_version(name_);
  else
    self.unsafeGetTensorImpl()->version_counter()->last_writer.store(name_);
  OneOutput out(self);
  finish(out.list(), vjp, saved, jvp, true);
}

void OpRecorder::record_not_implemented(const variable_list& outputs) {
  resume();
  if (!reverse_) return;
  auto node = std::make_shared<NotImplementedNode>();
  node->op = name_;
  for (const Tensor& t : inputs_)
    node->mutable_next_edges().push_back(t.defined() ? gradient_edge(t) : Edge{});
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !(outputs[i].is_floating_point() || outputs[i].is_complex()))
      continue;
    set_history(outputs[i], node, node->add_input_metadata(outputs[i]));
  }
}

namespace {

/// Tangent of the outputs from the vjp (Note [Recording an op]): with g a dummy cotangent,
/// vjp(g) = Jᴴg is linear in g, and d/dg Re<vjp(g), t> = J t.
variable_list jvp_from_vjp(VjpFn vjp, const RuleArgs& args, const variable_list& inputs,
                           const variable_list& outputs, const variable_list& saved,
                           const variable_list& tangents) {
  AutoGradMode on(true);
  variable_list gs;
  for (const Tensor& o : outputs) gs.push_back(zeros_like(o).requires_grad_());
  VjpCtx c;
  c.rule_args = &args;
  c.grads = gs;
  c.saved = saved;
  c.needs_grad.assign(inputs.size(), true);
  for (size_t i = 0; i < inputs.size(); ++i) c.needs_grad[i] = tangents[i].defined();
  variable_list r = vjp(c);
  Tensor s;
  for (size_t i = 0; i < r.size() && i < tangents.size(); ++i) {
    if (!r[i].defined() || !tangents[i].defined()) continue;
    Tensor gi =
        fix_grad(r[i], {DimVector(inputs[i].sizes()), inputs[i].dtype(), inputs[i].device()});
    if (!gi.requires_grad()) continue;
    Tensor term = gi.is_complex() ? real(conj(gi) * tangents[i]).sum() : (gi * tangents[i]).sum();
    s = s.defined() ? s + term : term;
  }
  variable_list out(outputs.size());
  if (s.defined()) {
    out = run_backward({s}, {}, false, true, gs, true, false);
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!out[i].defined()) out[i] = zeros_like(outputs[i]);
  return out;
}

}  // namespace

void OpRecorder::finish(const variable_list& outputs, VjpFn vjp, const variable_list& saved,
                        JvpFn jvp, bool inplace) {
  resume();
  if (!active_) return;
  std::shared_ptr<FnNode> fnode;
  if (reverse_) {
    auto node = std::make_shared<FnNode>();
    fnode = node;
    node->op_ = name_;
    node->overload_ = overload_;
    node->set_anomaly_trace(anomaly_trace_now());
    Tensor self = inplace ? outputs[0] : Tensor();
    bool self_is_view = inplace && self.is_view();
    Edge view_old_edge;
    node->mutable_next_edges().reserve(inputs_.size());
    node->inputs.reserve(inputs_.size());
    node->saved.reserve(saved.size());
    for (const Tensor& t : inputs_) {
      node->mutable_next_edges().push_back(t.defined() ? gradient_edge(t) : Edge{});
      node->inputs.push_back({t.defined() ? DimVector(t.sizes()) : DimVector(),
                              t.defined() ? t.dtype() : ScalarType::Float,
                              t.defined() ? t.device() : Device(kCPU)});
    }
    for (const Tensor& t : saved) node->saved.push_back(SavedVariable::save(t, outputs, name_));
    node->vjp = vjp;
    if (!inplace) {
      for (const Tensor& o : outputs) {
        if (!o.defined()) {
          node->add_input_metadata_undefined();
          continue;
        }
        uint32_t nr = node->add_input_metadata(o);
        if (o.is_floating_point() || o.is_complex()) set_history(o, node, nr);
      }
    } else {
      AutogradMeta* m = meta(self);
      node->add_input_metadata(self);
      if (!self_is_view) {
        set_history(self, node, 0);
      } else {
        Tensor base = self._base();
        auto cs = std::make_shared<CopySlices>();
        cs->base = geom_of(base);
        cs->view = geom_of(self);
        EMBER_CHECK(dense_layout(cs->base), "[", name_,
                    "] in-place operation on a view of a "
                    "tensor with overlapping or non-dense memory is not supported by autograd; "
                    "clone() the base first");
        cs->fn = node;
        cs->set_anomaly_trace(node->anomaly_trace());
        cs->add_input_metadata(base);
        cs->mutable_next_edges().push_back(gradient_edge(base));
        for (size_t i = 1; i < node->num_outputs(); ++i)
          cs->mutable_next_edges().push_back(node->next_edge(i));
        set_history(base, cs, 0);
        // The view's own history is regenerated from the base on next use.
        AutogradMeta& vm = materialize_meta(self);
        vm.grad_fn = cs;  // placeholder that differs from a valid view node
        vm.output_nr = 0;
        vm.attr_version = self._version() - 1;
      }
      (void)m;
      (void)view_old_edge;
    }
  }
  if (forward_) {
    AutogradTLS& s = tls();
    // Note [Tangents and reference cycles]
    // Under reverse recording a tangent's own history is recorded too. Two references would
    // then close cycles that are never freed (a leak per forward-over-reverse call):
    // - a tangent computed from an output saves that output, which holds the tangent in its
    //   fw_grads: the rules read aliases of the outputs instead (same values, the same node as
    //   grad_fn, a TensorImpl of their own and no view base, which would lead back);
    // - a node that saves its output keeps the output's tangents for forward-over-reverse
    //   (Note [Saved outputs and forward AD]), and the tangent's history reaches that node:
    //   the node keeps them detached (SavedVariable::capture_fw_grads).
    variable_list fw_outputs = outputs, fw_saved = saved;
    if (reverse_ && GradMode::is_enabled() && fnode) {
      for (size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].defined() || !outputs[k].requires_grad()) continue;
        AutogradMeta* om = meta(outputs[k]);
        if (!om || om->grad_fn != fnode) continue;
        Tensor a = outputs[k].detach();
        set_history(a, fnode, om->output_nr);
        for (Tensor& t : fw_saved)
          if (t.defined() && t.is_same(outputs[k])) t = a;
        fw_outputs[k] = a;
      }
    }
    for (uint64_t level : active_levels()) {
      if (level < 64 && ((s.fw_suppressed >> level) & 1)) continue;
      JvpCtx c;
      bool any = false;
      for (const Tensor& t : inputs_) {
        Tensor tg = t.defined() ? fw_grad(t, level) : Tensor();
        any = any || tg.defined();
        c.tangents.push_back(tg);
      }
      if (!any) continue;
      c.inputs = inputs_;
      c.outputs = fw_outputs;
      c.saved = fw_saved;
      c.rule_args = &args_;
      uint64_t bit = level < 64 ? (uint64_t(1) << level) : 0;
      s.fw_suppressed |= bit;
      variable_list r;
      try {
        r = jvp ? jvp(c) : jvp_from_vjp(vjp, args_, inputs_, fw_outputs, fw_saved, c.tangents);
      } catch (...) {
        s.fw_suppressed &= ~bit;
        throw;
      }
      s.fw_suppressed &= ~bit;
      for (size_t k = 0; k < outputs.size() && k < r.size(); ++k) {
        if (!outputs[k].defined() || !r[k].defined()) continue;
        if (!(outputs[k].is_floating_point() || outputs[k].is_complex())) continue;
        Tensor tk = r[k];
        if (tk.is_complex() && !outputs[k].is_complex()) tk = real(tk);
        if (tk.sizes() != outputs[k].sizes()) tk = tk.expand(outputs[k].sizes());
        outputs[k]._set_fw_grad(tk, level, inplace);
      }
    }
    if (fnode)
      for (SavedVariable& sv : fnode->saved) sv.capture_fw_grads(outputs);
  }
  if (fnode) fnode->args = std::move(args_);
}

bool any_needs_recording(std::initializer_list<Tensor> ts) {
  if (!recording_possible()) return false;
  const AutogradTLS& s = tls();
  for (const Tensor& t : ts) {
    if (!t.defined()) continue;
    if (s.grad_enabled && t.requires_grad()) return true;
    if (s.fw_levels > 0 && has_fw_grad(t)) return true;
  }
  return false;
}

void check_out_not_differentiable(const char* op, std::initializer_list<Tensor> inputs) {
  if (!recording_possible() || !GradMode::is_enabled()) return;
  for (const Tensor& t : inputs) {
    EMBER_CHECK(!t.defined() || !t.requires_grad(), "[", op, "] ", op,
                "(): functions with out=... arguments don't support automatic differentiation, "
                "but one of the arguments requires grad.");
  }
}

void redirect_saved(const variable_list& roots, uint64_t since, const TensorImpl* from,
                    const Tensor& to) {
  std::vector<std::shared_ptr<Node>> todo;
  std::vector<const Node*> seen;
  for (const Tensor& r : roots)
    if (r.defined())
      if (auto fn = grad_fn_of(r)) todo.push_back(fn);
  while (!todo.empty()) {
    std::shared_ptr<Node> n = std::move(todo.back());
    todo.pop_back();
    if (n->sequence_nr() < since || std::find(seen.begin(), seen.end(), n.get()) != seen.end())
      continue;
    seen.push_back(n.get());
    if (auto* fn = dynamic_cast<FnNode*>(n.get())) {
      for (SavedVariable& sv : fn->saved)
        if (!sv.is_output && sv.data.unsafeGetTensorImpl() == from) sv.data = to;
    }
    for (const Edge& e : n->next_edges())
      if (e.function) todo.push_back(e.function);
  }
}

}  // namespace ember::autograd
