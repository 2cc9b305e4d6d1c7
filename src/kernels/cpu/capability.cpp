// Picks the CPU kernel capability once at start-up (EMBER_CPU_CAPABILITY overrides it) and
// fills the kernel table from that capability's compiled kernel families, each family from the
// set Note [Per-family capability] gives it.
#include "kernels/cpu/capability.h"

#include <cpuid.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "ember/error.h"
#include "ember/version.h"
#include "kernels/cpu/kernel_registry.h"

namespace ember {
namespace cpu {
namespace {

enum class Cap { Default, Avx2, Avx512 };

const char* cap_name(Cap c) {
  switch (c) {
    case Cap::Avx512:
      return "avx512";
    case Cap::Avx2:
      return "avx2";
    case Cap::Default:
      return "default";
  }
  return "default";
}

bool parse_cap(std::string_view s, Cap& out) {
  if (s == "default")
    out = Cap::Default;
  else if (s == "avx2")
    out = Cap::Avx2;
  else if (s == "avx512")
    out = Cap::Avx512;
  else
    return false;
  return true;
}

// Note [Per-family capability]
// The process runs one kernel set (cpu_capability()), but a kernel family may be registered
// from a lower one where that set wins on the CPU at hand. The case that asked for it: on Zen 4,
// which splits each 512-bit store in two, ember's AVX2 `add` of two 16M float32 tensors took
// 8.4 ms against 10.0 ms for its AVX-512 one (issue 22), while its compute-bound families gain
// from AVX-512. Each family's set is, in order:
//  1. EMBER_CPU_FAMILY_CAPABILITY="family=set,..." (e.g. "arith=avx2,copy=avx2"): measuring a
//     family on both sets in one build, and a way out for users;
//  2. the built-in table kFamilyRules: (CPU tag, family, set), filled from measurements only;
//  3. the process's set.
// A family never gets a set above the process's: EMBER_CPU_CAPABILITY=avx2 still means no
// AVX-512 instruction anywhere, and nothing runs that the CPU cannot execute. Families are
// registered whole (their kernels and leaf tables), so a family's kernels never mix sets.
struct FamilyRule {
  const char* cpu;     // tag from cpu_tag()
  const char* family;  // a name of EMBER_KERNEL_FAMILIES
  Cap cap;
};
// Empty so far: with streaming stores (Note [Streaming stores]) the store width of memory-bound
// families matters less, and no CPU of this kind was at hand to measure the AVX-512 set on.
// A measured loss goes here, e.g. {"amd-zen4", "arith", Cap::Avx2}.
constexpr FamilyRule kFamilyRules[] = {{"", "", Cap::Default}};

// A short tag for the rules: "amd-zen4", "intel", ... or "" when no rule could match. AMD
// family 19h is Zen 3 and Zen 4; of the two only Zen 4 has AVX-512.
std::string cpu_tag() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return "";
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  if (std::strcmp(vendor, "GenuineIntel") == 0) return "intel";
  if (std::strcmp(vendor, "AuthenticAMD") != 0 || !__get_cpuid(1, &a, &b, &c, &d)) return "";
  const unsigned family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);
  __builtin_cpu_init();
  if (family == 0x17) return "amd-zen2";
  if (family == 0x19) return __builtin_cpu_supports("avx512f") ? "amd-zen4" : "amd-zen3";
  if (family == 0x1a) return "amd-zen5";
  return "amd";
}

#define EMBER_FAMILY_NAME(family) #family,
constexpr const char* kFamilyNames[] = {EMBER_KERNEL_FAMILIES(EMBER_FAMILY_NAME)};
#undef EMBER_FAMILY_NAME
constexpr int kNumFamilies = int(sizeof(kFamilyNames) / sizeof(kFamilyNames[0]));

bool known_family(std::string_view f) {
  for (const char* k : kFamilyNames)
    if (f == k) return true;
  return false;
}

// The set EMBER_CPU_FAMILY_CAPABILITY names for `family`, if it names one.
bool spec_cap(std::string_view spec, std::string_view family, Cap& out) {
  bool found = false;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    Cap c{};
    EMBER_CHECK_VALUE(eq != std::string_view::npos && known_family(item.substr(0, eq)) &&
                          parse_cap(item.substr(eq + 1), c),
                      "[EMBER_CPU_FAMILY_CAPABILITY] expected family=set items (a family of "
                      "EMBER_KERNEL_FAMILIES; set: default, avx2 or avx512) separated by commas, "
                      "got '",
                      std::string(item), "'");
    if (item.substr(0, eq) == family) {
      out = c;
      found = true;
    }
  }
  return found;
}

Cap choose(std::string_view family, Cap process, const char* spec, std::string_view cpu) {
  Cap want = process;
  bool chosen = spec && spec_cap(spec, family, want);
  for (const FamilyRule& r : kFamilyRules) {
    if (chosen) break;
    if (*r.cpu && cpu == r.cpu && family == r.family) {
      want = r.cap;
      chosen = true;
    }
  }
  return int(want) <= int(process) ? want : process;
}

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
  Cap family_cap[kNumFamilies] = {};
  KernelTable table;
  Selected() {
    const char* spec = std::getenv("EMBER_CPU_FAMILY_CAPABILITY");
    const std::string tag = cpu_tag();
    int i = 0;
#define EMBER_REGISTER_FAMILY(family)                  \
  family_cap[i] = choose(#family, cap, spec, tag);     \
  switch (family_cap[i++]) {                           \
    case Cap::Avx512:                                  \
      cap_avx512::register_##family##_kernels(table);  \
      break;                                           \
    case Cap::Avx2:                                    \
      cap_avx2::register_##family##_kernels(table);    \
      break;                                           \
    case Cap::Default:                                 \
      cap_default::register_##family##_kernels(table); \
      break;                                           \
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

const char* family_capability(const char* family) {
  const Selected& s = selected();
  for (int i = 0; i < kNumFamilies; ++i)
    if (std::strcmp(family, kFamilyNames[i]) == 0) return cap_name(s.family_cap[i]);
  return nullptr;
}

const char* choose_family_capability(const char* family, const char* process_cap, const char* spec,
                                     const char* cpu) {
  Cap process{};
  EMBER_CHECK_VALUE(parse_cap(process_cap, process), "[choose_family_capability] unknown set '",
                    process_cap, "'");
  return cap_name(choose(family, process, spec, cpu));
}

namespace {
int64_t read_last_level_cache_bytes() {
  int64_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream size_file(dir + "size");
    if (!size_file) break;
    std::string text;
    size_file >> text;
    char* end = nullptr;
    int64_t v = std::strtoll(text.c_str(), &end, 10);
    if (end && (*end == 'K' || *end == 'k')) v <<= 10;
    if (end && (*end == 'M' || *end == 'm')) v <<= 20;
    best = std::max(best, v);
  }
  if (best == 0) best = std::max<int64_t>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
  return best;
}
}  // namespace

int64_t last_level_cache_bytes() {
  static const int64_t bytes = read_last_level_cache_bytes();
  return bytes;
}

}  // namespace cpu

const char* cpu_capability() { return cpu::cap_name(cpu::selected().cap); }

}  // namespace ember
