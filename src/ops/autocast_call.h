#pragma once
// Note [Autocast layer]
// Autocast (mixed precision, DESIGN.md §3 layer 3) is a policy of each op, written as a trait in
// its row of the op list: kAutocastCpuLower / kAutocastCpuFp32 / kAutocastCpuPromote for CPU,
// kAutocastLower / kAutocastFp32 / kAutocastPromote for CUDA (PyTorch's per-device lists).
// - An op with a policy enters through `EMBER_OP_CAST(id, fn, args...)` instead of EMBER_OP: `fn`
//   names the op function itself, so that the layer can run it again on cast arguments.
// - When the thread's autocast layer is on, the arguments' device has autocast enabled and some
//   floating tensor argument has another dtype than the policy asks for, the call is re-run with
//   the tensors cast (Lower: float32/float16/bfloat16 -> the region's dtype, float64 untouched;
//   Fp32: reduced floats -> float32; Promote: every floating argument -> the widest of them and
//   the region's dtype) and with the autocast layer off on this thread until it returns, as
//   PyTorch excludes its Autocast key for the redispatched call. The outer call enters no layer,
//   so the profiler and autograd see the cast ops and one call of the op.
// - Casts of float32 leaf tensors that require grad to the lower dtype are cached for the region
//   (the weight cast cache); leaving the outermost region clears it.
// In-place and out= forms carry no policy (PyTorch does not autocast them).

#include <optional>
#include <type_traits>
#include <vector>

#include "core/dispatch_state.h"
#include "core/op_table.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember::dispatch {

/// What autocast does to an op's floating tensor arguments.
enum class CastPolicy : uint8_t { None, Lower, Fp32, Promote };

/// The policy of `op` on device type `device` (from its traits).
CastPolicy autocast_policy(OpId op, DeviceType device);
/// Whether autocast is enabled on this thread for `device`.
bool autocast_enabled_for(DeviceType device);
/// The lower-precision dtype of the current region for `device` (bfloat16 on CPU, float16 on
/// CUDA by default).
ScalarType autocast_lower_dtype(DeviceType device);
/// `t` cast to `to` for the autocast layer, through the region's weight cast cache when `to` is
/// the lower dtype and `t` is a float32 leaf that requires grad (and the cache is enabled).
Tensor autocast_cast(const Tensor& t, ScalarType to, DeviceType device);

/// While alive, the autocast layer is off on this thread.
class AutocastOff {
 public:
  AutocastOff();
  ~AutocastOff();
  AutocastOff(const AutocastOff&) = delete;
  AutocastOff& operator=(const AutocastOff&) = delete;

 private:
  bool was_on_;
};

/// What the layer decided for one call.
struct CastPlan {
  DeviceType device = kCPU;
  ScalarType to = ScalarType::Undefined;
  bool needed = false;
};

namespace autocast_detail {

/// Whether D is a contiguous list of tensors (ArrayRef<Tensor>, std::vector<Tensor>, ...).
template <class D>
constexpr bool is_tensor_list = requires(const D& d) {
  d.size();
  requires std::is_same_v<std::decay_t<decltype(d.data()[0])>, Tensor>;
};

inline bool eligible(const Tensor& t, DeviceType device) {
  return t.defined() && t.device().type() == device && isFloatingType(t.dtype());
}

// Pass 1: the device (of the first defined tensor) and the widest floating dtype.
struct Scan {
  bool have_device = false;
  DeviceType device = kCPU;
  ScalarType widest = ScalarType::Undefined;
  void see(const Tensor& t) {
    if (!t.defined()) return;
    if (!have_device) {
      have_device = true;
      device = t.device().type();
    }
    if (t.device().type() == device && isFloatingType(t.dtype()) &&
        t.dtype() != ScalarType::Double)
      widest = widest == ScalarType::Undefined ? t.dtype() : promoteTypes(widest, t.dtype());
  }
  template <class T>
  void operator()(const T& v) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, Tensor>) {
      see(v);
    } else if constexpr (std::is_same_v<D, std::optional<Tensor>>) {
      if (v) see(*v);
    } else if constexpr (is_tensor_list<D>) {
      for (size_t i = 0; i < size_t(v.size()); ++i) see(v.data()[i]);
    }
  }
};

// Pass 2: whether any eligible tensor argument is not already of the target dtype.
struct Needs {
  const CastPlan& plan;
  bool any = false;
  void see(const Tensor& t) {
    if (eligible(t, plan.device) && t.dtype() != ScalarType::Double && t.dtype() != plan.to)
      any = true;
  }
  template <class T>
  void operator()(const T& v) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, Tensor>) {
      see(v);
    } else if constexpr (std::is_same_v<D, std::optional<Tensor>>) {
      if (v) see(*v);
    } else if constexpr (is_tensor_list<D>) {
      for (size_t i = 0; i < size_t(v.size()); ++i) see(v.data()[i]);
    }
  }
};

inline Tensor cast_tensor(const CastPlan& p, const Tensor& t) {
  if (!eligible(t, p.device) || t.dtype() == ScalarType::Double || t.dtype() == p.to) return t;
  return autocast_cast(t, p.to, p.device);
}

/// One argument as the re-run call receives it: tensors cast, everything else as given.
template <class T>
decltype(auto) cast_arg(const CastPlan& p, const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    return cast_tensor(p, v);
  } else if constexpr (std::is_same_v<D, std::optional<Tensor>>) {
    return v ? std::optional<Tensor>(cast_tensor(p, *v)) : std::optional<Tensor>();
  } else if constexpr (is_tensor_list<D>) {
    std::vector<Tensor> out;
    out.reserve(size_t(v.size()));
    for (size_t i = 0; i < size_t(v.size()); ++i) out.push_back(cast_tensor(p, v.data()[i]));
    return out;
  } else {
    return static_cast<const T&>(v);
  }
}

}  // namespace autocast_detail

/// The layer's decision for a call of `op` with `args` (Note [Autocast layer]).
template <class... A>
CastPlan autocast_plan(OpId op, const A&... args) {
  CastPlan plan;
  if (!(active_layers() & kAutocast)) return plan;
  autocast_detail::Scan scan;
  (scan(args), ...);
  if (!scan.have_device || !autocast_enabled_for(scan.device)) return plan;
  CastPolicy policy = autocast_policy(op, scan.device);
  if (policy == CastPolicy::None) return plan;
  plan.device = scan.device;
  ScalarType lower = autocast_lower_dtype(scan.device);
  switch (policy) {
    case CastPolicy::Lower:
      plan.to = lower;
      break;
    case CastPolicy::Fp32:
      plan.to = ScalarType::Float;
      break;
    case CastPolicy::Promote:
      if (scan.widest == ScalarType::Undefined) return plan;
      plan.to = promoteTypes(lower, scan.widest);
      break;
    case CastPolicy::None:
      return plan;
  }
  autocast_detail::Needs needs{plan};
  (needs(args), ...);
  plan.needed = needs.any;
  return plan;
}

/// Runs `f` (the op function) on the arguments cast by `plan`, with the autocast layer off.
template <class F, class... A>
decltype(auto) autocast_call(const CastPlan& plan, F&& f, const A&... args) {
  AutocastOff off;
  return f(autocast_detail::cast_arg(plan, args)...);
}

}  // namespace ember::dispatch
