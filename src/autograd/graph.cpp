// Grad modes, graph nodes, the autograd state of tensors and the Tensor autograd methods.

#include <cxxabi.h>
#include <atomic>

#include "autograd/meta.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"

namespace ember {

bool& inference_mode_tls();

namespace autograd {

AutogradTLS& tls() {
  static thread_local AutogradTLS t;
  return t;
}

uint64_t next_sequence_nr() {
  static thread_local uint64_t n = 0;
  return n++;
}

namespace {
std::atomic<unsigned> g_hook_handle{1};
unsigned new_handle() { return g_hook_handle.fetch_add(1); }
std::atomic<bool> g_anomaly{false};
std::atomic<bool> g_anomaly_nan{true};
std::function<std::string()>& anomaly_provider() {
  static std::function<std::string()> p;
  return p;
}
}  // namespace

// ---- anomaly mode ----
bool AnomalyMode::is_enabled() { return g_anomaly.load(); }
void AnomalyMode::set_enabled(bool e, bool check_nan) {
  g_anomaly.store(e);
  g_anomaly_nan.store(check_nan);
}
bool AnomalyMode::should_check_nan() { return g_anomaly_nan.load(); }
DetectAnomalyGuard::DetectAnomalyGuard(bool check_nan)
    : prev_(AnomalyMode::is_enabled()), prev_nan_(AnomalyMode::should_check_nan()) {
  AnomalyMode::set_enabled(true, check_nan);
}
DetectAnomalyGuard::~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_, prev_nan_); }
void set_anomaly_context(std::function<std::string()> provider) {
  anomaly_provider() = std::move(provider);
}
std::string anomaly_trace_now() {
  if (!AnomalyMode::is_enabled()) return {};
  auto& p = anomaly_provider();
  return p ? p() : std::string();
}

std::string demangle(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string r = (status == 0 && d) ? d : mangled;
  std::free(d);
  return r;
}

// ---- nodes ----
Tensor InputMetadata::zeros() const {
  return ember::zeros(shape, TensorOptions().dtype(dtype).device(device));
}

Node::Node() : sequence_nr_(next_sequence_nr()) {}
Node::~Node() = default;

uint32_t Node::add_input_metadata(const Tensor& t) {
  InputMetadata m;
  m.shape = t.sizes().vec();
  m.dtype = t.dtype();
  m.device = t.device();
  input_metadata_.push_back(std::move(m));
  return uint32_t(input_metadata_.size() - 1);
}

void Node::add_input_metadata_undefined() {
  InputMetadata m;
  m.defined = false;
  input_metadata_.push_back(std::move(m));
}

unsigned Node::register_prehook(PreHook h) {
  unsigned id = new_handle();
  hooks_.push_back({id, 2, 0, {}, {}, std::move(h), {}});
  return id;
}
unsigned Node::register_hook(PostHook h) {
  unsigned id = new_handle();
  hooks_.push_back({id, 3, 0, {}, {}, {}, std::move(h)});
  return id;
}
unsigned Node::register_tensor_prehook(uint32_t output_nr, std::function<Tensor(const Tensor&)> h) {
  unsigned id = new_handle();
  hooks_.push_back({id, 0, output_nr, std::move(h), {}, {}, {}});
  return id;
}
void Node::remove_hook(unsigned handle) {
  for (auto it = hooks_.begin(); it != hooks_.end(); ++it) {
    if (it->handle == handle) {
      hooks_.erase(it);
      return;
    }
  }
}
void Node::set_retains_grad_hook(uint32_t output_nr, std::function<void(const Tensor&)> h) {
  for (auto it = hooks_.begin(); it != hooks_.end(); ++it) {
    if (it->kind == 1 && it->output_nr == output_nr) {
      hooks_.erase(it);
      break;
    }
  }
  if (h) hooks_.push_back({0, 1, output_nr, {}, std::move(h), {}, {}});
}

