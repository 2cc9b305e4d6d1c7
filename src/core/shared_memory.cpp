// Shared-memory storages (Note [Shared-memory storages] in ember/shared_memory.h).
#include "ember/shared_memory.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/intrusive_ptr.h"

namespace ember {

namespace {

/// One mapped shared file: what the storage's deleter releases.
struct Block {
  int fd;
  void* base;
  size_t map_size;
  uint64_t dev;
  uint64_t inode;
};

std::string errno_text(int err) {
  std::string s = std::strerror(err);
  if (err == EMFILE || err == ENFILE)
    s += " (each shared storage holds one file descriptor: raise `ulimit -n`)";
  return s;
}

// An anonymous shared file, close-on-exec: memfd_create, or a unique shm_open name that is
// unlinked at once where memfd is missing (old kernels, some sandboxes).
int create_shared_file() {
  int fd = ::memfd_create("ember-shm", MFD_CLOEXEC);
  if (fd >= 0 || (errno != ENOSYS && errno != EINVAL && errno != EPERM)) return fd;
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string name = "/ember_" + std::to_string(::getpid()) + "_" +
                       std::to_string(counter.fetch_add(1)) + "_" + std::to_string(attempt);
    fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
      ::shm_unlink(name.c_str());
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  return -1;
}

// Maps `fd` (owned from here on: closed on failure) read-write and shared. Every block maps at
// least one byte so a zero-size storage still has a file and an address.
Block* map_block(int fd, size_t map_size, const char* op) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    EMBER_THROW(Error, "[", op, "] fstat of a shared-memory descriptor failed: ", errno_text(err));
  }
  if (size_t(st.st_size) < map_size) {
    ::close(fd);
    EMBER_THROW(Error, "[", op, "] the shared-memory file holds ", st.st_size,
                " bytes, fewer than the ", map_size, " bytes of the storage");
  }
  void* p = ::mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    ::close(fd);
    EMBER_THROW(Error, "[", op, "] mmap of ", map_size, " shared bytes failed: ", errno_text(err));
  }
  return new Block{fd, p, map_size, uint64_t(st.st_dev), uint64_t(st.st_ino)};
}

// Every live shared block by mapping address: DataPtr hides its context, and the address of a
// live block is unique. The deleter removes its entry.
struct Registry {
  std::mutex mu;
  std::unordered_map<void*, Block*> blocks;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: storages may die after static dtors
  return *r;
}

void release_block(void* ctx, void* /*ptr*/) {
  auto* b = static_cast<Block*>(ctx);
  {
    std::lock_guard<std::mutex> g(registry().mu);
    registry().blocks.erase(b->base);
  }
  ::munmap(b->base, b->map_size);
  ::close(b->fd);
  delete b;
}

DataPtr register_block(Block* b) {
  {
    std::lock_guard<std::mutex> g(registry().mu);
    registry().blocks[b->base] = b;
  }
  return DataPtr(b->base, b, &release_block, Device(kCPU));
}

// The allocator of shared storages. Its address also marks a storage as shared.
class ShmAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    EMBER_CHECK(nbytes <= host_memory_bytes(), "[share_memory_] out of memory: tried to allocate ",
                nbytes, " shared bytes, more than the machine's memory");
    const size_t map_size = nbytes == 0 ? 1 : nbytes;
    int fd = create_shared_file();
    if (fd < 0)
      EMBER_THROW(Error,
                  "[share_memory_] could not create a shared-memory file: ", errno_text(errno));
    if (::ftruncate(fd, off_t(map_size)) != 0) {
      int err = errno;
      ::close(fd);
      EMBER_THROW(Error, "[share_memory_] could not size a shared-memory file to ", map_size,
                  " bytes: ", errno_text(err));
    }
    // Reserving the pages now turns a full tmpfs into an error here instead of a SIGBUS on the
    // first write.
    if (int err = ::posix_fallocate(fd, 0, off_t(map_size));
        err != 0 && err != EOPNOTSUPP && err != EINVAL) {
      ::close(fd);
      EMBER_THROW(Error, "[share_memory_] out of shared memory: could not reserve ", map_size,
                  " bytes: ", errno_text(err));
    }
    return register_block(map_block(fd, map_size, "share_memory_"));
  }
  void copy_data(void* dst, const void* src, size_t n) const override {
    if (n) std::memcpy(dst, src, n);
  }
};

ShmAllocator g_shm_allocator;

using Key = std::pair<uint64_t, uint64_t>;

// Note [Shared storage cache]
// Storages this process exported or received, by (device, inode), so a block that arrives twice
// maps to one StorageImpl and views stay views. Entries are strong references (the intrusive
// count has no weak form that could be revived safely); every export or receive first drops the
// entries nobody else holds, so a storage outlives its last tensor only until the next transfer.
struct Cache {
  std::mutex mu;
  std::map<Key, Storage> entries;

  void sweep_locked() {
    for (auto it = entries.begin(); it != entries.end();) {
      if (it->second.use_count() <= 1)
        it = entries.erase(it);
      else
        ++it;
    }
  }
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed, as the registry
  return *c;
}

// Serializes share_memory_ so two threads cannot move one storage twice.
std::mutex& share_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

// A fork while another thread holds one of these locks would leave the child's copy locked
// forever: the forking thread takes them (in the order the code nests them) and both sides
// release them.
void lock_all() {
  share_mutex().lock();
  cache().mu.lock();
  registry().mu.lock();
}
void unlock_all() {
  registry().mu.unlock();
  cache().mu.unlock();
  share_mutex().unlock();
}
struct AtFork {
  AtFork() { pthread_atfork(lock_all, unlock_all, unlock_all); }
} g_at_fork;

}  // namespace

