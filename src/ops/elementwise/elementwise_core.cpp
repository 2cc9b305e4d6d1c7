#include "ops/elementwise/elementwise_core.h"

#include "ops/call_path.h"
#include "ops/device_kernels.h"

#include <optional>
#include <string>
#include <vector>

#include "autograd/record.h"
#include "ops/elementwise/elementwise_grad.h"

#include <algorithm>
#include <numeric>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "kernels/cpu/elementwise/elementwise.h"
#include "kernels/stubs/core.h"
#include "kernels/stubs/elementwise.h"
#include "ops/device_backend.h"

namespace ember {

namespace {
std::array<DeviceBackend*, kMaxDeviceTypes>& backends() {
  static std::array<DeviceBackend*, kMaxDeviceTypes> b{};
  return b;
}

// torch.result_type's category combination: a higher-priority class wins unless a
// lower-priority operand is of a higher category (then promotion within the category).
ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (isComplexType(higher)) return higher;
  if (isComplexType(lower)) {
    if (isFloatingType(higher)) return toComplexType(higher);
    return lower;
  }
  if (isFloatingType(higher)) return higher;
  if (higher == kBool || isFloatingType(lower)) return promoteTypes(higher, lower);
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}
}  // namespace

void register_device_backend(DeviceType t, DeviceBackend* b) {
  backends()[int(t)] = b;
  if (!b) return;
  // What a backend implements (Note [Device backends]): the elementwise ops (it reports dtypes
  // it lacks itself) and the copies and fills that move data to, from and within the device.
  for (int i = 0; i < kNumElementwiseOps; ++i) register_kernel_all_dtypes(t, OpId(i));
  for (OpId op :
       {OpId::copy_, OpId::fill_, OpId::to, OpId::clone, OpId::contiguous, OpId::item, OpId::zeros,
        OpId::scalar_tensor, OpId::tensor, OpId::resolve_conj, OpId::conj_physical_1})
    register_kernel_all_dtypes(t, op);
  // Note [Device-generic ops]: ops with rules of their own (so not kComposite) whose bodies
  // only allocate, take views, call other ops (each checked at its own entry) and kernel stubs
  // (an empty slot raises NotImplementedError). They run wherever those do; what a backend
  // lacks raises there, before memory is read.
  for (OpId op : {OpId::where_1, OpId::allclose, OpId::equal, OpId::reshape, OpId::resize_,
                  OpId::cat, OpId::constant_pad_nd, OpId::pad, OpId::block_diag, OpId::diag,
                  OpId::diag_embed, OpId::diagflat, OpId::diagonal_scatter, OpId::select_scatter,
                  OpId::slice_scatter, OpId::linalg_matrix_power, OpId::binary_cross_entropy,
                  OpId::smooth_l1_loss, OpId::lstm_cell, OpId::gru_cell, OpId::rnn_tanh_cell,
                  OpId::rnn_relu_cell, OpId::lstm, OpId::gru, OpId::rnn_tanh, OpId::rnn_relu,
                  // factories that fill a CPU tensor and copy it to the target device
                  OpId::arange_2, OpId::linspace, OpId::logspace, OpId::eye_1})
    register_kernel_all_dtypes(t, op);
}
DeviceBackend* device_backend(DeviceType t) { return backends()[int(t)]; }

