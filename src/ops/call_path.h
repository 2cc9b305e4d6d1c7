#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Call path]
// Every op function starts with `EMBER_OP(<op id>, <its arguments>...)`. That one line is the
// op's entry into the call path (DESIGN.md §3):
//
//   Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
//     EMBER_OP(index_select, self, dim, index);
//     ...
//
// - With no layer active (Note [Call path layers]) it costs a load of the active-layer word and
//   one branch; the scope's destructor checks one flag.
// - Otherwise `OpScope::enter` runs out of line: it checks that the arguments' device has a
//   kernel for the op (Note [Kernels per device]), boxes the arguments when a layer asks for
//   them (BoxedArgs: the op id plus a small variant vector), and visits the active layers in
//   their fixed order; the scope's destructor visits them in reverse when the op returns or
//   throws.
// - Composite ops (made of other ops) enter too, so the profiler shows them as PyTorch shows
//   aten::linear above aten::addmm; their primitives do the device check.
// - A tensor created outside every op scope while the Coverage layer is on is an op missing from
//   the list; tests/python/test_call_path.py runs every conformance sample that way.

#include <concepts>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/dispatch_state.h"
#include "core/op_table.h"
#include "ember/array_ref.h"
#include "ember/indexing.h"
#include "ember/tensor.h"
#include "ops/autocast_call.h"

#if defined(__GNUC__)
#define EMBER_OP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define EMBER_OP_UNLIKELY(x) (x)
#endif

namespace ember::dispatch {

/// One boxed argument. An argument of a type the box does not know is kept as monostate.
using IValue =
    std::variant<std::monostate, Tensor, int64_t, double, bool, Scalar, std::vector<int64_t>,
                 std::vector<Tensor>, ScalarType, Device, std::string,
                 std::vector<indexing::TensorIndex>>;

/// A boxed call: the op and its arguments in declaration order.
struct BoxedCall {
  OpId op;
  bool inplace = false;  ///< the in-place form of an elementwise op ("add_")
  std::vector<IValue> args;
};

/// Whether D is a contiguous list of T (ArrayRef, std::vector, DimVector, ...).
template <class D, class T>
constexpr bool is_list_of = requires(const D& d) {
  { d.data() } -> std::convertible_to<const T*>;
  d.size();
};

/// The layers that read boxed arguments (the profiler with record_shapes, the tracer, ...).
uint32_t boxing_layers();

/// Boxes one argument of an op call.
template <class T>
IValue box(const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    return v;
  } else if constexpr (std::is_integral_v<D>) {
    return int64_t(v);
  } else if constexpr (std::is_floating_point_v<D>) {
    return double(v);
  } else if constexpr (std::is_same_v<D, Scalar>) {
    return v;
  } else if constexpr (std::is_same_v<D, ScalarType>) {
    return v;
  } else if constexpr (std::is_same_v<D, Device>) {
    return v;
  } else if constexpr (std::is_same_v<D, TensorOptions>) {
    return v.dtype();
  } else if constexpr (std::is_convertible_v<const D&, std::string_view>) {
    return std::string(std::string_view(v));
  } else if constexpr (is_list_of<D, int64_t>) {
    return std::vector<int64_t>(v.data(), v.data() + v.size());
  } else if constexpr (is_list_of<D, Tensor>) {
    return std::vector<Tensor>(v.data(), v.data() + v.size());
  } else if constexpr (is_list_of<D, indexing::TensorIndex>) {
    return std::vector<indexing::TensorIndex>(v.data(), v.data() + v.size());
  } else if constexpr (is_list_of<D, std::optional<Tensor>>) {
    std::vector<Tensor> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(v.data()[i] ? *v.data()[i] : Tensor());
    return out;
  } else if constexpr (std::is_same_v<D, OptionalIntArrayRef>) {
    if (!v.has_value()) return std::monostate{};
    return box(*v);
  } else if constexpr (requires {
                         v.has_value();
                         *v;
                       }) {
    if (!v.has_value()) return std::monostate{};
    return box(*v);
  } else {
    return std::monostate{};
  }
}

