// functional_call and stack_module_state (include/ember/func.h).
//
// Note [Substituting module tensors]
// A C++ module holds its parameters in member fields (`weight = register_parameter(...)`), so
// replacing the entry of its parameter dictionary would not reach `forward`. functional_call
// instead turns each replaced tensor itself, the TensorImpl that the member handle and the
// dictionary share, into an alias of its substitute for the duration of the call: it takes the
// substitute's storage (a batched substitute's wrapper storage included), geometry, version
// counter and autograd state (a grad_fn that leads to the substitute, its tangents), so every
// handle sees the substitute and gradients flow to it. Afterwards the tensor gets its own state
// back, and the saved tensors of the nodes the call recorded that refer to it are pointed at a
// standalone alias of the substitute, so a later backward reads the substitute's values.

#include "ember/func.h"

#include "autograd/meta.h"
#include "autograd/record.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/nn/module.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "upper_layer.h"

namespace ember::func {

namespace {

struct MetaState {
  bool requires_grad = false;
  bool retains_grad = false;
  uint32_t output_nr = 0;
  uint32_t attr_version = 0;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;
  std::vector<std::pair<uint64_t, Tensor>> fw_grads;
};

MetaState take(autograd::AutogradMeta& m) {
  MetaState s{m.requires_grad,
              m.retains_grad,
              m.output_nr,
              m.attr_version,
              std::move(m.grad),
              std::move(m.grad_fn),
              std::move(m.grad_accumulator),
              std::move(m.fw_grads)};
  return s;
}
void put(autograd::AutogradMeta& m, MetaState s) {
  m.requires_grad = s.requires_grad;
  m.retains_grad = s.retains_grad;
  m.output_nr = s.output_nr;
  m.attr_version = s.attr_version;
  m.grad = std::move(s.grad);
  m.grad_fn = std::move(s.grad_fn);
  m.grad_accumulator = std::move(s.grad_accumulator);
  m.fw_grads = std::move(s.fw_grads);
}

// One substituted tensor: its original state, and the alias it mimics.
struct Swap {
  Tensor target;  // the module's tensor (shared with the member handle)
  Tensor alias;   // a view of the substitute
  Tensor original_geometry;
  intrusive_ptr<VersionCounter> original_version;
  intrusive_ptr<TensorImpl> original_base;
  MetaState original_meta;
};

void mimic(Swap& s) {
  TensorImpl* t = s.target.unsafeGetTensorImpl();
  TensorImpl* a = s.alias.unsafeGetTensorImpl();
  s.original_geometry = Tensor(make_intrusive<TensorImpl>(t->storage(), t->dtype(), t->sizes(),
                                                          t->strides(), t->storage_offset()));
  s.original_geometry.unsafeGetTensorImpl()->set_conj(t->is_conj());
  s.original_version = t->version_counter();
  s.original_base = t->view_base_ptr();
  autograd::AutogradMeta& m = autograd::materialize_meta(s.target);
  s.original_meta = take(m);
  t->set_data_from(*a);
  t->set_version_counter(a->version_counter());
  t->set_view_base(a->view_base_ptr());
  if (autograd::AutogradMeta* am = autograd::meta(s.alias)) {
    m.requires_grad = am->requires_grad;
    m.output_nr = am->output_nr;
    m.attr_version = am->attr_version;
    m.grad_fn = am->grad_fn;
    m.fw_grads = am->fw_grads;
  }
}

void restore(Swap& s) {
  TensorImpl* t = s.target.unsafeGetTensorImpl();
  t->set_data_from(*s.original_geometry.unsafeGetTensorImpl());
  t->set_version_counter(s.original_version);
  t->set_view_base(s.original_base);
  put(autograd::materialize_meta(s.target), std::move(s.original_meta));
}

}  // namespace

TensorList functional_call(nn::Module& module, const std::map<std::string, Tensor>& tensors,
                           const std::function<TensorList()>& call) {
  auto params = module.named_parameters();
  auto buffers = module.named_buffers();
  std::vector<Swap> swaps;
  for (const auto& [name, sub] : tensors) {
    const Tensor* target = params.find(name);
    if (!target) target = buffers.find(name);
    EMBER_CHECK_VALUE(target != nullptr,
                      "[functional_call] the module has no parameter or "
                      "buffer named '",
                      name, "'");
    EMBER_CHECK_VALUE(sub.defined(), "[functional_call] the tensor for '", name, "' is undefined");
    Swap s;
    s.target = *target;
    s.alias = sub.view_as(sub);
    swaps.push_back(std::move(s));
  }
  const uint64_t since = autograd::next_sequence_nr();
  for (Swap& s : swaps) mimic(s);
  TensorList out;
  try {
    out = call();
  } catch (...) {
    for (Swap& s : swaps) restore(s);
    throw;
  }
  for (Swap& s : swaps) restore(s);
  for (Swap& s : swaps) {
    const TensorImpl* from = s.target.unsafeGetTensorImpl();
    autograd::redirect_saved(out, since, from, s.alias);
    for (Tensor& o : out)
      if (o.defined() && o.unsafeGetTensorImpl() == from) o = s.alias;
  }
  return out;
}

std::pair<std::map<std::string, Tensor>, std::map<std::string, Tensor>> stack_module_state(
    const std::vector<nn::Module*>& models) {
  EMBER_CHECK_VALUE(!models.empty(), "[stack_module_state] Expected at least one model, got 0.");
  std::map<std::string, Tensor> params, buffers;
  auto first_p = models[0]->named_parameters();
  auto first_b = models[0]->named_buffers();
  for (const auto& item : first_p) {
    std::vector<Tensor> parts;
    for (nn::Module* m : models) {
      auto p = m->named_parameters();
      const Tensor* t = p.find(item.key());
      EMBER_CHECK_VALUE(t != nullptr,
                        "[stack_module_state] Expected all models to have the same "
                        "parameters; one lacks '",
                        item.key(), "'");
      parts.push_back(t->detach());
    }
    params[item.key()] = stack(parts, 0).requires_grad_(true);
  }
  for (const auto& item : first_b) {
    std::vector<Tensor> parts;
    for (nn::Module* m : models) {
      auto b = m->named_buffers();
      const Tensor* t = b.find(item.key());
      EMBER_CHECK_VALUE(t != nullptr,
                        "[stack_module_state] Expected all models to have the same "
                        "buffers; one lacks '",
                        item.key(), "'");
      parts.push_back(t->detach());
    }
    buffers[item.key()] = stack(parts, 0);
  }
  return {params, buffers};
}

}  // namespace ember::func
