// The optimizer base: parameter groups, per-parameter state and the flat tensor state dict
// (see Note [Optimizer state dict] in include/ember/optim/optimizer.h).
#include "ember/optim/optimizer.h"

#include <cstring>
#include <unordered_set>

#include "ember/autograd.h"
#include "ember/factory.h"

namespace ember::optim {
namespace detail {

namespace {
Tensor scalar_of(double v) { return scalar_tensor(Scalar(v), TensorOptions(kDouble)); }

const Tensor& need(const TensorDict& in, const std::string& key) {
  const Tensor* t = in.find(key);
  EMBER_CHECK(t != nullptr, "[Optimizer.load_state_dict] missing key '", key, "'");
  EMBER_CHECK(t->defined(), "[Optimizer.load_state_dict] key '", key, "' holds no tensor");
  return *t;
}

Scalar scalar_at(const TensorDict& in, const std::string& key) {
  const Tensor& t = need(in, key);
  EMBER_CHECK(t.numel() == 1, "[Optimizer.load_state_dict] key '", key,
              "' must hold one number, got shape ", t.sizes());
  return t.reshape({}).item();
}
}  // namespace

void FieldWriter::operator()(const char* name, double v) {
  out.insert_or_assign(prefix + name, scalar_of(v));
}
void FieldWriter::operator()(const char* name, bool v) {
  out.insert_or_assign(prefix + name, scalar_tensor(Scalar(v), TensorOptions(kBool)));
}
void FieldWriter::operator()(const char* name, int64_t v) {
  out.insert_or_assign(prefix + name, scalar_tensor(Scalar(v), TensorOptions(kLong)));
}
void FieldWriter::operator()(const char* name, const std::optional<int64_t>& v) {
  if (v) (*this)(name, *v);
}
void FieldWriter::operator()(const char* name, const std::tuple<double, double>& v) {
  out.insert_or_assign(prefix + name,
                       tensor({std::get<0>(v), std::get<1>(v)}, TensorOptions(kDouble)));
}
void FieldWriter::operator()(const char* name, const std::optional<std::string>& v) {
  if (!v) return;
  // A string option is stored as its bytes (uint8), so the dict stays tensor-only.
  Tensor t = empty({int64_t(v->size())}, TensorOptions(kByte));
  if (!v->empty()) std::memcpy(t.data_ptr(), v->data(), v->size());
  out.insert_or_assign(prefix + name, t);
}
void FieldWriter::operator()(const char* name, const Tensor& v) {
  if (v.defined()) out.insert_or_assign(prefix + name, v);
}
void FieldWriter::operator()(const char* name, const std::vector<Tensor>& v) {
  for (size_t k = 0; k < v.size(); ++k)
    out.insert_or_assign(prefix + name + "." + std::to_string(k), v[k]);
}

void FieldReader::operator()(const char* name, double& v) const {
  v = scalar_at(in, prefix + name).toDouble();
}
void FieldReader::operator()(const char* name, bool& v) const {
  v = scalar_at(in, prefix + name).toBool();
}
void FieldReader::operator()(const char* name, int64_t& v) const {
  v = int64_t(scalar_at(in, prefix + name).toDouble());
}
void FieldReader::operator()(const char* name, std::optional<int64_t>& v) const {
  if (in.contains(prefix + name))
    v = int64_t(scalar_at(in, prefix + name).toDouble());
  else
    v = std::nullopt;
}
void FieldReader::operator()(const char* name, std::tuple<double, double>& v) const {
  const Tensor& t = need(in, prefix + name);
  EMBER_CHECK(t.numel() == 2, "[Optimizer.load_state_dict] key '", prefix, name,
              "' must hold two numbers, got shape ", t.sizes());
  Tensor d = t.to(kDouble).contiguous();
  v = {d.data_ptr<double>()[0], d.data_ptr<double>()[1]};
}
void FieldReader::operator()(const char* name, std::optional<std::string>& v) const {
  const Tensor* t = in.find(prefix + name);
  if (!t || !t->defined()) {
    v = std::nullopt;
    return;
  }
  EMBER_CHECK(t->scalar_type() == kByte && t->dim() == 1, "[Optimizer.load_state_dict] key '",
              prefix, name, "' must be a 1-d uint8 tensor (a string)");
  Tensor c = t->contiguous();
  v = std::string(static_cast<const char*>(c.data_ptr()), size_t(c.numel()));
}
void FieldReader::operator()(const char* name, Tensor& v) const {
  const Tensor* t = in.find(prefix + name);
  v = (t && t->defined()) ? t->detach().clone() : Tensor();
}
void FieldReader::operator()(const char* name, std::vector<Tensor>& v) const {
  v.clear();
  for (size_t k = 0;; ++k) {
    const Tensor* t = in.find(prefix + name + "." + std::to_string(k));
    if (!t) break;
    v.push_back(t->detach().clone());
  }
}

void FieldCaster::operator()(const char*, Tensor& v) const {
  if (v.defined() && isFloatingType(v.scalar_type()) && isFloatingType(like.scalar_type()) &&
      v.scalar_type() != like.scalar_type())
    v = v.to(like.scalar_type());
}

}  // namespace detail

std::unique_ptr<OptimizerParamState> OptimizerParamState::clone() const {
  EMBER_THROW(NotImplementedError,
              "[OptimizerParamState] clone() must be implemented by the subclass (derive from "
              "OptimizerCloneableParamState)");
}
void OptimizerParamState::serialize(TensorDict&, const std::string&) const {}
void OptimizerParamState::deserialize(const TensorDict&, const std::string&) {}
void OptimizerParamState::cast_like(const Tensor&) {}

std::unique_ptr<OptimizerOptions> OptimizerOptions::clone() const {
  EMBER_THROW(NotImplementedError,
              "[OptimizerOptions] clone() must be implemented by the subclass (derive from "
              "OptimizerCloneableOptions)");
}
double OptimizerOptions::get_lr() const {
  EMBER_THROW(NotImplementedError, "[OptimizerOptions] get_lr() is not implemented");
}
void OptimizerOptions::set_lr(const double) {
  EMBER_THROW(NotImplementedError, "[OptimizerOptions] set_lr() is not implemented");
}
void OptimizerOptions::serialize(TensorDict&, const std::string&) const {}
void OptimizerOptions::deserialize(const TensorDict&, const std::string&) {}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& g)
    : params_(g.params_),
      options_(g.options_ ? g.options_->clone() : nullptr),
      initial_lr_(g.initial_lr_) {}
OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& g) {
  if (this != &g) {
    params_ = g.params_;
    options_ = g.options_ ? g.options_->clone() : nullptr;
    initial_lr_ = g.initial_lr_;
  }
  return *this;
}
OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params,
                                         std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}

OptimizerOptions& OptimizerParamGroup::options() {
  EMBER_CHECK(options_ != nullptr, "[OptimizerParamGroup] the group has no options");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  EMBER_CHECK(options_ != nullptr, "[OptimizerParamGroup] the group has no options");
  return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  EMBER_CHECK(defaults_ != nullptr, "[Optimizer] defaults must be given");
  for (const auto& g : param_groups) add_param_group(g);
}

Optimizer::Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults)
    : Optimizer(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(parameters))},
                std::move(defaults)) {}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  std::unordered_set<const void*> seen;
  for (const auto& g : param_groups_)
    for (const Tensor& p : g.params()) seen.insert(p.unsafeGetTensorImpl());
  for (const Tensor& p : param_group.params()) {
    EMBER_CHECK_TYPE(p.defined(), "[Optimizer] optimizer can only optimize defined Tensors");
    EMBER_CHECK_VALUE(p.is_leaf(), "[Optimizer] can't optimize a non-leaf Tensor");
    EMBER_CHECK_VALUE(seen.insert(p.unsafeGetTensorImpl()).second,
                      "[Optimizer] some parameters appear in more than one parameter group");
  }
  OptimizerParamGroup g(param_group.params());
  g.set_options(param_group.has_options() ? param_group.options().clone() : defaults_->clone());
  param_groups_.push_back(std::move(g));
}

void Optimizer::add_parameters(const std::vector<Tensor>& parameters) {
  EMBER_CHECK(!param_groups_.empty(), "[Optimizer] add_parameters needs a parameter group");
  std::unordered_set<const void*> seen;
  for (const auto& g : param_groups_)
    for (const Tensor& p : g.params()) seen.insert(p.unsafeGetTensorImpl());
  for (const Tensor& p : parameters)
    EMBER_CHECK_VALUE(seen.insert(p.unsafeGetTensorImpl()).second,
                      "[Optimizer] some parameters appear in more than one parameter group");
  auto& ps = param_groups_.front().params();
  ps.insert(ps.end(), parameters.begin(), parameters.end());
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    for (Tensor& p : g.params()) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad = Tensor();
      } else {
        if (grad.grad_fn())
          grad.detach_();
        else
          grad.requires_grad_(false);
        grad.zero_();
      }
    }
  }
}