// Order as PyTorch: tensor hooks, then retain_grad hooks, then node pre-hooks.
variable_list Node::run_prehooks(variable_list grads) {
  if (hooks_.empty()) return grads;
  for (int kind = 0; kind <= 2; ++kind) {
    // Copy: a hook may register or remove hooks.
    auto hooks = hooks_;
    for (auto& h : hooks) {
      if (h.kind != kind) continue;
      if (kind == 0) {
        Tensor& g = grads[h.output_nr];
        if (!g.defined()) continue;
        Tensor r = h.tensor_hook(g);
        if (r.defined()) g = r;
      } else if (kind == 1) {
        if (grads[h.output_nr].defined()) h.retain_hook(grads[h.output_nr]);
      } else {
        variable_list r = h.pre(grads);
        if (!r.empty()) {
          EMBER_CHECK(r.size() == grads.size(), "[backward] hook of ", name(), " returned ",
                      r.size(), " gradients, expected ", grads.size());
          grads = std::move(r);
        }
      }
    }
  }
  return grads;
}

variable_list Node::run_posthooks(variable_list grad_inputs, const variable_list& grad_outputs) {
  auto hooks = hooks_;
  for (auto& h : hooks) {
    if (h.kind != 3) continue;
    variable_list r = h.post(grad_inputs, grad_outputs);
    if (!r.empty()) {
      EMBER_CHECK(r.size() == grad_inputs.size(), "[backward] hook of ", name(), " returned ",
                  r.size(), " gradients, expected ", grad_inputs.size());
      grad_inputs = std::move(r);
    }
  }
  return grad_inputs;
}

// ---- AccumulateGrad ----
AccumulateGrad::AccumulateGrad(intrusive_ptr<TensorImpl> var) : var_(std::move(var)) {
  set_sequence_nr(UINT64_MAX);
  add_input_metadata(Tensor(var_));
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor var(var_);
  AutogradMeta* m = meta(var);
  Tensor g = std::move(grads[0]);
  if (!g.defined() || !m) return {};
  if (!m->grad.defined()) {
    // Steal the incoming gradient when nobody else holds it; otherwise keep a copy, so that
    // later in-place accumulation never writes into someone else's tensor.
    if (GradMode::is_enabled()) {
      m->grad = g.use_count() == 1 && g.storage().use_count() == 1 ? g : g.clone();
    } else {
      // Ownership is read before detach(), whose view shares the storage.
      const bool owned = g.use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous();
      Tensor d = g.detach();
      g = Tensor();
      m->grad = owned ? d : d.clone();
    }
  } else if (!GradMode::is_enabled()) {
    if (m->grad.sizes() == g.sizes())
      m->grad.add_(g);
    else
      m->grad = m->grad + g;
  } else {
    m->grad = m->grad + g;
  }
  auto hooks = m->post_acc_hooks;
  for (auto& h : hooks) h.second(var);
  return {};
}

// ---- tensor autograd state ----
AutogradMeta& materialize_meta(const Tensor& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (!impl->autograd_meta()) impl->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *meta(impl);
}

// The hook holds a raw pointer: ~AutogradMeta, detach_() and set_history() remove it.
void install_retain_hook(TensorImpl* self, AutogradMeta& m) {
  m.grad_fn->set_retains_grad_hook(m.output_nr, [self](const Tensor& g) {
    AutogradMeta* mm = meta(self);
    if (!mm) return;
    if (!mm->grad.defined())
      mm->grad = g.clone();
    else
      mm->grad = mm->grad + g;
  });
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = materialize_meta(t);
  if (m.retains_grad && m.grad_fn) m.grad_fn->set_retains_grad_hook(m.output_nr, nullptr);
  m.grad_fn = fn;
  m.output_nr = output_nr;
  m.attr_version = t._version();
  if (m.retains_grad && fn) install_retain_hook(t.unsafeGetTensorImpl(), m);
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = meta(t);
  if (!m) return {};
  std::shared_ptr<Node> fn = grad_fn_of(t);
  if (fn) return {std::move(fn), m->output_nr};
  if (!m->requires_grad) return {};
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl());
    m->grad_accumulator = acc;
  }
  return {std::move(acc), 0};
}