namespace {
/// wrap_scalar in `dtype`: `s` converted as the cast kernels convert s.type() to it.
Tensor wrap_scalar_as(const Scalar& s, ScalarType dtype) {
  dispatch::QuietScope quiet;  // part of the op it is an argument of
  Tensor t = empty_tensor({}, dtype);
  write_scalar_stub(kCPU, t, s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}
}  // namespace

Tensor wrap_scalar(const Scalar& s) { return wrap_scalar_as(s, s.type()); }

Tensor wrap_scalar_like(const Scalar& s, const Tensor& other) {
  const ScalarType dt = other.dtype();
  // The categories bool < integer < floating < complex: a wrapped number of a lower or equal one
  // leaves the result dtype to `other` (result_type below, Note [Type promotion]).
  auto category = [](ScalarType t) {
    return t == kBool ? 0 : isIntegralType(t, false) ? 1 : isComplexType(t) ? 3 : 2;
  };
  // A bool number stays bool: sub's check refuses bool operands by their dtype. complex32
  // computes in complex64, and its wrapped numbers are read back (item) on the way.
  const bool same_result = other.defined() && dt != kBool && dt != kComplexHalf &&
                           s.type() != kBool && category(s.type()) <= category(dt);
  return wrap_scalar_as(s, same_result ? dt : s.type());
}

Tensor operand_on_device(const Tensor& t, Device device) {
  if (t.device() == device) return t;
  if (t.dim() != 0 || !t.is_cpu() || device.is_cpu() || t.requires_grad() ||
      t.dtype() == kComplexHalf)  // no item() of complex32: the copy as before
    return t.to(device);
  dispatch::QuietScope quiet;  // part of the op it is an operand of
  Tensor d = empty_tensor({}, t.dtype(), device);
  d.fill_(item_stub(kCPU, t, false));
  return d;
}

ScalarType result_type(ArrayRef<Tensor> tensors) {
  ScalarType dim = ScalarType::Undefined, zero = dim, wrapped = dim;
  for (const Tensor& t : tensors) {
    ScalarType cur = t.dtype();
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) {
      if (isComplexType(cur))
        cur = get_default_complex_dtype();
      else if (isFloatingType(cur))
        cur = get_default_dtype();
      wrapped = promoteTypes(wrapped, cur);
    } else if (t.dim() > 0) {
      dim = promoteTypes(dim, cur);
    } else {
      zero = promoteTypes(zero, cur);
    }
  }
  return combine_categories(dim, combine_categories(zero, wrapped));
}

