// libFuzzer target: the safetensors header parser on arbitrary bytes. Valid input must satisfy
// the layout invariants and survive a write/parse round trip; invalid input must throw
// ember::Error (anything else, or a sanitizer report, is a bug).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ember/error.h"
#include "serialize/safetensors_format.h"

namespace st = ember::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  st::Header h;
  try {
    h = st::parse_file(data, size, "fuzz-input");
  } catch (const ember::Error&) {
    return 0;
  }
  uint64_t used = 0;
  for (const auto& e : h.entries) {
    if (e.end < e.begin || e.end > h.data_size || st::dtype_itemsize(e.dtype) == 0) std::abort();
    used += e.end - e.begin;
  }
  if (used != h.data_size || h.data_start + h.data_size != size) std::abort();
  // What we write we must read back identically.
  std::string again = st::build_header(h.entries, h.metadata);
  again.append(size_t(h.data_size), '\0');
  st::Header h2 =
      st::parse_file(reinterpret_cast<const uint8_t*>(again.data()), again.size(), "round-trip");
  if (h2.entries.size() != h.entries.size() || h2.metadata != h.metadata) std::abort();
  for (size_t i = 0; i < h.entries.size(); ++i) {
    const auto &a = h.entries[i], &b = h2.entries[i];
    if (a.name != b.name || a.dtype != b.dtype || a.shape != b.shape || a.begin != b.begin ||
        a.end != b.end)
      std::abort();
  }
  return 0;
}
