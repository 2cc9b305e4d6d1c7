#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Note [Streaming stores]
// A memory-bound elementwise op whose output is far larger than the last-level cache gains
// nothing from caching the output: every line it writes is evicted before anyone reads it, and
// an ordinary store first reads the line it overwrites (read-for-ownership). For out = a + b
// that read is a quarter of the memory traffic. Non-temporal ("streaming") stores write whole
// lines straight to memory without that read.
//  - Who decides: run_plan (elementwise.cpp) marks the op running on each of its threads as a
//    streaming one when the output has at least streaming_store_threshold() bytes (default:
//    half the last-level cache of cpu 0, read from sysfs; EMBER_STREAMING_STORES=off|on|auto
//    overrides it). Outputs that stay in cache (the 1M-element rows) never stream: the op that
//    consumes them would have to fetch them back from memory.
//  - Where: elementwise_loop (loops.h) on dense runs of at least kStreamMinRunBytes. Functors
//    with a vector form (float/double) on a vector-aligned output store their result vectors
//    non-temporally; every other kernel (integer, 16-bit float, complex, casts and copies, and
//    misaligned outputs) computes each block into an aligned stack buffer as before and copies
//    it out, with non-temporal stores from the first vector boundary on.
//  - Results: the blocks are the same as without streaming, so every element takes the same
//    code (vector body or scalar tail; for SLEEF-based functors the two may differ by an ULP)
//    and only the store instruction changes: streaming never changes a result. An sfence ends
//    each streaming run: non-temporal stores are weakly ordered, and the thread that joins the
//    workers must see the output.
//  - Kernels called outside run_plan (softmax's and oneDNN's casts) never stream.

#include <cstdint>

namespace ember::cpu {

/// Runs shorter than this (bytes of output) never stream: partial lines defeat the write
/// combining that makes streaming stores cheap.
constexpr int64_t kStreamMinRunBytes = 4096;

/// Output bytes from which an op streams its output (INT64_MAX: never).
int64_t streaming_store_threshold();
/// Sets the threshold (tests, benchmarks); returns the previous value.
int64_t set_streaming_store_threshold(int64_t bytes);

/// Whether the op running on this thread streams its output (set by run_plan).
bool streaming_output();

/// Marks the op running on this thread as streaming (or not) for the scope's lifetime.
class StreamingOutputScope {
 public:
  explicit StreamingOutputScope(bool on);
  ~StreamingOutputScope();
  StreamingOutputScope(const StreamingOutputScope&) = delete;
  StreamingOutputScope& operator=(const StreamingOutputScope&) = delete;

 private:
  bool prev_;
};

}  // namespace ember::cpu
