#include "ember/parallel.h"

#include <omp.h>
#include <pthread.h>

#include <cstdlib>

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

// GNU OpenMP is not fork-safe: a forked child that enters a parallel region after the parent
// used the pool hangs. Children start single-threaded (DEPENDENCIES.md pitfall 2).
struct ForkGuard {
  ForkGuard() {
    pthread_atfork(nullptr, nullptr, [] {
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
  detail::g_num_threads = n;
  omp_set_num_threads(n);
}

int get_num_threads() { return detail::g_num_threads; }

}  // namespace ember
