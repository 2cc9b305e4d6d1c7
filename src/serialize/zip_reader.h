#pragma once
// A read-only ZIP archive reader for PyTorch checkpoints: the central directory (ZIP64 included),
// STORED and DEFLATE entries, CRC-32 checks. No Tensor here (only <ember/error.h> and zlib), so
// the fuzzer compiles this unit alone.
//
// Note [Bounded archive reads]
// Every size read from the archive is checked against the archive's own size before anything is
// allocated: a STORED entry is at most the archive, a DEFLATE entry inflates to at most 1032
// times its compressed size (deflate's largest ratio), the entry count is at most the central
// directory's size over the fixed record size. A hostile archive can therefore not make us
// allocate more than a small multiple of its own size.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ember::zip {

/// Random-access bytes: a file read with pread, or a block of memory.
class Source {
 public:
  virtual ~Source() = default;
  /// Total size in bytes.
  virtual uint64_t size() const = 0;
  /// Reads exactly `n` bytes at `offset` into `dst`; throws ember::Error when they are not there.
  virtual void read(uint64_t offset, void* dst, size_t n) const = 0;
};

/// Bytes in memory, borrowed: the memory must outlive the source.
class MemorySource : public Source {
 public:
  MemorySource(const void* data, size_t size)
      : data_(static_cast<const uint8_t*>(data)), size_(size) {}
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, size_t n) const override;

 private:
  const uint8_t* data_;
  size_t size_;
};

/// A regular file, opened read-only (closed by the destructor).
class FileSource : public Source {
 public:
  /// Opens `path`; throws ember::Error "[op] cannot open <path>: ..." on failure.
  FileSource(const std::string& path, const char* op);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, size_t n) const override;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

/// One member of the archive, as its central directory describes it.
struct Entry {
  std::string name;
  uint16_t method = 0;  ///< 0 STORED, 8 DEFLATE (nothing else is accepted)
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;          ///< uncompressed bytes (bounded, Note [Bounded archive reads])
  uint64_t local_offset = 0;  ///< offset of the local file header
};

/// True when `data` starts with a ZIP local file header ("PK\3\4").
bool has_zip_magic(const uint8_t* data, size_t size);

/// A parsed central directory over a Source. Throws ember::Error "[op] <where>: ..." on any
/// defect, in the constructor or when an entry is read.
class Reader {
 public:
  Reader(std::shared_ptr<const Source> source, std::string where, std::string op);
  const std::vector<Entry>& entries() const { return entries_; }
  /// The entry called `name`, or nullptr.
  const Entry* find(std::string_view name) const;
  /// Writes the entry's `e.size` uncompressed bytes to `dst`, checking the CRC-32.
  void extract(const Entry& e, void* dst) const;
  /// The entry's bytes as a string.
  std::string read(const Entry& e) const;
  const std::string& where() const { return where_; }
  const std::string& op() const { return op_; }
  uint64_t archive_size() const { return source_->size(); }

 private:
  uint64_t data_offset(const Entry& e) const;
  std::shared_ptr<const Source> source_;
  std::string where_, op_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;
  uint64_t central_dir_offset_ = 0;
};

}  // namespace ember::zip