const std::vector<Tensor>& Optimizer::parameters() const noexcept {
  static const std::vector<Tensor> empty_list;
  return param_groups_.empty() ? empty_list : param_groups_.front().params();
}
std::vector<Tensor>& Optimizer::parameters() noexcept {
  static std::vector<Tensor> empty_list;
  return param_groups_.empty() ? empty_list : param_groups_.front().params();
}
size_t Optimizer::size() const noexcept {
  size_t n = 0;
  for (const auto& g : param_groups_) n += g.params().size();
  return n;
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  AutoGradMode enable(true);
  return closure();
}

TensorDict Optimizer::state_dict() const {
  TensorDict out("Key");
  int64_t index = 0;
  for (const auto& g : param_groups_) {
    for (const Tensor& p : g.params()) {
      auto it = state_.find(p.unsafeGetTensorImpl());
      if (it != state_.end()) it->second->serialize(out, "state." + std::to_string(index) + ".");
      ++index;
    }
  }
  index = 0;
  for (size_t gi = 0; gi < param_groups_.size(); ++gi) {
    const auto& g = param_groups_[gi];
    const std::string prefix = "param_groups." + std::to_string(gi) + ".";
    g.options().serialize(out, prefix);
    std::vector<int64_t> ids;
    for (size_t k = 0; k < g.params().size(); ++k) ids.push_back(index++);
    out.insert_or_assign(prefix + "params", tensor(ids, TensorOptions(kLong)));
  }
  return out;
}

void Optimizer::load_state_dict(const TensorDict& dict) {
  const char* op = "[Optimizer.load_state_dict]";
  size_t saved_groups = 0;
  while (dict.contains("param_groups." + std::to_string(saved_groups) + ".params")) ++saved_groups;
  EMBER_CHECK_VALUE(saved_groups == param_groups_.size(), op,
                    " loaded state dict has a different number of parameter groups (", saved_groups,
                    ") than the optimizer (", param_groups_.size(), ")");
  // Everything is read into new objects first: a mismatch leaves the optimizer unchanged.
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  std::unordered_map<void*, std::unique_ptr<OptimizerParamState>> states;
  for (size_t gi = 0; gi < param_groups_.size(); ++gi) {
    const auto& g = param_groups_[gi];
    const std::string prefix = "param_groups." + std::to_string(gi) + ".";
    const Tensor& ids = dict[prefix + "params"];
    EMBER_CHECK_VALUE(ids.dim() <= 1 && size_t(ids.numel()) == g.params().size(), op,
                      " loaded state dict contains a parameter group (", gi, ") with ", ids.numel(),
                      " parameters that doesn't match the size of the optimizer's "
                      "group (",
                      g.params().size(), ")");
    auto opt = g.options().clone();
    opt->deserialize(dict, prefix);
    options.push_back(std::move(opt));
    Tensor id64 = ids.to(kLong).contiguous();
    for (size_t k = 0; k < g.params().size(); ++k) {
      const Tensor& p = g.params()[k];
      const std::string sp = "state." + std::to_string(id64.data_ptr<int64_t>()[k]) + ".";
      bool any = false;
      for (const auto& item : dict)
        if (item.key().compare(0, sp.size(), sp) == 0) {
          any = true;
          break;
        }
      if (!any) continue;
      auto st = make_param_state();
      st->deserialize(dict, sp);
      // States shaped like the parameter take its dtype, as torch's load_state_dict does.
      TensorDict check("Key");
      st->serialize(check, "");
      for (const auto& item : check) {
        if (!st->param_shaped()) break;
        const Tensor& t = item.value();
        if (t.dim() == 0 && p.dim() != 0) continue;
        if (item.key() == "step" || item.key() == "mu_product") continue;
        EMBER_CHECK_VALUE(t.sizes() == p.sizes(), op, " state '", sp, item.key(), "' has shape ",
                          t.sizes(), " but its parameter has shape ", p.sizes());
      }
      st->cast_like(p);
      states.emplace(p.unsafeGetTensorImpl(), std::move(st));
    }
  }
  for (size_t gi = 0; gi < param_groups_.size(); ++gi)
    param_groups_[gi].set_options(std::move(options[gi]));
  state_ = std::move(states);
}

}  // namespace ember::optim
