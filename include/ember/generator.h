#pragma once
/// Random number generators: a counter-based Philox 4x32-10 engine.
///
/// Note [Reproducible random streams]
/// A generator is (seed, offset). An op that draws n numbers uses counters offset .. offset+n
/// and then advances the offset, so element i of the output depends only on (seed, offset, i):
/// the same seed gives the same numbers whatever the thread count or chunking.

#include <cstdint>
#include <memory>
#include <mutex>

#include "ember/device.h"

namespace ember {

class Tensor;

/// Shared state of a generator (copies of a Generator handle share it).
struct GeneratorImpl {
  uint64_t seed = 67280421310721ull;
  uint64_t offset = 0;  ///< counter position, in units of 128-bit Philox blocks
  Device device;
  std::mutex mutex;
};

/// Handle to a random generator; copies share state, like `torch.Generator`.
class Generator {
 public:
  /// A new generator for `device`, seeded with the default seed.
  explicit Generator(Device device = Device(kCPU));
  explicit Generator(std::shared_ptr<GeneratorImpl> impl) : impl_(std::move(impl)) {}
  /// Sets the seed and rewinds the stream; returns *this.
  Generator& manual_seed(uint64_t seed);
  /// Seeds from a non-deterministic source; returns the new seed.
  uint64_t seed();
  uint64_t initial_seed() const;
  uint64_t current_seed() const { return initial_seed(); }
  /// The state as a uint8 tensor of 16 bytes (seed, offset), for set_state.
  Tensor get_state() const;
  /// Restores a state from get_state(); ValueError on a malformed tensor.
  void set_state(const Tensor& state);
  Device device() const { return impl_->device; }
  /// Reserves `n_blocks` Philox blocks and returns (seed, first offset). Thread-safe.
  std::pair<uint64_t, uint64_t> reserve(uint64_t n_blocks);
  GeneratorImpl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<GeneratorImpl> impl_;
};

/// The default generator of a device (CPU: one per process).
Generator default_generator(Device device = Device(kCPU));
/// Seeds the default generators of all devices.
void manual_seed(uint64_t seed);

/// Philox 4x32-10: four 32-bit outputs for a 128-bit counter and a 64-bit key.
struct Philox4x32 {
  static void block(uint64_t key, uint64_t counter_lo, uint64_t counter_hi, uint32_t out[4]);
};

}  // namespace ember
