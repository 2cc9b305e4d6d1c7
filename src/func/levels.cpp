// The transform level stack (Note [Transform levels]).

#include "func/levels.h"

#include "core/dispatch_state.h"
#include "ember/error.h"
#include "ops/call_path.h"

namespace ember::func {

namespace {
struct Stack {
  std::vector<TransformLevel> levels;
  uint64_t next_generation = 1;
  int vmap_count = 0;
};
Stack& stack() {
  static thread_local Stack s;
  return s;
}
}  // namespace

const std::vector<TransformLevel>& transform_stack() { return stack().levels; }

const TransformLevel& push_level(TransformKind kind, int64_t batch_size, Randomness randomness) {
  Stack& s = stack();
  EMBER_CHECK(int64_t(s.levels.size()) < kMaxTransformLevels,
              "[func] too many nested function transforms (at most ", kMaxTransformLevels,
              " grad, jvp and vmap levels may be active at once)");
  // Reserve up front: references to entries stay valid while levels are pushed (wrappers and
  // rules hold pointers to their level).
  if (s.levels.capacity() < size_t(kMaxTransformLevels)) s.levels.reserve(kMaxTransformLevels);
  TransformLevel l{kind, int64_t(s.levels.size()) + 1, s.next_generation++, batch_size, randomness,
                   0};
  s.levels.push_back(l);
  if (kind == TransformKind::Vmap && s.vmap_count++ == 0)
    dispatch::set_thread_layer(dispatch::kVmap, true);
  return s.levels.back();
}

void pop_level(int64_t level) {
  Stack& s = stack();
  EMBER_INTERNAL_ASSERT(!s.levels.empty() && s.levels.back().level == level,
                        "transform levels must be exited innermost first");
  if (s.levels.back().kind == TransformKind::Vmap && --s.vmap_count == 0)
    dispatch::set_thread_layer(dispatch::kVmap, false);
  s.levels.pop_back();
}

const TransformLevel* live_level(int64_t level, uint64_t generation) {
  const Stack& s = stack();
  if (level < 1 || level > int64_t(s.levels.size())) return nullptr;
  const TransformLevel& l = s.levels[size_t(level - 1)];
  return l.generation == generation ? &l : nullptr;
}

const TransformLevel* innermost_vmap() {
  const Stack& s = stack();
  for (size_t i = s.levels.size(); i-- > 0;)
    if (s.levels[i].kind == TransformKind::Vmap) return &s.levels[i];
  return nullptr;
}

bool any_transform_active() { return !stack().levels.empty(); }

namespace {
bool& internal_flag() {
  static thread_local bool f = false;
  return f;
}
}  // namespace

bool user_backward_under_grad() {
  if (internal_flag()) return false;
  for (const TransformLevel& l : stack().levels)
    if (l.kind == TransformKind::Grad) return true;
  return false;
}

InternalBackward::InternalBackward() : prev_(internal_flag()) { internal_flag() = true; }
InternalBackward::~InternalBackward() { internal_flag() = prev_; }

LevelGuard::LevelGuard(TransformKind kind, int64_t batch_size, Randomness r)
    : level_(push_level(kind, batch_size, r).level) {}
LevelGuard::~LevelGuard() { pop_level(level_); }
const TransformLevel& LevelGuard::get() const { return stack().levels[size_t(level_ - 1)]; }

}  // namespace ember::func