ScalarType result_type(const Tensor& a, const Tensor& b) { return result_type({a, b}); }
ScalarType result_type(const Tensor& a, const Scalar& b) {
  return result_type({a, wrap_scalar(b)});
}
ScalarType result_type(const Scalar& a, const Tensor& b) {
  return result_type({wrap_scalar(a), b});
}
ScalarType result_type(const Scalar& a, const Scalar& b) {
  return result_type({wrap_scalar(a), wrap_scalar(b)});
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, "[broadcast_shapes] shapes ", shape_str(a), " and ",
                shape_str(b), " are not broadcastable: the size of tensor a (", da,
                ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector broadcast_all(ArrayRef<Tensor> tensors, const char* op) {
  DimVector shape = tensors[0].sizes();
  for (size_t k = 1; k < tensors.size(); ++k) {
    IntArrayRef b = tensors[k].sizes();
    if (b == shape.ref()) continue;
    size_t n = std::max(shape.size(), b.size());
    DimVector out(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t da = i < n - shape.size() ? 1 : shape[i - (n - shape.size())];
      int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
      EMBER_CHECK(da == db || da == 1 || db == 1, "[", op, "] the size of tensor a (", da,
                  ") must match the size of tensor b (", db, ") at non-singleton dimension ", i,
                  " (shapes ", shape_str(shape), " and ", shape_str(b), ")");
      out[i] = da == 1 ? db : da;
    }
    shape = std::move(out);
  }
  return shape;
}

void check_no_internal_overlap(const Tensor& t, const char* op) {
  if (t.numel() == 0) return;  // nothing is written
  for (int64_t d = 0; d < t.dim(); ++d) {
    EMBER_CHECK(!(t.stride(d) == 0 && t.size(d) > 1), "[", op,
                "] unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location (shape ",
                shape_str(t.sizes()), ", strides ", shape_str(t.strides()),
                "). Please clone() the tensor before performing the "
                "operation.");
  }
}

void check_no_partial_overlap(const Tensor& out, const Tensor& in, const char* op) {
  if (!out.is_alias_of(in) || out.numel() == 0 || in.numel() == 0) return;
  // Addresses are compared, never read.
  auto* a0 = static_cast<char*>(out.unsafeGetTensorImpl()->data());
  auto* b0 = static_cast<char*>(in.unsafeGetTensorImpl()->data());
  if (a0 == b0 && out.sizes() == in.sizes() && out.strides() == in.strides() &&
      out.dtype() == in.dtype())
    return;  // full overlap: an in-place update reading each element before writing it
  if (!out.is_contiguous() || !in.is_contiguous()) return;  // too hard to tell, as PyTorch
  auto* a1 = a0 + out.nbytes();
  auto* b1 = b0 + in.nbytes();
  EMBER_CHECK(a1 <= b0 || b1 <= a0, "[", op,
              "] unsupported operation: some elements of the input tensor and the written-to "
              "tensor refer to a single memory location. Please clone() the tensor before "
              "performing the operation.");
}

Tensor empty_like_layout(IntArrayRef sizes, ScalarType dtype, Device device,
                         ArrayRef<Tensor> like) {
  for (const Tensor& t : like) {
    if (t.sizes() != sizes || t.is_contiguous() || t.numel() <= 1) continue;
    // Order dims by decreasing stride; use that order if it describes a dense layout.
    int64_t nd = t.dim();
    DimVector perm(static_cast<size_t>(nd));
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
    int64_t expected = 1;
    bool dense = true;
    for (int64_t i = nd - 1; i >= 0 && dense; --i) {
      int64_t d = perm[i];
      if (t.size(d) == 1) continue;
      dense = t.stride(d) == expected;
      expected *= t.size(d);
    }
    if (!dense) continue;
    DimVector psizes(static_cast<size_t>(nd));
    for (int64_t i = 0; i < nd; ++i) psizes[i] = sizes[perm[i]];
    DimVector pstrides = contiguous_strides(psizes);
    DimVector strides(static_cast<size_t>(nd));
    for (int64_t i = 0; i < nd; ++i) strides[perm[i]] = pstrides[i];
    Tensor base = empty_tensor(psizes, dtype, device);
    return make_view(base, sizes, strides, 0);
  }
  return empty_tensor(sizes, dtype, device);
}

namespace {

// An op's name in messages: "add", or "add_" for the in-place form (formatted only on error).
struct OpName {
  const char* base;
  bool inplace;
};
std::ostream& operator<<(std::ostream& os, const OpName& n) {
  return os << n.base << (n.inplace ? "_" : "");
}

}  // namespace

void run_elementwise_kernel(OpId op, ScalarType dtype, const Tensor& out,
                            ArrayRef<const Tensor*> inputs, const OpParams& params,
                            const char* name, bool inplace) {
  const OpName shown{name, inplace};
  Device dev = out.device();
  if (!dev.is_cpu()) {
    DeviceBackend* b = device_backend(dev.type());
    EMBER_CHECK(b, "[", shown, "] no backend for device ", dev, " in this build");
    bool ok = b->elementwise(op, out, inputs, params);
    EMBER_CHECK_T(NotImplementedError, ok, "[", shown, "] not implemented for dtype ",
                  inputs.empty() ? out.dtype() : inputs[0]->dtype(), " on device ", dev);
    return;
  }
  cpu::ElementwiseFn fn = cpu::kernels().get(op, dtype);
  EMBER_CHECK(fn, "[", shown, "] not implemented for dtype ", dtype);
  if (out.numel() == 0) return;
  cpu::run_plan(cpu::make_plan(out, inputs), fn, params);
}

const char* inplace_name(OpId op) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i < kNumElementwiseOps; ++i)
      v.push_back(std::string(op_def(OpId(i)).name) + "_");
    return v;
  }();
  return names[size_t(op)].c_str();
}

