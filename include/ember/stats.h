#pragma once
/// Statistics, distances, histograms, set membership and numerical calculus: torch.cov,
/// torch.corrcoef, torch.cdist, torch.pdist, torch.histogram(dd), torch.isin, torch.trapezoid,
/// torch.trapz, torch.cumulative_trapezoid and torch.gradient (src/ops/stats/).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/array_ref.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

// ---- covariance ----

/// Covariance of the variables in the rows of `self` (0-, 1- or 2-D; columns are observations),
/// with `correction` subtracted from the (weighted) observation count. `fweights`: integer
/// frequency weights; `aweights`: floating observation weights (both 1-D, one per observation).
Tensor cov(const Tensor& self, int64_t correction = 1,
           const std::optional<Tensor>& fweights = std::nullopt,
           const std::optional<Tensor>& aweights = std::nullopt);
/// Pearson correlation coefficients of the rows of `self`, clipped to [-1, 1].
Tensor corrcoef(const Tensor& self);

// ---- distances ----

/// How cdist computes Euclidean (p = 2) distances.
enum class CdistMode : int64_t {
  /// Through a matrix product when either side has more than 25 rows (the default).
  kMmIfNecessary = 0,
  /// Always through a matrix product.
  kMm = 1,
  /// Never through a matrix product.
  kNoMm = 2,
};
/// The mode named by torch's string ("use_mm_for_euclid_dist_if_necessary", ...); ValueError
/// for any other.
CdistMode cdist_mode_from_string(std::string_view mode);

/// p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): a (..., P, R)
/// tensor; the batch dims broadcast. p >= 0 (p = inf: Chebyshev; p = 0: count of differing
/// coordinates). compute_mode: a CdistMode as an integer (None: the default).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2,
             std::optional<int64_t> compute_mode = std::nullopt);
/// The direct (no matrix product) cdist on inputs of the same floating dtype with already
/// broadcast batch dims; cdist's differentiable primitive.
Tensor _cdist_forward(const Tensor& x1, const Tensor& x2, double p,
                      std::optional<int64_t> compute_mode = std::nullopt);
/// p-norm distances between each pair of rows of the 2-D `input`, in row-major order of the
/// upper triangle: N * (N - 1) / 2 values.
Tensor pdist(const Tensor& input, double p = 2);

// ---- histograms ----

/// Histogram of the values of `self` with the given bin edges (1-D, increasing), optionally
/// weighted; `density` normalises it to unit integral. Returns (hist, bin_edges).
std::tuple<Tensor, Tensor> histogram(const Tensor& self, const Tensor& bins,
                                     const std::optional<Tensor>& weight = std::nullopt,
                                     bool density = false);
/// Histogram with `bins` equal-width bins over `range` (min, max) or the data's range.
std::tuple<Tensor, Tensor> histogram(const Tensor& self, int64_t bins = 100,
                                     std::optional<std::vector<double>> range = std::nullopt,
                                     const std::optional<Tensor>& weight = std::nullopt,
                                     bool density = false);
/// D-dimensional histogram of the points in the rows of `self` (..., D): `bins` holds one bin
/// count per dimension (or one for all), `range` 2 * D bounds. Returns (hist, bin_edges).
std::tuple<Tensor, std::vector<Tensor>> histogramdd(
    const Tensor& self, IntArrayRef bins, std::optional<std::vector<double>> range = std::nullopt,
    const std::optional<Tensor>& weight = std::nullopt, bool density = false);
/// D-dimensional histogram with explicit bin edges per dimension.
std::tuple<Tensor, std::vector<Tensor>> histogramdd(
    const Tensor& self, ArrayRef<Tensor> bins, const std::optional<Tensor>& weight = std::nullopt,
    bool density = false);

// ---- set membership ----

/// Whether each element of `elements` occurs in `test_elements` (a bool tensor of elements'
/// shape); `invert` negates it. Compares in the two inputs' promoted dtype.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false,
            bool invert = false);
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique = false,
            bool invert = false);
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique = false,
            bool invert = false);

// ---- calculus ----

/// Trapezoidal rule along `dim` with sample points `x` (1-D, or broadcastable to y).
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
/// Trapezoidal rule along `dim` with constant spacing `dx`.
Tensor trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);
/// torch.trapz: trapezoid's older name.
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor trapz(const Tensor& y, double dx = 1, int64_t dim = -1);
/// The running trapezoidal integral along `dim` (one value fewer than y along dim).
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);
/// Central-difference gradient along each of `dim` (all dims when none) with uniform spacing:
/// one value for every dim, or one per dim. edge_order 1 or 2 at the boundaries.
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing = {},
                             OptionalIntArrayRef dim = std::nullopt, int64_t edge_order = 1);
/// gradient with the sample coordinates of each differentiated dim (1-D tensors).
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Tensor> coordinates,
                             OptionalIntArrayRef dim = std::nullopt, int64_t edge_order = 1);

}  // namespace ember
