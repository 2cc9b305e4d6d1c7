// ember's FFT engine: plans (mixed-radix Stockham schedules, four-step splits, Bluestein
// chirps), a thread-safe plan cache, and the drivers of fft_c2c_stub / fft_r2c_stub /
// fft_c2r_stub. The butterflies live in fft_kernels.cpp (one copy per CPU capability).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

#include "core/parallel_internal.h"
#include "ember/error.h"
#include "ember/version.h"
#include "kernels/cpu/fft/fft_plan.h"
#include "kernels/stubs/fft.h"

namespace ember {

EMBER_DEFINE_KERNEL(fft_c2c_stub);
EMBER_DEFINE_KERNEL(fft_r2c_stub);
EMBER_DEFINE_KERNEL(fft_c2r_stub);

namespace cpu {
namespace {

// Note [FFT layout]
// Every transform runs on "column blocks": bw transforms side by side in a [rows][bw] buffer of
// interleaved complex numbers, so a Stockham pass reads and writes runs of l * bw contiguous
// complex numbers and every butterfly is whole vectors, at every pass, for every radix.
// - Many short lines (a batch, the columns of a 2-D array): gather bw lines into a block,
//   transform, scatter (scaled) to the output.
// - One long line (n >= kFourStepMin): the four-step split n = n1 n2: column FFTs of length n1
//   over the [n1][n2] view, twiddles W_n^(i2 k1) with a transposed store, then column FFTs of
//   length n2, which leaves the result in natural order; each step is threaded over its blocks.
// - Lengths with a prime factor above kMaxRadix: Bluestein's chirp-z, a cyclic convolution of
//   a smooth length m >= 2n - 1 done with the two plans above.
// - Real transforms of even length n: a complex transform of length n/2 on (x[2j], x[2j+1])
//   and a pass that splits the even and odd spectra (odd n: a complex transform of length n).
// Twiddles are computed in long double from exact integer exponents, so the error is the
// butterflies' own: about one rounding per pass. Plans (schedules, twiddles, chirps) are cached
// per dtype by (length, direction); threads: Note [FFT threads].

constexpr int64_t kMaxRadix = 31;            // larger prime factors go to Bluestein
constexpr int64_t kColMax = 65536;           // longest length run as one column block
constexpr int64_t kFourStepMin = 4096;       // single lines at least this long use the four-step
constexpr int64_t kBlockBytes = 128 * 1024;  // target bytes of one column block buffer
constexpr int64_t kMaxBlock = 128;           // widest column block

using ld = long double;

// ---- the running capability's kernels -------------------------------------------------------

const FftKernels& fft_kernels() {
  static const FftKernels k = [] {
    FftKernels r;
    const std::string_view cap = cpu_capability();
    if (cap == "avx512")
      cap_avx512::register_fft_kernels(r);
    else if (cap == "avx2")
      cap_avx2::register_fft_kernels(r);
    else
      cap_default::register_fft_kernels(r);
    return r;
  }();
  return k;
}

template <class T>
const FftKernelsT<T>& kern();
template <>
const FftKernelsT<float>& kern<float>() {
  return fft_kernels().f;
}
template <>
const FftKernelsT<double>& kern<double>() {
  return fft_kernels().d;
}

// ---- roots of unity ---------------------------------------------------------------------------

/// exp(sign 2 pi i j / n) for any integer j, in long double: a table of the low bits of j times
/// one of the high bits, so building it costs O(sqrt n) sines.
class Roots {
 public:
  Roots(int64_t n, bool forward) : n_(n) {
    const int64_t b = std::max<int64_t>(1, int64_t(std::sqrt(double(n))));
    b_ = b;
    const ld sign = forward ? -1.0L : 1.0L;
    const ld two_pi = 6.283185307179586476925286766559005768L;
    lo_.resize(size_t(b));
    for (int64_t j = 0; j < b; ++j) lo_[size_t(j)] = exact(j, sign, two_pi);
    hi_.resize(size_t(n / b + 1));
    for (int64_t j = 0; j * b < n + b; ++j)
      if (size_t(j) < hi_.size()) hi_[size_t(j)] = exact(j * b, sign, two_pi);
  }
  /// W^j as (re, im).
  std::pair<ld, ld> operator()(int64_t j) const {
    j %= n_;
    if (j < 0) j += n_;
    const auto& a = hi_[size_t(j / b_)];
    const auto& c = lo_[size_t(j % b_)];
    return {a.first * c.first - a.second * c.second, a.first * c.second + a.second * c.first};
  }

