#pragma once
/// Random number generators: a counter-based Philox 4x32-10 engine.
///
/// Note [Reproducible random streams]
/// A generator is (seed, offset). A random op on n elements reserves ceil(n / k) Philox blocks
/// (128-bit counters offset, offset + 1, ...; key = seed) and advances the offset past them, so
/// element i of the output (in row-major logical order, whatever the memory layout) depends only
/// on (seed, offset, i): the same seed gives the same numbers whatever the thread count or
/// chunking. Element i uses block offset + i / k, where k elements share a block's four 32-bit
/// words w0..w3:
/// - k = 4, one word each: uniform float (24 bits), half (11 bits), bfloat16 (8 bits),
///   bernoulli (32 bits against p),
///   integers with a range <= 2^32, exponential float;
/// - k = 2, two words each (w0|w1 and w2|w3): uniform double (53 bits), integers with a larger
///   range, exponential double;
/// - normal float: k = 4, Box-Muller on (w0, w1) gives elements 0, 1 and on (w2, w3) elements
///   2, 3; normal double: k = 2, Box-Muller on (w0|w1, w2|w3).
/// Complex tensors fill their real and imaginary parts as 2n reals. randperm uses one 64-bit
/// draw per Fisher-Yates swap (two per block); multinomial draws one Exp(1) per category
/// (without replacement) or one uniform per sample (with replacement). Normal and exponential
/// samples may differ in the last bit between CPU capabilities (SSE2 vs AVX2 math functions;
/// Note [Random kernels and instruction sets] in src/ops/random.cpp).

#include <cstdint>
#include <memory>
#include <mutex>

#include "ember/device.h"

namespace ember {

class Tensor;

/// Shared state of a generator (copies of a Generator handle share it). Guard reads and writes
/// of seed/offset with `mutex`.
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
  /// The state as a new uint8 CPU tensor of 16 bytes: seed then offset, little-endian uint64.
  Tensor get_state() const;
  /// Restores a state from get_state(); ValueError unless a 16-element uint8 tensor.
  void set_state(const Tensor& state);
  Device device() const { return impl_->device; }
  /// Reserves `n_blocks` Philox blocks and returns (seed, first offset). Thread-safe.
  std::pair<uint64_t, uint64_t> reserve(uint64_t n_blocks);
  GeneratorImpl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<GeneratorImpl> impl_;
};

/// The default generator of a device (CPU: one per process; other devices: one per index, -1
/// meaning 0). Created on first use, seeded with the last manual_seed() if there was one.
Generator default_generator(Device device = Device(kCPU));
/// Seeds the default generators of all devices (and of those created later) and rewinds them.
void manual_seed(uint64_t seed);

/// Philox 4x32-10 (Salmon et al. 2011, Random123's philox4x32_10): four 32-bit outputs for a
/// 128-bit counter (counter_lo holds words 0 and 1, low word first) and a 64-bit key.
struct Philox4x32 {
  static void block(uint64_t key, uint64_t counter_lo, uint64_t counter_hi, uint32_t out[4]);
};

}  // namespace ember