/// Where the arguments of a call live and what dtype they have: the first non-CPU device seen
/// and the dtype of the first tensor (or of the options of a factory).
struct DeviceProbe {
  Device device{kCPU};
  ScalarType dtype = ScalarType::Undefined;
  void see(const Tensor& t) {
    if (!t.defined()) return;
    if (dtype == ScalarType::Undefined) dtype = t.dtype();
    if (device.is_cpu() && !t.device().is_cpu()) device = t.device();
  }
  template <class T>
  void operator()(const T& v) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, Tensor>) {
      see(v);
    } else if constexpr (std::is_same_v<D, TensorOptions>) {
      if (dtype == ScalarType::Undefined) dtype = v.dtype();
      if (device.is_cpu()) device = v.device();
    } else if constexpr (std::is_same_v<D, Device>) {
      if (device.is_cpu()) device = v;
    } else if constexpr (is_list_of<D, Tensor>) {
      for (size_t i = 0; i < v.size(); ++i) see(v.data()[i]);
    } else if constexpr (is_list_of<D, std::optional<Tensor>>) {
      for (size_t i = 0; i < v.size(); ++i)
        if (v.data()[i]) see(*v.data()[i]);
    } else if constexpr (std::is_same_v<D, std::optional<Tensor>>) {
      if (v) see(*v);
    }
  }
};

/// The scope of one op call (see EMBER_OP).
class OpScope {
 public:
  explicit OpScope(OpId op, bool inplace = false) : op_(op), inplace_(inplace) {}
  ~OpScope() {
    if (EMBER_OP_UNLIKELY(entered_)) exit();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  /// The slow path: device check, boxing on demand, then the active layers in order.
  /// Returns true when the vmap layer ran the op's batching rule instead (Note [Batching
  /// rules]): the op function then returns the rule's results (EMBER_OP).
  template <class... A>
  [[gnu::noinline, gnu::cold]] bool enter(const A&... args) {
    uint32_t layers = active_layers();
    if (layers & kDevice) {
      DeviceProbe probe;
      (probe(args), ...);
      if (!probe.device.is_cpu()) check_device_kernel(probe.device, probe.dtype);
    }
    if (!(layers & ~uint32_t(kDevice))) return false;
    BoxedCall call{op_, inplace_, {}};
    if (layers & boxing_layers()) {
      call.args.reserve(sizeof...(A));
      (call.args.push_back(box(args)), ...);
    }
    enter_layers(call, layers);
    return (layers & kVmap) && run_vmap(call);
  }
  /// enter() for an op whose tensor arguments come as a list (the elementwise path): each
  /// tensor is one argument.
  [[gnu::noinline, gnu::cold]] void enter_each(ArrayRef<Tensor> tensors);

 private:
  /// Raises "[op] not implemented for <device> <dtype>" when the device has no kernel.
  void check_device_kernel(Device device, ScalarType dtype) const;
  void enter_layers(const BoxedCall& call, uint32_t layers);
  /// Runs the vmap layer's redirect (set_vmap_hooks) on `call`.
  static bool run_vmap(const BoxedCall& call);
  void exit();

  OpId op_;
  bool inplace_ = false;
  bool entered_ = false;
  uint32_t layers_ = 0;
};

/// Marks code that creates tensors for an op that has not entered yet (a wrapped Python
/// number): it counts as inside an op for the Coverage layer and is not shown as an op.
class QuietScope {
 public:
  QuietScope() {
    if (EMBER_OP_UNLIKELY(slow_path())) {
      ++thread_state().depth;
      on_ = true;
    }
  }
  ~QuietScope() {
    if (on_) --thread_state().depth;
  }
  QuietScope(const QuietScope&) = delete;
  QuietScope& operator=(const QuietScope&) = delete;

