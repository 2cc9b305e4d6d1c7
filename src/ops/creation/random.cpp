// Random sampling (random.h and the Tensor random fills) on the counter-based Philox stream.
// See Note [Reproducible random streams] in generator.h for how elements map to counters.
#include "ember/random.h"
#include "ops/call_path.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "kernels/stubs/random.h"

namespace ember {

namespace {

Generator pick_generator(const std::optional<Generator>& gen, Device d) {
  return gen ? *gen : default_generator(d);
}

// Runs `fill(contiguous tensor)` for `self`: directly when self is a plain contiguous CPU or
// CUDA tensor (the stub of its device fills it), else into a contiguous temporary on the CPU
// (other devices) or on self's device (strided, conj) that is then copied.
template <class F>
Tensor& fill_random(Tensor& self, const char* op, const F& fill) {
  EMBER_CHECK(self.defined(), "[", op, "] undefined tensor");
  if (self.numel() == 0) return self;
  const bool has_stub = self.is_cpu() || self.is_cuda();
  bool direct = has_stub && self.is_contiguous() && !self.is_conj();
  Tensor buf =
      direct ? self
             : empty_tensor(self.sizes(), self.dtype(), has_stub ? self.device() : Device(kCPU));
  fill(buf);
  if (direct)
    self.unsafeGetTensorImpl()->bump_version();
  else
    self.copy_(buf);
  return self;
}

const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case kBool:
      return "bool";
    case kByte:
      return "unsigned char";
    case kChar:
      return "signed char";
    case kShort:
      return "short";
    case kInt:
      return "int";
    case kLong:
      return "long";
    case kHalf:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kFloat:
      return "float";
    case kDouble:
      return "double";
    default:
      return toString(t);
  }
}

// Largest finite value of a floating dtype.
double float_max(ScalarType t) {
  switch (t) {
    case kHalf:
      return 65504.0;
    case kBFloat16:
      return double(float(std::numeric_limits<BFloat16>::max()));
    case kFloat:
      return double(std::numeric_limits<float>::max());
    default:
      return std::numeric_limits<double>::max();
  }
}

// Integers a floating dtype represents exactly: 2^digits.
int64_t float_digits_max(ScalarType t) {
  switch (t) {
    case kHalf:
      return int64_t(1) << 11;
    case kBFloat16:
      return int64_t(1) << 8;
    case kFloat:
      return int64_t(1) << 24;
    default:
      return int64_t(1) << 53;
  }
}

// [min, max] of an integral dtype (bool: [0, 1]).
template <class T>
std::pair<int64_t, int64_t> bounds_of() {
  return {int64_t(std::numeric_limits<T>::lowest()), int64_t(std::numeric_limits<T>::max())};
}
std::pair<int64_t, int64_t> int_bounds(ScalarType t) {
  switch (t) {
    case kBool:
      return bounds_of<bool>();
    case kByte:
      return bounds_of<uint8_t>();
    case kChar:
      return bounds_of<int8_t>();
    case kShort:
      return bounds_of<int16_t>();
    case kInt:
      return bounds_of<int32_t>();
    case kLong:
      return bounds_of<int64_t>();
    default:
      EMBER_THROW(Error, "[random_] not implemented for dtype ", t);
  }
}

void check_floating_or_complex(ScalarType t, const char* op, const char* kernel) {
  EMBER_CHECK(isFloatingType(t) || isComplexType(t), "[", op, "] \"", kernel,
              "\" not implemented for '", toString(t), "'");
}

// A double copy of `t` (CPU, contiguous) in row-major order.
Tensor as_double(const Tensor& t) { return t.to(Device(kCPU), kDouble).contiguous(); }

}  // namespace

// ---- Tensor random fills ----

Tensor& Tensor::uniform_(double from, double to, std::optional<Generator> gen) {
  EMBER_OP(uniform_, *this, from, to, gen);
  EMBER_CHECK(defined(), "[uniform_] undefined tensor");
  check_floating_or_complex(dtype(), "uniform_", "check_uniform_bounds");
  ScalarType real_t = toRealValueType(dtype());
  double lim = float_max(real_t);
  EMBER_CHECK(from >= -lim && from <= lim, "[uniform_] from is out of bounds for ",
              cpp_type_name(real_t));
  EMBER_CHECK(to >= -lim && to <= lim, "[uniform_] to is out of bounds for ",
              cpp_type_name(real_t));
  EMBER_CHECK(from <= to,
              "[uniform_] uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  EMBER_CHECK(to - from <= lim, "[uniform_] uniform_ expects to-from <= std::numeric_limits<",
              ember::toString(real_t), ">::max(), but found to=", to, " and from=", from,
              " which result in to-from to exceed the limit");
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "uniform_",
                     [&](Tensor& buf) { uniform_stub(buf.device().type(), buf, from, to, g); });
}

