#pragma once
/// Reductions: sum, mean, prod, max/min, var/std, norms, logsumexp, all/any (reduce_ops.cpp,
/// reduce_stats.cpp). Signatures follow libtorch. An empty `dim` list means "every dim" for
/// sum/mean/amax/...; `keepdim` keeps reduced dims as size 1. Integer and bool inputs of
/// sum/prod/nansum accumulate (and return) int64 unless `dtype` says otherwise.

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// `dim` arguments are OptionalIntArrayRef (ember/array_ref.h) where libtorch's are: nullopt (or an
// empty list) reduces every dim.

// ---- sums and products ----
/// Sum of all elements (0-dim). Integer/bool inputs give int64; float16 sums in float32.
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
/// Sum over `dim` (nullopt or empty: all dims).
Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
/// sum into `out` (resized when empty).
Tensor& sum_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
                std::optional<ScalarType> dtype = std::nullopt);
/// Sum treating NaN as zero.
Tensor nansum(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt);
Tensor& nansum_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
/// Mean (floating/complex input or `dtype` required); mean of nothing is NaN.
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor& mean_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
                 std::optional<ScalarType> dtype = std::nullopt);
/// Mean ignoring NaNs.
Tensor nanmean(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
               std::optional<ScalarType> dtype = std::nullopt);
Tensor& nanmean_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim = std::nullopt,
                    bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
/// Product of all elements (0-dim); product of nothing is 1.
Tensor prod(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
/// Product along one dim.
Tensor prod(const Tensor& self, int64_t dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor& prod_out(Tensor& out, const Tensor& self, int64_t dim, bool keepdim = false,
                 std::optional<ScalarType> dtype = std::nullopt);

// ---- extrema ----
/// Largest element (0-dim); NaN wins; RuntimeError on an empty tensor.
Tensor max(const Tensor& self);
/// Smallest element (0-dim).
Tensor min(const Tensor& self);
/// (values, indices) of the largest element along `dim` (first occurrence; NaN wins).
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor&, Tensor&> max_out(Tensor& values, Tensor& indices, const Tensor& self,
                                     int64_t dim, bool keepdim = false);
std::tuple<Tensor&, Tensor&> min_out(Tensor& values, Tensor& indices, const Tensor& self,
                                     int64_t dim, bool keepdim = false);
/// Elementwise maximum/minimum of two tensors (the same as ember::maximum/minimum).
Tensor max(const Tensor& self, const Tensor& other);
Tensor min(const Tensor& self, const Tensor& other);
/// Largest values over `dim` (empty: all dims); no indices.
Tensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor& amax_out(Tensor& out, const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor& amin_out(Tensor& out, const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
/// Index of the largest element along `dim` (nullopt: of the flattened tensor), int64.
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor& argmax_out(Tensor& out, const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false);
Tensor& argmin_out(Tensor& out, const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false);
/// (min, max) in one pass, over `dim` or over everything.
std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                                   bool keepdim = false);

// ---- statistics ----
/// Variance over every element (`unbiased`: divide by N-1).
Tensor var(const Tensor& self, bool unbiased = true);
/// Variance over `dim` (nullopt: all dims); complex input gives a real result.
Tensor var(const Tensor& self, OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false);
/// Variance with an explicit `correction` (divide by N - correction; nullopt means 1).
Tensor var(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction,
           bool keepdim = false);
Tensor& var_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim,
                std::optional<int64_t> correction, bool keepdim = false);
Tensor std(const Tensor& self, bool unbiased = true);
Tensor std(const Tensor& self, OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction,
           bool keepdim = false);
Tensor& std_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim,
                std::optional<int64_t> correction, bool keepdim = false);
/// (var, mean) in one pass.
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, bool unbiased = true);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim,
                                    bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim,
                                    std::optional<int64_t> correction, bool keepdim = false);
/// (std, mean) in one pass.
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, bool unbiased = true);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim,
                                    bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim,
                                    std::optional<int64_t> correction, bool keepdim = false);
// As libtorch's Functions.h: an int literal is a dim, not `unbiased` (`var(t, 1)` reduces dim 1;
// without these, int -> bool beats int -> OptionalIntArrayRef).
inline Tensor var(const Tensor& self, int dim) {
  const int64_t d = dim;
  return var(self, IntArrayRef(d));
}
inline Tensor std(const Tensor& self, int dim) {
  const int64_t d = dim;
  return ember::std(self, IntArrayRef(d));
}
inline std::tuple<Tensor, Tensor> var_mean(const Tensor& self, int dim) {
  const int64_t d = dim;
  return var_mean(self, IntArrayRef(d));
}
inline std::tuple<Tensor, Tensor> std_mean(const Tensor& self, int dim) {
  const int64_t d = dim;
  return std_mean(self, IntArrayRef(d));
}

// ---- norms, logsumexp ----
/// log(sum(exp(x))) over `dim`, computed stably (max subtracted); integer input gives float.
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false);
/// The p-norm of self - other (broadcast), as vector_norm of the difference.
Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p = 2);
Tensor& logsumexp_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim = false);
/// Vector norm of order `ord` (inf, -inf, 0, any real p) over `dim` (nullopt: all elements).
Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord = 2,
                          OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                          std::optional<ScalarType> dtype = std::nullopt);
Tensor& linalg_vector_norm_out(Tensor& out, const Tensor& self, const Scalar& ord = 2,
                               OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                               std::optional<ScalarType> dtype = std::nullopt);
namespace linalg {
/// torch::linalg::vector_norm.
Tensor vector_norm(const Tensor& self, const Scalar& ord = 2,
                   OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
}  // namespace linalg
/// torch.norm with a numeric `p` (nullopt: 2; inf/-inf allowed) over `dim` (empty: all dims).
Tensor norm(const Tensor& self, const std::optional<Scalar>& p = std::nullopt, IntArrayRef dim = {},
            bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
/// torch.norm of every element, computed in `dtype` (libtorch's norm.ScalarOpt_dtype).
inline Tensor norm(const Tensor& self, const std::optional<Scalar>& p, ScalarType dtype) {
  return norm(self, p, IntArrayRef{}, false, dtype);
}
/// torch.norm with p = "fro" (2-norm over dims) or "nuc" (NotImplementedError).
Tensor norm(const Tensor& self, std::string_view p, IntArrayRef dim = {}, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor norm(const Tensor& self, const char* p, IntArrayRef dim = {}, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);

// ---- logical ----
/// True when every element is nonzero (bool result; uint8 input gives uint8).
Tensor all(const Tensor& self);
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor& all_out(Tensor& out, const Tensor& self, int64_t dim, bool keepdim = false);
/// True when some element is nonzero.
Tensor any(const Tensor& self);
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor& any_out(Tensor& out, const Tensor& self, int64_t dim, bool keepdim = false);
/// Number of nonzero elements over `dim` (empty: all dims), int64.
Tensor count_nonzero(const Tensor& self, IntArrayRef dim);
Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim = std::nullopt);

}  // namespace ember
