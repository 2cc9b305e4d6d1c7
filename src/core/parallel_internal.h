#pragma once
// parallel_for over [begin, end) in chunks of at least `grain` elements, on ember's OpenMP pool.

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>

namespace ember {
namespace detail {
extern int g_num_threads;
}

/// Runs f(begin_i, end_i) over a partition of [begin, end). Runs inline (no thread hand-off)
/// when the range is below `grain` or one thread is configured; exceptions propagate.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int nt = detail::g_num_threads;
  if (nt <= 1 || n <= grain || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  int64_t chunks = std::min<int64_t>(nt, (n + grain - 1) / grain);
  std::exception_ptr err;
#pragma omp parallel num_threads(int(chunks))
  {
    int64_t tid = omp_get_thread_num(), cnt = omp_get_num_threads();
    int64_t per = (n + cnt - 1) / cnt;
    int64_t b = begin + tid * per, e = std::min(end, b + per);
    if (b < e) {
      try {
        f(b, e);
      } catch (...) {
#pragma omp critical(ember_parallel_err)
        if (!err) err = std::current_exception();
      }
    }
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace ember
