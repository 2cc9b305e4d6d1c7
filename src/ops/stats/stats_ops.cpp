// Covariance and correlation, histograms, set membership, and the trapezoidal rule and
// finite-difference gradient: all made of other ops except the histogram binning kernel.
#include <cmath>
#include <string>

#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"
#include "ember/stats.h"
#include "kernels/stubs/stats.h"
#include "ops/call_path.h"

namespace ember {

// ---- covariance ----

namespace {

/// Checks a weight vector of cov: one or fewer dims, one value per observation, none negative.
void check_cov_weights(const Tensor& w, const char* name, int64_t nobs) {
  EMBER_CHECK(w.dim() <= 1, "[cov] cov(): expected ", name,
              " to have one or fewer dimensions but got ", name, " with ", w.dim(), " dimensions");
  EMBER_CHECK(w.numel() == nobs, "[cov] cov(): expected ", name,
              " to have the same numel as there are observations in the input but got ", w.numel(),
              " != ", nobs);
  EMBER_CHECK(w.numel() == 0 || !(w < 0).any().item().toBool(), "[cov] cov(): ", name,
              " cannot be negative");
}

}  // namespace

Tensor cov(const Tensor& self, int64_t correction, const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  EMBER_OP(cov, self, correction, fweights, aweights);
  EMBER_CHECK(self.dim() <= 2,
              "[cov] cov(): expected input to have two or fewer dimensions but got an input "
              "with ",
              self.dim(), " dimensions");
  EMBER_CHECK(self.dtype() != kBool, "[cov] cov(): bool dtype is not supported for input");
  const Tensor input = self.dim() < 2 ? self.reshape({1, -1}) : self;
  const int64_t nobs = input.size(1);
  Tensor w;
  if (fweights && fweights->defined()) {
    EMBER_CHECK(isIntegralType(fweights->dtype(), false),
                "[cov] cov(): expected fweights to have integral dtype but got fweights with ",
                dtype_name(fweights->dtype()), " dtype");
    check_cov_weights(*fweights, "fweights", nobs);
    w = *fweights;
  }
  Tensor aw;
  if (aweights && aweights->defined()) {
    EMBER_CHECK(aweights->is_floating_point(),
                "[cov] cov(): expected aweights to have floating point dtype but got aweights "
                "with ",
                dtype_name(aweights->dtype()), " dtype");
    check_cov_weights(*aweights, "aweights", nobs);
    aw = *aweights;
    w = w.defined() ? w * aw : aw;
  }
  const Tensor w_sum = w.defined() ? w.sum() : scalar_tensor(nobs, TensorOptions(kLong));
  EMBER_CHECK(!w.defined() || w_sum.ne(0).item().toBool(),
              "[cov] cov(): weights sum to zero, can't be normalized");
  const Tensor avg = (w.defined() ? input * w : input).sum(IntArrayRef{1}) / w_sum;
  Tensor norm = aw.defined() && correction != 0
                    ? w_sum - (w * aw).sum() * Scalar(correction) / w_sum
                    : w_sum - correction;
  // No degrees of freedom left: the result is inf or NaN, as PyTorch's.
  if ((norm <= 0).item().toBool()) norm = zeros_like(norm);
  const Tensor xc = input - avg.unsqueeze(1);
  const Tensor c = xc.matmul((w.defined() ? xc * w : xc).t().conj());
  return c.div(norm).squeeze();
}

Tensor corrcoef(const Tensor& self) {
  EMBER_OP(corrcoef, self);
  EMBER_CHECK(self.dim() <= 2,
              "[corrcoef] corrcoef(): expected input to have two or fewer dimensions but got an "
              "input with ",
              self.dim(), " dimensions");
  Tensor c = cov(self);
  if (c.dim() == 0) return c / c;  // NaN for a zero, inf or NaN variance, else 1
  const Tensor d = c.diagonal();
  const Tensor sd = (d.is_complex() ? d.real() : d).sqrt();
  c = c / sd.view({-1, 1});
  c = c / sd.view({1, -1});
  if (!c.is_complex()) return c.clamp(Scalar(-1), Scalar(1));
  // Real and imaginary parts are clipped separately.
  const Tensor re = c.real().clamp(Scalar(-1), Scalar(1)).to(c.dtype());
  const Tensor im = c.imag().clamp(Scalar(-1), Scalar(1)).to(c.dtype());
  return re + im * Scalar(complex<double>(0, 1));
}

Tensor Tensor::cov(int64_t correction, const std::optional<Tensor>& fweights,
                   const std::optional<Tensor>& aweights) const {
  return ember::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::corrcoef() const { return ember::corrcoef(*this); }

// ---- histograms ----

namespace {

constexpr const char* kHistdd = "torch.histogramdd";

void check_hist_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.dtype() == kFloat || x.dtype() == kDouble, "[", op, "] \"", op,
              "\" not implemented for '", dtype_name(x.dtype()), "'");
}

/// Checks `weight` against the (..., D) points `self` (D = 0: the values of a 1-D histogram).
Tensor prepare_weight(const Tensor& self, const std::optional<Tensor>& weight, bool flat) {
  if (!weight || !weight->defined()) return Tensor();
  const Tensor& w = *weight;
  EMBER_CHECK(w.dtype() == self.dtype(), "[histogramdd] ", kHistdd,
              ": if weight tensor is provided, input tensor and weight tensor should have the "
              "same dtype, but got input(",
              dtype_name(self.dtype()), "), and weight(", dtype_name(w.dtype()), ")");
  const IntArrayRef want = flat ? self.sizes() : self.sizes().slice(0, self.dim() - 1);
  EMBER_CHECK(w.sizes() == want, "[histogramdd] ", kHistdd,
              ": if weight tensor is provided it should have the same shape as the input tensor "
              "excluding its innermost dimension, but got input with shape ",
              shape_str(self.sizes()), " and weight with shape ", shape_str(w.sizes()));
  return w.reshape({-1}).contiguous();
}

/// Equally spaced edges of every dim of the (N, D) points: over `range` or the data's range,
/// widened by 0.5 each way when empty.
std::vector<Tensor> uniform_edges(const Tensor& x, IntArrayRef bins,
                                  const std::optional<std::vector<double>>& range) {
  const int64_t D = x.size(1);
  for (int64_t d = 0; d < D; ++d)
    EMBER_CHECK(bins[d] > 0, "[histogramdd] ", kHistdd, "(): bins must be > 0, but got ", bins[d],
                " for dimension ", d);
  if (range)
    EMBER_CHECK(int64_t(range->size()) == 2 * D, "[histogramdd] ", kHistdd, ": for a ", D,
                "-dimensional histogram range should have ", 2 * D, " elements, but got ",
                range->size());
  Tensor mn, mx;
  if (!range && x.size(0) > 0) {
    mn = x.amin({0});
    mx = x.amax({0});
  }
  std::vector<Tensor> edges;
  for (int64_t d = 0; d < D; ++d) {
    double lo = 0, hi = 1;  // no values and no range: [0, 1], as PyTorch
    if (range) {
      lo = (*range)[2 * d];
      hi = (*range)[2 * d + 1];
    } else if (mn.defined()) {
      lo = mn.select(0, d).item().toDouble();
      hi = mx.select(0, d).item().toDouble();
    }
    EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "[histogramdd] ", kHistdd, ": dimension ",
                d, "'s range [", lo, ", ", hi, "] is not finite");
    EMBER_CHECK(lo <= hi, "[histogramdd] ", kHistdd, ": min should not exceed max, but got min ",
                lo, " max ", hi, " for dimension ", d);
    if (lo == hi) {
      lo -= 0.5;
      hi += 0.5;
    }
    edges.push_back(linspace(lo, hi, bins[d] + 1, TensorOptions(x.dtype())));
  }
  return edges;
}