Tensor& Tensor::normal_(double mean, double std, std::optional<Generator> gen) {
  EMBER_OP(normal_, *this, mean, std, gen);
  EMBER_CHECK(defined(), "[normal_] undefined tensor");
  check_floating_or_complex(dtype(), "normal_", "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, "[normal_] normal expects std >= 0.0, but found std ", std);
  // Complex: real and imaginary parts each get std / sqrt(2) (PyTorch's convention).
  double s = is_complex() ? std / std::sqrt(2.0) : std;
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "normal_",
                     [&](Tensor& buf) { normal_stub(buf.device().type(), buf, mean, s, g); });
}

Tensor& Tensor::exponential_(double lambd, std::optional<Generator> gen) {
  EMBER_OP(exponential_, *this, lambd, gen);
  EMBER_CHECK(defined(), "[exponential_] undefined tensor");
  EMBER_CHECK(isFloatingType(dtype()), "[exponential_] \"exponential_cpu\" not implemented for '",
              ember::toString(dtype()), "'");
  EMBER_CHECK(lambd >= 0.0,
              "[exponential_] exponential_ expects lambda >= 0.0, but found lambda=", lambd);
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "exponential_",
                     [&](Tensor& buf) { exponential_stub(buf.device().type(), buf, lambd, g); });
}

Tensor& Tensor::bernoulli_(double p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli_, *this, p, gen);
  EMBER_CHECK(defined(), "[bernoulli_] undefined tensor");
  EMBER_CHECK(!is_complex(), "[bernoulli_] \"bernoulli_scalar_cpu_\" not implemented for '",
              ember::toString(dtype()), "'");
  EMBER_CHECK(p >= 0 && p <= 1, "[bernoulli_] bernoulli_ expects p to be in [0, 1], but got p=", p);
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "bernoulli_",
                     [&](Tensor& buf) { bernoulli_scalar_stub(buf.device().type(), buf, p, g); });
}

Tensor& Tensor::bernoulli_(const Tensor& p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli__1, *this, p, gen);
  EMBER_CHECK(defined() && p.defined(), "[bernoulli_] undefined tensor");
  EMBER_CHECK(!is_complex(), "[bernoulli_] \"bernoulli_tensor_cpu_self_\" not implemented for '",
              ember::toString(dtype()), "'");
  EMBER_CHECK(isFloatingType(p.dtype()),
              "[bernoulli_] \"bernoulli_tensor_cpu_p_\" not implemented for '",
              ember::toString(p.dtype()), "'");
  // The probabilities go where the kernel runs: self's device when it has a stub there.
  Tensor pd = is_cuda() ? p.expand(sizes()).to(device(), kDouble).contiguous()
                        : as_double(p.expand(sizes()));
  if (pd.is_alias_of(*this)) pd = pd.clone();  // x.bernoulli_(x): read p before writing
  Generator g = pick_generator(gen, device());
  // The kernel checks that every probability is in [0, 1] before drawing.
  return fill_random(*this, "bernoulli_",
                     [&](Tensor& buf) { bernoulli_tensor_stub(buf.device().type(), buf, pd, g); });
}

Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to, std::optional<Generator> gen) {
  EMBER_OP(random_, *this, from, to, gen);
  EMBER_CHECK(defined(), "[random_] undefined tensor");
  ScalarType dt = dtype();
  EMBER_CHECK(!isComplexType(dt),
              "[random_] check_random_bounds handles only integral, floating-point and boolean "
              "types");
  uint64_t range;
  int64_t hi;  // largest value drawn
  if (to) {
    EMBER_CHECK(from < *to,
                "[random_] random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    range = uint64_t(*to) - uint64_t(from);
    hi = *to - 1;
  } else {
    hi = isFloatingType(dt) ? float_digits_max(dt) : int_bounds(dt).second;
    EMBER_CHECK(from <= hi,
                "[random_] random_ expects 'from' casted to dtype to be less than or equal to "
                "'to_inc' casted to dtype, but got from=",
                from, " > to_inc=", hi);
    range = uint64_t(hi) - uint64_t(from) + 1;  // 0 encodes the full 2^64
  }
  if (!isFloatingType(dt)) {
    auto [lo_b, hi_b] = int_bounds(dt);
    EMBER_CHECK(from >= lo_b && from <= hi_b, "[random_] from is out of bounds for ",
                cpp_type_name(dt));
    EMBER_CHECK(hi >= lo_b && hi <= hi_b, "[random_] to - 1 is out of bounds for ",
                cpp_type_name(dt));
  }
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "random_",
                     [&](Tensor& buf) { random_stub(buf.device().type(), buf, from, range, g); });
}

