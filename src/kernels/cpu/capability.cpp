// Picks the CPU kernel capability once at start-up (EMBER_CPU_CAPABILITY overrides it) and
// fills the kernel table from that capability's compiled kernel families.
#include <cstdlib>
#include <cstring>
#include <string>

#include "ember/error.h"
#include "ember/version.h"
#include "kernels/cpu/kernel_registry.h"

namespace ember {
namespace cpu {
namespace {

enum class Cap { Default, Avx2, Avx512 };

Cap detect() {
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  Cap best = avx512 ? Cap::Avx512 : avx2 ? Cap::Avx2 : Cap::Default;
  if (const char* env = std::getenv("EMBER_CPU_CAPABILITY")) {
    std::string want = env;
    Cap asked = want == "avx512" ? Cap::Avx512 : want == "avx2" ? Cap::Avx2 : Cap::Default;
    EMBER_CHECK_VALUE(want == "default" || want == "avx2" || want == "avx512",
                      "[EMBER_CPU_CAPABILITY] expected default, avx2 or avx512, got '", want, "'");
    // Never run code the CPU cannot execute: cap the request at what was detected.
    return int(asked) <= int(best) ? asked : best;
  }
  return best;
}

struct Selected {
  Cap cap = detect();
  KernelTable table;
  Selected() {
#define EMBER_REGISTER_FAMILY(family)                  \
  switch (cap) {                                       \
    case Cap::Avx512: cap_avx512::register_##family##_kernels(table); break; \
    case Cap::Avx2: cap_avx2::register_##family##_kernels(table); break;     \
    case Cap::Default: cap_default::register_##family##_kernels(table); break; \
  }
    EMBER_KERNEL_FAMILIES(EMBER_REGISTER_FAMILY)
#undef EMBER_REGISTER_FAMILY
  }
};

Selected& selected() {
  static Selected s;
  return s;
}

}  // namespace

const KernelTable& kernels() { return selected().table; }

}  // namespace cpu

const char* cpu_capability() {
  switch (cpu::selected().cap) {
    case cpu::Cap::Avx512: return "avx512";
    case cpu::Cap::Avx2: return "avx2";
    case cpu::Cap::Default: return "default";
  }
  return "default";
}

}  // namespace ember