bool is_shared(const Storage& s) {
  return s.defined() && s.unsafeGetStorageImpl()->allocator() == &g_shm_allocator;
}

bool is_shared(const Tensor& t) { return t.defined() && is_shared(t.storage()); }

void share_memory_(const Tensor& t) {
  EMBER_CHECK_VALUE(t.defined(), "[share_memory_] expected a defined tensor");
  const Device d = t.device();
  EMBER_CHECK(d.is_cpu(), "[share_memory_] only CPU tensors can be moved to shared memory, got a ",
              "tensor on ", d, " (sharing CUDA memory between processes is not implemented)");
  StorageImpl* s = t.storage().unsafeGetStorageImpl();
  std::lock_guard<std::mutex> g(share_mutex());
  if (s->allocator() == &g_shm_allocator) return;
  EMBER_CHECK(s->allocator() == nullptr || s->allocator() == get_allocator(kCPU),
              "[share_memory_] this tensor's storage is not ordinary CPU memory (a batched ",
              "tensor inside vmap, or a custom allocator's block) and cannot be shared");
  DataPtr fresh = g_shm_allocator.allocate(s->nbytes());
  if (s->nbytes()) std::memcpy(fresh.get(), s->data(), s->nbytes());
  // The old block is freed when `old` goes out of scope, after every tensor of the storage
  // already points at the shared one.
  DataPtr old = s->exchange_data(std::move(fresh), &g_shm_allocator);
}

namespace shm {

Handle handle(const Storage& s) {
  EMBER_CHECK(is_shared(s), "[share_memory] the storage is not in shared memory: call ",
              "share_memory_() first");
  Handle h;
  {
    std::lock_guard<std::mutex> g(registry().mu);
    auto it = registry().blocks.find(s.data());
    EMBER_INTERNAL_ASSERT(it != registry().blocks.end(), "shared storage without a block");
    h.fd = it->second->fd;
    h.dev = it->second->dev;
    h.inode = it->second->inode;
  }
  h.nbytes = s.nbytes();
  // Remembered so that the block coming back here maps to this very storage.
  std::lock_guard<std::mutex> g(cache().mu);
  cache().sweep_locked();
  cache().entries.emplace(Key{h.dev, h.inode}, s);
  return h;
}

Storage storage_from_fd(int fd, size_t nbytes) {
  struct stat st {};
  EMBER_CHECK(fd >= 0 && ::fstat(fd, &st) == 0,
              "[storage_from_fd] not an open file descriptor: ", fd);
  const Key key{uint64_t(st.st_dev), uint64_t(st.st_ino)};
  std::lock_guard<std::mutex> g(cache().mu);
  cache().sweep_locked();
  auto it = cache().entries.find(key);
  if (it != cache().entries.end()) {
    EMBER_CHECK(it->second.nbytes() == nbytes,
                "[storage_from_fd] the shared block is a storage of ", it->second.nbytes(),
                " bytes, but a handle of ", nbytes, " bytes was received");
    return it->second;
  }
  int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  EMBER_CHECK(own >= 0, "[storage_from_fd] could not duplicate descriptor ", fd, ": ",
              errno_text(errno));
  DataPtr p = register_block(map_block(own, nbytes == 0 ? 1 : nbytes, "storage_from_fd"));
  Storage s(make_intrusive<StorageImpl>(std::move(p), nbytes, &g_shm_allocator));
  cache().entries.emplace(key, s);
  return s;
}

Storage allocate(size_t nbytes) {
  DataPtr p = g_shm_allocator.allocate(nbytes);
  if (nbytes) std::memset(p.get(), 0, nbytes);
  return Storage(make_intrusive<StorageImpl>(std::move(p), nbytes, &g_shm_allocator));
}

Tensor tensor_from_storage(const Storage& storage, ScalarType dtype, IntArrayRef sizes,
                           IntArrayRef strides, int64_t storage_offset) {
  EMBER_CHECK_VALUE(storage.defined(), "[tensor_from_storage] expected a defined storage");
  EMBER_CHECK_VALUE(sizes.size() == strides.size(), "[tensor_from_storage] got ", sizes.size(),
                    " sizes but ", strides.size(), " strides");
  EMBER_CHECK_VALUE(storage_offset >= 0, "[tensor_from_storage] negative storage offset ",
                    storage_offset);
  int64_t last = storage_offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK_VALUE(sizes[i] >= 0 && strides[i] >= 0, "[tensor_from_storage] sizes ",
                      shape_str(sizes), " and strides ", shape_str(strides),
                      " must be non-negative");
    if (sizes[i] == 0) empty = true;
  }
  if (!empty) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      int64_t span = 0;
      EMBER_CHECK_VALUE(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
                            !__builtin_add_overflow(last, span, &last),
                        "[tensor_from_storage] sizes ", shape_str(sizes), " and strides ",
                        shape_str(strides), " overflow");
    }
    const size_t need = (size_t(last) + 1) * elementSize(dtype);
    EMBER_CHECK_VALUE(need <= storage.nbytes(), "[tensor_from_storage] sizes ", shape_str(sizes),
                      ", strides ", shape_str(strides), " and offset ", storage_offset,
                      " reach byte ", need, " of a storage of ", storage.nbytes(), " bytes");
  }
  return Tensor(make_intrusive<TensorImpl>(storage, dtype, sizes, strides, storage_offset));
}

size_t cached_storage_count() {
  std::lock_guard<std::mutex> g(cache().mu);
  cache().sweep_locked();
  return cache().entries.size();
}

}  // namespace shm

}  // namespace ember