Tensor Tensor::bernoulli(std::optional<Generator> gen) const {
  return ember::bernoulli(*this, std::move(gen));
}

// ---- random factories ----

namespace {
TensorOptions without_grad(const TensorOptions& opts) { return opts.requires_grad(false); }
Tensor with_grad(Tensor t, const TensorOptions& opts) {
  if (opts.requires_grad()) t.set_requires_grad(true);
  return t;
}
}  // namespace

Tensor rand(IntArrayRef sizes, std::optional<Generator> gen, const TensorOptions& opts) {
  EMBER_OP(rand, sizes, gen, opts);
  check_floating_or_complex(opts.dtype(), "rand", "check_uniform_bounds");
  Tensor t = empty(sizes, without_grad(opts));
  t.uniform_(0, 1, std::move(gen));
  return with_grad(t, opts);
}
Tensor rand(IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(rand_1, sizes, opts);
  return rand(sizes, std::nullopt, opts);
}

Tensor randn(IntArrayRef sizes, std::optional<Generator> gen, const TensorOptions& opts) {
  EMBER_OP(randn, sizes, gen, opts);
  check_floating_or_complex(opts.dtype(), "randn", "normal_kernel_cpu");
  Tensor t = empty(sizes, without_grad(opts));
  t.normal_(0, 1, std::move(gen));
  return with_grad(t, opts);
}
Tensor randn(IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(randn_1, sizes, opts);
  return randn(sizes, std::nullopt, opts);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, std::optional<Generator> gen,
               const TensorOptions& opts) {
  EMBER_OP(randint, low, high, sizes, gen, opts);
  TensorOptions o = without_grad(opts).dtype(opts.has_dtype() ? opts.dtype() : kLong);
  Tensor t = empty(sizes, o);
  t.random_(low, high, std::move(gen));
  return with_grad(t, opts);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(randint_1, low, high, sizes, opts);
  return randint(low, high, sizes, std::nullopt, opts);
}
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(randint_2, high, sizes, opts);
  return randint(0, high, sizes, std::nullopt, opts);
}
Tensor randint(int64_t high, IntArrayRef sizes, std::optional<Generator> gen,
               const TensorOptions& opts) {
  EMBER_OP(randint_3, high, sizes, gen, opts);
  return randint(0, high, sizes, std::move(gen), opts);
}

Tensor randperm(int64_t n, std::optional<Generator> gen, const TensorOptions& opts) {
  EMBER_OP(randperm, n, gen, opts);
  EMBER_CHECK(n >= 0, "[randperm] n must be non-negative, got ", n);
  ScalarType dt = opts.has_dtype() ? opts.dtype() : kLong;
  EMBER_CHECK(dt != kBool && !isComplexType(dt), "[randperm] \"randperm\" not implemented for '",
              ember::toString(dt), "'");
  if (isFloatingType(dt)) {
    EMBER_CHECK(n <= float_digits_max(dt) + 1, "[randperm] n cannot be greater than ",
                float_digits_max(dt) + 1, " for ", ember::toString(dt), " type.");
  } else {
    EMBER_CHECK(n == 0 || n - 1 <= int_bounds(dt).second, "[randperm] n is too large (", n,
                ") for result tensor type: '", ember::toString(dt), "'");
  }
  Device dev = opts.device();
  Generator g = pick_generator(gen, dev);
  Tensor t = empty_tensor({n}, dt, Device(kCPU));
  randperm_stub(t.device().type(), t, g);
  if (!dev.is_cpu()) t = t.to(dev);
  return with_grad(t, opts);
}

Tensor randperm(int64_t n, const TensorOptions& opts) {
  EMBER_OP(randperm_1, n, opts);
  return randperm(n, std::nullopt, opts);
}

Tensor rand_like(const Tensor& t, const TensorOptions& opts) {
  EMBER_OP(rand_like, t, opts);
  Tensor r = empty_like(t, without_grad(opts));
  check_floating_or_complex(r.dtype(), "rand_like", "check_uniform_bounds");
  r.uniform_(0, 1);
  return with_grad(r, opts);
}

