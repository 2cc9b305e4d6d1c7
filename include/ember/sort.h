#pragma once
/// Scans, softmax and order statistics: cumsum..., softmax/log_softmax, sort/argsort/topk,
/// median/mode/kthvalue/quantile, unique (scan_ops.cpp, softmax_ops.cpp, sort_ops.cpp,
/// order_stats_ops.cpp, unique_ops.cpp). Signatures follow libtorch's.

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// ---- softmax ----
/// exp(x) / sum(exp(x)) along `dim`, computed in `dtype` when given (floating types only).
Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// softmax into `out` (resized when empty; dtype must be the result dtype).
Tensor& softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype = std::nullopt);
/// log(softmax(x)) along `dim`, computed stably as x - max - log(sum(exp(x - max))).
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// log_softmax into `out`.
Tensor& log_softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                        std::optional<ScalarType> dtype = std::nullopt);

// ---- scans ----
/// Running sum along `dim`; integers and bool accumulate in int64 unless `dtype` is given.
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// cumsum into `out`.
Tensor& cumsum_out(Tensor& out, const Tensor& self, int64_t dim,
                   std::optional<ScalarType> dtype = std::nullopt);
/// Running product along `dim` (promotion as cumsum).
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// cumprod into `out`.
Tensor& cumprod_out(Tensor& out, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype = std::nullopt);
/// Running max along `dim` with the index of each maximum (NaN propagates).
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
/// Running min along `dim` with the index of each minimum (NaN propagates).
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);
/// cummax into (values, indices).
std::tuple<Tensor&, Tensor&> cummax_out(Tensor& values, Tensor& indices, const Tensor& self,
                                        int64_t dim);
/// cummin into (values, indices).
std::tuple<Tensor&, Tensor&> cummin_out(Tensor& values, Tensor& indices, const Tensor& self,
                                        int64_t dim);
/// log(cumsum(exp(x))) along `dim`, computed stably.
Tensor logcumsumexp(const Tensor& self, int64_t dim);
/// logcumsumexp into `out`.
Tensor& logcumsumexp_out(Tensor& out, const Tensor& self, int64_t dim);

// ---- sorting ----
/// Sorted values along `dim` and their original indices (NaN sorts as the largest value).
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
/// sort with an explicit stability request (ember's sort is always stable).
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false);
/// sort into (values, indices).
std::tuple<Tensor&, Tensor&> sort_out(Tensor& values, Tensor& indices, const Tensor& self,
                                      int64_t dim = -1, bool descending = false);
/// The indices that sort `self` along `dim`.
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
/// argsort with an explicit stability request.
Tensor argsort(const Tensor& self, bool stable, int64_t dim = -1, bool descending = false);
/// Sorted along dim 0.
Tensor msort(const Tensor& self);
/// The k largest (or smallest) values along `dim` and their indices.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true);
/// topk into (values, indices).
std::tuple<Tensor&, Tensor&> topk_out(Tensor& values, Tensor& indices, const Tensor& self,
                                      int64_t k, int64_t dim = -1, bool largest = true,
                                      bool sorted = true);

// ---- order statistics ----
/// The k-th smallest value (1-based) along `dim` and its index.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
/// The lower median of all elements (NaN when any element is NaN).
Tensor median(const Tensor& self);
/// The lower median along `dim` and its index.
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
/// median ignoring NaN.
Tensor nanmedian(const Tensor& self);
/// nanmedian along `dim` and its index.
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim = false);
/// The most frequent value along `dim` (the smallest on ties) and an index of it.
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false);
/// The q-th quantiles (q in [0, 1], a scalar or 1-D tensor) along `dim` or of all elements.
Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false, std::string_view interpolation = "linear");
Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false, std::string_view interpolation = "linear");
/// quantile ignoring NaN.
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false, std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false, std::string_view interpolation = "linear");

// ---- unique ----
/// Unique elements of the flattened tensor (sorted), with inverse indices and counts (the
/// unrequested ones are empty).
std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& self, bool sorted = true,
                                            bool return_inverse = false,
                                            bool return_counts = false);
/// Unique slices along `dim`.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted = true,
                                              bool return_inverse = false,
                                              bool return_counts = false);
/// Collapses runs of equal consecutive elements (or slices along `dim`).
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self,
                                                      bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);

}  // namespace ember
