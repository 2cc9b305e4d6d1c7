#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Transform levels]
// One thread-local stack holds the active function transforms (grad, jvp, vmap), innermost
// last. A level's number is its depth in the stack (1 for the outermost) and it carries a
// generation that is never reused on this thread, so a batched tensor or a lifted input that
// outlives its transform is recognised as escaped (its level number may be taken again by a
// later transform, its generation may not).
// - vmap levels hold the batch size and the randomness mode; batched tensors
//   (Note [Batched tensors]) name their level.
// - jvp levels own a forward-AD dual level (today's forward-AD levels, entered through the
//   stack so both count toward the 64-level limit).
// - grad levels mark where reverse mode lifts its inputs (Note [Reverse mode under vmap]).
// While any vmap level is active this thread turns the call path's Vmap layer on, so every op
// entry looks for batched arguments (Note [Batching rules]).

#include <cstdint>
#include <vector>

namespace ember::func {

enum class TransformKind : uint8_t { Grad, Jvp, Vmap };
/// vmap's `randomness`: random ops throw, draw per batch element, or draw once for the batch.
enum class Randomness : uint8_t { Error, Different, Same };

struct TransformLevel {
  TransformKind kind;
  int64_t level;                              ///< depth in the stack, from 1
  uint64_t generation;                        ///< unique on this thread
  int64_t batch_size = 0;                     ///< vmap levels
  Randomness randomness = Randomness::Error;  ///< vmap levels
  uint64_t dual_level = 0;                    ///< jvp levels: the forward-AD level
};

/// At most this many nested transforms.
constexpr int64_t kMaxTransformLevels = 64;

/// The active transforms on this thread, outermost first.
const std::vector<TransformLevel>& transform_stack();
/// Pushes a level (ValueError-free RuntimeError past kMaxTransformLevels) and returns it.
const TransformLevel& push_level(TransformKind kind, int64_t batch_size = 0,
                                 Randomness randomness = Randomness::Error);
/// Pops the innermost level, which must be `level`.
void pop_level(int64_t level);
/// The entry of `level` when it is active with `generation`, else null.
const TransformLevel* live_level(int64_t level, uint64_t generation);
/// The innermost vmap level, or null.
const TransformLevel* innermost_vmap();
/// Whether any transform is active on this thread.
bool any_transform_active();
/// Whether a grad level is active and the backward about to run is the user's (an
/// autograd.grad inside a grad transform), not the transform's own (InternalBackward).
bool user_backward_under_grad();

/// Marks the backward a grad transform runs itself (see user_backward_under_grad).
class InternalBackward {
 public:
  InternalBackward();
  ~InternalBackward();
  InternalBackward(const InternalBackward&) = delete;
  InternalBackward& operator=(const InternalBackward&) = delete;

 private:
  bool prev_;
};

/// Pops a level on scope exit (also on an exception).
class LevelGuard {
 public:
  LevelGuard(TransformKind kind, int64_t batch_size = 0, Randomness r = Randomness::Error);
  ~LevelGuard();
  LevelGuard(const LevelGuard&) = delete;
  LevelGuard& operator=(const LevelGuard&) = delete;
  const TransformLevel& get() const;

 private:
  int64_t level_;
};

}  // namespace ember::func
