// sort / argsort / msort / topk. Each slice along `dim` becomes a contiguous row
// (sort_internal.h) that the kernels sort (kernels/cpu/sort/sort.cpp).
#include <tuple>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/sort.h"
#include "kernels/stubs/sort.h"
#include "ops/call_path.h"
#include "ops/sort/sort_internal.h"

namespace ember {
namespace sort_detail {

Rows to_rows(const Tensor& x, int64_t dim) {
  Rows r;
  Tensor m = x.dim() == 0 ? x.reshape({1}) : x.movedim(dim, -1);
  r.data = m.resolve_conj().contiguous();
  r.n = m.size(-1);
  r.rows = r.n == 0 ? 0 : m.numel() / r.n;
  r.moved.assign(m.sizes());
  return r;
}

Tensor from_rows(const Tensor& y, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return y.reshape({});
  return y.movedim(-1, dim).contiguous();
}

Tensor reduced_from_rows(const Tensor& y, const Tensor& x, int64_t dim, bool keepdim) {
  // y has the moved shape without its last dim
  if (x.dim() == 0) return y.reshape({});
  Tensor r = y.unsqueeze(-1).movedim(-1, dim);
  return keepdim ? r.contiguous() : r.squeeze(dim).contiguous();
}

}  // namespace sort_detail

namespace {

using namespace sort_detail;

void check_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined(), "[", op, "] input tensor is undefined");
}

/// A 0-dim input is its own sorted result / top-1 at index 0 (PyTorch returns it before any
/// dtype check, so a 0-dim bool or complex input works there too).
std::tuple<Tensor, Tensor> scalar_result(const Tensor& self) {
  return {self.clone(), zeros(IntArrayRef{}, TensorOptions().dtype(kLong).device(self.device()))};
}

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, int64_t dim, bool descending,
                                     const char* op) {
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  if (self.dim() == 0) return scalar_result(self);
  EMBER_CHECK(!self.is_complex(), "[", op, "] \"", op, "\" not implemented for '",
              toString(self.dtype()), "'");
  Rows r = to_rows(self, dim);
  EMBER_CHECK(r.n <= int64_t(UINT32_MAX), "[", op,
              "] slices longer than 2^32 elements are not "
              "supported, got ",
              r.n);
  Tensor v = empty_tensor(r.moved, self.dtype(), self.device());
  Tensor i = empty_tensor(r.moved, kLong, self.device());
  if (r.rows > 0) sort_stub(self.device().type(), r.data, v, i, descending);
  return {from_rows(v, self, dim), from_rows(i, self, dim)};
}

/// Records `values` = self gathered at `indices` along `dim` (indices of the input's rank when
/// keepdim): the gradient goes back to those positions (PyTorch's
/// value_selecting_reduction_backward), the tangent is gathered from them.
void record_selected(autograd::OpRecorder& rec, const Tensor& self, const Tensor& values,
                     const Tensor& indices, int64_t dim, bool keepdim) {
  rec.args(dim, keepdim, self.sizes(), self.dim() == 0);
  rec.record(
      values,
      [](autograd::VjpCtx& c) {
        const int64_t dim = c.args().i(0);
        const bool keepdim = c.args().b(1), scalar = c.args().b(3);
        const std::vector<int64_t>& sizes = c.args().ints(2);
        if (scalar) return autograd::variable_list{c.grads[0]};
        Tensor g = keepdim ? c.grads[0] : c.grads[0].unsqueeze(dim);
        Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
        return autograd::variable_list{zeros(sizes, g.options()).scatter(dim, i, g)};
      },
      {indices},
      [](autograd::JvpCtx& c) {
        const int64_t dim = c.args().i(0);
        const bool keepdim = c.args().b(1), scalar = c.args().b(3);
        if (scalar) return autograd::variable_list{c.tangent_or_zeros(0)};
        Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
        Tensor t = c.tangent_or_zeros(0).gather(dim, i);
        return autograd::variable_list{keepdim ? t : t.squeeze(dim)};
      });
}

std::tuple<Tensor, Tensor> sort_rec(const Tensor& self, int64_t dim, bool descending,
                                    const char* op) {
  autograd::OpRecorder rec(op, {self});
  auto [v, i] = sort_impl(self, dim, descending, op);
  if (rec) record_selected(rec, self, v, i, wrap_dim(dim, self.dim(), op), true);
  return {v, i};
}