namespace {

/// The elementwise ops PyTorch 1.13 runs on complex32 CPU tensors (Note [complex32]).
bool runs_on_complex_half(OpId op) {
  static constexpr OpId kOps[] = {
      OpId::add,           OpId::sub,    OpId::mul,   OpId::neg,     OpId::abs,   OpId::sgn,
      OpId::conj_physical, OpId::eq,     OpId::ne,    OpId::isclose, OpId::isnan, OpId::isinf,
      OpId::isfinite,      OpId::isreal, OpId::where, OpId::copy,    OpId::fill};
  for (OpId o : kOps)
    if (o == op) return true;
  return false;
}

/// Whether the rule of `op` reads operand `k` in this call. As PyTorch, mul reads each operand
/// only for the other one's gradient and true_divide the numerator only for the denominator's:
/// it is not saved otherwise (so changing it in place before backward is fine). Under forward
/// AD every operand is kept (the jvp reads them).
bool operand_needed(OpId op, int k, int n, const Tensor* ins) {
  if (!(elementwise_saves(op) & (1 << k))) return false;
  const autograd::AutogradTLS& s = autograd::tls();
  if (s.fw_levels > 0 || n != 2) return true;
  auto needs_grad = [&](int j) { return s.grad_enabled && ins[j].requires_grad(); };
  if (op == OpId::mul) return needs_grad(1 - k);
  if (op == OpId::true_divide && k == 0) return needs_grad(1);
  return true;
}

/// What the rules of an elementwise op read from their args (op, inplace, the 4 scalars).
struct RuleState {
  OpId op;
  OpParams params;
  int n;
  GradKind kind;
};
RuleState rule_state(const autograd::RuleArgs& a) {
  RuleState st{a.e<OpId>(0), {}, 0, GradKind::Zero};
  for (size_t k = 0; k < 4; ++k) st.params.s[k] = a.scalar(2 + k);
  st.n = op_def(st.op).arity;
  st.kind = elementwise_grad_kind(st.op);
  return st;
}

// Wires an elementwise result into the autograd graph with the rules of elementwise_grad.cpp.
// `keep` has bit k set when operand k is saved (operand_needed).
void record_elementwise(autograd::OpRecorder& rec, OpId op, const OpParams& params, int n,
                        const Tensor* originals, const Tensor& out, bool inplace, uint8_t keep) {
  using autograd::variable_list;
  const GradKind kind = elementwise_grad_kind(op);
  if (kind == GradKind::NotImplemented) {
    rec.record_not_implemented({out});
    return;
  }
  const uint8_t mask = elementwise_saves(op);
  variable_list saved(4);
  for (int k = 0; k < n; ++k) {
    if (!(keep & (1 << k))) continue;
    saved[size_t(k)] = originals[k];
    // A wrapped number (a C++/Python scalar operand) is saved as a plain 0-dim tensor: as a
    // lone operand of the rule's ops it would promote weakly to the default dtype, so 1/3.0
    // would round to float32 in a float64 gradient.
    if (originals[k].unsafeGetTensorImpl()->is_wrapped_number()) {
      Tensor plain = originals[k].clone();
      plain.unsafeGetTensorImpl()->set_wrapped_number(false);
      saved[size_t(k)] = plain;
    }
  }
  if (mask & 8) saved[3] = out;
  rec.args(op, inplace, params.s[0], params.s[1], params.s[2], params.s[3]);
  autograd::VjpFn vjp = [](autograd::VjpCtx& c) {
    const auto [op, params, n, kind] = rule_state(c.args());
    const Scalar& a0 = params.s[0];
    const bool unit_alpha = !a0.isComplex() && !a0.isBoolean() && a0.toDouble() == 1.0;
    const Tensor& g = c.grads[0];
    variable_list r(static_cast<size_t>(n));
    const Tensor xs[3] = {c.saved[0], c.saved[1], c.saved[2]};
    for (int k = 0; k < n; ++k) {
      if (!c.needs(size_t(k))) continue;
      if (kind == GradKind::Zero) {
        r[size_t(k)] = zeros_like(g);
      } else if ((op == OpId::add || op == OpId::sub) && (k == 0 || unit_alpha)) {
        r[size_t(k)] = op == OpId::sub && k == 1 ? -g : g;  // the common case, without a product
      } else if (op == OpId::neg) {
        r[size_t(k)] = -g;
      } else if (op == OpId::relu) {
        // One select instead of mask, cast and product (PyTorch's threshold_backward).
        const Tensor& y = c.saved[3];
        // threshold_backward is differentiable in y too (a zero derivative): under
        // create_graph or forward AD the gradient depends on y, so it requires grad and carries
        // a (zero) tangent, as PyTorch's.
        const bool through_y =
            (GradMode::is_enabled() && y.requires_grad()) || autograd::tls().fw_levels > 0;
        r[size_t(k)] = relu_backward(g, y, through_y);
      } else if (op == OpId::mul && !xs[1 - k].is_complex()) {
        r[size_t(k)] = g * xs[1 - k];
      } else if (op == OpId::conj_physical) {
        r[size_t(k)] = g.conj_physical();
      } else if (op == OpId::abs && xs[0].is_complex()) {
        r[size_t(k)] = g * sgn(xs[0]);
      } else if (op == OpId::sgn && xs[0].is_complex()) {
        // d(z/|z|): (g - Re(g·conj(sgn z))·sgn z) / |z|, zero at z = 0 (PyTorch's sgn_backward).
        Tensor a = abs(xs[0]), s = sgn(xs[0]);
        Tensor v = (g - real(g * conj(s)) * s) / a;
        r[size_t(k)] = where(eq(a, wrap_scalar(0.0)), zeros_like(v), v);
      } else {
        Tensor d = elementwise_partial(op, k, xs, c.saved[3], params);
        r[size_t(k)] = g * (d.is_complex() ? conj(d) : d);
      }
    }
    return r;
  };
  autograd::JvpFn jvp = [](autograd::JvpCtx& c) {
    const auto [op, params, n, kind] = rule_state(c.args());
    const bool inplace = c.args().b(1);
    const Tensor& o = c.outputs[0];
    if (kind == GradKind::Zero) return variable_list{zeros_like(o)};
    Tensor xs[3];
    for (int k = 0; k < n; ++k)
      xs[k] = c.saved[size_t(k)].defined() || (inplace && k == 0) ? c.saved[size_t(k)]
                                                                  : c.inputs[size_t(k)];
    if (op == OpId::conj_physical) return variable_list{c.tangents[0].conj_physical()};
    if (op == OpId::abs && xs[0].is_complex())
      return variable_list{real(conj(sgn(xs[0])) * c.tangents[0])};
    if (op == OpId::sgn && xs[0].is_complex()) {
      const Tensor& t = c.tangents[0];
      Tensor a = abs(xs[0]), s = sgn(xs[0]);
      Tensor v = (t - s * real(conj(s) * t)) / a;
      return variable_list{where(eq(a, wrap_scalar(0.0)), zeros_like(v), v)};
    }
    Tensor acc;
    for (int k = 0; k < n; ++k) {
      const Tensor& t = c.tangents[size_t(k)];
      if (!t.defined()) continue;
      Tensor term = t * elementwise_partial(op, k, xs, o, params);
      acc = acc.defined() ? acc + term : term;
    }
    return variable_list{acc.defined() ? acc : zeros_like(o)};
  };
  // pow(Tensor, Tensor) is PyTorch's PowBackward1 (Note [Node names]).
  if (op == OpId::pow && n == 2 && !originals[1].unsafeGetTensorImpl()->is_wrapped_number())
    rec.set_overload(1);
  // The jvp is only needed under a forward-AD level (saves building it on the hot path).
  autograd::JvpFn jv = autograd::tls().fw_levels > 0 ? jvp : nullptr;
  if (inplace)
    rec.record_inplace(out, vjp, saved, jv);
  else
    rec.record(out, vjp, saved, jv);
}

}  // namespace

