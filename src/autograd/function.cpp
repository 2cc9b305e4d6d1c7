// Custom autograd functions (ember::autograd::Function<T> and the Python binding's Function):
// the user's forward runs without recording; its outputs are wired to a node that calls the
// user's backward.

#include <algorithm>

#include "autograd/meta.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"

namespace ember::autograd {

struct SavedTensorsState {
  std::vector<SavedVariable> vars;
  std::weak_ptr<Node> node;
};

struct CppFunctionNode final : Node {
  std::string name_;
  std::shared_ptr<AutogradContext> ctx;
  CppFunctionImpl::BackwardFn backward;
  std::vector<InputMetadata> in_meta;  // of the forward's tensor inputs
  std::vector<bool> output_differentiable;

  std::string name() const override { return name_; }
  void release_variables() override;
  bool released() const override;
  variable_list apply(variable_list&& grads) override;
};

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_dirty(const variable_list& inputs) {
  dirty_.clear();
  for (const Tensor& t : inputs) dirty_.push_back(t.unsafeGetTensorImpl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_.clear();
  for (const Tensor& t : outputs) non_differentiable_.push_back(t.unsafeGetTensorImpl());
}

variable_list AutogradContext::get_saved_variables() const {
  EMBER_CHECK(!has_freed_,
              "[backward] Trying to backward through the graph a second time (or "
              "directly access saved tensors after they have already been freed). Saved "
              "intermediate values of the graph are freed when you call .backward() or "
              "autograd.grad(). Specify retain_graph=True if you need to backward through the "
              "graph a second time or if you need to access saved tensors after calling "
              "backward.");
  variable_list r;
  if (!saved_) {
    for (const Tensor& t : to_save_) r.push_back(t);  // not recorded: the tensors as given
    return r;
  }
  auto node = saved_->node.lock();
  for (auto& v : saved_->vars) r.push_back(node ? v.unpack(node) : v.data);
  return r;
}

bool AutogradContext::needs_input_grad(size_t i) const {
  return i < needs_input_grad_.size() && needs_input_grad_[i];
}

void CppFunctionNode::release_variables() {
  if (ctx->saved_) ctx->saved_->vars.clear();
  ctx->has_freed_ = true;
}
bool CppFunctionNode::released() const { return ctx->has_freed_; }

variable_list CppFunctionNode::apply(variable_list&& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() && ctx->materialize_grads_ && input_metadata(i).defined)
      grads[i] = input_metadata(i).zeros();
  }
  variable_list r = backward(ctx.get(), std::move(grads));
  // Trailing undefined gradients may be omitted (PyTorch allows extra Nones too).
  while (r.size() > in_meta.size() && !r.back().defined()) r.pop_back();
  EMBER_CHECK(r.size() == in_meta.size(), "[", name_, "] function ", name_,
              " returned an incorrect number of gradients (expected ", in_meta.size(), ", got ",
              r.size(), ")");
  for (size_t i = 0; i < r.size(); ++i) {
    if (!should_compute_output(i)) {
      r[i] = Tensor();
      continue;
    }
    Tensor& g = r[i];
    if (!g.defined()) continue;
    const InputMetadata& m = in_meta[i];
    if (g.sizes() != IntArrayRef(m.shape)) {
      DimVector b;
      bool ok = true;
      try {
        b = broadcast_shapes(g.sizes(), IntArrayRef(m.shape));
      } catch (const Error&) {
        ok = false;
      }
      EMBER_CHECK(ok && b.ref() == g.sizes(), "[", name_, "] Function ", name_,
                  " returned an invalid gradient at index ", i, " - got ", shape_str(g.sizes()),
                  " but expected shape compatible with ", shape_str(m.shape));
      g = sum_to(g, m.shape);
    }
    if (g.is_complex() && !isComplexType(m.dtype)) g = real(g);
    if (g.dtype() != m.dtype) g = g.to(m.dtype);
  }
  return r;
}

bool CppFunctionImpl::is_recording(const variable_list& inputs) {
  if (!recording_possible()) return false;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (GradMode::is_enabled() && t.requires_grad()) return true;
    if (tls().fw_levels > 0 && has_fw_grad(t)) return true;
  }
  return false;
}