Tensor fw_grad(const Tensor& t, uint64_t level) {
  AutogradMeta* m = meta(t);
  if (!m || m->fw_grads.empty()) return {};
  uint64_t key = level_key(level);
  for (auto& [k, g] : m->fw_grads)
    if (k == key) return g;
  return {};
}

bool has_fw_grad(const Tensor& t) {
  AutogradMeta* m = meta(t);
  if (!m || m->fw_grads.empty()) return false;
  const AutogradTLS& s = tls();
  for (uint64_t l : active_levels()) {
    if ((s.fw_suppressed >> l) & 1) continue;
    if (fw_grad(t, l).defined()) return true;
  }
  return false;
}

void check_inference_tensor_use(const Tensor& t, const char* op) {
  EMBER_CHECK(!t.is_inference(), "[", op,
              "] Inference tensors cannot be saved for backward. To work around you can make a "
              "clone to get a normal tensor and use it in autograd.");
}

}  // namespace autograd

// ---- grad modes ----
bool GradMode::is_enabled() { return autograd::tls().grad_enabled; }
void GradMode::set_enabled(bool e) { autograd::tls().grad_enabled = e; }
AutoGradMode::AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) {
  GradMode::set_enabled(enabled);
}
AutoGradMode::~AutoGradMode() { GradMode::set_enabled(prev_); }

InferenceMode::InferenceMode(bool enabled)
    : prev_grad_(GradMode::is_enabled()), prev_inference_(inference_mode_tls()) {
  if (enabled) GradMode::set_enabled(false);
  inference_mode_tls() = enabled;
  autograd::tls().inference = enabled;
}
InferenceMode::~InferenceMode() {
  GradMode::set_enabled(prev_grad_);
  inference_mode_tls() = prev_inference_;
  autograd::tls().inference = prev_inference_;
}
bool InferenceMode::is_enabled() { return inference_mode_tls(); }

// ---- Tensor methods ----
using autograd::AutogradMeta;
using autograd::meta;

bool Tensor::requires_grad() const {
  AutogradMeta* m = meta(*this);
  return m && (m->requires_grad || m->grad_fn);
}

Tensor& Tensor::set_requires_grad(bool r) {
  EMBER_CHECK(!r || is_floating_point() || is_complex(),
              "[requires_grad_] only Tensors of floating point and complex dtype can require "
              "gradients (got ",
              dtype(), ")");
  AutogradMeta* m = meta(*this);
  if (m && m->grad_fn) {
    EMBER_CHECK(r,
                "[requires_grad_] you can only change requires_grad flags of leaf variables. "
                "If you want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach().");
    return *this;
  }
  EMBER_CHECK(!r || !is_inference() || InferenceMode::is_enabled(),
              "[requires_grad_] Setting requires_grad=True on inference tensor outside "
              "InferenceMode is not allowed.");
  if (!m && !r) return *this;
  autograd::materialize_meta(*this).requires_grad = r;
  return *this;
}

bool Tensor::is_leaf() const {
  AutogradMeta* m = meta(*this);
  return !m || !m->grad_fn;
}

int64_t Tensor::output_nr() const {
  AutogradMeta* m = meta(*this);
  return m ? m->output_nr : 0;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const { return autograd::grad_fn_of(*this); }

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  AutogradMeta* m = meta(*this);
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() const { return autograd::materialize_meta(*this).grad; }

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<std::vector<Tensor>> inputs) const {
  autograd::backward(
      {*this}, gradient.defined() ? autograd::variable_list{gradient} : autograd::variable_list{},
      retain_graph, create_graph, inputs ? *inputs : autograd::variable_list{});
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(),
              "[retain_grad] can't retain_grad on Tensor that has "
              "requires_grad=False");
  if (is_leaf()) return;
  AutogradMeta& m = autograd::materialize_meta(*this);
  if (m.retains_grad) return;
  m.retains_grad = true;
  autograd::install_retain_hook(impl_.get(), m);
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = meta(*this);
  return m && m->retains_grad;
}