/// Checks user-given bin edges against the input.
std::vector<Tensor> given_edges(const Tensor& x, ArrayRef<Tensor> bins) {
  std::vector<Tensor> edges;
  for (size_t d = 0; d < bins.size(); ++d) {
    const Tensor& b = bins[d];
    EMBER_CHECK(b.dtype() == x.dtype(), "[histogramdd] ", kHistdd,
                ": input tensor and bins tensors should have the same dtype, but got input with "
                "dtype ",
                dtype_name(x.dtype()), " and bins for dimension ", d, " with dtype ",
                dtype_name(b.dtype()));
    EMBER_CHECK(b.dim() == 1, "[histogramdd] ", kHistdd,
                ": bins tensor should have one dimension, but got ", b.dim(),
                " dimensions in the bins tensor for dimension ", d);
    EMBER_CHECK(b.numel() > 1, "[histogramdd] ", kHistdd, "(): bins must be > 0, but got ",
                std::max<int64_t>(0, b.numel() - 1), " for dimension ", d);
    edges.push_back(b.contiguous());
  }
  return edges;
}

/// Bins the (N, D) points into a histogram of the input's dtype; `density` divides by the
/// total and by each bin's volume.
Tensor bin_points(const Tensor& x, const Tensor& w, const std::vector<Tensor>& edges, bool uniform,
                  bool density) {
  DimVector shape;
  for (const Tensor& e : edges) shape.push_back(e.numel() - 1);
  Tensor acc = zeros(shape, TensorOptions(kDouble));
  histogramdd_stub(x.device().type(), x, w, ArrayRef<Tensor>(edges), uniform, acc);
  Tensor hist = acc.to(x.dtype());
  if (density) {
    hist = hist / hist.sum();
    const int64_t D = int64_t(edges.size());
    for (int64_t d = 0; d < D; ++d) {
      DimVector s(size_t(D), 1);
      s[d] = shape[d];
      hist = hist / diff(edges[d]).reshape(s);
    }
  }
  return hist;
}