 private:
  std::pair<ld, ld> exact(int64_t j, ld sign, ld two_pi) const {
    j %= n_;
    const ld a = two_pi * ld(j) / ld(n_);
    return {std::cos(a), sign * std::sin(a)};
  }
  int64_t n_, b_;
  std::vector<std::pair<ld, ld>> lo_, hi_;
};

// ---- plans ------------------------------------------------------------------------------------

/// The largest prime factor of n (n >= 1).
int64_t largest_prime(int64_t n) {
  int64_t best = 1;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      best = p;
      n /= p;
    }
  return n > 1 ? std::max(best, n) : best;
}

/// The smallest 2^a 3^b 5^c >= n.
int64_t smooth_at_least(int64_t n) {
  int64_t best = int64_t(1) << 62;
  for (int64_t p5 = 1; p5 < best; p5 *= 5)
    for (int64_t p35 = p5; p35 < best; p35 *= 3) {
      int64_t v = p35;
      while (v < n) v *= 2;
      best = std::min(best, v);
    }
  return best;
}

/// The radices of n in pass order: 8s and 4s for the powers of two, then 3, 5 and odd primes.
std::vector<int> radices(int64_t n) {
  std::vector<int> r;
  int twos = 0;
  while (n % 2 == 0) {
    n /= 2;
    ++twos;
  }
  if (twos == 1)
    r.push_back(2);
  else if (twos % 3 == 1) {
    for (int i = 0; i < (twos - 4) / 3; ++i) r.push_back(8);
    r.push_back(4);
    r.push_back(4);
  } else {
    for (int i = 0; i < twos / 3; ++i) r.push_back(8);
    if (twos % 3 == 2) r.push_back(4);
  }
  for (int p = 3; n > 1; p += 2)
    while (n % p == 0) {
      r.push_back(p);
      n /= p;
    }
  return r;
}

template <class T>
ColPlan<T> make_col(int64_t n, bool forward) {
  ColPlan<T> c;
  c.n = n;
  c.forward = forward;
  const Roots w(n, forward);
  int64_t l = 1;
  for (int R : radices(n)) {
    FftStage s;
    s.radix = R;
    s.l = l;
    s.m = n / (l * R);
    s.tw = c.tw.size();
    // Pass twiddles W_{n/l}^{pk} = W_n^{l p k}.
    for (int64_t p = 0; p < s.m; ++p)
      for (int k = 1; k < R; ++k) {
        auto [re, im] = w(l * p * k);
        c.tw.push_back(T(re));
        c.tw.push_back(T(im));
      }
    if (R != 2 && R != 3 && R != 4 && R != 5 && R != 8) {
      s.roots = c.tw.size();
      for (int k = 0; k < R; ++k) {
        auto [re, im] = w(k * (n / R));
        c.tw.push_back(T(re));
        c.tw.push_back(T(im));
      }
    }
    c.stages.push_back(s);
    l *= R;
  }
  return c;
}

template <class T>
struct Plan {
  int64_t n = 1;
  bool forward = true;
  bool has_col = false;  // a Stockham schedule of n (smooth n)
  ColPlan<T> col;
  // Four-step split n = n1 n2 (smooth n >= kFourStepMin), its first step in blocks of bw4
  // columns. The twiddle W_n^(k1 i2), i2 = b bw4 + j, is tw4a[b][k1] tw4b[k1][j]: two tables
  // of n / bw4 and n1 bw4 entries instead of one of n.
  int64_t n1 = 0, n2 = 0, bw4 = 0;
  std::shared_ptr<const Plan> p1, p2;
  std::vector<T> tw4a, tw4b;
  // Bluestein (n with a prime factor > kMaxRadix): chirp[k] = W_2n^(k^2), bhat = FFT_m(conj
  // chirp, wrapped) / m.
  int64_t m = 0;
  std::shared_ptr<const Plan> pmf, pmb;
  std::vector<T> chirp, bhat;

  bool bluestein() const { return m > 0; }
  bool four_step() const { return n1 > 0; }
  /// Rows of a column block that runs this plan.
  int64_t rows() const { return bluestein() ? m : n; }
  /// Whether a column block can run it (and how big the block would be).
  bool columnable() const { return bluestein() ? pmf->has_col : has_col; }
};

template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, bool forward);

template <class T>
T* single(const Plan<T>& p, T* a, T* b, double scale);

template <class T>
int64_t block_width(int64_t rows, int64_t lines);

template <class T>
std::shared_ptr<const Plan<T>> build_plan(int64_t n, bool forward) {
  auto p = std::make_shared<Plan<T>>();
  p->n = n;
  p->forward = forward;
  if (largest_prime(n) > kMaxRadix) {
    const int64_t m = smooth_at_least(2 * n - 1);
    p->m = m;
    p->pmf = get_plan<T>(m, true);
    p->pmb = get_plan<T>(m, false);
    const Roots w(2 * n, forward);
    p->chirp.resize(size_t(2 * n));
    std::vector<ld> b(size_t(2 * m), 0.0L);
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n without overflow.
      const int64_t e =
          int64_t((unsigned __int128)(k) * (unsigned __int128)(k) % (unsigned __int128)(2 * n));
      auto [re, im] = w(e);
      p->chirp[size_t(2 * k)] = T(re);
      p->chirp[size_t(2 * k + 1)] = T(im);
      // b[d] = conj(chirp[d]) for |d| < n, indices mod m.
      b[size_t(2 * k)] = re;
      b[size_t(2 * k + 1)] = -im;
      if (k > 0) {
        b[size_t(2 * (m - k))] = re;
        b[size_t(2 * (m - k) + 1)] = -im;
      }
    }
    // bhat = FFT_m(b) / m, computed in double (or long double's rounding to it) by our plans.
    std::vector<T> x(size_t(2 * m)), y(size_t(2 * m));
    for (size_t i = 0; i < x.size(); ++i) x[i] = T(b[i]);
    T* r = single<T>(*p->pmf, x.data(), y.data(), 1.0 / double(m));
    p->bhat.assign(r, r + 2 * m);
    return p;
  }
  if (n <= kColMax || n < kFourStepMin) {
    p->has_col = true;
    p->col = make_col<T>(n, forward);
  }
  if (n >= kFourStepMin) {
    // n1 = the divisor of n closest to sqrt(n) from below.
    int64_t n1 = int64_t(std::sqrt(double(n)));
    while (n1 > 1 && n % n1 != 0) --n1;
    if (n1 > 1 && n / n1 <= kColMax) {
      p->n1 = n1;
      p->n2 = n / n1;
      p->p1 = get_plan<T>(p->n1, forward);
      p->p2 = get_plan<T>(p->n2, forward);
      const Roots w(n, forward);
      const int64_t bw = block_width<T>(p->n1, p->n2), nb = (p->n2 + bw - 1) / bw;
      p->bw4 = bw;
      p->tw4a.resize(size_t(2 * nb * p->n1));
      p->tw4b.resize(size_t(2 * p->n1 * bw));
      for (int64_t k1 = 0; k1 < p->n1; ++k1) {
        for (int64_t b = 0; b < nb; ++b) {
          auto [re, im] = w(k1 * b * bw);
          p->tw4a[size_t(2 * (b * p->n1 + k1))] = T(re);
          p->tw4a[size_t(2 * (b * p->n1 + k1) + 1)] = T(im);
        }
        for (int64_t j = 0; j < bw; ++j) {
          auto [re, im] = w(k1 * j);
          p->tw4b[size_t(2 * (k1 * bw + j))] = T(re);
          p->tw4b[size_t(2 * (k1 * bw + j) + 1)] = T(im);
        }
      }
    } else if (!p->has_col) {
      p->has_col = true;
      p->col = make_col<T>(n, forward);
    }
  }
  return p;
}

