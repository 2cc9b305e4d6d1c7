#pragma once
/// Tensor: a cheap, reference-counted handle to a TensorImpl (see Note [Tensor invariants]).
/// The API mirrors libtorch's `at::Tensor`.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/generator.h"
#include "ember/op_list.h"
#include "ember/scalar.h"
#include "ember/tensor_impl.h"
#include "ember/tensor_options.h"

namespace ember {

class Tensor;
namespace indexing {
class TensorIndex;
}
namespace autograd {
class Node;
}

/// Handle to a tensor. Copying a Tensor shares the data (like libtorch); use clone() to copy.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata ----
  bool defined() const { return bool(impl_); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& impl() const { return impl_; }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  /// Size of dim `d` (negative counts from the end); IndexError when out of range.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  ScalarType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_complex() const { return isComplexType(dtype()); }
  bool is_floating_point() const { return isFloatingType(dtype()); }
  bool is_signed() const { return isSignedType(dtype()); }
  bool is_conj() const { return impl_->is_conj(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  size_t element_size() const { return impl_->itemsize(); }
  size_t itemsize() const { return impl_->itemsize(); }
  size_t nbytes() const { return size_t(numel()) * itemsize(); }
  const Storage& storage() const { return impl_->storage(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  size_t use_count() const { return impl_.use_count(); }
  /// Version counter shared with views; bumped by every in-place write.
  uint32_t _version() const { return impl_->version(); }
  bool is_alias_of(const Tensor& o) const { return storage().is_alias_of(o.storage()); }

  /// Pointer to element 0. `T` must match the dtype (TypeError otherwise).
  template <class T>
  T* data_ptr() const;
  void* data_ptr() const { return impl_->data(); }
  /// The single element of a one-element tensor, converted to `T`.
  template <class T>
  T item() const {
    return item().to<T>();
  }
  Scalar item() const;

  // ---- autograd (src/autograd; semantics of PyTorch's autograd) ----
  bool requires_grad() const;
  Tensor& set_requires_grad(bool r);
  Tensor& requires_grad_(bool r = true) { return set_requires_grad(r); }
  /// True for tensors not produced by a recorded op (user-created, or requires_grad false).
  bool is_leaf() const;
  /// Which output of grad_fn() this tensor is.
  int64_t output_nr() const;
  /// The node that produced this tensor in the autograd graph (null for leaves).
  std::shared_ptr<autograd::Node> grad_fn() const;
  /// Accumulated gradient (undefined until a backward reaches this tensor).
  const Tensor& grad() const;
  /// The gradient slot itself (assignable).
  Tensor& mutable_grad() const;
  /// Reverse-mode backward from this tensor (`gradient` may be omitted for one element).
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false,
                std::optional<std::vector<Tensor>> inputs = std::nullopt) const;
  /// Makes a non-leaf tensor keep its .grad.
  void retain_grad() const;
  bool retains_grad() const;
  /// A tensor sharing storage but outside the graph (requires_grad false).
  Tensor detach() const;
  Tensor& detach_();
  /// Hook on this tensor's gradient: a callable taking the gradient and returning a
  /// replacement Tensor (undefined keeps it) or void. Returns a handle for remove_hook.
  template <class F>
  unsigned register_hook(F&& hook) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, const Tensor&>>) {
      return _register_hook([h = std::forward<F>(hook)](const Tensor& g) mutable {
        h(g);
        return Tensor();
      });
    } else {
      return _register_hook(std::function<Tensor(const Tensor&)>(std::forward<F>(hook)));
    }
  }
  unsigned _register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(unsigned handle) const;
  /// Hook run on a leaf after its .grad was updated.
  unsigned register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;
  /// The values without autograd history (PyTorch's `.data`).
  Tensor variable_data() const;
  /// Created under InferenceMode.
  bool is_inference() const { return impl_->is_inference(); }
  /// A view's base tensor (undefined when not a view).
  Tensor _base() const;
  bool is_view() const { return impl_->view_base() != nullptr; }
  /// Forward-mode tangent at `level` (undefined when none).
  Tensor _fw_grad(uint64_t level) const;
  /// Sets the forward-mode tangent at `level` (checked to match shape and dtype).
  void _set_fw_grad(const Tensor& tangent, uint64_t level, bool is_inplace_op = false) const;

  // ---- conversion and copying ----
  Tensor contiguous() const;
  Tensor clone() const;
  /// Copies `src` (broadcast to this shape, any dtype) into this tensor.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& opts = {}, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  /// `t.to(kCPU)`: a device type alone (ambiguous between Device and TensorOptions otherwise).
  Tensor to(DeviceType device, bool non_blocking = false, bool copy = false) const {
    return to(Device(device), non_blocking, copy);
  }
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda() const { return to(Device(kCUDA, 0)); }
  Tensor type_as(const Tensor& o) const { return to(o.dtype()); }
  Tensor& fill_(const Scalar& v);
  Tensor& fill_(const Tensor& v);
  Tensor& zero_() { return fill_(Scalar(0)); }

  // ---- views (share storage; see views.cpp) ----
  Tensor view(IntArrayRef sizes) const;
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor reshape(IntArrayRef sizes) const;
  Tensor reshape_as(const Tensor& o) const { return reshape(o.sizes()); }
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor swapaxes(int64_t d0, int64_t d1) const { return transpose(d0, d1); }
  Tensor t() const;
  Tensor& t_();
  Tensor& transpose_(int64_t d0, int64_t d1);
  Tensor mT() const;
  Tensor expand(IntArrayRef sizes, bool implicit = false) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t d) const;
  Tensor& squeeze_();
  Tensor& squeeze_(int64_t d);
  Tensor unsqueeze(int64_t d) const;
  Tensor& unsqueeze_(int64_t d);
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t d, IntArrayRef sizes) const;
  Tensor narrow(int64_t d, int64_t start, int64_t length) const;
  Tensor slice(int64_t d = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor select(int64_t d, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor unfold(int64_t d, int64_t size, int64_t step) const;
  Tensor diagonal(int64_t offset = 0, int64_t d1 = 0, int64_t d2 = 1) const;
  Tensor movedim(IntArrayRef src, IntArrayRef dst) const;
  Tensor movedim(int64_t src, int64_t dst) const;
  Tensor moveaxis(int64_t src, int64_t dst) const { return movedim(src, dst); }
  Tensor moveaxis(IntArrayRef src, IntArrayRef dst) const { return movedim(src, dst); }
  std::vector<Tensor> split(int64_t split_size, int64_t d = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t d = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t d = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t d = 0) const;
  std::vector<Tensor> unbind(int64_t d = 0) const;
  /// Indexing as Python's `x[...]`: ints, Slice, None, Ellipsis and bools give a view
  /// (`x.index({Slice(1, None, 2), 0})`); integer or bool/uint8 mask tensors add advanced
  /// indexing (a copy; index dims placed as PyTorch places them).
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  /// Writes `v` into `this->index(indices)` (through tensor indices too); an out-of-range
  /// index raises IndexError before anything is written.
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& v);
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& v);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& v);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& v);
  /// A lazy conjugate (sets the conj bit on complex tensors; identity otherwise).
  Tensor conj() const;
  /// Materialises a lazy conjugate; returns self when the conj bit is not set.
  Tensor resolve_conj() const;
  Tensor conj_physical() const;
  Tensor& conj_physical_();
  /// Real/imaginary part as a view (complex input); real() of a real tensor is itself.
  Tensor real() const;
  Tensor imag() const;

  // ---- elementwise ops (ops.h has the free-function forms) ----