std::tuple<Tensor, std::vector<Tensor>> histdd_run(const Tensor& self,
                                                   const std::optional<Tensor>& weight,
                                                   size_t nbins, bool density, auto&& make_edges) {
  check_hist_input(self, "histogramdd");
  EMBER_CHECK(self.dim() >= 2, "[histogramdd] ", kHistdd,
              ": input tensor should have at least 2 dimensions");
  const int64_t D = self.size(-1);
  EMBER_CHECK(int64_t(nbins) == D, "[histogramdd] ", kHistdd, ": expected ", D,
              " sequences of bin edges for a ", D, "-dimensional histogram but got ", nbins);
  const Tensor x = self.reshape({-1, D}).contiguous();
  const Tensor w = prepare_weight(self, weight, false);
  auto [edges, uniform] = make_edges(x);
  Tensor hist = bin_points(x, w, edges, uniform, density);
  return {hist, edges};
}

std::tuple<Tensor, Tensor> hist1d_run(const Tensor& self, const std::optional<Tensor>& weight,
                                      bool density, auto&& make_edges) {
  check_hist_input(self, "histogram");
  const Tensor x = self.reshape({-1, 1}).contiguous();
  const Tensor w = prepare_weight(self, weight, true);
  auto [edges, uniform] = make_edges(x);
  Tensor hist = bin_points(x, w, edges, uniform, density);
  return {hist, edges[0]};
}

}  // namespace

std::tuple<Tensor, Tensor> histogram(const Tensor& self, const Tensor& bins,
                                     const std::optional<Tensor>& weight, bool density) {
  EMBER_OP(histogram, self, bins, weight, density);
  return hist1d_run(self, weight, density, [&](const Tensor& x) {
    return std::pair(given_edges(x, ArrayRef<Tensor>(&bins, 1)), false);
  });
}