 private:
  bool on_ = false;
};

/// A layer of the call path: called on entry with the boxed call and on exit with the op.
struct LayerHooks {
  void (*enter)(const BoxedCall& call) = nullptr;
  void (*exit)(OpId op) = nullptr;
  bool needs_args = false;  ///< whether `call.args` must be filled
};
/// The vmap layer (src/func, Note [Batching rules]): `redirect` runs the batching rule of a
/// call with batched arguments, leaves its results in vmap_results() and returns true (false:
/// run the op body); `elementwise` does the same for the generic elementwise path (`mode` is
/// the OutMode as an int).
struct VmapHooks {
  bool (*redirect)(const BoxedCall& call) = nullptr;
  bool (*elementwise)(OpId op, ArrayRef<Tensor> inputs, const OpParams& params, int mode,
                      Tensor* out, Tensor& result) = nullptr;
};
void set_vmap_hooks(VmapHooks hooks);
const VmapHooks& vmap_hooks();
/// The results of the last redirected call on this thread.
std::vector<Tensor>& vmap_results();

/// What a redirected op function returns: converts the rule's results to the function's return
/// type. `Tensor&` results refer to slots of a small per-thread ring (an in-place op returns
/// the same wrapper it was given, so the handle compares equal to `self`).
struct Redirected {
  operator Tensor&() const;
  operator std::vector<Tensor>() const { return vmap_results(); }
  template <class... T>
  operator std::tuple<T...>() const {
    return to_tuple<T...>(std::index_sequence_for<T...>{});
  }
  [[noreturn]] operator bool() const { unsupported(); }
  [[noreturn]] operator Scalar() const { unsupported(); }

 private:
  static Tensor& slot(size_t k);
  [[noreturn]] static void unsupported();
  template <class... T, size_t... I>
  static std::tuple<T...> to_tuple(std::index_sequence<I...>) {
    return std::tuple<T...>(static_cast<T>(slot(I))...);
  }
};

/// Installs the hooks of `layer` (one bit of Layer); null hooks remove them.
void set_layer_hooks(Layer layer, LayerHooks hooks);

/// Turns `layer` on or off on this thread (returns whether it was on).
bool set_thread_layer(Layer layer, bool on);
/// Turns `layer` on or off on every thread.
void set_global_layer(Layer layer, bool on);

}  // namespace ember::dispatch

/// The entry of op `id` into the call path; the first statement of every op function.
/// Under vmap, a call with batched arguments returns its batching rule's results here.
#define EMBER_OP(id, ...)                                                            \
  ::ember::dispatch::OpScope ember_op_scope_(::ember::OpId::id);                     \
  if (EMBER_OP_UNLIKELY(::ember::dispatch::slow_path()) &&                           \
      ember_op_scope_.enter(__VA_ARGS__))                                            \
  return ::ember::dispatch::Redirected {}

/// EMBER_OP for an op with an autocast policy (Note [Autocast layer]): `fn` is the op function
/// itself (an unqualified name, found from inside the op's own namespace; it is called as `(fn)`
/// so that argument-dependent lookup adds no ember:: overloads), which the autocast layer runs
/// again on cast arguments.
#define EMBER_OP_CAST(id, fn, ...)                                                     \
  ::ember::dispatch::OpScope ember_op_scope_(::ember::OpId::id);                       \
  if (EMBER_OP_UNLIKELY(::ember::dispatch::slow_path())) {                             \
    if (::ember::dispatch::CastPlan ember_cast_ =                                      \
            ::ember::dispatch::autocast_plan(::ember::OpId::id, __VA_ARGS__);          \
        ember_cast_.needed)                                                            \
      return ::ember::dispatch::autocast_call(                                         \
          ember_cast_,                                                                 \
          [](const auto&... ember_a_) -> decltype(auto) { return (fn)(ember_a_...); }, \
          __VA_ARGS__);                                                                \
    if (ember_op_scope_.enter(__VA_ARGS__)) return ::ember::dispatch::Redirected{};    \
  }                                                                                    \
  static_assert(true, "")

/// The same for an elementwise op: its id is a runtime value and its tensors come as a list.
#define EMBER_OP_EACH(op_value, inplace, tensors)                \
  ::ember::dispatch::OpScope ember_op_scope_(op_value, inplace); \
  if (EMBER_OP_UNLIKELY(::ember::dispatch::slow_path())) ember_op_scope_.enter_each(tensors)