/// Plans are cached by (length, direction) per dtype; a full cache is emptied (plans in use
/// stay alive through their shared pointers).
template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, bool forward) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, bool>, std::shared_ptr<const Plan<T>>> cache;
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find({n, forward});
    if (it != cache.end()) return it->second;
  }
  // Built outside the lock: building may ask for the sub-plans it needs.
  auto p = build_plan<T>(n, forward);
  std::lock_guard<std::mutex> g(mu);
  if (cache.size() >= 128) cache.clear();
  return cache.emplace(std::make_pair(n, forward), p).first->second;
}

/// Twiddles of the real passes: W_n^k, k <= n / 2, of the given direction.
template <class T>
std::shared_ptr<const std::vector<T>> get_real_twiddles(int64_t n, bool forward) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, bool>, std::shared_ptr<const std::vector<T>>> cache;
  std::lock_guard<std::mutex> g(mu);
  auto it = cache.find({n, forward});
  if (it != cache.end()) return it->second;
  auto v = std::make_shared<std::vector<T>>(size_t(2 * (n / 2 + 1)));
  const Roots w(n, forward);
  for (int64_t k = 0; k <= n / 2; ++k) {
    auto [re, im] = w(k);
    (*v)[size_t(2 * k)] = T(re);
    (*v)[size_t(2 * k + 1)] = T(im);
  }
  if (cache.size() >= 128) cache.clear();
  return cache.emplace(std::make_pair(n, forward), v).first->second;
}

// ---- scratch ----------------------------------------------------------------------------------

/// Per-thread, 64-byte aligned buffers that only grow; `slot` keeps the nested users apart
/// (0: column blocks, 1: a long line's buffers, 2: a short single line).
struct ScratchBuf {
  void* p = nullptr;
  size_t bytes = 0;
  ~ScratchBuf() { std::free(p); }
};
thread_local ScratchBuf t_scratch[3];

template <class T>
T* scratch(int slot, size_t count) {
  ScratchBuf& b = t_scratch[slot];
  const size_t need = (count * sizeof(T) + 63) / 64 * 64;
  if (b.bytes < need) {
    std::free(b.p);
    b.p = nullptr;
    b.bytes = 0;
    b.p = std::aligned_alloc(64, need);
    EMBER_CHECK(b.p != nullptr, "[fft] out of memory allocating ", need, " bytes of scratch");
    b.bytes = need;
  }
  return static_cast<T*>(b.p);
}

/// Frees this thread's buffer of `slot` above 128 MiB, so that one huge transform does not keep
/// its working memory for the life of the thread (smaller ones stay: fresh pages cost more than
/// the transform of a 2^20 prime).
void trim_scratch(int slot) {
  ScratchBuf& b = t_scratch[slot];
  if (b.bytes > (size_t(128) << 20)) {
    std::free(b.p);
    b.p = nullptr;
    b.bytes = 0;
  }
}

// ---- threads ---------------------------------------------------------------------------------

// Note [FFT threads]
// The engine's loops hand out chunks (column blocks, lines) one at a time from an atomic
// counter to the calling thread and up to get_num_threads() - 1 helpers. The caller never
// waits for a helper that has not started: it claims every chunk left and then waits only for
// the chunks in flight. An OpenMP team joins all its threads at the end of a region, and on a
// machine whose cores are busy elsewhere a helper woken late (or a spinning one) held each
// region for a scheduler slice, which made 2 threads slower than 1. Helpers sleep on a
// condition variable; which thread runs a chunk never changes its result.

thread_local bool t_in_pool = false;

class Pool {
 public:
  static Pool& get() {
    static Pool* p = new Pool;  // never destroyed: helpers may still sleep at exit
    return *p;
  }

  /// Runs f(c) for every c < chunks on up to `nt` threads, the caller included.
  template <class F>
  void run(int nt, int64_t chunks, const F& f) {
    std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
    if (!busy.owns_lock()) {
      // Another thread's transform holds the helpers: run this one on the caller alone.
      for (int64_t c = 0; c < chunks; ++c) f(c);
      return;
    }
    auto job = std::make_shared<Job>();
    job->chunks = chunks;
    job->want = nt - 1;
    job->ctx = &f;
    job->call = [](const void* ctx, int64_t c) { (*static_cast<const F*>(ctx))(c); };
    {
      std::lock_guard<std::mutex> g(mu_);
      for (; helpers_ < nt - 1; ++helpers_) std::thread([this] { loop(); }).detach();
      job_ = job;
      ++gen_;
    }
    cv_.notify_all();
    work(*job);
    {
      std::unique_lock<std::mutex> lk(mu_);
      done_cv_.wait(lk, [&] { return job->done.load() == chunks; });
      job_.reset();
    }
    if (job->err) std::rethrow_exception(job->err);
  }

 private:
  struct Job {
    std::atomic<int64_t> next{0}, done{0};
    std::atomic<int> joined{0};
    int64_t chunks = 0;
    int want = 0;
    const void* ctx = nullptr;
    void (*call)(const void*, int64_t) = nullptr;
    std::mutex err_mu;
    std::exception_ptr err;
  };

  void work(Job& j) {
    const bool outer = t_in_pool;
    t_in_pool = true;
    for (int64_t c; (c = j.next.fetch_add(1)) < j.chunks;) {
      try {
        j.call(j.ctx, c);
      } catch (...) {
        std::lock_guard<std::mutex> g(j.err_mu);
        if (!j.err) j.err = std::current_exception();
      }
      if (j.done.fetch_add(1) + 1 == j.chunks) {
        std::lock_guard<std::mutex> g(mu_);
        done_cv_.notify_all();
      }
    }
    t_in_pool = outer;
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> j;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return gen_ != seen; });
        seen = gen_;
        j = job_;
      }
      // A job wants at most nt - 1 helpers; a late helper finds its chunks taken.
      if (j && j->joined.fetch_add(1) < j->want) work(*j);
    }
  }

  std::mutex run_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  std::shared_ptr<Job> job_;
  uint64_t gen_ = 0;
  int helpers_ = 0;
};