Tensor Tensor::detach() const {
  Tensor d = make_view(*this, sizes(), strides(), storage_offset());
  d.unsafeGetTensorImpl()->set_view_base({});
  d.unsafeGetTensorImpl()->set_inference(is_inference());
  return d;
}

Tensor& Tensor::detach_() {
  AutogradMeta* m = meta(*this);
  EMBER_CHECK(!is_view() || !m || !m->grad_fn,
              "[detach_] Can't detach views in-place. Use detach() instead.");
  if (m) {
    if (m->retains_grad && m->grad_fn) m->grad_fn->set_retains_grad_hook(m->output_nr, nullptr);
    m->grad_fn.reset();
    m->requires_grad = false;
    m->retains_grad = false;
    m->output_nr = 0;
  }
  return *this;
}

unsigned Tensor::_register_hook(std::function<Tensor(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad(),
              "[register_hook] cannot register a hook on a tensor that doesn't "
              "require gradient");
  AutogradMeta& m = autograd::materialize_meta(*this);
  if (m.grad_fn) return m.grad_fn->register_tensor_prehook(m.output_nr, std::move(hook));
  unsigned id = autograd::new_handle();
  m.leaf_hooks.emplace_back(id, std::move(hook));
  return id;
}

void Tensor::remove_hook(unsigned handle) const {
  AutogradMeta* m = meta(*this);
  if (!m) return;
  if (m->grad_fn) m->grad_fn->remove_hook(handle);
  std::erase_if(m->leaf_hooks, [&](auto& p) { return p.first == handle; });
  std::erase_if(m->post_acc_hooks, [&](auto& p) { return p.first == handle; });
}

unsigned Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> h) const {
  EMBER_CHECK(requires_grad(),
              "[register_post_accumulate_grad_hook] cannot register a hook on a "
              "tensor that doesn't require gradient");
  EMBER_CHECK(is_leaf(),
              "[register_post_accumulate_grad_hook] post accumulate grad hooks cannot "
              "be registered on non-leaf tensors");
  unsigned id = autograd::new_handle();
  autograd::materialize_meta(*this).post_acc_hooks.emplace_back(id, std::move(h));
  return id;
}

Tensor Tensor::variable_data() const {
  auto impl = make_intrusive<TensorImpl>(storage(), dtype(), sizes(), strides(), storage_offset());
  impl->set_conj(is_conj());
  impl->set_inference(is_inference());
  return Tensor(std::move(impl));
}

Tensor Tensor::_base() const {
  TensorImpl* b = impl_->view_base();
  return b ? Tensor(impl_->view_base_ptr()) : Tensor();
}

Tensor Tensor::_fw_grad(uint64_t level) const { return autograd::fw_grad(*this, level); }

void Tensor::_set_fw_grad(const Tensor& tangent, uint64_t level, bool /*is_inplace_op*/) const {
  AutogradMeta& m = autograd::materialize_meta(*this);
  uint64_t key = autograd::level_key(level);
  EMBER_CHECK(key != UINT64_MAX, "[make_dual] forward AD level ", level, " is not active");
  // Drop tangents of levels that were exited, and the old one of this level.
  std::erase_if(m.fw_grads, [&](auto& p) {
    return p.first == key || autograd::level_key(p.first & 0xff) != p.first;
  });
  if (!tangent.defined()) return;
  EMBER_CHECK(tangent.sizes() == sizes(),
              "[make_dual] Trying to set a forward gradient that has "
              "a different size than that of the original Tensor, this is not supported. Tensor "
              "is of size ",
              shape_str(sizes()), " while the given forward gradient is of size ",
              shape_str(tangent.sizes()), ".");
  EMBER_CHECK(tangent.dtype() == dtype() || (isComplexType(tangent.dtype()) == is_complex()),
              "[make_dual] Expected tangent of dtype ", dtype(), " but got ", tangent.dtype());
  m.fw_grads.emplace_back(key, tangent.dtype() == dtype() ? tangent : tangent.to(dtype()));
}

}  // namespace ember
