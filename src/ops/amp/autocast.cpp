// The autocast layer's state and casts (Note [Autocast layer] in src/ops/autocast_call.h).
#include <unordered_map>

#include "ember/amp.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ops/call_path.h"

namespace ember {

namespace {

// Per-thread state, as PyTorch keeps it (thread-local dispatch-key exclusion sets).
struct AutocastState {
  bool cpu_enabled = false;
  bool cuda_enabled = false;
  ScalarType cpu_dtype = kBFloat16;
  ScalarType cuda_dtype = kHalf;
  bool cache_enabled = true;
  int nesting = 0;
  // The weight cast cache: source impl -> (source, cast). Holding the source keeps its address
  // from being reused by another tensor while the entry lives.
  std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>> cache;
};

AutocastState& state() {
  static thread_local AutocastState s;
  return s;
}

void sync_layer() {
  const AutocastState& s = state();
  dispatch::set_thread_layer(dispatch::kAutocast, s.cpu_enabled || s.cuda_enabled);
}

}  // namespace

namespace dispatch {

CastPolicy autocast_policy(OpId op, DeviceType device) {
  using namespace op_trait;
  uint32_t t = op_info(op).traits;
  if (device == kCPU) {
    if (t & kAutocastCpuLower) return CastPolicy::Lower;
    if (t & kAutocastCpuFp32) return CastPolicy::Fp32;
    if (t & kAutocastCpuPromote) return CastPolicy::Promote;
  } else if (device == kCUDA) {
    if (t & kAutocastLower) return CastPolicy::Lower;
    if (t & kAutocastFp32) return CastPolicy::Fp32;
    if (t & kAutocastPromote) return CastPolicy::Promote;
  }
  return CastPolicy::None;
}

bool autocast_enabled_for(DeviceType device) { return autocast::is_enabled(device); }

ScalarType autocast_lower_dtype(DeviceType device) { return autocast::get_autocast_dtype(device); }

// Note [Weight cast cache]
// As PyTorch's cached_cast: only float32 leaves that require grad (the weights), cast to the
// region's lower dtype, are cached, keyed by TensorImpl; a hit returns the same cast tensor, so
// one ToCopy node feeds every use of the weight in the region. Unlike PyTorch, a cast made with
// grad mode off (no_grad or inference mode inside the region) is not stored: it has no graph, and
// a later use with grad mode on would otherwise get a cast that never reaches the weight's grad.
Tensor autocast_cast(const Tensor& t, ScalarType to, DeviceType device) {
  AutocastState& s = state();
  bool cacheable = s.cache_enabled && to == autocast_lower_dtype(device) && t.dtype() == kFloat &&
                   t.requires_grad() && t.is_leaf() && !t.is_view();
  if (!cacheable) return t.to(to);
  auto it = s.cache.find(t.unsafeGetTensorImpl());
  if (it != s.cache.end() && it->second.second.dtype() == to) return it->second.second;
  Tensor cast = t.to(to);
  if (GradMode::is_enabled()) s.cache[t.unsafeGetTensorImpl()] = {t, cast};
  return cast;
}

AutocastOff::AutocastOff() : was_on_(set_thread_layer(kAutocast, false)) {}
AutocastOff::~AutocastOff() {
  if (was_on_) set_thread_layer(kAutocast, true);
}

}  // namespace dispatch

namespace autocast {

bool is_enabled(DeviceType device) {
  if (device == kCPU) return state().cpu_enabled;
  if (device == kCUDA) return state().cuda_enabled;
  return false;
}

void set_enabled(DeviceType device, bool enabled) {
  EMBER_CHECK(device == kCPU || device == kCUDA,
              "[autocast] autocast is supported on cpu and cuda, got ", device_type_name(device));
  (device == kCPU ? state().cpu_enabled : state().cuda_enabled) = enabled;
  sync_layer();
}

ScalarType get_autocast_dtype(DeviceType device) {
  return device == kCPU ? state().cpu_dtype : state().cuda_dtype;
}

void set_autocast_dtype(DeviceType device, ScalarType dtype) {
  EMBER_CHECK(device == kCPU || device == kCUDA,
              "[autocast] autocast is supported on cpu and cuda, got ", device_type_name(device));
  // CPU autocast has kernels for bfloat16 and float16; at::autocast takes any CUDA dtype, of
  // which only the floating ones make sense as a cast target.
  if (device == kCPU)
    EMBER_CHECK(dtype == kBFloat16 || dtype == kHalf,
                "[autocast] CPU autocast supports the dtypes bfloat16 and float16, got ",
                dtype_name(dtype));
  else
    EMBER_CHECK(isFloatingType(dtype), "[autocast] the CUDA autocast dtype must be floating, got ",
                dtype_name(dtype));
  (device == kCPU ? state().cpu_dtype : state().cuda_dtype) = dtype;
}

bool is_autocast_cache_enabled() { return state().cache_enabled; }
void set_autocast_cache_enabled(bool enabled) { state().cache_enabled = enabled; }
void clear_cache() { state().cache.clear(); }
int increment_nesting() { return ++state().nesting; }
int decrement_nesting() { return --state().nesting; }

AutocastGuard::AutocastGuard(DeviceType device, ScalarType dtype, bool enabled, bool cache_enabled)
    : device_(device),
      prev_enabled_(is_enabled(device)),
      prev_dtype_(get_autocast_dtype(device)),
      prev_cache_(is_autocast_cache_enabled()) {
  set_autocast_dtype(device, dtype);
  set_enabled(device, enabled);
  set_autocast_cache_enabled(cache_enabled);
  increment_nesting();
}

AutocastGuard::AutocastGuard(DeviceType device, bool enabled)
    : AutocastGuard(device, get_autocast_dtype(device), enabled, is_autocast_cache_enabled()) {}

AutocastGuard::~AutocastGuard() {
  if (decrement_nesting() == 0) clear_cache();
  set_enabled(device_, prev_enabled_);
  state().cpu_dtype = device_ == kCPU ? prev_dtype_ : state().cpu_dtype;
  state().cuda_dtype = device_ == kCUDA ? prev_dtype_ : state().cuda_dtype;
  set_autocast_cache_enabled(prev_cache_);
}

}  // namespace autocast
}  // namespace ember