/// Runs f(b0, b1) over [begin, end) in chunks of `grain` (Note [FFT threads]); inline with one
/// thread, one chunk, or inside another parallel loop.
template <class F>
void dynamic_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int64_t chunks = (n + grain - 1) / grain;
  const int nt = int(std::min<int64_t>(detail::g_num_threads, chunks));
  if (nt <= 1 || t_in_pool || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  Pool::get().run(nt, chunks,
                  [&](int64_t c) { f(begin + c * grain, std::min(end, begin + (c + 1) * grain)); });
}

// ---- transforms of contiguous buffers ---------------------------------------------------------

/// Block width (complex columns) for a column block of `rows` rows.
template <class T>
int64_t block_width(int64_t rows, int64_t lines) {
  const int64_t lanes = kern<T>().lanes;
  // Whole cache lines per row where the block is wide enough.
  const int64_t unit = std::max<int64_t>(lanes, 64 / (2 * int64_t(sizeof(T))));
  int64_t bw = kBlockBytes / (rows * 2 * int64_t(sizeof(T)));
  bw = bw >= unit ? bw / unit * unit : std::max<int64_t>(lanes, bw / lanes * lanes);
  bw = std::min<int64_t>(bw, kMaxBlock);
  const int64_t need = (lines + lanes - 1) / lanes * lanes;
  return std::min(bw, need);
}

/// Runs a columnable plan over the block x [rows][bw] (y: a second buffer as large); the
/// result is in the returned buffer. Bluestein plans expect the input in rows [0, n).
template <class T>
T* run_block(const Plan<T>& p, T* x, T* y, int64_t bw) {
  const FftKernelsT<T>& k = kern<T>();
  if (!p.bluestein()) return k.col(p.col, x, y, bw);
  const int64_t n = p.n, m = p.m;
  k.mul_rows(x, p.chirp.data(), n, bw);
  std::memset(x + 2 * n * bw, 0, size_t(2 * (m - n) * bw) * sizeof(T));
  T* r = k.col(p.pmf->col, x, y, bw);
  k.mul_rows(r, p.bhat.data(), m, bw);
  T* o = r == x ? y : x;
  r = k.col(p.pmb->col, r, o, bw);
  k.mul_rows(r, p.chirp.data(), n, bw);
  return r;
}

/// Four-step transform of the contiguous src [n] into dst [n] (distinct; src is not changed),
/// every output multiplied by `scale`.
template <class T>
void four_step(const Plan<T>& p, const T* src, T* dst, double scale) {
  const int64_t n1 = p.n1, n2 = p.n2;
  const Plan<T>& p1 = *p.p1;
  const Plan<T>& p2 = *p.p2;
  const FftKernelsT<T>& k = kern<T>();
  // Step 1: column FFTs of length n1 over n2 columns, twiddle, transposed store into dst.
  {
    const int64_t bw = p.bw4;
    const int64_t nb = (n2 + bw - 1) / bw;
    dynamic_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
      T* x = scratch<T>(0, size_t(4 * n1 * bw));
      T* y = x + 2 * n1 * bw;
      const T* lines[kMaxBlock];
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t c0 = b * bw, jn = std::min(bw, n2 - c0);
        for (int64_t j = 0; j < jn; ++j) lines[j] = src + 2 * (c0 + j);
        k.gather(x, bw, lines, jn, n1, 2 * n2, false);
        T* r = k.col(p1.col, x, y, bw);
        k.twiddle_transpose(r, bw, p.tw4a.data() + 2 * b * n1, p.tw4b.data(), dst, n1, c0, jn);
      }
    });
  }
  // Step 2: column FFTs of length n2 over the n1 columns of dst [n2][n1], in place.
  {
    const int64_t bw = block_width<T>(n2, n1);
    const int64_t nb = (n1 + bw - 1) / bw;
    dynamic_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
      T* x = scratch<T>(0, size_t(4 * n2 * bw));
      T* y = x + 2 * n2 * bw;
      T* lines[kMaxBlock];
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t c0 = b * bw, jn = std::min(bw, n1 - c0);
        for (int64_t j = 0; j < jn; ++j) lines[j] = dst + 2 * (c0 + j);
        k.gather(x, bw, lines, jn, n2, 2 * n1, false);
        T* r = k.col(p2.col, x, y, bw);
        k.scatter(r, bw, lines, jn, n2, 2 * n1, T(scale));
      }
    });
  }
}

/// One transform of the contiguous buffer a [rows] (clobbered), b as large: returns the buffer
/// holding the n outputs, multiplied by `scale`.
template <class T>
T* single(const Plan<T>& p, T* a, T* b, double scale) {
  const int64_t n = p.n;
  if (p.four_step()) {
    four_step(p, a, b, scale);
    return b;
  }
  if (p.bluestein()) {
    const Plan<T>& f = *p.pmf;
    const int64_t m = p.m;
    for (int64_t i = 0; i < n; ++i) {
      const T xr = a[2 * i], xi = a[2 * i + 1], wr = p.chirp[size_t(2 * i)],
              wi = p.chirp[size_t(2 * i + 1)];
      a[2 * i] = xr * wr - xi * wi;
      a[2 * i + 1] = xr * wi + xi * wr;
    }
    std::fill(a + 2 * n, a + 2 * m, T(0));
    T* r = single(f, a, b, 1.0);
    for (int64_t i = 0; i < m; ++i) {
      const T xr = r[2 * i], xi = r[2 * i + 1], wr = p.bhat[size_t(2 * i)],
              wi = p.bhat[size_t(2 * i + 1)];
      r[2 * i] = xr * wr - xi * wi;
      r[2 * i + 1] = xr * wi + xi * wr;
    }
    T* o = r == a ? b : a;
    r = single(*p.pmb, r, o, 1.0);
    const T s = T(scale);
    for (int64_t i = 0; i < n; ++i) {
      const T xr = r[2 * i], xi = r[2 * i + 1], wr = p.chirp[size_t(2 * i)],
              wi = p.chirp[size_t(2 * i + 1)];
      r[2 * i] = (xr * wr - xi * wi) * s;
      r[2 * i + 1] = (xr * wi + xi * wr) * s;
    }
    return r;
  }
  // A short length: one column of a block of the vector width.
  const int64_t lanes = kern<T>().lanes;
  T* x = scratch<T>(2, size_t(4 * n * lanes));
  T* y = x + 2 * n * lanes;
  std::memset(x, 0, size_t(2 * n * lanes) * sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    x[2 * i * lanes] = a[2 * i];
    x[2 * i * lanes + 1] = a[2 * i + 1];
  }
  T* r = kern<T>().col(p.col, x, y, lanes);
  const T s = T(scale);
  for (int64_t i = 0; i < n; ++i) {
    b[2 * i] = r[2 * i * lanes] * s;
    b[2 * i + 1] = r[2 * i * lanes + 1] * s;
  }
  return b;
}

