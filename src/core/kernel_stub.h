#pragma once
// Note [Kernel stubs]
// An op body (src/ops) validates its arguments, computes the result's meta, allocates outputs
// and records autograd; the loops that read and write memory live in src/kernels/<device>/
// <family>/. The body reaches them through a stub: one per kernel signature, holding one function
// pointer per device type.
//
//   // src/kernels/stubs/random.h: the device-neutral interface
//   EMBER_DECLARE_KERNEL(uniform_stub, void(Tensor& self, double from, double to, Generator& gen));
//   // src/kernels/cpu/creation/random.cpp: the CPU loops, which also define the stub
//   EMBER_DEFINE_KERNEL(uniform_stub);
//   EMBER_REGISTER_KERNEL(uniform_stub, kCPU, cpu::uniform_cpu);
//   // src/ops/creation/random.cpp: the op
//   uniform_stub(buf.device().type(), buf, from, to, g);
//
// - A body never touches a data pointer and never names a device's loops, so a backend adds
//   kernels without editing ops. The dtype dispatch happens inside the kernel.
// - A stub is constant-initialised (constinit) and trivially destructible, so registrations from
//   other files' static initialisers are safe in any order.
// - An empty slot raises NotImplementedError "[stub] not implemented for <device>". The entry
//   check of the call path (Note [Kernels per device]) normally stops such a call first.

#include <type_traits>
#include <utility>

#include "core/dispatch_state.h"
#include "ember/device.h"
#include "ember/tensor.h"

namespace ember {

/// Raises "[name] not implemented for <device>".
[[noreturn]] void kernel_not_implemented(const char* name, DeviceType t);
/// RuntimeError when `t` has elements but no memory (a batched tensor of vmap).
void check_kernel_tensor(const char* name, const Tensor& t);
template <class T>
inline void check_kernel_arg(const char* name, const T& a) {
  if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) check_kernel_tensor(name, a);
}

template <class Sig>
class KernelStub;

/// The per-device kernels of one signature (Note [Kernel stubs]).
template <class R, class... A>
class KernelStub<R(A...)> {
 public:
  using Fn = R (*)(A...);
  constexpr explicit KernelStub(const char* name) : name_(name) {}
  KernelStub(const KernelStub&) = delete;
  KernelStub& operator=(const KernelStub&) = delete;

  /// Installs the kernel of device type `t` (a kernel file's static registration).
  void set(DeviceType t, Fn f) { slots_[int(t)] = f; }
  /// The kernel of `t`, or null.
  Fn get(DeviceType t) const { return slots_[int(t)]; }
  const char* name() const { return name_; }

  /// Runs the kernel of device type `t`.
  template <class... B>
  R operator()(DeviceType t, B&&... args) const {
    Fn f = slots_[int(t)];
    if (!f) kernel_not_implemented(name_, t);
    // Note [Batched tensors]: a vmap wrapper has no memory; one that reaches a kernel (an op
    // body that bypasses the call path) is an error, never a read of nothing.
    if (__builtin_expect(dispatch::slow_path(), 0)) (check_kernel_arg(name_, args), ...);
    return f(std::forward<B>(args)...);
  }
  /// Runs the kernel of `d`'s type.
  template <class... B>
  R operator()(Device d, B&&... args) const {
    return (*this)(d.type(), std::forward<B>(args)...);
  }

 private:
  const char* name_;
  Fn slots_[kMaxDeviceTypes] = {};
};

}  // namespace ember

/// Declares a stub in a device-neutral header (src/kernels/stubs/<family>.h).
#define EMBER_DECLARE_KERNEL(stub, ...) extern ::ember::KernelStub<__VA_ARGS__> stub
/// Defines a declared stub (its signature comes from the declaration), once: in the CPU kernel
/// file of its family (CPU always exists).
#define EMBER_DEFINE_KERNEL(stub) \
  constinit decltype(stub) stub { #stub }
#define EMBER_KERNEL_CAT2(a, b) a##b
#define EMBER_KERNEL_CAT(a, b) EMBER_KERNEL_CAT2(a, b)
/// Registers `fn` as the kernel of `stub` on `device_type` (at static initialisation).
#define EMBER_REGISTER_KERNEL(stub, device_type, fn)                                    \
  [[maybe_unused]] static const bool EMBER_KERNEL_CAT(ember_kernel_reg_, __COUNTER__) = \
      (stub.set(device_type, fn), true)