std::tuple<Tensor, Tensor> histogram(const Tensor& self, int64_t bins,
                                     std::optional<std::vector<double>> range,
                                     const std::optional<Tensor>& weight, bool density) {
  EMBER_OP(histogram_1, self, bins, range, weight, density);
  return hist1d_run(self, weight, density, [&](const Tensor& x) {
    return std::pair(uniform_edges(x, IntArrayRef(&bins, 1), range), true);
  });
}

std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, IntArrayRef bins,
                                                    std::optional<std::vector<double>> range,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  // The result type (a tensor and a list) has no vmap redirect: EMBER_OP's entry, by hand.
  dispatch::OpScope ember_op_scope_(OpId::histogramdd);
  if (EMBER_OP_UNLIKELY(dispatch::slow_path()))
    EMBER_CHECK_T(NotImplementedError, !ember_op_scope_.enter(self, bins, range, weight, density),
                  "[histogramdd] has no batching rule");
  // One count stands for every dim; counts past the last dim are ignored, as PyTorch's.
  std::vector<int64_t> b(bins.begin(), bins.end());
  if (self.dim() >= 2) {
    const size_t D = size_t(self.size(-1));
    if (b.size() == 1) b.assign(D, b[0]);
    if (b.size() > D) b.resize(D);
  }
  return histdd_run(self, weight, b.size(), density,
                    [&](const Tensor& x) { return std::pair(uniform_edges(x, b, range), true); });
}

std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, ArrayRef<Tensor> bins,
                                                    const std::optional<Tensor>& weight,
                                                    bool density) {
  dispatch::OpScope ember_op_scope_(OpId::histogramdd);
  if (EMBER_OP_UNLIKELY(dispatch::slow_path()))
    EMBER_CHECK_T(NotImplementedError, !ember_op_scope_.enter(self, bins, weight, density),
                  "[histogramdd] has no batching rule");
  return histdd_run(self, weight, bins.size(), density,
                    [&](const Tensor& x) { return std::pair(given_edges(x, bins), false); });
}

std::tuple<Tensor, Tensor> Tensor::histogram(const Tensor& bins,
                                             const std::optional<Tensor>& weight,
                                             bool density) const {
  return ember::histogram(*this, bins, weight, density);
}
std::tuple<Tensor, Tensor> Tensor::histogram(int64_t bins, std::optional<std::vector<double>> range,
                                             const std::optional<Tensor>& weight,
                                             bool density) const {
  return ember::histogram(*this, bins, std::move(range), weight, density);
}

// ---- isin ----

namespace {

void check_isin_dtype(ScalarType t) {
  EMBER_CHECK(!isComplexType(t) && t != kBool && t != kBFloat16 && t != kHalf,
              "[isin] Unsupported input type encountered for isin(): ", dtype_name(t));
}

}  // namespace

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique, bool invert) {
  EMBER_OP(isin, elements, test_elements, assume_unique, invert);
  const ScalarType ct = promoteTypes(elements.dtype(), test_elements.dtype());
  check_isin_dtype(elements.dtype());
  check_isin_dtype(test_elements.dtype());
  check_isin_dtype(ct);
  const Tensor e = elements.to(ct);
  const Tensor t = test_elements.to(ct).reshape({-1});
  const int64_t m = t.numel();
  Tensor r;
  if (m == 0) {
    r = zeros(elements.sizes(), TensorOptions(kBool));
  } else if (m <= 4) {
    // A few test values: one comparison pass each beats sorting.
    r = e == t.select(0, 0);
    for (int64_t k = 1; k < m; ++k) r = r.logical_or(e == t.select(0, k));
  } else {
    // Sorted test values: each element's insertion point holds it if anything does. NaN never
    // matches (NaN != NaN); the NaNs sorted last are cut off, as a binary search over them
    // would go astray.
    Tensor s = std::get<0>(sort(t));
    int64_t n = m;
    if (isFloatingType(ct)) n -= s.isnan().sum().item().toLong();
    if (n == 0) {
      r = zeros(elements.sizes(), TensorOptions(kBool));
    } else {
      s = s.slice(0, 0, n);
      const Tensor idx = searchsorted(s, e.contiguous()).clamp_max(n - 1);
      r = s.take(idx) == e;
    }
  }
  return invert ? r.logical_not() : r;
}

Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  EMBER_OP(isin, elements, test_element, assume_unique, invert);
  check_isin_dtype(elements.dtype());
  return invert ? elements.ne(test_element) : elements.eq(test_element);
}

Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  EMBER_OP(isin, element, test_elements, assume_unique, invert);
  const ScalarType ct = result_type(test_elements, element);
  return isin(scalar_tensor(element, TensorOptions(ct)), test_elements, assume_unique, invert);
}