// ---- lines of a tensor ------------------------------------------------------------------------

/// The 1-D lines of one pass: `count` lines, line j starting at in/out offsets from off(j),
/// elements `is` / `os` apart (strides in elements of the input/output dtype).
struct Lines {
  int64_t count = 1;
  int64_t is = 1, os = 1;
  std::vector<int64_t> sizes, istr, ostr;  // the batch dims, last fastest
  void off(int64_t j, int64_t& io, int64_t& oo) const {
    io = 0;
    oo = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      const int64_t q = j / sizes[d], r = j - q * sizes[d];
      io += r * istr[d];
      oo += r * ostr[d];
      j = q;
    }
  }
};

Lines make_lines(IntArrayRef shape, IntArrayRef istr, IntArrayRef ostr, int64_t dim) {
  Lines L;
  L.is = istr[size_t(dim)];
  L.os = ostr[size_t(dim)];
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d == dim) continue;
    L.sizes.push_back(shape[size_t(d)]);
    L.istr.push_back(istr[size_t(d)]);
    L.ostr.push_back(ostr[size_t(d)]);
    L.count *= shape[size_t(d)];
  }
  return L;
}

enum class Kind { C2C, R2C, C2R };

/// One pass of a transform along one dim. For C2C `n` is the length, for R2C / C2R the real
/// length; `nin` the input's length along the dim (C2R: normally n / 2 + 1).
template <class T>
struct Pass {
  Kind kind;
  int64_t n, nin;
  bool forward;
  bool conj_in;
  const T* in;  // T units: complex inputs are interleaved pairs
  T* out;
  Lines L;
  double scale;
};

template <class T>
inline void cmul_to(T& re, T& im, T ar, T ai, T br, T bi) {
  re = ar * br - ai * bi;
  im = ar * bi + ai * br;
}

/// R2C split of the even-length spectrum: from Z [h] (column j of a [h][bw] block, or a
/// contiguous line with bw = 1) to X[k], k <= h, written by put(k, re, im).
template <class T, class Put>
inline void r2c_split(const T* z, int64_t bw, int64_t h, const T* w, const Put& put) {
  for (int64_t k = 0; k <= h / 2; ++k) {
    const int64_t kc = k == 0 ? 0 : h - k;
    const T ar = z[2 * k * bw], ai = z[2 * k * bw + 1];
    const T br = z[2 * kc * bw], bi = -z[2 * kc * bw + 1];  // conj(Z[h - k])
    // E = (A + B) / 2, O = -i (A - B) / 2, X[k] = E + w_k O; X[h-k] from the mirrored pair.
    const T er = (ar + br) * T(0.5), ei = (ai + bi) * T(0.5);
    const T orr = (ai - bi) * T(0.5), oi = (br - ar) * T(0.5);
    if (k == 0) {
      put(0, er + orr, T(0));
      put(h, er - orr, T(0));
      continue;
    }
    T tr, ti;
    cmul_to(tr, ti, orr, oi, w[2 * k], w[2 * k + 1]);
    put(k, er + tr, ei + ti);
    if (kc != k) {
      // For h - k the pair swaps into (conj B, conj A): X[h-k] = conj(E) + w_{h-k} conj(O).
      T ur, ui;
      cmul_to(ur, ui, orr, -oi, w[2 * kc], w[2 * kc + 1]);
      put(kc, er + ur, -ei + ui);
    }
  }
}

/// C2R merge for even n: from X[k], k <= h, read by get(k, re, im), to Z [h] in column j of a
/// block (bw stride) whose inverse transform holds (x[2j], x[2j+1]).
template <class T, class Get>
inline void c2r_merge(T* z, int64_t bw, int64_t h, const T* w, const Get& get) {
  T x0r, x0i, xhr, xhi;
  get(0, x0r, x0i);
  get(h, xhr, xhi);
  z[0] = x0r + xhr;
  z[1] = x0r - xhr;
  for (int64_t k = 1; k < h; ++k) {
    T ar, ai, br, bi;
    get(k, ar, ai);
    get(h - k, br, bi);
    bi = -bi;  // conj(X[h - k])
    const T er = ar + br, ei = ai + bi;
    T orr, oi;
    cmul_to(orr, oi, ar - br, ai - bi, w[2 * k], w[2 * k + 1]);
    // Z = E + i O.
    z[2 * k * bw] = er - oi;
    z[2 * k * bw + 1] = ei + orr;
  }
}