void CppFunctionImpl::prepare(AutogradContext& ctx, const variable_list& inputs) {
  ctx.needs_input_grad_.clear();
  bool on = GradMode::is_enabled() && recording_possible();
  for (const Tensor& t : inputs)
    ctx.needs_input_grad_.push_back(on && t.defined() && t.requires_grad());
}

variable_list CppFunctionImpl::wrap_outputs(const std::string& name, const variable_list& inputs,
                                            variable_list outputs,
                                            std::shared_ptr<AutogradContext> ctx,
                                            BackwardFn backward, JvpFn jvp) {
  bool reverse = false, forward = false;
  if (recording_possible()) {
    for (const Tensor& t : inputs) {
      if (!t.defined()) continue;
      reverse = reverse || (GradMode::is_enabled() && t.requires_grad());
      forward = forward || (tls().fw_levels > 0 && has_fw_grad(t));
    }
  }
  auto is_dirty = [&](const Tensor& t) {
    return std::find(ctx->dirty_.begin(), ctx->dirty_.end(), t.unsafeGetTensorImpl()) !=
           ctx->dirty_.end();
  };
  auto is_nondiff = [&](const Tensor& t) {
    return std::find(ctx->non_differentiable_.begin(), ctx->non_differentiable_.end(),
                     t.unsafeGetTensorImpl()) != ctx->non_differentiable_.end();
  };
  auto is_input = [&](const Tensor& t) {
    for (const Tensor& in : inputs)
      if (in.defined() && in.is_same(t)) return true;
    return false;
  };
  for (Tensor& o : outputs) {
    if (!o.defined()) continue;
    if (is_dirty(o)) {
      EMBER_CHECK(!(GradMode::is_enabled() && o.is_leaf() && o.requires_grad()), "[", name,
                  "] a leaf Variable that requires grad has been used in an in-place operation.");
      o.unsafeGetTensorImpl()->bump_version(nullptr);
    } else if (is_input(o) && (reverse || forward)) {
      // An input returned as is becomes a view, so the input keeps its own history.
      AutoGradMode off(false);
      o = o.view_as(o);
    }
  }
  if (reverse) {
    auto node = std::make_shared<CppFunctionNode>();
    node->name_ = name;
    node->ctx = ctx;
    node->backward = std::move(backward);
    node->set_anomaly_trace(anomaly_trace_now());
    for (const Tensor& t : inputs) {
      node->mutable_next_edges().push_back(t.defined() ? gradient_edge(t) : Edge{});
      InputMetadata m;
      if (t.defined()) {
        m.shape = t.sizes().vec();
        m.dtype = t.dtype();
        m.device = t.device();
      } else {
        m.defined = false;
      }
      node->in_meta.push_back(std::move(m));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Tensor& o = outputs[k];
      if (!o.defined()) {
        node->add_input_metadata_undefined();
        continue;
      }
      uint32_t nr = node->add_input_metadata(o);
      bool diff = (o.is_floating_point() || o.is_complex()) && !is_nondiff(o);
      if (diff) set_history(o, node, nr);
    }
    ctx->saved_ = std::make_shared<SavedTensorsState>();
    ctx->saved_->node = node;
    for (const Tensor& t : ctx->to_save_)
      ctx->saved_->vars.push_back(SavedVariable::save(t, outputs, "save_for_backward"));
    ctx->to_save_.clear();
  }
  if (forward) {
    for (uint64_t level : active_levels()) {
      variable_list tangents;
      bool any = false;
      for (const Tensor& t : inputs) {
        Tensor tg = t.defined() ? fw_grad(t, level) : Tensor();
        any = any || tg.defined();
        tangents.push_back(tg.defined() ? tg : (t.defined() ? zeros_like(t) : Tensor()));
      }
      if (!any) continue;
      EMBER_CHECK_T(NotImplementedError, bool(jvp), "[", name,
                    "] You must implement the jvp "
                    "function for custom autograd.Function to use it with forward mode AD.");
      variable_list r = jvp(ctx.get(), tangents);
      for (size_t k = 0; k < outputs.size() && k < r.size(); ++k) {
        if (outputs[k].defined() && r[k].defined() && !is_nondiff(outputs[k]))
          outputs[k]._set_fw_grad(r[k], level);
      }
    }
    // Note [Saved outputs and forward AD]
    if (ctx->saved_)
      for (SavedVariable& sv : ctx->saved_->vars) sv.capture_fw_grads(outputs);
  }
  return outputs;
}

}  // namespace ember::autograd
