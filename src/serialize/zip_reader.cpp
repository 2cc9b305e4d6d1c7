// ZIP reading for PyTorch checkpoints (Note [Bounded archive reads]). The layout follows
// PKWARE's APPNOTE: local headers and data, then the central directory, then the end record
// (with ZIP64 records before it when a size or an offset does not fit 32 bits).
#include "serialize/zip_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ember/error.h"

namespace ember::zip {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr size_t kEndSize = 22, kCentralSize = 46, kLocalSize = 30;
constexpr size_t kEnd64LocatorSize = 20, kEnd64Size = 56;
constexpr uint64_t kMaxDeflateRatio = 1032;

uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t* p) { return uint32_t(le16(p)) | uint32_t(le16(p + 2)) << 16; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

}  // namespace

void MemorySource::read(uint64_t offset, void* dst, size_t n) const {
  EMBER_CHECK(offset <= size_ && n <= size_ - offset, "[zip] read of ", n, " bytes at offset ",
              offset, " is past the end of the ", size_, "-byte archive");
  if (n) std::memcpy(dst, data_ + offset, n);
}

FileSource::FileSource(const std::string& path, const char* op) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMBER_CHECK(fd_ >= 0, "[", op, "] cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    EMBER_THROW(Error, "[", op, "] ", path, " is not a regular file");
  }
  size_ = uint64_t(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

void FileSource::read(uint64_t offset, void* dst, size_t n) const {
  EMBER_CHECK(offset <= size_ && n <= size_ - offset, "[zip] ", path_, ": read of ", n,
              " bytes at offset ", offset, " is past the end of the file");
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t r = ::pread(fd_, p, std::min<size_t>(n, size_t(1) << 30), off_t(offset));
    if (r < 0 && errno == EINTR) continue;
    EMBER_CHECK(r >= 0, "[zip] ", path_, ": read failed: ", std::strerror(errno));
    EMBER_CHECK(r > 0, "[zip] ", path_, ": file ended early (was it changed while reading?)");
    p += r;
    n -= size_t(r);
    offset += uint64_t(r);
  }
}

bool has_zip_magic(const uint8_t* data, size_t size) {
  return size >= 4 && data[0] == 'P' && data[1] == 'K' && data[2] == 3 && data[3] == 4;
}

Reader::Reader(std::shared_ptr<const Source> source, std::string where, std::string op)
    : source_(std::move(source)), where_(std::move(where)), op_(std::move(op)) {
  const uint64_t fsize = source_->size();
  auto fail = [&](auto... parts) {
    EMBER_THROW(Error, "[", op_, "] ", where_, ": not a valid zip archive: ", parts...);
  };
  if (fsize < kEndSize) fail("only ", fsize, " bytes");

  // The end record sits in the last 22 + 65535 (comment) bytes; search backwards.
  uint64_t tail_len = std::min<uint64_t>(fsize, kEndSize + 0xffff);
  std::vector<uint8_t> tail(static_cast<size_t>(tail_len));
  source_->read(fsize - tail_len, tail.data(), tail.size());
  int64_t at = -1;
  for (int64_t i = int64_t(tail.size() - kEndSize); i >= 0; --i) {
    const uint8_t* p = tail.data() + i;
    if (le32(p) == kEndSig && size_t(i) + kEndSize + le16(p + 20) <= tail.size()) {
      at = i;
      break;
    }
  }
  if (at < 0) fail("no end of central directory record (truncated file?)");
  const uint8_t* end = tail.data() + at;
  const uint64_t end_pos = fsize - tail_len + uint64_t(at);
  uint64_t count = le16(end + 10), cd_size = le32(end + 12), cd_offset = le32(end + 16);
  if (le16(end + 4) != 0 || le16(end + 6) != 0) fail("multi-disk archives are not supported");
  uint64_t cd_limit = end_pos;  // the central directory ends where the end records begin
  if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    if (end_pos < kEnd64LocatorSize) fail("missing ZIP64 locator");
    uint8_t loc[kEnd64LocatorSize];
    source_->read(end_pos - kEnd64LocatorSize, loc, sizeof loc);
    if (le32(loc) != kEnd64LocatorSig) fail("missing ZIP64 locator");
    uint64_t rec = le64(loc + 8);
    if (rec > end_pos - kEnd64LocatorSize || end_pos - kEnd64LocatorSize - rec < kEnd64Size)
      fail("bad ZIP64 end record offset ", rec);
    uint8_t r64[kEnd64Size];
    source_->read(rec, r64, sizeof r64);
    if (le32(r64) != kEnd64Sig) fail("bad ZIP64 end record signature");
    count = le64(r64 + 32);
    cd_size = le64(r64 + 40);
    cd_offset = le64(r64 + 48);
    cd_limit = rec;
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset)
    fail("the central directory (", cd_size, " bytes at ", cd_offset, ") overlaps its end record");
  if (count > cd_size / kCentralSize)
    fail(count, " entries cannot fit a ", cd_size, "-byte central directory");
  central_dir_offset_ = cd_offset;

  std::vector<uint8_t> cd(static_cast<size_t>(cd_size));
  source_->read(cd_offset, cd.data(), cd.size());
  entries_.reserve(static_cast<size_t>(count));
  size_t pos = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (cd.size() - pos < kCentralSize || le32(cd.data() + pos) != kCentralSig)
      fail("central directory entry ", k, " is corrupt");
    const uint8_t* h = cd.data() + pos;
    uint16_t flags = le16(h + 8);
    size_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    if (cd.size() - pos - kCentralSize < name_len + extra_len + comment_len)
      fail("central directory entry ", k, " runs past the directory");
    Entry e;
    e.name.assign(reinterpret_cast<const char*>(h + kCentralSize), name_len);
    e.method = le16(h + 10);
    e.crc32 = le32(h + 16);
    e.compressed_size = le32(h + 20);
    e.size = le32(h + 24);
    e.local_offset = le32(h + 42);
    // ZIP64 extended information: the 64-bit values of the fields saturated above, in order.
    const uint8_t* x = h + kCentralSize + name_len;
    const uint8_t* x_end = x + extra_len;
    while (x_end - x >= 4) {
      uint16_t id = le16(x), len = le16(x + 2);
      if (size_t(x_end - x - 4) < len) fail("entry '", e.name, "' has a corrupt extra field");
      if (id == 0x0001) {
        const uint8_t* v = x + 4;
        const uint8_t* v_end = v + len;
        auto take = [&](uint64_t& field) {
          if (v_end - v < 8) fail("entry '", e.name, "' has a short ZIP64 field");
          field = le64(v);
          v += 8;
        };
        if (e.size == 0xffffffff) take(e.size);
        if (e.compressed_size == 0xffffffff) take(e.compressed_size);
        if (e.local_offset == 0xffffffff) take(e.local_offset);
      }
      x += 4 + len;
    }
    if (flags & 0x1) fail("entry '", e.name, "' is encrypted");
    if (e.method != 0 && e.method != 8)
      fail("entry '", e.name, "' uses compression method ", e.method, " (only STORED and DEFLATE)");
    if (e.local_offset > cd_offset || e.compressed_size > cd_offset - e.local_offset)
      fail("entry '", e.name, "' lies outside the archive's data area");
    if (e.method == 0 && e.size != e.compressed_size)
      fail("STORED entry '", e.name, "' has different stored and real sizes");
    if (e.method == 8 && e.size / kMaxDeflateRatio > e.compressed_size)
      fail("entry '", e.name, "' claims ", e.size, " bytes from ", e.compressed_size,
           " compressed ones");
    if (!index_.emplace(e.name, entries_.size()).second)
      fail("the entry name '", e.name, "' appears twice");
    entries_.push_back(std::move(e));
    pos += kCentralSize + name_len + extra_len + comment_len;
  }
}