Tensor elementwise(OpId op, std::initializer_list<Tensor> inputs_il, const OpParams& params,
                   OutMode mode, Tensor* out) {
  EMBER_OP_EACH(op, mode == OutMode::InPlace,
                ArrayRef<Tensor>(inputs_il.begin(), inputs_il.size()));
  if (EMBER_OP_UNLIKELY(dispatch::slow_path()) && (dispatch::active_layers() & dispatch::kVmap)) {
    // Note [Batching rules]: the elementwise family's one rule.
    Tensor r;
    if (dispatch::vmap_hooks().elementwise(
            op, ArrayRef<Tensor>(inputs_il.begin(), inputs_il.size()), params, int(mode), out, r))
      return r;
  }
  const OpDef& def = op_def(op);
  const OpName name{def.name, mode == OutMode::InPlace};
  EMBER_INTERNAL_ASSERT(int(inputs_il.size()) == def.arity, def.name);
  Tensor inputs[3];
  int n = 0;
  for (const Tensor& t : inputs_il) {
    EMBER_CHECK(t.defined(), "[", name, "] got an undefined tensor as input ", n);
    inputs[n++] = t;
  }
  ArrayRef<Tensor> ins(inputs, size_t(n));
  Device device = inputs[0].device();
  for (int k = 1; k < n; ++k) {
    // 0-dim CPU tensors (scalars) may mix with tensors on another device, as in PyTorch.
    if (inputs[k].device() != device) {
      bool k_scalar = inputs[k].dim() == 0 && inputs[k].is_cpu();
      bool first_scalar = inputs[0].dim() == 0 && inputs[0].is_cpu();
      // PyTorch's words (tests match them).
      EMBER_CHECK(k_scalar || first_scalar, "[", name,
                  "] Expected all tensors to be on the same device, but found at least two "
                  "devices, ",
                  device, " and ", inputs[k].device(), "!");
      if (first_scalar && !k_scalar) device = inputs[k].device();
    }
  }

  const ScalarType promoted = result_type(ins);
  if (op == OpId::heaviside) {
    // PyTorch 1.13 refuses complex operands and operands (out= included) of differing dtypes. A
    // number counts as the 0-dim tensor PyTorch needs in its place (heaviside takes no numbers):
    // torch.tensor(number), of the default dtype of its kind.
    const bool to_out = mode == OutMode::Out;
    EMBER_CHECK(!isComplexType(promoted) && !(to_out && isComplexType(out->dtype())), "[", name,
                "] heaviside is not yet implemented for complex tensors.");
    auto as_tensor_dtype = [](const Tensor& t) {
      const ScalarType d = t.dtype();
      if (!t.unsafeGetTensorImpl()->is_wrapped_number()) return d;
      if (isComplexType(d)) return toComplexType(get_default_dtype());
      return isFloatingType(d) ? get_default_dtype() : d;
    };
    bool same = !to_out || out->dtype() == promoted;
    for (int k = 0; k < n; ++k) same = same && as_tensor_dtype(inputs[k]) == promoted;
    EMBER_CHECK(same, "[", name, "] heaviside is not yet implemented for tensors with different ",
                "dtypes (", inputs[0].dtype(), ", ", inputs[1].dtype(), ").");
  }
  const ScalarType compute = compute_dtype(op, promoted);
  EMBER_CHECK(compute != ScalarType::Undefined, "[", name, "] not implemented for dtype ",
              promoted);
  const ScalarType res = result_dtype(op, compute);
  // Note [complex32] (src/core/complex_half.h): the ops PyTorch runs on complex32 compute in
  // complex64 and round back; the others raise as PyTorch's.
  const ScalarType kernel_dtype = compute == kComplexHalf ? kComplexFloat : compute;
  EMBER_CHECK(compute != kComplexHalf || runs_on_complex_half(op), "[", name, "] \"", def.name,
              "\" not implemented for 'ComplexHalf'");
  const ScalarType kernel_res = kernel_dtype == compute ? res : result_dtype(op, kernel_dtype);
  DimVector shape = broadcast_all(ins, def.name);

  Tensor target;
  if (mode == OutMode::InPlace) {
    target = inputs[0];
    EMBER_CHECK(target.sizes() == shape.ref(), "[", name, "] output with shape ",
                shape_str(target.sizes()), " doesn't match the broadcast shape ", shape_str(shape));
    EMBER_CHECK(canCast(res, target.dtype()), "[", name, "] result type ", res,
                " can't be cast to the desired output type ", target.dtype());
    EMBER_CHECK(def.rule != DtypeRule::Double || target.dtype() == res, "[", name,
                "] the base given to ", name, " has dtype ", target.dtype(),
                " but the operation's result requires dtype ", res);
  } else if (mode == OutMode::Out) {
    EMBER_INTERNAL_ASSERT(out != nullptr);
    EMBER_CHECK(out->defined(), "[", name, "] out= tensor is undefined");
    EMBER_CHECK(canCast(res, out->dtype()), "[", name, "] result type ", res,
                " can't be cast to the desired output type ", out->dtype());
    // Unary ops that keep their dtype write only into an out= of exactly that dtype (PyTorch's
    // unary TensorIterator checks all operands have the same dtype).
    bool strict =
        strict_out_dtype(op) && !(def.rule == DtypeRule::ComplexToReal && isComplexType(compute));
    EMBER_CHECK(!strict || out->dtype() == res, "[", name, "] Found dtype ", out->dtype(),
                " but expected ", res, " for the out= tensor");
    if (out->sizes() != shape.ref()) {
      EMBER_CHECK(out->numel() == 0, "[", name, "] out= tensor has shape ", shape_str(out->sizes()),
                  " but the result has shape ", shape_str(shape),
                  "; pass an empty tensor or one of the result's shape");
      resize_output(*out, shape);
    }
    target = *out;
  }
  EMBER_CHECK(!(mode == OutMode::InPlace && def.rule == DtypeRule::ComplexToReal &&
                isComplexType(target.dtype())),
              "[", name, "] In-place ", def.name, " is not supported for complex tensors.");
  if (target.defined()) {
    // The written tensor is never a scalar argument: it must be on the op's device.
    EMBER_CHECK(target.device() == device, "[", name,
                "] Expected all tensors to be on the same device, but found at least two "
                "devices, ",
                target.device(), " and ", device, "!");
    EMBER_CHECK(!target.is_conj(), "[", name,
                "] writing into a conjugate view is not "
                "supported; call resolve_conj() first");
    check_no_internal_overlap(target, def.name);
    for (int k = 0; k < n; ++k) check_no_partial_overlap(target, inputs[k], def.name);
  }

  // Autograd (Note [Recording an op]): the recorder sees the inputs as the caller gave them.
  if (mode == OutMode::Out) autograd::check_out_not_differentiable(def.name, inputs_il);
  const bool may_record = mode != OutMode::Out && autograd::recording_possible() &&
                          elementwise_grad_kind(op) != GradKind::None;
  std::optional<autograd::OpRecorder> rec;
  Tensor originals[3];
  uint8_t keep = 0;
  if (may_record) {
    rec.emplace(mode == OutMode::InPlace ? inplace_name(op) : def.name, inputs_il);
    if (!*rec) {
      rec.reset();  // grad mode on, but no input needs grad: no copies of the inputs
    } else {
      for (int k = 0; k < n; ++k) originals[k] = inputs[k];
      for (int k = 0; k < n; ++k)
        if (operand_needed(op, k, n, originals)) keep |= uint8_t(1 << k);
      if (mode == OutMode::InPlace && (keep & 1)) originals[0] = inputs[0].clone();
    }
  }

  // Tidy inputs: compute dtype, resolved conjugation, on the op's device.
  for (int k = 0; k < n; ++k) {
    Tensor& t = inputs[k];
    if (t.dtype() != kernel_dtype) {
      // A wrapped number (`a + 1`) is written again in the compute dtype: one 0-dim store
      // through the same cast loop, instead of a whole `to` (its own dispatch and plan).
      if (t.unsafeGetTensorImpl()->is_wrapped_number() && t.is_cpu() && !t.is_conj())
        t = wrap_scalar_as(item_stub(kCPU, t, false), kernel_dtype);
      else
        t = t.to(kernel_dtype);
    }
    if (t.is_conj()) t = t.resolve_conj();
    if (t.device() != device) t = operand_on_device(t, device);
  }

  Tensor result;
  if (target.defined() && target.dtype() == kernel_res) {
    result = target;
  } else {
    result = empty_like_layout(shape, kernel_res, device, ins);
  }
  {
    const Tensor* in_ptrs[3] = {};
    for (int k = 0; k < n; ++k) in_ptrs[k] = &inputs[k];
    run_elementwise_kernel(op, n ? inputs[0].dtype() : result.dtype(), result,
                           ArrayRef<const Tensor*>(in_ptrs, size_t(n)), params, name.base,
                           name.inplace);
  }
  if (target.defined()) {
    if (!result.is_same(target))
      target.copy_(result);
    else
      target.unsafeGetTensorImpl()->bump_version(inplace_name(op));
    result = target;
  } else if (kernel_res != res) {
    result = result.to(res);  // complex32: round the complex64 result back once
  }
  if (rec)
    record_elementwise(*rec, op, params, n, originals, result, mode == OutMode::InPlace, keep);
  return result;
}

}  // namespace ember
