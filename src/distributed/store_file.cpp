// FileStore: a store kept in one file that several processes open.
//
// Note [FileStore format]
// The file is an append-only log of records: a type byte ('S' set, 'D' delete, 'I' a
// bookkeeping counter), then the key and the value, each as a u32 length and its bytes. A
// writer takes flock(LOCK_EX), replays what others appended since its last read, then appends
// one whole record; readers take LOCK_SH and replay. Each process keeps the replayed map and the
// offset it reached, so an operation reads only the new records. Waiting polls the file (there
// is no cross-process notification on a plain file), backing off to 10 ms. The bookkeeping
// counters count the users and the finished users; the last of `world_size` to finish removes
// the file (as c10d).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "store_common.h"

namespace ember::distributed {

using namespace store_detail;

namespace {

const char* kUsersKey = "users";
const char* kFinishedKey = "finished";

// Holds flock for one scope.
struct FileLock {
  int fd;
  FileLock(int fd, int how, const std::string& path) : fd(fd) {
    while (::flock(fd, how) != 0) {
      if (errno != EINTR) {
        throw DistStoreError("[FileStore] cannot lock '" + path + "': " + std::strerror(errno));
      }
    }
  }
  ~FileLock() { ::flock(fd, LOCK_UN); }
};

}  // namespace

struct FileStore::Impl {
  std::string path;
  int world_size = -1;
  int fd = -1;
  std::mutex mu;  // flock is per open file, so threads of one process take turns here
  off_t offset = 0;
  std::map<std::string, std::vector<uint8_t>> map, internal;