std::tuple<Tensor, Tensor> topk_impl(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                     bool sorted);
}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  EMBER_OP(sort, self, dim, descending);
  return sort_rec(self, dim, descending, "sort");
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> /*stable*/, int64_t dim,
                                bool descending) {
  EMBER_OP(sort_1, self, dim, descending);
  // always stable (Note [Sort keys] in kernels/cpu/sort/sort.cpp)
  return sort_rec(self, dim, descending, "sort");
}
std::tuple<Tensor&, Tensor&> sort_out(Tensor& values, Tensor& indices, const Tensor& self,
                                      int64_t dim, bool descending) {
  EMBER_OP(sort_out, values, indices, self, dim, descending);
  autograd::check_out_not_differentiable("sort", {self});
  auto [v, i] = sort_impl(self, dim, descending, "sort");
  assign_out(values, v, "sort");
  assign_out(indices, i, "sort");
  return {values, indices};
}
Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  EMBER_OP(argsort, self, dim, descending);
  return std::get<1>(sort_impl(self, dim, descending, "argsort"));
}
Tensor argsort(const Tensor& self, bool /*stable*/, int64_t dim, bool descending) {
  EMBER_OP(argsort_1, self, dim, descending);
  return std::get<1>(sort_impl(self, dim, descending, "argsort"));
}
Tensor msort(const Tensor& self) {
  EMBER_OP(msort, self);
  return std::get<0>(sort_rec(self, 0, false, "msort"));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  EMBER_OP(topk, self, k, dim, largest, sorted);
  autograd::OpRecorder rec("topk", {self});
  auto [v, i] = topk_impl(self, k, dim, largest, sorted);
  if (rec) record_selected(rec, self, v, i, wrap_dim(dim, self.dim(), "topk"), true);
  return {v, i};
}

namespace {
std::tuple<Tensor, Tensor> topk_impl(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                     bool sorted) {
  const char* op = "topk";
  EMBER_CHECK(self.defined(), "[", op, "] input tensor is undefined");
  dim = wrap_dim(dim, self.dim(), op);
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  EMBER_CHECK(k >= 0 && k <= n, "[", op, "] selected index k out of range: k = ", k,
              ", size of dim ", dim, " = ", n);
  if (self.dim() == 0) return scalar_result(self);
  EMBER_CHECK(self.dtype() != kBool && !self.is_complex(), "[", op,
              "] \"topk_cpu\" not "
              "implemented for '",
              toString(self.dtype()), "'");
  Rows r = to_rows(self, dim);
  DimVector shape = r.moved;
  shape.back() = k;
  Tensor v = empty_tensor(shape, self.dtype(), self.device());
  Tensor i = empty_tensor(shape, kLong, self.device());
  if (r.rows > 0 && k > 0) topk_stub(self.device().type(), r.data, v, i, k, largest, sorted);
  return {from_rows(v, self, dim), from_rows(i, self, dim)};
}
}  // namespace

std::tuple<Tensor&, Tensor&> topk_out(Tensor& values, Tensor& indices, const Tensor& self,
                                      int64_t k, int64_t dim, bool largest, bool sorted) {
  EMBER_OP(topk_out, values, indices, self, k, dim, largest, sorted);
  autograd::check_out_not_differentiable("topk", {self});
  auto [v, i] = topk(self, k, dim, largest, sorted);
  assign_out(values, v, "topk");
  assign_out(indices, i, "topk");
  return {values, indices};
}

namespace sort_detail {
void assign_out(Tensor& out, const Tensor& r, const char* op) {
  EMBER_CHECK(out.dtype() == r.dtype(), "[", op, "] expected out dtype ", dtype_name(r.dtype()),
              ", got ", dtype_name(out.dtype()));
  if (out.sizes() != r.sizes()) resize_output(out, r.sizes());
  out.copy_(r);
}
}  // namespace sort_detail

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return ember::sort(*this, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t dim,
                                        bool descending) const {
  return ember::sort(*this, stable, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const {
  return ember::argsort(*this, dim, descending);
}
Tensor Tensor::msort() const { return ember::msort(*this); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}

}  // namespace ember