// ---- trapezoidal rule ----

namespace {

/// y's shape without `dim`, for an integral over no samples (0, as NumPy).
Tensor zeros_without(const Tensor& y, int64_t dim) {
  std::vector<int64_t> s = y.sizes().vec();
  s.erase(s.begin() + dim);
  return zeros(s, y.options());
}

int64_t trapz_dim(const Tensor& y, int64_t dim, const char* op) {
  EMBER_CHECK_INDEX(y.dim() > 0, "[", op, "] Dimension specified as ", dim,
                    " but tensor has no dimensions");
  return wrap_dim(dim, y.dim(), op);
}

/// The spacings of `x` along `dim`: x with y's dims (a 1-D x along dim, a lower-dim x padded
/// with leading 1s), differenced.
Tensor sample_spacing(const Tensor& y, const Tensor& x, int64_t dim, const char* op) {
  Tensor xv;
  if (x.dim() == 1) {
    EMBER_CHECK(x.size(0) == y.size(dim), "[", op, "] ", op,
                ": There must be one `x` value for each sample point");
    DimVector s(size_t(y.dim()), 1);
    s[dim] = x.size(0);
    xv = x.reshape(s);
  } else if (x.dim() < y.dim()) {
    DimVector s(size_t(y.dim() - x.dim()), 1);
    for (int64_t v : x.sizes()) s.push_back(v);
    xv = x.reshape(s);
  } else {
    xv = x;
  }
  const int64_t n = xv.size(dim);
  return xv.slice(dim, 1, n) - xv.slice(dim, 0, n - 1);
}

/// y[1:] + y[:-1] along dim.
Tensor pair_sums(const Tensor& y, int64_t dim) {
  const int64_t n = y.size(dim);
  return y.slice(dim, std::min<int64_t>(1, n), n) + y.slice(dim, 0, std::max<int64_t>(0, n - 1));
}

}  // namespace

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  EMBER_OP(trapezoid, y, x, dim);
  dim = trapz_dim(y, dim, "trapezoid");
  if (y.size(dim) == 0) return zeros_without(y, dim);
  EMBER_CHECK(y.dtype() != kBool && x.dtype() != kBool,
              "[trapezoid] trapezoid: received a bool input for `x` or `y`, but bool is not "
              "supported");
  const Tensor dx = sample_spacing(y, x, dim, "trapezoid");
  return (dx * pair_sums(y, dim)).sum(IntArrayRef{dim}) / Scalar(2.0);
}

Tensor trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  EMBER_OP(trapezoid, y, dx, dim);
  dim = trapz_dim(y, dim, "trapezoid");
  EMBER_CHECK(!dx.isComplex(),
              "[trapezoid] trapezoid: Currently, we only support dx as a real number.");
  if (y.size(dim) == 0) return zeros_without(y, dim);
  EMBER_CHECK(y.dtype() != kBool,
              "[trapezoid] trapezoid: received a bool input for `y`, but bool is not supported");
  const int64_t n = y.size(dim);
  return (y.sum(IntArrayRef{dim}) - (y.select(dim, 0) + y.select(dim, n - 1)) * Scalar(0.5)) *
         Scalar(dx.toDouble());
}

Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim) {
  EMBER_OP(trapz, y, x, dim);
  return trapezoid(y, x, dim);
}

