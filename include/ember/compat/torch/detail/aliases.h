#pragma once
/// The libtorch namespaces and macros as aliases of ember's (see torch/torch.h in this folder).
///
/// Note [libtorch compatibility headers]
/// include/ember/compat/ is an optional include directory: with it on the include path, a program
/// written for libtorch 1.13 builds against ember unchanged. The headers here are thin aliases:
/// every name they expose is defined in ember proper under the same name in namespace ember
/// (`torch::nn::Linear` is `ember::nn::Linear`) and every macro has an EMBER_ twin, so the same
/// program also builds without this folder after replacing `torch::` (and `at::`, `c10::`) with
/// `ember::`, `TORCH_` with `EMBER_` and `AT_ASSERT` with `EMBER_ASSERT` (tests/compat/port.cmake).
/// Printing follows libtorch: built-in modules print as "torch::nn::Linear(...)".

#include <cstdint>
#include <string_view>

#include "ember/ember.h"

namespace torch = ::ember;
namespace at = ::ember;

/// c10 is a real namespace (not an alias) so that it can also hold the few c10 names that ember
/// spells differently.
namespace c10 {
using namespace ::ember;
using std::string_view;
}  // namespace c10

namespace ember::compat_detail {
// Built-in modules print under libtorch's namespace ("torch::nn::Linear(...)") in a program that
// includes these headers; set before main, in every translation unit that includes them.
[[maybe_unused]] static const bool kTorchModuleNames =
    (::ember::nn::set_module_namespace("torch"), true);
}  // namespace ember::compat_detail

#define TORCH_CHECK(cond, ...) EMBER_CHECK(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) EMBER_CHECK_INDEX(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) EMBER_CHECK_VALUE(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) EMBER_CHECK_TYPE(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...) EMBER_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_WARN(...) EMBER_WARN(__VA_ARGS__)
#define AT_ASSERT(cond, ...) EMBER_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#define AT_ERROR(...) EMBER_THROW(::ember::Error, __VA_ARGS__)
#define TORCH_MODULE(Name) EMBER_MODULE(Name)
#define TORCH_MODULE_IMPL(Name, ImplType) EMBER_MODULE_IMPL(Name, ImplType)
#define TORCH_ARG(T, name) EMBER_ARG(T, name)
