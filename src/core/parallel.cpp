#include "ember/parallel.h"

#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/parallel_internal.h"
#include "ember/error.h"

namespace ember {

namespace {
int initial_threads() {
  if (const char* e = std::getenv("EMBER_NUM_THREADS")) {
    int n = std::atoi(e);
    if (n > 0) return n;
  }
  return omp_get_max_threads();
}

// Note [OpenMP after fork]
// GNU OpenMP is not fork-safe: a forked child inherits the parent's record of its worker threads
// but not the threads, so its first parallel region waits for them forever (DEPENDENCIES.md
// pitfall 2). When the parent had threads besides the forking one at fork time (the pool may
// exist), the child runs single-threaded for good: parallel_for then never enters OpenMP, and
// set_num_threads() keeps 1 there (PyTorch's DataLoader workers run with one thread too). A
// child forked from a single-threaded parent has no stale pool and keeps the thread count.
std::atomic<bool> g_parent_had_threads{false};
bool g_forked_with_pool = false;

// The process's thread count, read with plain syscalls (the prepare handler may run while
// other threads hold allocator locks).
int process_thread_count() {
  int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 2;  // unknown: assume a pool
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return 2;
  buf[n] = 0;
  // Field 20 is num_threads; field 2 (comm) may hold spaces, so count from its closing ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return 2;
  int field = 2;
  for (; *p && field < 20; ++p)
    if (*p == ' ') ++field;
  return std::atoi(p);
}

struct ForkGuard {
  ForkGuard() {
    pthread_atfork([] { g_parent_had_threads = process_thread_count() > 1; }, nullptr,
                   [] {
                     if (!g_parent_had_threads) return;
                     g_forked_with_pool = true;
                     detail::g_num_threads = 1;
                     omp_set_num_threads(1);
                   });
  }
} g_fork_guard;
}  // namespace

namespace detail {
int g_num_threads = initial_threads();
}

void set_num_threads(int n) {
  EMBER_CHECK_VALUE(n >= 1, "[set_num_threads] expected a positive number of threads, got ", n);
  if (g_forked_with_pool) n = 1;  // Note [OpenMP after fork]
  detail::g_num_threads = n;
  omp_set_num_threads(n);
}

int get_num_threads() { return detail::g_num_threads; }

}  // namespace ember
