#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The CPU kernel set of each kernel family (Note [Per-family capability] in capability.cpp), and
// the cache size the kernels size their strategies by.

#include <cstdint>

namespace ember::cpu {

/// The size in bytes of cpu 0's largest cache as sysfs reports it (one L3 instance: glibc's
/// sysconf(_SC_LEVEL3_CACHE_SIZE) gives the whole socket's on AMD), else sysconf's, else 0.
/// Read once.
int64_t last_level_cache_bytes();

/// The kernel set ("default", "avx2" or "avx512") that kernel family `family` (a name of
/// EMBER_KERNEL_FAMILIES, e.g. "arith") was registered from; nullptr for an unknown family.
const char* family_capability(const char* family);

/// The rule of Note [Per-family capability], as a pure function: the set for `family` when the
/// process runs `process_cap`, EMBER_CPU_FAMILY_CAPABILITY is `spec` (nullptr: unset) and the
/// CPU is `cpu` (the tag of the built-in table, e.g. "amd-zen4"; "" matches no rule). Throws
/// ValueError for a malformed spec. Returns a string literal.
const char* choose_family_capability(const char* family, const char* process_cap, const char* spec,
                                     const char* cpu);

}  // namespace ember::cpu
