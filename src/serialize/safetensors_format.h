#pragma once
// Byte-level safetensors header codec: a strict JSON reader, header validation and the header
// writer. No Tensor here (only <ember/error.h>), so the fuzzer compiles this unit alone.
//
// Note [safetensors layout]
// A file is: 8-byte little-endian header length N, N bytes of UTF-8 JSON (padded with spaces to
// a multiple of 8 by writers), then the data buffer. The JSON maps tensor names to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the buffer start) and
// may hold "__metadata__": {str: str}. The tensors' byte ranges tile the buffer exactly: no
// gaps, no overlaps, nothing after the last one.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::safetensors {

/// Largest header accepted (the reference implementation's limit, 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
/// Deepest JSON nesting accepted by the reader.
constexpr int kMaxJsonDepth = 64;

/// One tensor's entry in the header.
struct Entry {
  std::string name;
  std::string dtype;  ///< "F32", "I64", ... (a known name, checked)
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  ///< byte range inside the data buffer
};

/// A validated header: entries in the JSON's order and the metadata pairs.
struct Header {
  std::vector<Entry> entries;
  std::vector<std::pair<std::string, std::string>> metadata;
  uint64_t data_start = 0;  ///< file offset of the data buffer (8 + header length)
  uint64_t data_size = 0;   ///< bytes of the data buffer
};

/// Bytes per element of a safetensors dtype name; 0 when the name is unknown.
size_t dtype_itemsize(std::string_view dtype);

/// Reads the 8-byte length prefix and checks it against `file_size`; returns the header length.
/// Throws ember::Error "[load] <where>: ..." on a short file or an impossible length.
uint64_t parse_header_length(const uint8_t* first8, uint64_t file_size, const std::string& where);

/// Parses and validates the JSON header `json` (exactly the N header bytes) of a file of
/// `file_size` bytes. Throws ember::Error "[load] <where>: ..." on any defect.
Header parse_header(std::string_view json, uint64_t file_size, const std::string& where);

/// Parses a whole file image (prefix, header and buffer) and validates it; for the fuzzer.
Header parse_file(const uint8_t* data, size_t size, const std::string& where);

/// The bytes that precede the data buffer: the length prefix and the JSON header padded with
/// spaces to a multiple of 8. Entries must be laid out contiguously in the given order.
std::string build_header(const std::vector<Entry>& entries,
                         const std::vector<std::pair<std::string, std::string>>& metadata);

/// Appends `s` to `out` as a JSON string literal (quotes included).
void append_json_string(std::string& out, std::string_view s);

}  // namespace ember::safetensors
