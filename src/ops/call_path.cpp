#include "ops/call_path.h"

#include <array>
#include <bitset>
#include <mutex>

#include "ember/error.h"
#include "ops/device_kernels.h"

namespace ember {

namespace {
// Per device type: one bit per (op, dtype). CPU is not stored (it has every op).
struct KernelTable {
  std::array<std::bitset<kNumScalarTypes>, kNumOps> has{};
};
std::array<KernelTable*, kMaxDeviceTypes>& kernel_tables() {
  static std::array<KernelTable*, kMaxDeviceTypes> t{};
  return t;
}
std::mutex& kernel_mutex() {
  static std::mutex m;
  return m;
}
KernelTable& table_for(DeviceType t) {
  std::lock_guard<std::mutex> g(kernel_mutex());
  KernelTable*& k = kernel_tables()[size_t(t)];
  if (!k) k = new KernelTable();  // lives for the process, read without a lock
  return *k;
}
}  // namespace

void register_kernel(DeviceType t, OpId op, std::initializer_list<ScalarType> dtypes) {
  KernelTable& k = table_for(t);
  for (ScalarType d : dtypes) k.has[size_t(op)].set(size_t(d));
}

void register_kernel_all_dtypes(DeviceType t, OpId op) { table_for(t).has[size_t(op)].set(); }

bool has_kernel(DeviceType t, OpId op, ScalarType dtype) {
  if (t == kCPU) return true;
  using namespace op_trait;
  if (op_info(op).traits & (kView | kComposite | kAllocOnly)) return true;
  const KernelTable* k = kernel_tables()[size_t(t)];
  if (!k) return false;
  if (dtype == ScalarType::Undefined) return k->has[size_t(op)].any();
  return k->has[size_t(op)].test(size_t(dtype));
}

namespace dispatch {

namespace {
std::array<LayerHooks, kNumVisitedLayers>& hooks() {
  static std::array<LayerHooks, kNumVisitedLayers> h{};
  return h;
}
std::atomic<uint32_t> g_boxing{0};
}  // namespace

uint32_t boxing_layers() { return g_boxing.load(std::memory_order_relaxed); }

void set_layer_hooks(Layer layer, LayerHooks h) {
  int bit = __builtin_ctz(uint32_t(layer));
  EMBER_INTERNAL_ASSERT(bit < int(kNumVisitedLayers), "not a visited layer");
  hooks()[size_t(bit)] = h;
  if (h.needs_args)
    g_boxing.fetch_or(layer);
  else
    g_boxing.fetch_and(~uint32_t(layer));
}

namespace {
// Threads whose own layer word is not zero: while there are any, kThreadLayers stays set.
int g_threads_with_layers = 0;
std::mutex g_thread_layers_mutex;
}  // namespace

bool set_thread_layer(Layer layer, bool on) {
  ThreadState& t = thread_state();
  bool was = t.layers & layer;
  uint32_t before = t.layers;
  t.layers = on ? (t.layers | layer) : (t.layers & ~uint32_t(layer));
  if (bool(before) != bool(t.layers)) {
    std::lock_guard<std::mutex> g(g_thread_layers_mutex);
    g_threads_with_layers += t.layers ? 1 : -1;
    if (g_threads_with_layers > 0)
      g_layers.fetch_or(kThreadLayers);
    else
      g_layers.fetch_and(~uint32_t(kThreadLayers));
  }
  return was;
}

void set_global_layer(Layer layer, bool on) {
  if (on)
    g_layers.fetch_or(layer);
  else
    g_layers.fetch_and(~uint32_t(layer));
}

void OpScope::check_device_kernel(Device device, ScalarType dtype) const {
  if (has_kernel(device.type(), op_, dtype)) return;
  EMBER_THROW(NotImplementedError, "[", op_schema(op_).name, "] not implemented for ",
              device_type_name(device.type()), " ",
              dtype == ScalarType::Undefined ? std::string("(no dtype)") : dtype_name(dtype));
}

void OpScope::enter_each(ArrayRef<Tensor> tensors) {
  uint32_t layers = active_layers();
  if (layers & kDevice) {
    DeviceProbe probe;
    for (const Tensor& t : tensors) probe.see(t);
    if (!probe.device.is_cpu()) check_device_kernel(probe.device, probe.dtype);
  }
  if (!(layers & ~uint32_t(kDevice))) return;
  BoxedCall call{op_, inplace_, {}};
  if (layers & boxing_layers())
    for (const Tensor& t : tensors) call.args.push_back(t);
  enter_layers(call, layers);
}

namespace {
// Set in OpScope::layers_ (above the layer bits) when the op turned the autocast layer off.
constexpr uint32_t kAutocastSuspended = 1u << 31;
}  // namespace

void OpScope::enter_layers(const BoxedCall& call, uint32_t layers) {
  ++thread_state().depth;
  entered_ = true;
  layers_ = layers;
  // Out= and in-place forms are not autocast (Note [Autocast layer]): the functional ops their
  // bodies call run on the dtypes they are given, as PyTorch's redispatch of mm.out does.
  if ((layers & kAutocast) &&
      (inplace_ || (op_info(op_).traits & (op_trait::kOut | op_trait::kInplace))) &&
      set_thread_layer(kAutocast, false))
    layers_ |= kAutocastSuspended;
  // Note [Call path layers]: tracer, vmap, autocast, autograd, profiler, coverage.
  for (int bit = 0; bit < int(kNumVisitedLayers); ++bit) {
    if (!(layers & (1u << bit))) continue;
    const LayerHooks& h = hooks()[size_t(bit)];
    if (h.enter) h.enter(call);
  }
}

namespace {
VmapHooks g_vmap_hooks;
}  // namespace

void set_vmap_hooks(VmapHooks h) { g_vmap_hooks = h; }
const VmapHooks& vmap_hooks() { return g_vmap_hooks; }

std::vector<Tensor>& vmap_results() {
  static thread_local std::vector<Tensor> r;
  return r;
}

bool OpScope::run_vmap(const BoxedCall& call) {
  return g_vmap_hooks.redirect && g_vmap_hooks.redirect(call);
}

Tensor& Redirected::slot(size_t k) {
  static thread_local std::array<Tensor, 32> ring;
  static thread_local size_t next = 0;
  std::vector<Tensor>& r = vmap_results();
  EMBER_INTERNAL_ASSERT(k < r.size(), "batching rule returned ", r.size(), " results");
  Tensor& s = ring[next++ % ring.size()];
  s = r[k];
  return s;
}

Redirected::operator Tensor&() const { return slot(0); }

void Redirected::unsupported() {
  EMBER_THROW(Error, "[vmap] this op has no batched form");
}

void OpScope::exit() {
  for (int bit = kNumVisitedLayers - 1; bit >= 0; --bit) {
    if (!(layers_ & (1u << bit))) continue;
    const LayerHooks& h = hooks()[size_t(bit)];
    if (h.exit) h.exit(op_);
  }
  if (layers_ & kAutocastSuspended) set_thread_layer(kAutocast, true);
  --thread_state().depth;
}

}  // namespace dispatch
}  // namespace ember
