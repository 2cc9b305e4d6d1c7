#include "ember/generator.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <utility>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

// ---- Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3") ----

void Philox4x32::block(uint64_t key, uint64_t counter_lo, uint64_t counter_hi, uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = uint32_t(counter_lo), c1 = uint32_t(counter_lo >> 32);
  uint32_t c2 = uint32_t(counter_hi), c3 = uint32_t(counter_hi >> 32);
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int r = 0; r < 10; ++r) {
    if (r) {
      k0 += kW0;
      k1 += kW1;
    }
    uint64_t p0 = uint64_t(kM0) * c0, p1 = uint64_t(kM1) * c2;
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

// ---- Generator ----

Generator::Generator(Device device) : impl_(std::make_shared<GeneratorImpl>()) {
  impl_->device = device;
}

Generator& Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> g(impl_->mutex);
  impl_->seed = seed;
  impl_->offset = 0;
  return *this;
}

uint64_t Generator::seed() {
  // A fresh std::random_device per call: non-deterministic by design (torch.seed()).
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) ^ uint64_t(rd());
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> g(impl_->mutex);
  return impl_->seed;
}

Tensor Generator::get_state() const {
  uint64_t words[2];
  {
    std::lock_guard<std::mutex> g(impl_->mutex);
    words[0] = impl_->seed;
    words[1] = impl_->offset;
  }
  Tensor t = empty_tensor({16}, kByte, Device(kCPU));
  std::memcpy(t.data_ptr(), words, 16);
  return t;
}

void Generator::set_state(const Tensor& state) {
  EMBER_CHECK_VALUE(state.defined(),
                    "[Generator.set_state] expected a state tensor, got undefined");
  EMBER_CHECK_VALUE(state.dtype() == kByte,
                    "[Generator.set_state] expected a uint8 state tensor, got dtype ",
                    state.dtype());
  EMBER_CHECK_VALUE(state.numel() == 16,
                    "[Generator.set_state] expected a state of 16 bytes (seed, offset), got ",
                    state.numel(), " bytes");
  Tensor s = state;
  if (!s.is_cpu()) s = s.to(Device(kCPU));
  if (!s.is_contiguous()) s = s.contiguous();
  uint64_t words[2];
  std::memcpy(words, s.data_ptr(), 16);
  std::lock_guard<std::mutex> g(impl_->mutex);
  impl_->seed = words[0];
  impl_->offset = words[1];
}

std::pair<uint64_t, uint64_t> Generator::reserve(uint64_t n_blocks) {
  std::lock_guard<std::mutex> g(impl_->mutex);
  uint64_t first = impl_->offset;
  impl_->offset += n_blocks;
  return {impl_->seed, first};
}

// ---- default generators ----

namespace {
struct DefaultGenerators {
  std::mutex mu;
  // Keyed by (device type, index); CPU has one entry (index 0).
  std::map<std::pair<int, int>, std::shared_ptr<GeneratorImpl>> gens;
  bool seeded = false;  // manual_seed() was called: new defaults start from that seed
  uint64_t seed = 0;
};
DefaultGenerators& defaults() {
  // Leaked on purpose: generators may be used by static destructors of other objects.
  static auto* d = new DefaultGenerators();
  return *d;
}
}  // namespace

Generator default_generator(Device device) {
  int index = device.is_cpu() ? 0 : std::max(device.index(), 0);
  Device canonical(device.type(), device.is_cpu() ? -1 : index);
  auto& d = defaults();
  std::lock_guard<std::mutex> g(d.mu);
  auto& slot = d.gens[{static_cast<int>(device.type()), index}];
  if (!slot) {
    slot = std::make_shared<GeneratorImpl>();
    slot->device = canonical;
    if (d.seeded) slot->seed = d.seed;
  }
  return Generator(slot);
}

void manual_seed(uint64_t seed) {
  auto& d = defaults();
  std::lock_guard<std::mutex> g(d.mu);
  d.seeded = true;
  d.seed = seed;
  for (auto& [key, impl] : d.gens) {
    std::lock_guard<std::mutex> gi(impl->mutex);
    impl->seed = seed;
    impl->offset = 0;
  }
}

}  // namespace ember