/// Runs a pass by column blocks of bw lines.
template <class T>
void run_blocks(const Pass<T>& ps, const Plan<T>& p, const std::vector<T>* rtw) {
  const Lines& L = ps.L;
  const int64_t rows = p.rows();
  const int64_t n = ps.n, h = n / 2;
  const bool even_real = ps.kind != Kind::C2C && n % 2 == 0;
  // Gathered rows of input (C2R even: h + 1 raw rows before the merge).
  const int64_t in_rows = ps.kind == Kind::C2R && even_real ? h + 1 : rows;
  const int64_t bw = block_width<T>(std::max(rows, in_rows), L.count);
  const int64_t nb = (L.count + bw - 1) / bw;
  const int64_t work = rows * bw * 8;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work));
  const T s = T(ps.scale);
  const FftKernelsT<T>& k = kern<T>();
  dynamic_for(0, nb, grain, [&](int64_t b0, int64_t b1) {
    const size_t buf = size_t(2 * std::max(rows, in_rows) * bw);
    T* x = scratch<T>(0, 3 * buf);
    T* y = x + buf;
    T* g = y + buf;
    int64_t io[kMaxBlock], oo[kMaxBlock];
    const T* src[kMaxBlock];
    T* dst[kMaxBlock];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t j0 = b * bw, jn = std::min(bw, L.count - j0);
      for (int64_t j = 0; j < jn; ++j) L.off(j0 + j, io[j], oo[j]);
      // Gather.
      if (ps.kind == Kind::C2C) {
        const int64_t nr = std::min(n, ps.nin);
        for (int64_t j = 0; j < jn; ++j) src[j] = ps.in + 2 * io[j];
        k.gather(x, bw, src, jn, nr, 2 * L.is, ps.conj_in);
        if (nr < n) std::memset(x + 2 * nr * bw, 0, size_t(2 * (n - nr) * bw) * sizeof(T));
      } else if (ps.kind == Kind::R2C) {
        if (even_real && L.is == 1) {
          for (int64_t j = 0; j < jn; ++j) src[j] = ps.in + io[j];
          k.gather(x, bw, src, jn, h, 2, false);
        } else if (even_real) {
          std::memset(x, 0, buf * sizeof(T));
          for (int64_t i = 0; i < h; ++i) {
            T* row = x + 2 * i * bw;
            for (int64_t j = 0; j < jn; ++j) {
              row[2 * j] = ps.in[io[j] + 2 * i * L.is];
              row[2 * j + 1] = ps.in[io[j] + (2 * i + 1) * L.is];
            }
          }
        } else {
          std::memset(x, 0, buf * sizeof(T));
          for (int64_t i = 0; i < n; ++i) {
            T* row = x + 2 * i * bw;
            for (int64_t j = 0; j < jn; ++j) row[2 * j] = ps.in[io[j] + i * L.is];
          }
        }
      } else {
        // C2R: raw rows X[k], k <= h, into g (zero beyond the input's length).
        const int64_t kr = std::min(h + 1, ps.nin);
        for (int64_t j = 0; j < jn; ++j) src[j] = ps.in + 2 * io[j];
        k.gather(g, bw, src, jn, kr, 2 * L.is, ps.conj_in);
        if (kr < h + 1) std::memset(g + 2 * kr * bw, 0, size_t(2 * (h + 1 - kr) * bw) * sizeof(T));
        if (!even_real) std::memset(x, 0, buf * sizeof(T));
        if (even_real) {
          for (int64_t j = 0; j < jn; ++j)
            c2r_merge<T>(x + 2 * j, bw, h, rtw->data(), [&](int64_t q, T& re, T& im) {
              re = g[2 * (q * bw + j)];
              im = g[2 * (q * bw + j) + 1];
            });
          if (jn < bw)
            for (int64_t i = 0; i < h; ++i)
              std::memset(x + 2 * (i * bw + jn), 0, size_t(2 * (bw - jn)) * sizeof(T));
        } else {
          // The Hermitian extension; X[0]'s imaginary part is ignored.
          for (int64_t j = 0; j < jn; ++j) {
            x[2 * j] = g[2 * j];
            for (int64_t q = 1; q <= h; ++q) {
              const T re = g[2 * (q * bw + j)], im = g[2 * (q * bw + j) + 1];
              x[2 * (q * bw + j)] = re;
              x[2 * (q * bw + j) + 1] = im;
              x[2 * ((n - q) * bw + j)] = re;
              x[2 * ((n - q) * bw + j) + 1] = -im;
            }
          }
        }
      }
      T* r = run_block(p, x, y, bw);
      // Scatter.
      if (ps.kind == Kind::C2C) {
        for (int64_t j = 0; j < jn; ++j) dst[j] = ps.out + 2 * oo[j];
        k.scatter(r, bw, dst, jn, n, 2 * L.os, s);
      } else if (ps.kind == Kind::R2C) {
        if (even_real) {
          for (int64_t j = 0; j < jn; ++j) {
            T* o = ps.out + 2 * oo[j];
            r2c_split<T>(r + 2 * j, bw, h, rtw->data(), [&](int64_t q, T re, T im) {
              o[2 * q * L.os] = re * s;
              o[2 * q * L.os + 1] = im * s;
            });
          }
        } else {
          for (int64_t i = 0; i <= h; ++i) {
            const T* row = r + 2 * i * bw;
            for (int64_t j = 0; j < jn; ++j) {
              T* e = ps.out + 2 * (oo[j] + i * L.os);
              e[0] = row[2 * j] * s;
              e[1] = row[2 * j + 1] * s;
            }
          }
        }
      } else {
        if (even_real && L.os == 1) {
          for (int64_t j = 0; j < jn; ++j) dst[j] = ps.out + oo[j];
          k.scatter(r, bw, dst, jn, h, 2, s);
        } else if (even_real) {
          for (int64_t i = 0; i < h; ++i) {
            const T* row = r + 2 * i * bw;
            for (int64_t j = 0; j < jn; ++j) {
              ps.out[oo[j] + 2 * i * L.os] = row[2 * j] * s;
              ps.out[oo[j] + (2 * i + 1) * L.os] = row[2 * j + 1] * s;
            }
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            const T* row = r + 2 * i * bw;
            for (int64_t j = 0; j < jn; ++j) ps.out[oo[j] + i * L.os] = row[2 * j] * s;
          }
        }
      }
    }
  });
}

