#pragma once
#include "upper_layer.h"  // Note [Layer includes]
// Byte-level IDX (the MNIST file format) and gzip decoding, with no Tensor (only
// <ember/error.h> and zlib), so the fuzzer compiles this unit alone.
//
// IDX: two zero bytes, a type byte (0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64),
// a dimension count, one big-endian uint32 per dimension, then the big-endian elements. The
// element count must match the remaining bytes exactly.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::data::idx {

/// Largest dimension count accepted.
constexpr int kMaxDims = 16;

/// A validated IDX header.
struct IdxHeader {
  uint8_t type = 0;     ///< the IDX type code
  size_t itemsize = 0;  ///< bytes per element
  std::vector<int64_t> dims;
  size_t data_offset = 0;  ///< where the elements start
  size_t data_bytes = 0;   ///< bytes of elements (numel * itemsize)
};

/// Bytes per element of an IDX type code; 0 when the code is unknown.
size_t type_itemsize(uint8_t type);

/// Parses and validates an IDX image of `size` bytes. Throws ember::Error "[read_idx] <where>:
/// ..." on a bad magic or type, sizes that overflow, or a byte count that does not match.
IdxHeader parse(const uint8_t* data, size_t size, const std::string& where);

/// Copies the elements of a parsed image to `out` (header.data_bytes bytes) in host order.
void decode(const IdxHeader& header, const uint8_t* data, void* out);

/// Whether `data` starts with the gzip magic bytes.
bool is_gzip(const uint8_t* data, size_t size);

/// Inflates a gzip stream (concatenated members included). Throws ember::Error "[read_idx]
/// <where>: ..." on corrupt or truncated data or output larger than `max_output` bytes.
std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, const std::string& where,
                            size_t max_output);

}  // namespace ember::data::idx