Tensor randn_like(const Tensor& t, const TensorOptions& opts) {
  EMBER_OP(randn_like, t, opts);
  Tensor r = empty_like(t, without_grad(opts));
  check_floating_or_complex(r.dtype(), "randn_like", "normal_kernel_cpu");
  r.normal_(0, 1);
  return with_grad(r, opts);
}

Tensor bernoulli(const Tensor& p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli, p, gen);
  EMBER_CHECK(p.defined(), "[bernoulli] undefined tensor");
  EMBER_CHECK(isFloatingType(p.dtype()),
              "[bernoulli] \"bernoulli_tensor_cpu_p_\" not implemented for '",
              ember::toString(p.dtype()), "'");
  Tensor out = empty_like(p);
  out.bernoulli_(p, std::move(gen));
  return out;
}

Tensor bernoulli(const Tensor& x, double p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli_1, x, p, gen);
  EMBER_CHECK(x.defined(), "[bernoulli] undefined tensor");
  Tensor out = empty_like(x);
  out.bernoulli_(p, std::move(gen));
  return out;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement,
                   std::optional<Generator> gen) {
  EMBER_OP(multinomial, probs, num_samples, replacement, gen);
  EMBER_CHECK(probs.defined(), "[multinomial] undefined tensor");
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, "[multinomial] prob_dist must be 1 or 2 dim");
  EMBER_CHECK(isFloatingType(probs.dtype()),
              "[multinomial] multinomial only supports floating-point dtypes for input, got: ",
              toString(probs.dtype()));
  EMBER_CHECK(num_samples > 0, "[multinomial] cannot sample n_sample <= 0 samples");
  int64_t n_cat = probs.size(-1);
  EMBER_CHECK(replacement || num_samples <= n_cat,
              "[multinomial] cannot sample n_sample > prob_dist.size(-1) samples without "
              "replacement");
  EMBER_CHECK(n_cat <= (int64_t(1) << 24), "[multinomial] number of categories cannot exceed 2^24");
  int64_t rows = probs.dim() == 1 ? 1 : probs.size(0);
  Tensor pd = as_double(probs);
  Generator g = pick_generator(gen, probs.device());
  DimVector out_sizes = probs.dim() == 1 ? DimVector{num_samples} : DimVector{rows, num_samples};
  Tensor out = empty_tensor(out_sizes, kLong, Device(kCPU));
  // The kernel checks the probabilities (finite, >= 0, a positive sum per row) before drawing.
  multinomial_stub(out.device().type(), out, pd, num_samples, replacement, g);
  if (!probs.is_cpu()) out = out.to(probs.device());
  return out;
}

Tensor normal(const Tensor& mean, const Tensor& std, std::optional<Generator> gen) {
  EMBER_OP(normal, mean, std, gen);
  EMBER_CHECK(mean.defined() && std.defined(), "[normal] undefined tensor");
  Tensor sd = as_double(std);
  normal_std_check_stub(sd.device().type(), sd);
  DimVector shape = broadcast_shapes(mean.sizes(), std.sizes());
  Tensor out = empty_tensor(shape, mean.dtype(), mean.device());
  out.normal_(0, 1, std::move(gen));
  out.mul_(std).add_(mean);
  return out;
}

Tensor normal(const Tensor& mean, double std, std::optional<Generator> gen) {
  EMBER_OP(normal_1, mean, std, gen);
  EMBER_CHECK(mean.defined(), "[normal] undefined tensor");
  EMBER_CHECK(std >= 0.0, "[normal] normal expects std >= 0.0, but found std ", std);
  Tensor out = empty_like(mean);
  out.normal_(0, std, std::move(gen));
  out.add_(mean);
  return out;
}

Tensor normal(double mean, const Tensor& std, std::optional<Generator> gen) {
  EMBER_OP(normal_2, mean, std, gen);
  EMBER_CHECK(std.defined(), "[normal] undefined tensor");
  Tensor sd = as_double(std);
  normal_std_check_stub(sd.device().type(), sd);
  Tensor out = empty_like(std);
  out.normal_(0, 1, std::move(gen));
  out.mul_(std).add_(Scalar(mean));
  return out;
}

Tensor normal(double mean, double std, IntArrayRef sizes, std::optional<Generator> gen,
              const TensorOptions& opts) {
  EMBER_OP(normal_3, mean, std, sizes, gen, opts);
  Tensor t = empty(sizes, without_grad(opts));
  t.normal_(mean, std, std::move(gen));
  return with_grad(t, opts);
}

}  // namespace ember