/// Runs a pass line by line with the single-line transform (long lines).
template <class T>
void run_single(const Pass<T>& ps, const Plan<T>& p, const std::vector<T>* rtw) {
  const Lines& L = ps.L;
  const int64_t n = ps.n, h = n / 2;
  const bool even_real = ps.kind != Kind::C2C && n % 2 == 0;
  const int64_t rows = p.rows();
  const T s = T(ps.scale);
  const T cs = ps.conj_in ? T(-1) : T(1);
  dynamic_for(0, L.count, 1, [&](int64_t j0, int64_t j1) {
    T* a = scratch<T>(1, size_t(4 * rows));
    struct Trim {
      ~Trim() { trim_scratch(1); }
    } trim;
    T* b = a + 2 * rows;
    for (int64_t j = j0; j < j1; ++j) {
      int64_t io, oo;
      L.off(j, io, oo);
      if (ps.kind == Kind::C2C) {
        const T* src = ps.in + 2 * io;
        T* dst = ps.out + 2 * oo;
        if (p.four_step() && L.is == 1 && L.os == 1 && !ps.conj_in && ps.nin == n && src != dst) {
          four_step(p, src, dst, ps.scale);
          continue;
        }
        const int64_t nr = std::min(n, ps.nin);
        for (int64_t i = 0; i < nr; ++i) {
          a[2 * i] = src[2 * i * L.is];
          a[2 * i + 1] = cs * src[2 * i * L.is + 1];
        }
        std::fill(a + 2 * nr, a + 2 * n, T(0));
        const T* r = single(p, a, b, ps.scale);
        for (int64_t i = 0; i < n; ++i) {
          dst[2 * i * L.os] = r[2 * i];
          dst[2 * i * L.os + 1] = r[2 * i + 1];
        }
      } else if (ps.kind == Kind::R2C) {
        const T* src = ps.in + io;
        T* dst = ps.out + 2 * oo;
        if (even_real) {
          const T* r;
          if (L.is == 1 && p.four_step()) {
            // The real line read in place as h complex numbers.
            four_step(p, src, b, 1.0);
            r = b;
          } else {
            for (int64_t i = 0; i < 2 * h; ++i) a[i] = src[i * L.is];
            r = single(p, a, b, 1.0);
          }
          if (L.os == 1)
            kern<T>().r2c_post(r, dst, h, rtw->data(), s);
          else
            r2c_split<T>(r, 1, h, rtw->data(), [&](int64_t k, T re, T im) {
              dst[2 * k * L.os] = re * s;
              dst[2 * k * L.os + 1] = im * s;
            });
        } else {
          for (int64_t i = 0; i < n; ++i) {
            a[2 * i] = src[i * L.is];
            a[2 * i + 1] = T(0);
          }
          const T* r = single(p, a, b, ps.scale);
          for (int64_t i = 0; i <= h; ++i) {
            dst[2 * i * L.os] = r[2 * i];
            dst[2 * i * L.os + 1] = r[2 * i + 1];
          }
        }
      } else {
        const T* src = ps.in + 2 * io;
        T* dst = ps.out + oo;
        const int64_t kr = std::min(h + 1, ps.nin);
        auto get = [&](int64_t k, T& re, T& im) {
          if (k < kr) {
            re = src[2 * k * L.is];
            im = cs * src[2 * k * L.is + 1];
          } else {
            re = im = T(0);
          }
        };
        if (even_real) {
          if (L.is == 1 && !ps.conj_in && kr == h + 1)
            kern<T>().c2r_pre(src, a, h, rtw->data());
          else
            c2r_merge<T>(a, 1, h, rtw->data(), get);
          const T* r = single(p, a, b, ps.scale);
          if (L.os == 1)
            std::memcpy(dst, r, size_t(2 * h) * sizeof(T));
          else
            for (int64_t i = 0; i < 2 * h; ++i) dst[i * L.os] = r[i];
        } else {
          T re, im;
          get(0, re, im);
          a[0] = re;
          a[1] = T(0);
          for (int64_t k = 1; k <= h; ++k) {
            get(k, re, im);
            a[2 * k] = re;
            a[2 * k + 1] = im;
            a[2 * (n - k)] = re;
            a[2 * (n - k) + 1] = -im;
          }
          const T* r = single(p, a, b, ps.scale);
          for (int64_t i = 0; i < n; ++i) dst[i * L.os] = r[2 * i];
        }
      }
    }
  });
}

template <class T>
void run_pass(const Pass<T>& ps) {
  if (ps.L.count == 0 || ps.n == 0) return;
  const bool even_real = ps.kind != Kind::C2C && ps.n % 2 == 0;
  const int64_t len = even_real ? ps.n / 2 : ps.n;
  const bool fwd = ps.kind == Kind::C2C ? ps.forward : ps.kind == Kind::R2C;
  auto plan = get_plan<T>(len, fwd);
  std::shared_ptr<const std::vector<T>> rtw;
  if (even_real) rtw = get_real_twiddles<T>(ps.n, fwd);
  const int64_t lanes = kern<T>().lanes;
  // Long lines, or few of them, go one at a time through the four-step (or Bluestein).
  const bool long_line =
      plan->four_step() || (plan->bluestein() && (plan->pmf->four_step() || !plan->columnable()));
  const bool few = ps.L.count < lanes;
  if (long_line && (few || !plan->columnable() || plan->rows() > kColMax / 4))
    run_single(ps, *plan, rtw.get());
  else
    run_blocks(ps, *plan, rtw.get());
}

// ---- the stubs --------------------------------------------------------------------------------

