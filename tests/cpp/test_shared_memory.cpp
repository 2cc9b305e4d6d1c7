// Shared-memory storages (Note [Shared-memory storages]): moving a storage in place, views and
// aliases following it, descriptor handles mapped back (once per block), forked children seeing
// writes both ways, descriptor hygiene, and bad input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <atomic>

#include "core/parallel_internal.h"
#include "ember/ember.h"
#include "ember/parallel.h"
#include "ember/shared_memory.h"

using namespace ember;

namespace {

int open_fd_count() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (readdir(d)) ++n;
  closedir(d);
  return n;
}

// Runs `child` in a forked process; returns its exit status (0 when it returned true).
template <class F>
int in_child(F child) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);  // a hang fails the test (SIGALRM) instead of blocking the suite
    _exit(child() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST(SharedMemory, ShareInPlaceKeepsValuesViewsAndAliases) {
  Tensor base = arange(12, kFloat).reshape({3, 4});
  Tensor view = base.t();        // strided view of the same storage
  Tensor alias = base.detach();  // another TensorImpl, same storage
  const float* before = base.data_ptr<float>();
  EXPECT_FALSE(is_shared(base));
  share_memory_(view);
  EXPECT_TRUE(is_shared(base));
  EXPECT_TRUE(is_shared(view));
  EXPECT_TRUE(is_shared(alias));
  EXPECT_NE(base.data_ptr<float>(), before);
  EXPECT_TRUE(base.is_alias_of(view));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(base.flatten()[i].item<float>(), float(i));
  // Writes through one handle are seen by the others.
  alias.mul_(2);
  EXPECT_EQ(view[3][2].item<float>(), 22.f);  // view[3][2] == base[2][3] == 11 * 2
  // A second call is a no-op: same memory.
  const float* shared = base.data_ptr<float>();
  share_memory_(base);
  EXPECT_EQ(base.data_ptr<float>(), shared);
}

TEST(SharedMemory, EveryDtypeAndZeroSize) {
  for (ScalarType dt : {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kHalf, kBFloat16, kFloat,
                        kDouble, kComplexFloat, kComplexDouble}) {
    Tensor t = arange(5, kInt64).to(dt);
    Tensor expect = t.clone();
    share_memory_(t);
    EXPECT_TRUE(is_shared(t));
    EXPECT_TRUE(t.equal(expect)) << dt;
  }
  Tensor z = empty({0, 3});
  share_memory_(z);
  EXPECT_TRUE(is_shared(z));
  EXPECT_EQ(z.numel(), 0);
  shm::Handle h = shm::handle(z.storage());
  EXPECT_EQ(h.nbytes, 0u);
  Tensor back = shm::tensor_from_storage(shm::storage_from_fd(h.fd, 0), kFloat, {0, 3}, {3, 1}, 0);
  EXPECT_EQ(back.sizes(), z.sizes());
  Tensor s = full({}, 3.5, kDouble);  // 0-dim
  share_memory_(s);
  EXPECT_EQ(s.item<double>(), 3.5);
}

TEST(SharedMemory, HandleMapsBackToTheSameStorage) {
  Tensor t = arange(10, kInt32);
  share_memory_(t);
  shm::Handle h = shm::handle(t.storage());
  EXPECT_GE(h.fd, 0);
  EXPECT_EQ(h.nbytes, 40u);
  // The exporting process gets its own storage back, so views stay views.
  Storage st = shm::storage_from_fd(h.fd, h.nbytes);
  EXPECT_TRUE(st.is_alias_of(t.storage()));
  Tensor v = shm::tensor_from_storage(st, kInt32, {3}, {2}, 1);
  EXPECT_EQ(v[2].item<int64_t>(), 5);
  v.fill_(-1);
  EXPECT_EQ(t[3].item<int64_t>(), -1);
}

TEST(SharedMemory, ForkedChildSeesWritesBothWays) {
  // The OpenMP pool runs first: a child forked afterwards must not hang in it
  // (Note [OpenMP after fork]).
  const int threads = get_num_threads();
  set_num_threads(2);
  std::atomic<int64_t> total{0};
  parallel_for(0, 1000, 1, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 1000);
  Tensor t = zeros({4}, kFloat);
  share_memory_(t);
  int rc = in_child([&] {
    if (t[0].item<float>() != 0.f) return false;
    t[1].fill_(7.f);
    std::atomic<int64_t> n{0};
    parallel_for(0, 1000, 1, [&](int64_t b, int64_t e) { n += e - b; });
    set_num_threads(2);  // stays 1 in a child forked with a live pool
    parallel_for(0, 1000, 1, [&](int64_t b, int64_t e) { n += e - b; });
    return n.load() == 2000 && get_num_threads() == 1;
  });
  set_num_threads(threads);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(t[1].item<float>(), 7.f);
  // Parent writes after the fork reach a child that maps the descriptor afresh.
  shm::Handle h = shm::handle(t.storage());
  t[2].fill_(5.f);
  rc = in_child([&] {
    Tensor c = shm::tensor_from_storage(shm::storage_from_fd(h.fd, h.nbytes), kFloat, {4}, {1}, 0);
    return c[2].item<float>() == 5.f && c[1].item<float>() == 7.f;
  });
  EXPECT_EQ(rc, 0);
}

TEST(SharedMemory, NoDescriptorLeaks) {
  shm::cached_storage_count();  // drops what earlier tests left
  const int before = open_fd_count();
  for (int i = 0; i < 50; ++i) {
    Tensor t = rand({64});
    share_memory_(t);
    shm::Handle h = shm::handle(t.storage());
    int dup = fcntl(h.fd, F_DUPFD_CLOEXEC, 0);
    Tensor r = shm::tensor_from_storage(shm::storage_from_fd(dup, h.nbytes), kFloat, {64}, {1}, 0);
    close(dup);
    EXPECT_TRUE(r.equal(t));
  }
  // Cached entries nobody holds are dropped on the next lookup.
  EXPECT_EQ(shm::cached_storage_count(), 0u);
  EXPECT_EQ(open_fd_count(), before);
}

TEST(SharedMemory, BadInput) {
  EXPECT_THROW(shm::handle(zeros({2}).storage()), Error);  // not shared
  EXPECT_THROW(shm::storage_from_fd(-1, 8), Error);
  Tensor t = zeros({4});
  share_memory_(t);
  shm::Handle h = shm::handle(t.storage());
  EXPECT_THROW(shm::storage_from_fd(h.fd, 8), Error);  // a different size for a known block
  // Geometry outside the storage.
  EXPECT_THROW(shm::tensor_from_storage(t.storage(), kFloat, {5}, {1}, 0), ValueError);
  EXPECT_THROW(shm::tensor_from_storage(t.storage(), kFloat, {2}, {1}, 3), ValueError);
  EXPECT_THROW(shm::tensor_from_storage(t.storage(), kFloat, {2}, {1, 1}, 0), ValueError);
  EXPECT_THROW(shm::tensor_from_storage(t.storage(), kDouble, {3}, {1}, 0), ValueError);
  EXPECT_NO_THROW(shm::tensor_from_storage(t.storage(), kFloat, {0}, {1}, 100));
  // A file too small for the claimed size.
  int fd = memfd_create("small", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4), 0);
  EXPECT_THROW(shm::storage_from_fd(fd, 64), Error);
  close(fd);
  EXPECT_THROW(share_memory_(Tensor()), ValueError);
}