const Entry* Reader::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

uint64_t Reader::data_offset(const Entry& e) const {
  uint8_t h[kLocalSize];
  source_->read(e.local_offset, h, sizeof h);
  EMBER_CHECK(le32(h) == kLocalSig, "[", op_, "] ", where_, ": entry '", e.name,
              "' has no local header at offset ", e.local_offset);
  uint64_t off = e.local_offset + kLocalSize + le16(h + 26) + le16(h + 28);
  EMBER_CHECK(off <= central_dir_offset_ && e.compressed_size <= central_dir_offset_ - off, "[",
              op_, "] ", where_, ": entry '", e.name, "' runs into the central directory");
  return off;
}

void Reader::extract(const Entry& e, void* dst) const {
  const uint64_t off = data_offset(e);
  auto* out = static_cast<uint8_t*>(dst);
  uLong crc = crc32(0L, Z_NULL, 0);
  constexpr size_t kChunk = size_t(1) << 20;
  if (e.method == 0) {
    for (uint64_t done = 0; done < e.size;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, e.size - done));
      source_->read(off + done, out + done, n);
      crc = crc32_z(crc, out + done, n);
      done += n;
    }
  } else {
    z_stream zs{};
    // Negative window bits: a raw deflate stream, as ZIP stores it.
    EMBER_CHECK(inflateInit2(&zs, -MAX_WBITS) == Z_OK, "[", op_, "] zlib initialisation failed");
    struct End {
      z_stream* z;
      ~End() { inflateEnd(z); }
    } end{&zs};
    std::vector<uint8_t> in(static_cast<size_t>(std::min<uint64_t>(kChunk, e.compressed_size)));
    uint64_t fed = 0, produced = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (zs.avail_in == 0 && fed < e.compressed_size) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(in.size(), e.compressed_size - fed));
        source_->read(off + fed, in.data(), n);
        zs.next_in = in.data();
        zs.avail_in = uInt(n);
        fed += n;
      }
      // A spare byte past the declared size makes an overlong stream detectable.
      uint8_t spare = 0;
      bool at_end = produced == e.size;
      zs.next_out = at_end ? &spare : out + produced;
      zs.avail_out = at_end ? 1 : uInt(std::min<uint64_t>(kChunk, e.size - produced));
      uInt before = zs.avail_out;
      rc = inflate(&zs, Z_NO_FLUSH);
      EMBER_CHECK(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR, "[", op_, "] ", where_,
                  ": entry '", e.name, "' holds corrupt deflate data (",
                  zs.msg ? zs.msg : "zlib error", ")");
      uInt got = before - zs.avail_out;
      EMBER_CHECK(!(at_end && got > 0), "[", op_, "] ", where_, ": entry '", e.name,
                  "' inflates to more than its declared ", e.size, " bytes");
      if (!at_end) {
        crc = crc32_z(crc, out + produced, got);
        produced += got;
      }
      EMBER_CHECK(!(rc == Z_BUF_ERROR && zs.avail_in == 0 && fed == e.compressed_size), "[", op_,
                  "] ", where_, ": entry '", e.name, "' holds truncated deflate data");
    }
    EMBER_CHECK(produced == e.size, "[", op_, "] ", where_, ": entry '", e.name, "' inflates to ",
                produced, " bytes, not its declared ", e.size);
  }
  EMBER_CHECK(uint32_t(crc) == e.crc32, "[", op_, "] ", where_, ": entry '", e.name,
              "' fails its CRC-32 check (the file is corrupt)");
}

std::string Reader::read(const Entry& e) const {
  std::string s(static_cast<size_t>(e.size), '\0');
  extract(e, s.data());
  return s;
}

}  // namespace ember::zip