Tensor trapz(const Tensor& y, double dx, int64_t dim) {
  EMBER_OP(trapz, y, dx, dim);
  return trapezoid(y, Scalar(dx), dim);
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  EMBER_OP(cumulative_trapezoid, y, x, dim);
  dim = trapz_dim(y, dim, "cumulative_trapezoid");
  EMBER_CHECK(y.dtype() != kBool && x.dtype() != kBool,
              "[cumulative_trapezoid] cumulative_trapezoid: received a bool input for `x` or "
              "`y`, but bool is not supported");
  const Tensor dx = sample_spacing(y, x, dim, "cumulative_trapezoid");
  return (dx / Scalar(2.0) * pair_sums(y, dim)).cumsum(dim);
}

Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  EMBER_OP(cumulative_trapezoid, y, dx, dim);
  dim = trapz_dim(y, dim, "cumulative_trapezoid");
  EMBER_CHECK(!dx.isComplex(),
              "[cumulative_trapezoid] cumulative_trapezoid: Currently, we only support dx as a "
              "real number.");
  EMBER_CHECK(y.dtype() != kBool,
              "[cumulative_trapezoid] cumulative_trapezoid: received a bool input for `y`, but "
              "bool is not supported");
  return (pair_sums(y, dim) * Scalar(dx.toDouble() / 2.0)).cumsum(dim);
}

// ---- gradient ----

namespace {

/// torch.gradient's checks; returns the dims to differentiate (wrapped).
std::vector<int64_t> gradient_dims(const Tensor& self, std::optional<size_t> spacing_size,
                                   OptionalIntArrayRef dim, int64_t edge_order) {
  EMBER_CHECK(self.dtype() != kByte, "[gradient] torch.gradient does not support uint8 input.");
  if (spacing_size && !dim)
    EMBER_CHECK(*spacing_size == 1 || int64_t(*spacing_size) == self.dim(),
                "[gradient] torch.gradient expected spacing to be unspecified, a scalar or a "
                "list of length equal to 'self.dim() = ",
                self.dim(), "', since dim argument was not given, but got a list of length ",
                *spacing_size);
  if (spacing_size && dim)
    EMBER_CHECK(*spacing_size == dim->size(),
                "[gradient] torch.gradient expected spacing to be unspecified, a scalar or it's "
                "spacing and dim arguments to have the same length, but got a spacing argument "
                "of length ",
                *spacing_size, " and a dim argument of length ", dim->size(), ".");
  EMBER_CHECK(edge_order == 1 || edge_order == 2,
              "[gradient] torch.gradient only supports edge_order=1 and edge_order=2.");
  std::vector<int64_t> dims;
  if (dim) {
    for (int64_t d : *dim) {
      const int64_t w = wrap_dim(d, self.dim(), "gradient");
      for (int64_t e : dims)
        EMBER_CHECK(e != w, "[gradient] dim ", w, " appears multiple times in the list of dims");
      dims.push_back(w);
    }
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  }
  for (int64_t d : dims)
    EMBER_CHECK(self.size(d) >= edge_order + 1,
                "[gradient] torch.gradient expected each dimension size to be at least "
                "edge_order+1");
  return dims;
}

Tensor sl(const Tensor& t, int64_t dim, int64_t start, int64_t end) {
  const int64_t n = t.size(dim);
  if (start < 0) start += n;
  if (end < 0) end += n;
  return t.slice(dim, start, end);
}

}  // namespace