#define EMBER_DECL_UNARY_METHOD(op) \
  Tensor op() const;                \
  Tensor& op##_();
  EMBER_UNARY_OPS(EMBER_DECL_UNARY_METHOD)
#undef EMBER_DECL_UNARY_METHOD
#define EMBER_DECL_PRED_METHOD(op) Tensor op() const;
  EMBER_UNARY_PREDICATE_OPS(EMBER_DECL_PRED_METHOD)
#undef EMBER_DECL_PRED_METHOD
#define EMBER_DECL_BINARY_METHOD(op)    \
  Tensor op(const Tensor& other) const; \
  Tensor op(const Scalar& other) const; \
  Tensor& op##_(const Tensor& other);   \
  Tensor& op##_(const Scalar& other);
  EMBER_BINARY_OPS(EMBER_DECL_BINARY_METHOD)
  EMBER_COMPARISON_OPS(EMBER_DECL_BINARY_METHOD)
#undef EMBER_DECL_BINARY_METHOD

  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1);
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1);
  /// rounding_mode: nullopt (true division), "trunc" or "floor".
  Tensor div(const Tensor& other,
             std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor div(const Scalar& other,
             std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor& div_(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt);
  Tensor& div_(const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt);
  Tensor round(int64_t decimals = 0) const;
  Tensor& round_(int64_t decimals = 0);
  Tensor clamp(const std::optional<Scalar>& min,
               const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min = std::nullopt,
               const std::optional<Tensor>& max = std::nullopt) const;
  Tensor& clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
  Tensor& clamp_(const std::optional<Tensor>& min = std::nullopt,
                 const std::optional<Tensor>& max = std::nullopt);
  Tensor clamp_min(const Scalar& min) const { return clamp(min, std::nullopt); }
  Tensor clamp_min(const Tensor& min) const { return clamp(min, std::nullopt); }
  Tensor& clamp_min_(const Scalar& min) { return clamp_(min, std::nullopt); }
  Tensor& clamp_min_(const Tensor& min) { return clamp_(min, std::nullopt); }
  Tensor clamp_max(const Scalar& max) const { return clamp(std::nullopt, max); }
  Tensor clamp_max(const Tensor& max) const { return clamp(std::nullopt, max); }
  Tensor& clamp_max_(const Scalar& max) { return clamp_(std::nullopt, max); }
  Tensor& clamp_max_(const Tensor& max) { return clamp_(std::nullopt, max); }
  Tensor clip(const std::optional<Scalar>& min,
              const std::optional<Scalar>& max = std::nullopt) const {
    return clamp(min, max);
  }
  Tensor clip(const std::optional<Tensor>& min = std::nullopt,
              const std::optional<Tensor>& max = std::nullopt) const {
    return clamp(min, max);
  }
  Tensor& clip_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) {
    return clamp_(min, max);
  }
  Tensor& clip_(const std::optional<Tensor>& min = std::nullopt,
                const std::optional<Tensor>& max = std::nullopt) {
    return clamp_(min, max);
  }
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor& logit_(std::optional<double> eps = std::nullopt);
  Tensor polygamma(int64_t n) const;
  Tensor& polygamma_(int64_t n);
  Tensor mvlgamma(int64_t p) const;
  Tensor& mvlgamma_(int64_t p);
  Tensor nan_to_num(std::optional<double> nan = std::nullopt,
                    std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor& nan_to_num_(std::optional<double> nan = std::nullopt,
                      std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor isclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
                 bool equal_nan = false) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
                bool equal_nan = false) const;
  /// Same shape and same values (NaN != NaN).
  bool equal(const Tensor& other) const;
  // PyTorch's alias names (tensor_methods.cpp).
  Tensor absolute() const;
  Tensor& absolute_();
  Tensor negative() const;
  Tensor& negative_();
  Tensor multiply(const Tensor& other) const;
  Tensor multiply(const Scalar& other) const;
  Tensor& multiply_(const Tensor& other);
  Tensor& multiply_(const Scalar& other);
  /// x where |x| > lambd, else 0.
  Tensor hardshrink(const Scalar& lambd = 0.5) const;
  Tensor arctan2(const Tensor& other) const;
  Tensor& arctan2_(const Tensor& other);
  Tensor subtract(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor subtract(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& subtract_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& subtract_(const Scalar& other, const Scalar& alpha = 1);
  Tensor divide(const Tensor& other,
                std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor divide(const Scalar& other,
                std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor& divide_(const Tensor& other,
                  std::optional<std::string_view> rounding_mode = std::nullopt);
  Tensor& divide_(const Scalar& other,
                  std::optional<std::string_view> rounding_mode = std::nullopt);
  Tensor greater(const Scalar& other) const;
  Tensor greater(const Tensor& other) const;
  Tensor& greater_(const Scalar& other);
  Tensor& greater_(const Tensor& other);
  Tensor less(const Scalar& other) const;
  Tensor less(const Tensor& other) const;
  Tensor& less_(const Scalar& other);
  Tensor& less_(const Tensor& other);
  Tensor not_equal(const Scalar& other) const;
  Tensor not_equal(const Tensor& other) const;
  Tensor& not_equal_(const Scalar& other);
  Tensor& not_equal_(const Tensor& other);

  // ---- reductions (ember/reduce.h; definitions next to the free functions) ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  /// Sum over `dim` (nullopt or empty: every dim).
  Tensor sum(OptionalIntArrayRef dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor nansum(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(OptionalIntArrayRef dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor nanmean(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                 std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor max(const Tensor& other) const;
  Tensor min(const Tensor& other) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt,
                                     bool keepdim = false) const;
  // The overloads of libtorch: `var(1)` and `var({1})` reduce dim 1 (the int overload, since
  // int -> bool would beat int -> OptionalIntArrayRef), `var(true)` every element, and
  // `std(2, false)` dim 2 with unbiased = false. An int64_t variable is ambiguous, as in
  // libtorch: pass `IntArrayRef(d)` or `{d}`.
  Tensor var(bool unbiased = true) const;
  Tensor var(OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor var(OptionalIntArrayRef dim, std::optional<int64_t> correction,
             bool keepdim = false) const;
  Tensor var(int dim) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std(OptionalIntArrayRef dim, std::optional<int64_t> correction,
             bool keepdim = false) const;
  Tensor std(int dim) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor norm(const std::optional<Scalar>& p = std::nullopt, IntArrayRef dim = {},
              bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor norm(const std::optional<Scalar>& p, ScalarType dtype) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor count_nonzero(IntArrayRef dim) const;
  Tensor count_nonzero(std::optional<int64_t> dim = std::nullopt) const;
  // end reductions

  // ---- scans, softmax, sorting (ember/sort.h; definitions next to the free functions) ----
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor& cumsum_(int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor& cumprod_(int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  Tensor logcumsumexp(int64_t dim) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1,
                                  bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  /// `argsort(true)` is the stable overload, as in libtorch (not dim 1).
  Tensor argsort(bool stable, int64_t dim = -1, bool descending = false) const;
  Tensor msort() const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::tuple<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  Tensor quantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor quantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor nanquantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                     bool keepdim = false, std::string_view interpolation = "linear") const;
  Tensor nanquantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  // end scans, softmax, sorting

  // ---- indexing ops (ember/index_ops.h; definitions next to the free functions) ----
  /// See ember/index_ops.h for each op; `op_` forms write into self and return it.
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index, bool sparse_grad = false) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src,
                 std::string_view reduce) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value,
                 std::string_view reduce) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce);
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self = true) const;
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                          std::string_view reduce, bool include_self = true);
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha = 1) const;
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source,
                     const Scalar& alpha = 1);
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source);
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Tensor& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Scalar& value);
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Tensor& value);
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  Tensor masked_select(const Tensor& mask) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);
  Tensor nonzero() const;
  Tensor argwhere() const;
  /// nonzero as one 1-D index tensor per dim.
  std::vector<Tensor> nonzero_numpy() const;
  Tensor take(const Tensor& index) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  Tensor put(const Tensor& index, const Tensor& source, bool accumulate = false) const;
  Tensor& put_(const Tensor& index, const Tensor& source, bool accumulate = false);
  /// `self[indices] = values` (or `+=` with accumulate); nullopt entries take a whole dim.
  /// (accumulate has no default: a two-argument call is the TensorIndex overload above.)
  Tensor& index_put_(ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                     bool accumulate);
  Tensor index_put(ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                   bool accumulate) const;
  // end indexing ops

  // ---- shape ops (ember/shape_ops.h; definitions next to the free functions) ----
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(IntArrayRef indices, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(const Tensor& tensor_indices_or_sections, int64_t dim = 0) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor fliplr() const;
  Tensor flipud() const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor rot90(int64_t k = 1, IntArrayRef dims = {0, 1}) const;
  /// Tiles the tensor `repeats[i]` times along each dim (len(repeats) >= dim()).
  Tensor repeat(IntArrayRef repeats) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor diagflat(int64_t offset = 0) const;
  /// Lower/upper triangle of the last two dims (ember/ops.h).
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor& tril_(int64_t diagonal = 0);
  Tensor& triu_(int64_t diagonal = 0);
  Tensor diagonal_scatter(const Tensor& src, int64_t offset = 0, int64_t dim1 = 0,
                          int64_t dim2 = 1) const;
  Tensor select_scatter(const Tensor& src, int64_t dim, int64_t index) const;
  Tensor slice_scatter(const Tensor& src, int64_t dim = 0,
                       std::optional<int64_t> start = std::nullopt,
                       std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor broadcast_to(IntArrayRef size) const;
  Tensor histc(int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0) const;
  Tensor bincount(const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0) const;
  Tensor diff(int64_t n = 1, int64_t dim = -1, const std::optional<Tensor>& prepend = std::nullopt,
              const std::optional<Tensor>& append = std::nullopt) const;
  /// p-norm of self - other (broadcast).
  Tensor dist(const Tensor& other, const Scalar& p = 2) const;
  // end shape ops

  // ---- the rest of the catalogue (definitions next to the free functions) ----
  /// The argument (phase) of each element: atan2(imag, real); 0 or pi for real inputs.
  Tensor angle() const;
  /// Mantissa in [0.5, 1) and integer exponent with self = mantissa * 2^exponent.
  std::tuple<Tensor, Tensor> frexp() const;
  /// self * 2^other.
  Tensor ldexp(const Tensor& other) const;
  Tensor& ldexp_(const Tensor& other);
  /// The tensor as complex32 (torch.Tensor.chalf).
  Tensor chalf() const;
  Tensor cov(int64_t correction = 1, const std::optional<Tensor>& fweights = std::nullopt,
             const std::optional<Tensor>& aweights = std::nullopt) const;
  Tensor corrcoef() const;
  std::tuple<Tensor, Tensor> histogram(const Tensor& bins,
                                       const std::optional<Tensor>& weight = std::nullopt,
                                       bool density = false) const;
  std::tuple<Tensor, Tensor> histogram(int64_t bins = 100,
                                       std::optional<std::vector<double>> range = std::nullopt,
                                       const std::optional<Tensor>& weight = std::nullopt,
                                       bool density = false) const;
  Tensor renorm(const Scalar& p, int64_t dim, const Scalar& maxnorm) const;
  Tensor& renorm_(const Scalar& p, int64_t dim, const Scalar& maxnorm);
  Tensor index_reduce(int64_t dim, const Tensor& index, const Tensor& source,
                      std::string_view reduce, bool include_self = true) const;
  Tensor& index_reduce_(int64_t dim, const Tensor& index, const Tensor& source,
                        std::string_view reduce, bool include_self = true);
  Tensor narrow_copy(int64_t dim, int64_t start, int64_t length) const;
  /// Resizes in place, keeping the storage when it is large enough (contiguous strides).
  Tensor& resize_(IntArrayRef size);
  Tensor& resize_as_(const Tensor& the_template);
  Tensor sum_to_size(IntArrayRef size) const;
  Tensor as_strided_scatter(const Tensor& src, IntArrayRef size, IntArrayRef stride,
                            std::optional<int64_t> storage_offset = std::nullopt) const;
  std::vector<Tensor> hsplit(int64_t sections) const;
  std::vector<Tensor> hsplit(IntArrayRef indices) const;
  std::vector<Tensor> vsplit(int64_t sections) const;
  std::vector<Tensor> vsplit(IntArrayRef indices) const;
  std::vector<Tensor> dsplit(int64_t sections) const;
  std::vector<Tensor> dsplit(IntArrayRef indices) const;
  Tensor new_empty_strided(IntArrayRef size, IntArrayRef stride,
                           const TensorOptions& options = {}) const;
  std::tuple<Tensor, Tensor> geqrf() const;
  Tensor ormqr(const Tensor& input2, const Tensor& input3, bool left = true,
               bool transpose = false) const;
  Tensor lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const;
  Tensor stft(int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
              std::optional<int64_t> win_length = std::nullopt,
              const std::optional<Tensor>& window = std::nullopt, bool center = true,
              std::string_view pad_mode = "reflect", bool normalized = false,
              std::optional<bool> onesided = std::nullopt,
              std::optional<bool> return_complex = std::nullopt) const;
  Tensor istft(int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
               std::optional<int64_t> win_length = std::nullopt,
               const std::optional<Tensor>& window = std::nullopt, bool center = true,
               bool normalized = false, std::optional<bool> onesided = std::nullopt,
               std::optional<int64_t> length = std::nullopt, bool return_complex = false) const;
  // end the rest of the catalogue

  // ---- matrix products (ember/blas.h; definitions next to the free functions) ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
               const Scalar& alpha = 1) const;
  Tensor& addmm_(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
                 const Scalar& alpha = 1);
  Tensor addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
               const Scalar& alpha = 1) const;
  Tensor& addmv_(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
                 const Scalar& alpha = 1);
  Tensor addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
              const Scalar& alpha = 1) const;
  Tensor& addr_(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
                const Scalar& alpha = 1);
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                const Scalar& alpha = 1) const;
  Tensor& addbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                  const Scalar& alpha = 1);
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                 const Scalar& alpha = 1) const;
  Tensor& baddbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                   const Scalar& alpha = 1);
  Tensor mv(const Tensor& vec) const;
  Tensor dot(const Tensor& other) const;
  Tensor vdot(const Tensor& other) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor ger(const Tensor& vec2) const;
  Tensor inner(const Tensor& other) const;
  Tensor kron(const Tensor& other) const;
  Tensor cross(const Tensor& other, std::optional<int64_t> dim = std::nullopt) const;
  Tensor trace() const;
  // end matrix products

  // ---- linear algebra (ember/linalg.h; definitions next to the free functions) ----
  /// Determinant of the last two dims (1 for 0x0).
  Tensor det() const;
  /// log(det): nan for a negative real determinant.
  Tensor logdet() const;
  /// (sign, log|det|).
  std::tuple<Tensor, Tensor> slogdet() const;
  /// Inverse; LinAlgError for a singular matrix.
  Tensor inverse() const;
  /// Cholesky factor (lower, or upper when `upper`).
  Tensor cholesky(bool upper = false) const;
  /// (Q, R): reduced when `some`, complete otherwise.
  std::tuple<Tensor, Tensor> qr(bool some = true) const;
  /// (U, S, V) with self = U diag(S) Vᴴ.
  std::tuple<Tensor, Tensor, Tensor> svd(bool some = true, bool compute_uv = true) const;
  /// Pseudo-inverse with relative cutoff rcond.
  Tensor pinverse(double rcond = 1e-15) const;
  /// self^n for square matrices (n < 0 inverts).
  Tensor matrix_power(int64_t n) const;
  /// Matrix exponential.
  Tensor matrix_exp() const;
  /// Inverse of A from its Cholesky factor (self).
  Tensor cholesky_inverse(bool upper = false) const;
  /// Solves A X = self given A's Cholesky factor `input2`.
  Tensor cholesky_solve(const Tensor& input2, bool upper = false) const;
  /// (solution of op(A) X = self, clone of A).
  std::tuple<Tensor, Tensor> triangular_solve(const Tensor& A, bool upper = true,
                                              bool transpose = false,
                                              bool unitriangular = false) const;
  // end linear algebra

  // ---- random fills ----
  Tensor& uniform_(double from = 0, double to = 1, std::optional<Generator> gen = std::nullopt);
  Tensor& normal_(double mean = 0, double std = 1, std::optional<Generator> gen = std::nullopt);
  Tensor& exponential_(double lambd = 1, std::optional<Generator> gen = std::nullopt);
  Tensor& bernoulli_(double p = 0.5, std::optional<Generator> gen = std::nullopt);
  Tensor& bernoulli_(const Tensor& p, std::optional<Generator> gen = std::nullopt);
  Tensor& random_(int64_t from, std::optional<int64_t> to,
                  std::optional<Generator> gen = std::nullopt);
  /// Integers in [0, to). (Two overloads rather than an optional generator, so that
  /// `random_(from, std::nullopt)` stays the from-only form.)
  Tensor& random_(int64_t to) { return random_(0, to); }
  Tensor& random_(int64_t to, Generator gen) { return random_(0, to, std::move(gen)); }
  Tensor bernoulli(std::optional<Generator> gen = std::nullopt) const;
  /// 1 with probability p, elementwise, in self's shape and dtype.
  Tensor bernoulli(double p, std::optional<Generator> gen = std::nullopt) const;
  /// Indices of `num_samples` draws from the rows of self (non-negative weights).
  Tensor multinomial(int64_t num_samples, bool replacement = false,
                     std::optional<Generator> gen = std::nullopt) const;

  // ---- printing ----
  std::string toString() const;
  void print() const;

  // ---- operators (assignment forms; the binary operators are free functions) ----
  Tensor operator-() const { return neg(); }
  Tensor operator~() const { return bitwise_not(); }
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }
  Tensor& operator&=(const Tensor& o) { return bitwise_and_(o); }
  Tensor& operator|=(const Tensor& o) { return bitwise_or_(o); }
  Tensor& operator^=(const Tensor& o) { return bitwise_xor_(o); }

 private:
  intrusive_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace ember
