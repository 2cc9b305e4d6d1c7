#pragma once
/// Diagnostics of the nn functional forms: warnings (libtorch's TORCH_WARN), a message that does
/// not stop the call, and AssertionError, the error PyTorch raises from its Python `assert`s
/// (embedding's padding_idx, multi-head attention's shape checks).

#include <string>

#include "ember/error.h"

namespace ember::nn {

/// A failed argument assertion of the nn layer: a ValueError in C++; Python sees AssertionError,
/// as with PyTorch.
class AssertionError : public ValueError {
 public:
  explicit AssertionError(const std::string& m) : ValueError(m) {}
};

/// Receives every nn warning; it may throw (a warning turned into an error). The default
/// prints to stderr; the Python binding installs one that raises a Python UserWarning, so
/// `warnings.catch_warnings` and `-W error` apply.
using WarningHandler = void (*)(const std::string& message);

/// Installs `handler` (nullptr restores the stderr default); returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);
/// Passes `message` to the current handler.
void warn(const std::string& message);

}  // namespace ember::nn

/// Throws ember::nn::AssertionError with the message parts when `cond` is false.
#define EMBER_NN_ASSERT(cond, ...) EMBER_CHECK_T(::ember::nn::AssertionError, cond, __VA_ARGS__)