std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing, OptionalIntArrayRef dim,
                             int64_t edge_order) {
  EMBER_OP(gradient, self, spacing, dim, edge_order);
  const std::vector<int64_t> dims =
      gradient_dims(self, spacing.empty() ? std::nullopt : std::optional<size_t>(spacing.size()),
                    dim, edge_order);
  std::vector<Tensor> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    const Scalar h = spacing.empty() ? Scalar(1.0) : spacing[spacing.size() == 1 ? 0 : i];
    const int64_t n = self.size(d);
    const Tensor center = (sl(self, d, 2, n) - sl(self, d, 0, -2)) / h;
    Tensor pre, app;
    if (edge_order == 1) {
      pre = (sl(self, d, 1, 2) - sl(self, d, 0, 1)) / h;
      app = (sl(self, d, -1, n) - sl(self, d, -2, -1)) / h;
    } else {
      pre = (sl(self, d, 0, 1) * Scalar(-1.5) + sl(self, d, 1, 2) * Scalar(2) -
             sl(self, d, 2, 3) * Scalar(0.5)) /
            h;
      app = (sl(self, d, -3, -2) * Scalar(0.5) + sl(self, d, -2, -1) * Scalar(-2) +
             sl(self, d, -1, n) * Scalar(1.5)) /
            h;
    }
    out.push_back(cat({pre, center / Scalar(2), app}, d));
  }
  return out;
}

std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Tensor> coordinates,
                             OptionalIntArrayRef dim, int64_t edge_order) {
  EMBER_OP(gradient, self, coordinates, dim, edge_order);
  const std::vector<int64_t> dims =
      gradient_dims(self, std::optional<size_t>(coordinates.size()), dim, edge_order);
  std::vector<Tensor> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    const Tensor& coord = coordinates[coordinates.size() == 1 ? 0 : i];
    EMBER_CHECK(coord.dim() == 1,
                "[gradient] torch.gradient expected each element of spacing to have one "
                "dimension, but got an element with ",
                coord.dim(), " dimensions!");
    const int64_t n = self.size(d);
    EMBER_CHECK(coord.size(0) == n, "[gradient] torch.gradient expected the coordinates of dim ", d,
                " to have ", n, " values, but got ", coord.size(0));
    DimVector shape(size_t(self.dim()), 1);
    shape[d] = -1;
    const Tensor h = diff(coord, 1, 0);  // n - 1 spacings
    const Tensor h1 = h.slice(0, 0, n - 2), h2 = h.slice(0, 1, n - 1);
    const Tensor a = (h2.neg() / (h1 * (h1 + h2))).reshape(shape);
    const Tensor b = ((h2 - h1) / (h1 * h2)).reshape(shape);
    const Tensor c = (h1 / (h2 * (h1 + h2))).reshape(shape);
    const Tensor center = a * sl(self, d, 0, -2) + b * sl(self, d, 1, -1) + c * sl(self, d, 2, n);
    const Tensor f0 = h.select(0, 0), f1 = h.select(0, std::min<int64_t>(1, n - 2));
    const Tensor l0 = h.select(0, n - 2), l1 = h.select(0, std::max<int64_t>(0, n - 3));
    Tensor pre, app;
    if (edge_order == 1) {
      pre = (sl(self, d, 1, 2) - sl(self, d, 0, 1)) / f0;
      app = (sl(self, d, -1, n) - sl(self, d, -2, -1)) / l0;
    } else {
      pre = sl(self, d, 0, 1) * ((f0 * 2.0 + f1).neg() / (f0 * (f0 + f1))) +
            sl(self, d, 1, 2) * ((f0 + f1) / (f0 * f1)) +
            sl(self, d, 2, 3) * (f0.neg() / (f1 * (f0 + f1)));
      app = sl(self, d, -3, -2) * (l0 / (l1 * (l0 + l1))) +
            sl(self, d, -2, -1) * ((l0 + l1).neg() / (l0 * l1)) +
            sl(self, d, -1, n) * ((l0 * 2.0 + l1) / (l0 * (l0 + l1)));
    }
    out.push_back(cat({pre, center, app}, d));
  }
  return out;
}

}  // namespace ember
