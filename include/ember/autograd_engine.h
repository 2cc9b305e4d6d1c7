#pragma once
/// Hooks into a running backward pass (torch::autograd::Engine::queue_callback).

#include <functional>

namespace ember::autograd {

/// Queues `cb` to run once the current backward pass (`backward()`, on this thread) has
/// finished every node, after the last gradient was accumulated. Raises when no backward pass
/// is running. Callbacks may queue more callbacks; they run in order.
void queue_callback(std::function<void()> cb);

/// True while a backward pass that accumulates into `.grad` runs on this thread.
bool in_backward_pass();

}  // namespace ember::autograd