std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    st[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

template <class T>
void c2c_impl(const Tensor& self, Tensor& out, IntArrayRef dims, double scale, bool forward) {
  EMBER_INTERNAL_ASSERT(!dims.empty(), "[fft_c2c] no dims to transform");
  if (out.numel() == 0) return;
  const std::vector<int64_t> shape(out.sizes().begin(), out.sizes().end());
  const std::vector<int64_t> ost(out.strides().begin(), out.strides().end());
  const std::vector<int64_t> ist(self.strides().begin(), self.strides().end());
  T* o = static_cast<T*>(out.data_ptr());
  for (size_t q = dims.size(); q-- > 0;) {
    const int64_t d = dims[q];
    const bool first = q + 1 == dims.size();
    Pass<T> ps{Kind::C2C,
               shape[size_t(d)],
               first ? self.size(d) : shape[size_t(d)],
               forward,
               first && self.is_conj(),
               first ? static_cast<const T*>(self.data_ptr()) : o,
               o,
               make_lines(shape, first ? IntArrayRef(ist) : IntArrayRef(ost), ost, d),
               q == 0 ? scale : 1.0};
    run_pass(ps);
  }
}

template <class T>
void r2c_impl(const Tensor& self, Tensor& out, IntArrayRef dims, double scale) {
  EMBER_INTERNAL_ASSERT(!dims.empty(), "[fft_r2c] no dims to transform");
  if (out.numel() == 0) return;
  const std::vector<int64_t> ishape(self.sizes().begin(), self.sizes().end());
  const std::vector<int64_t> oshape(out.sizes().begin(), out.sizes().end());
  const std::vector<int64_t> ost(out.strides().begin(), out.strides().end());
  const std::vector<int64_t> ist(self.strides().begin(), self.strides().end());
  T* o = static_cast<T*>(out.data_ptr());
  const int64_t dl = dims.back();
  if (ishape[size_t(dl)] == 0) {
    // An empty signal has an all-zero spectrum.
    std::memset(o, 0, size_t(out.numel()) * 2 * sizeof(T));
    return;
  }
  // Lines over the output's batch shape (equal to the input's off the transform dim).
  Pass<T> ps{Kind::R2C,
             ishape[size_t(dl)],
             ishape[size_t(dl)],
             true,
             false,
             static_cast<const T*>(self.data_ptr()),
             o,
             make_lines(oshape, ist, ost, dl),
             dims.size() == 1 ? scale : 1.0};
  run_pass(ps);
  for (size_t q = dims.size() - 1; q-- > 0;) {
    const int64_t d = dims[q];
    Pass<T> pc{Kind::C2C,
               oshape[size_t(d)],
               oshape[size_t(d)],
               true,
               false,
               o,
               o,
               make_lines(oshape, ost, ost, d),
               q == 0 ? scale : 1.0};
    run_pass(pc);
  }
}

template <class T>
void c2r_impl(const Tensor& self, Tensor& out, IntArrayRef dims, double scale) {
  EMBER_INTERNAL_ASSERT(!dims.empty(), "[fft_c2r] no dims to transform");
  if (out.numel() == 0) return;
  const std::vector<int64_t> ishape(self.sizes().begin(), self.sizes().end());
  const std::vector<int64_t> oshape(out.sizes().begin(), out.sizes().end());
  const std::vector<int64_t> ost(out.strides().begin(), out.strides().end());
  std::vector<int64_t> ist(self.strides().begin(), self.strides().end());
  const T* src = static_cast<const T*>(self.data_ptr());
  bool conj = self.is_conj();
  const int64_t dl = dims.back();
  std::vector<T> tmp;
  if (dims.size() > 1) {
    // The other dims first (complex to complex, backward) into a contiguous buffer.
    int64_t numel = 1;
    for (int64_t s : ishape) numel *= s;
    if (numel == 0) return;
    tmp.resize(size_t(2 * numel));
    const std::vector<int64_t> tst = contiguous_strides(ishape);
    for (size_t q = dims.size() - 1; q-- > 0;) {
      const int64_t d = dims[q];
      const bool first = q + 2 == dims.size();
      Pass<T> pc{Kind::C2C,
                 ishape[size_t(d)],
                 ishape[size_t(d)],
                 false,
                 first && conj,
                 first ? src : tmp.data(),
                 tmp.data(),
                 make_lines(ishape, first ? IntArrayRef(ist) : IntArrayRef(tst), tst, d),
                 1.0};
      run_pass(pc);
    }
    src = tmp.data();
    ist = tst;
    conj = false;
  }
  Pass<T> ps{Kind::C2R,
             oshape[size_t(dl)],
             ishape[size_t(dl)],
             false,
             conj,
             src,
             static_cast<T*>(out.data_ptr()),
             make_lines(oshape, ist, ost, dl),
             scale};
  run_pass(ps);
}

void fft_c2c(const Tensor& self, Tensor& out, IntArrayRef dims, double scale, bool forward) {
  if (self.dtype() == kComplexFloat)
    c2c_impl<float>(self, out, dims, scale, forward);
  else if (self.dtype() == kComplexDouble)
    c2c_impl<double>(self, out, dims, scale, forward);
  else
    EMBER_CHECK(false, "[fft_c2c] expected complex64 or complex128, got ", self.dtype());
}

void fft_r2c(const Tensor& self, Tensor& out, IntArrayRef dims, double scale) {
  if (self.dtype() == kFloat)
    r2c_impl<float>(self, out, dims, scale);
  else if (self.dtype() == kDouble)
    r2c_impl<double>(self, out, dims, scale);
  else
    EMBER_CHECK(false, "[fft_r2c] expected float32 or float64, got ", self.dtype());
}

void fft_c2r(const Tensor& self, Tensor& out, IntArrayRef dims, double scale) {
  if (self.dtype() == kComplexFloat)
    c2r_impl<float>(self, out, dims, scale);
  else if (self.dtype() == kComplexDouble)
    c2r_impl<double>(self, out, dims, scale);
  else
    EMBER_CHECK(false, "[fft_c2r] expected complex64 or complex128, got ", self.dtype());
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(fft_c2c_stub, kCPU, cpu::fft_c2c);
EMBER_REGISTER_KERNEL(fft_r2c_stub, kCPU, cpu::fft_r2c);
EMBER_REGISTER_KERNEL(fft_c2r_stub, kCPU, cpu::fft_c2r);

}  // namespace ember
