// libFuzzer target: gzip inflation and the IDX parser/decoder on arbitrary bytes. Bad input
// must throw ember::Error; a valid header must describe exactly the bytes that follow it.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "data/idx_format.h"
#include "ember/error.h"

namespace idx = ember::data::idx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    std::vector<uint8_t> bytes(data, data + size);
    if (idx::is_gzip(data, size)) bytes = idx::gunzip(data, size, "fuzz-input", size_t(1) << 24);
    idx::IdxHeader h = idx::parse(bytes.data(), bytes.size(), "fuzz-input");
    if (h.data_offset + h.data_bytes != bytes.size()) std::abort();
    uint64_t numel = 1;
    for (int64_t d : h.dims) numel *= uint64_t(d);
    if (numel * h.itemsize != h.data_bytes) std::abort();
    std::vector<uint8_t> out(h.data_bytes);
    idx::decode(h, bytes.data(), out.data());
  } catch (const ember::Error&) {
  }
  return 0;
}