  // Replays the records appended since the last call (the caller holds the file lock).
  void refresh() {
    struct stat st;
    if (::fstat(fd, &st) != 0) fail("stat");
    if (st.st_size <= offset) return;
    std::string buf(static_cast<size_t>(st.st_size - offset), '\0');
    size_t got = 0;
    while (got < buf.size()) {
      ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, offset + got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("read");
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    size_t pos = 0;
    auto take = [&](std::string& out) {
      uint32_t len;
      if (got - pos < 4) return false;
      std::memcpy(&len, buf.data() + pos, 4);
      if (got - pos - 4 < len) return false;
      out.assign(buf.data() + pos + 4, len);
      pos += 4 + len;
      return true;
    };
    while (pos < got) {
      size_t start = pos;
      char type = buf[pos++];
      if (type != 'S' && type != 'D' && type != 'I') {
        throw DistStoreError("[FileStore] '" + path + "' is not a store file (bad record at byte " +
                             std::to_string(offset + static_cast<off_t>(start)) + ")");
      }
      std::string k, v;
      if (!take(k) || !take(v)) {
        pos = start;  // a record cut short (its writer died mid-write): ignore the tail
        break;
      }
      if (type == 'S') {
        map[k] = std::vector<uint8_t>(v.begin(), v.end());
      } else if (type == 'D') {
        map.erase(k);
      } else {
        internal[k] = std::vector<uint8_t>(v.begin(), v.end());
      }
    }
    offset += static_cast<off_t>(pos);
  }

  // Appends one record (the caller holds LOCK_EX and has refreshed) and applies it.
  void append(char type, const std::string& k, const std::vector<uint8_t>& v) {
    std::string rec(1, type);
    uint32_t kl = static_cast<uint32_t>(k.size()), vl = static_cast<uint32_t>(v.size());
    rec.append(reinterpret_cast<const char*>(&kl), 4);
    rec += k;
    rec.append(reinterpret_cast<const char*>(&vl), 4);
    rec.append(reinterpret_cast<const char*>(v.data()), v.size());
    struct stat st;
    if (::fstat(fd, &st) != 0) fail("stat");
    size_t done = 0;
    while (done < rec.size()) {
      ssize_t n = ::pwrite(fd, rec.data() + done, rec.size() - done, st.st_size + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("write");
      done += static_cast<size_t>(n);
    }
    refresh();
  }

  [[noreturn]] void fail(const char* what) {
    throw DistStoreError(std::string("[FileStore] cannot ") + what + " '" + path +
                         "': " + std::strerror(errno));
  }

  int64_t add_internal(const std::string& k, int64_t v) {
    std::lock_guard<std::mutex> g(mu);
    FileLock l(fd, LOCK_EX, path);
    refresh();
    auto it = internal.find(k);
    int64_t sum = parse_counter("FileStore", k, it == internal.end() ? nullptr : &it->second) + v;
    append('I', k, to_bytes(std::to_string(sum)));
    return sum;
  }

  std::vector<std::string> missing(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    for (const auto& k : keys)
      if (!map.count(k)) out.push_back(k);
    return out;
  }

  // Polls until every key exists and returns the first one's value; throws DistStoreError at
  // the deadline.
  std::vector<uint8_t> wait(const char* op, const std::vector<std::string>& keys, Milliseconds t) {
    auto deadline = deadline_after(t);
    auto pause = Milliseconds(1);
    while (true) {
      {
        std::lock_guard<std::mutex> g(mu);
        FileLock l(fd, LOCK_SH, path);
        refresh();
        auto miss = missing(keys);
        if (miss.empty()) return keys.empty() ? std::vector<uint8_t>{} : map.at(keys[0]);
        if (Clock::now() >= deadline) throw DistStoreError(timeout_message(op, t, keys, miss));
      }
      auto now = Clock::now();
      std::this_thread::sleep_for(deadline - now < pause ? deadline - now : pause);
      pause = std::min(pause * 2, Milliseconds(10));
    }
  }
};

FileStore::FileStore(std::string path, int world_size) : impl_(std::make_unique<Impl>()) {
  EMBER_CHECK_VALUE(!path.empty(), "[FileStore] the path is empty");
  EMBER_CHECK_VALUE(world_size == -1 || world_size >= 1,
                    "[FileStore] world_size must be >= 1 (or -1: unknown), got ", world_size);
  impl_->path = std::move(path);
  impl_->world_size = world_size;
  impl_->fd = ::open(impl_->path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (impl_->fd < 0) impl_->fail("open");
  int64_t users = impl_->add_internal(kUsersKey, 1);
  if (world_size > 0 && users > world_size) {
    ::close(impl_->fd);
    throw DistStoreError("[FileStore] '" + impl_->path + "' has more users (" +
                         std::to_string(users) + ") than world_size " + std::to_string(world_size) +
                         " (a file left by an earlier job? remove it or use a new path)");
  }
}

FileStore::~FileStore() {
  if (!impl_ || impl_->fd < 0) return;
  try {
    struct stat st;
    // Someone removed the file (a cleanup of the directory): nothing to count.
    if (::stat(impl_->path.c_str(), &st) == 0) {
      int64_t finished = impl_->add_internal(kFinishedKey, 1);
      if (impl_->world_size > 0 && finished >= impl_->world_size) ::unlink(impl_->path.c_str());
    }
  } catch (const std::exception&) {
    // A destructor must not throw; the file stays behind.
  }
  ::close(impl_->fd);
}

const std::string& FileStore::path() const { return impl_->path; }

void FileStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  std::lock_guard<std::mutex> g(impl_->mu);
  FileLock l(impl_->fd, LOCK_EX, impl_->path);
  impl_->refresh();
  impl_->append('S', key, value);
}

std::vector<uint8_t> FileStore::get(const std::string& key) {
  auto t = resolve_timeout("FileStore.get", kUnsetTimeout, timeout_);
  return impl_->wait("FileStore.get", {key}, t);
}

std::vector<uint8_t> FileStore::compare_set(const std::string& key,
                                            const std::vector<uint8_t>& expected,
                                            const std::vector<uint8_t>& desired) {
  std::lock_guard<std::mutex> g(impl_->mu);
  FileLock l(impl_->fd, LOCK_EX, impl_->path);
  impl_->refresh();
  auto it = impl_->map.find(key);
  if (it == impl_->map.end()) {
    if (!expected.empty()) return expected;
  } else if (it->second != expected) {
    return it->second;
  }
  impl_->append('S', key, desired);
  return desired;
}

int64_t FileStore::add(const std::string& key, int64_t value) {
  std::lock_guard<std::mutex> g(impl_->mu);
  FileLock l(impl_->fd, LOCK_EX, impl_->path);
  impl_->refresh();
  auto it = impl_->map.find(key);
  int64_t cur = parse_counter("FileStore.add", key, it == impl_->map.end() ? nullptr : &it->second);
  int64_t sum = static_cast<int64_t>(static_cast<uint64_t>(cur) + static_cast<uint64_t>(value));
  impl_->append('S', key, to_bytes(std::to_string(sum)));
  return sum;
}

bool FileStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(impl_->mu);
  FileLock l(impl_->fd, LOCK_EX, impl_->path);
  impl_->refresh();
  if (!impl_->map.count(key)) return false;
  impl_->append('D', key, {});
  return true;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(impl_->mu);
  FileLock l(impl_->fd, LOCK_SH, impl_->path);
  impl_->refresh();
  return impl_->missing(keys).empty();
}

// The user's keys only: the bookkeeping counters live in their own records.
int64_t FileStore::num_keys() {
  std::lock_guard<std::mutex> g(impl_->mu);
  FileLock l(impl_->fd, LOCK_SH, impl_->path);
  impl_->refresh();
  return static_cast<int64_t>(impl_->map.size());
}

void FileStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  impl_->wait("FileStore.wait", keys, resolve_timeout("FileStore.wait", timeout, timeout_));
}

}  // namespace ember::distributed
