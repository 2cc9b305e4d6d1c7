// IDX parsing and gzip inflation on bytes (see idx_format.h); the input is untrusted.
#include "data/idx_format.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "ember/error.h"

namespace ember::data::idx {

size_t type_itemsize(uint8_t type) {
  switch (type) {
    case 0x08:
    case 0x09:
      return 1;
    case 0x0B:
      return 2;
    case 0x0C:
    case 0x0D:
      return 4;
    case 0x0E:
      return 8;
    default:
      return 0;
  }
}

IdxHeader parse(const uint8_t* data, size_t size, const std::string& where) {
  EMBER_CHECK(size >= 4, "[read_idx] ", where, ": file of ", size,
              " bytes is too short for an IDX header");
  EMBER_CHECK(data[0] == 0 && data[1] == 0, "[read_idx] ", where,
              ": bad magic number (expected two zero bytes; not an IDX file?)");
  IdxHeader h;
  h.type = data[2];
  h.itemsize = type_itemsize(h.type);
  EMBER_CHECK(h.itemsize != 0, "[read_idx] ", where, ": unknown IDX element type 0x", std::hex,
              int(h.type));
  int nd = data[3];
  EMBER_CHECK(nd >= 1 && nd <= kMaxDims, "[read_idx] ", where, ": ", nd,
              " dimensions (expected 1 to ", kMaxDims, ")");
  h.data_offset = 4 + 4 * size_t(nd);
  EMBER_CHECK(size >= h.data_offset, "[read_idx] ", where, ": file of ", size,
              " bytes is too short for a header of ", nd, " dimensions");
  uint64_t numel = 1;
  bool overflow = false;
  for (int i = 0; i < nd; ++i) {
    const uint8_t* p = data + 4 + 4 * i;
    uint64_t d = (uint64_t(p[0]) << 24) | (uint64_t(p[1]) << 16) | (uint64_t(p[2]) << 8) | p[3];
    h.dims.push_back(int64_t(d));
    if (d != 0 && numel > (uint64_t(1) << 62) / d) overflow = true;
    numel *= d;
  }
  EMBER_CHECK(!overflow && numel <= std::numeric_limits<uint64_t>::max() / h.itemsize,
              "[read_idx] ", where, ": dimensions overflow");
  uint64_t bytes = numel * h.itemsize;
  EMBER_CHECK(bytes == size - h.data_offset, "[read_idx] ", where, ": dimensions need ", bytes,
              " bytes of data but the file has ", size - h.data_offset,
              " (truncated or corrupt file?)");
  h.data_bytes = size_t(bytes);
  return h;
}

void decode(const IdxHeader& h, const uint8_t* data, void* out) {
  const uint8_t* src = data + h.data_offset;
  auto* dst = static_cast<uint8_t*>(out);
  if (h.data_bytes == 0) return;
  if (h.itemsize == 1 || std::endian::native == std::endian::big) {
    std::memcpy(dst, src, h.data_bytes);
    return;
  }
  size_t w = h.itemsize;
  for (size_t i = 0; i < h.data_bytes; i += w)
    for (size_t j = 0; j < w; ++j) dst[i + j] = src[i + w - 1 - j];
}

bool is_gzip(const uint8_t* data, size_t size) {
  return size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, const std::string& where,
                            size_t max_output) {
  std::vector<uint8_t> out;
  z_stream zs{};
  // 16 + MAX_WBITS: expect the gzip wrapper (zlib checks its header and CRC).
  EMBER_CHECK(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK, "[read_idx] ", where,
              ": zlib initialisation failed");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  // The gzip trailer holds the size mod 2^32: a good first guess for the allocation.
  if (size >= 18) {
    const uint8_t* t = data + size - 4;
    size_t guess = size_t(t[0]) | size_t(t[1]) << 8 | size_t(t[2]) << 16 | size_t(t[3]) << 24;
    out.reserve(std::min({guess, max_output, size * 1032}));  // deflate expands at most ~1032x
  }
  std::vector<uint8_t> buf(size_t(1) << 16);
  size_t fed = 0;  // input bytes handed to zlib so far
  while (true) {
    if (zs.avail_in == 0 && fed < size) {
      size_t chunk = std::min<size_t>(size - fed, size_t(1) << 30);
      zs.next_in = const_cast<Bytef*>(data + fed);
      zs.avail_in = uInt(chunk);
      fed += chunk;
    }
    zs.next_out = buf.data();
    zs.avail_out = uInt(buf.size());
    int rc = inflate(&zs, Z_NO_FLUSH);
    EMBER_CHECK(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR, "[read_idx] ", where,
                ": corrupt gzip data (", zs.msg ? zs.msg : "zlib error", ")");
    size_t got = buf.size() - zs.avail_out;
    EMBER_CHECK(got <= max_output - out.size(), "[read_idx] ", where,
                ": decompressed data exceeds ", max_output, " bytes");
    out.insert(out.end(), buf.data(), buf.data() + got);
    if (rc == Z_STREAM_END) {
      // Concatenated members form one stream (gzip's rule); trailing zero padding is ignored.
      size_t consumed = size_t(zs.next_in - data);
      if (std::all_of(data + consumed, data + size, [](uint8_t b) { return b == 0; })) break;
      EMBER_CHECK(is_gzip(data + consumed, size - consumed), "[read_idx] ", where,
                  ": unexpected data after the gzip stream");
      EMBER_CHECK(inflateReset(&zs) == Z_OK, "[read_idx] ", where, ": zlib reset failed");
      continue;
    }
    // Z_BUF_ERROR means no progress was possible: with all input consumed, the stream is cut.
    EMBER_CHECK(!(rc == Z_BUF_ERROR && zs.avail_in == 0 && fed == size), "[read_idx] ", where,
                ": truncated gzip data");
  }
  return out;
}

}  // namespace ember::data::idx
