// _unique2, unique_dim, unique_consecutive: argument checks here, the loops in
// kernels/cpu/sort/unique.cpp (Note [Unique order]).
#include <cstdint>
#include <functional>
#include <tuple>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/sort.h"
#include "kernels/stubs/sort.h"
#include "ops/call_path.h"

namespace ember {
namespace {

/// bool, integers, bfloat16, float and double (PyTorch 1.13's unique dtypes on CPU).
void check_unique_dtype(const Tensor& self, const char* op, const char* kernel) {
  EMBER_CHECK(self.defined(), "[", op, "] input tensor is undefined");
  const ScalarType t = self.dtype();
  EMBER_CHECK(t != kHalf && !isComplexType(t), "[", op, "] \"", kernel, "\" not implemented for '",
              dtype_name(t), "'");
}

std::tuple<Tensor, Tensor, Tensor> unique_dim_impl(const Tensor& self, int64_t dim,
                                                   bool consecutive, const char* op) {
  check_unique_dtype(self, op, "unique_dim");
  EMBER_CHECK_INDEX(self.dim() > 0, "[", op, "] dimension specified as ", dim,
                    " but tensor has no dimensions");
  dim = wrap_dim(dim, self.dim(), op);
  int64_t zero_dims = 0;
  for (int64_t s : self.sizes()) zero_dims += s == 0;
  if (self.size(dim) == 0) {
    EMBER_CHECK(zero_dims == 1, "[", op,
                "] number of zero sized dimensions is more than one, "
                "so unique cannot be applied; shape ",
                shape_str(self.sizes()));
    return {empty_tensor(self.sizes(), self.dtype()), empty_tensor({0}, kLong),
            empty_tensor({0}, kLong)};
  }
  EMBER_CHECK(zero_dims == 0, "[", op,
              "] there are 0 sized dimensions, and they aren't "
              "selected, so unique cannot be applied; shape ",
              shape_str(self.sizes()), ", dim ", dim);
  // Slices are compared in the layout of self.transpose(0, dim), as PyTorch.
  Tensor out, inv, cnt;
  unique_dim_stub(self.device().type(), self.transpose(0, dim).contiguous(), consecutive, out, inv,
                  cnt);
  return {out.transpose(0, dim).contiguous(), inv, cnt};
}

}  // namespace

namespace {
/// PyTorch has no derivative for the unique family: the values of a differentiable input get a
/// node that raises in backward (inverse and counts are integers).
std::tuple<Tensor, Tensor, Tensor> not_differentiable(
    const char* op, const Tensor& self,
    const std::function<std::tuple<Tensor, Tensor, Tensor>()>& f) {
  autograd::OpRecorder rec(op, {self});
  auto r = f();
  if (rec) rec.record_not_implemented({std::get<0>(r)});
  return r;
}
std::tuple<Tensor, Tensor, Tensor> unique2_impl(const Tensor& self, bool sorted,
                                                bool return_inverse, bool return_counts);
std::tuple<Tensor, Tensor, Tensor> unique_consecutive_impl(const Tensor& self, bool return_inverse,
                                                           bool return_counts,
                                                           std::optional<int64_t> dim);
}  // namespace

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& self, bool sorted, bool return_inverse,
                                            bool return_counts) {
  EMBER_OP(_unique2, self, sorted, return_inverse, return_counts);
  return not_differentiable(
      "_unique2", self, [&] { return unique2_impl(self, sorted, return_inverse, return_counts); });
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool /*sorted*/,
                                              bool /*return_inverse*/, bool /*return_counts*/) {
  EMBER_OP(unique_dim, self, dim);
  // Slices are always sorted, and inverse and counts always computed, as in PyTorch.
  return not_differentiable("unique_dim", self,
                            [&] { return unique_dim_impl(self, dim, false, "unique_dim"); });
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse,
                                                      bool return_counts,
                                                      std::optional<int64_t> dim) {
  EMBER_OP(unique_consecutive, self, return_inverse, return_counts, dim);
  return not_differentiable("unique_consecutive", self, [&] {
    return unique_consecutive_impl(self, return_inverse, return_counts, dim);
  });
}

namespace {
std::tuple<Tensor, Tensor, Tensor> unique2_impl(const Tensor& self, bool sorted,
                                                bool return_inverse, bool return_counts) {
  check_unique_dtype(self, "unique", "unique");
  Tensor out, inv, cnt;
  unique_stub(self.device().type(), self.contiguous(), sorted, return_inverse, return_counts, out,
              inv, cnt);
  return {out, inv, cnt};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive_impl(const Tensor& self, bool return_inverse,
                                                           bool return_counts,
                                                           std::optional<int64_t> dim) {
  if (dim) return unique_dim_impl(self, *dim, true, "unique_consecutive");
  check_unique_dtype(self, "unique_consecutive", "unique");
  Tensor out, inv, cnt;
  unique_consecutive_stub(self.device().type(), self.contiguous(), return_inverse, return_counts,
                          out, inv, cnt);
  return {out, inv, cnt};
}

}  // namespace

}  // namespace ember
