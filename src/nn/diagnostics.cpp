// nn warnings: one replaceable handler, so the Python binding can turn them into UserWarning.
#include "ember/nn/diagnostics.h"

#include <atomic>
#include <iostream>

namespace ember::nn {

namespace {
void print_warning(const std::string& message) { std::cerr << "[W] " << message << "\n"; }

std::atomic<WarningHandler> g_handler{&print_warning};
}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  return g_handler.exchange(handler ? handler : &print_warning);
}

void warn(const std::string& message) { g_handler.load()(message); }

}  // namespace ember::nn
