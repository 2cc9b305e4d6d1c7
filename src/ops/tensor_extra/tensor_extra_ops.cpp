// The rest of the catalogue's tensor ops, composites of recorded ops (their gradients come for
// free): renorm, narrow_copy, rsub, fill, sum_to_size, as_strided_scatter, h/v/dsplit,
// new_empty_strided and randint_like; and resize_ / resize_as_, which change a tensor's
// geometry in place. Checks and messages follow PyTorch 1.13.
#include <string>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "ember/tensor_extra.h"
#include "ember/tensor_impl.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

// ---- renorm ----

// As PyTorch: factor = maxnorm / (norm + 1e-7) where the slice's norm exceeds maxnorm, else 1.
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  EMBER_OP(renorm, self, p, dim, maxnorm);
  const char* op = "renorm";
  EMBER_CHECK(!p.isComplex() && p.toDouble() > 0, "[", op,
              "] renorm: non-positive-norm not supported (p = ", p, ")");
  EMBER_CHECK(!maxnorm.isComplex() && maxnorm.toDouble() >= 0, "[", op,
              "] renorm: expected maxnorm to be >= 0 but got ", maxnorm);
  EMBER_CHECK(self.dim() > 1, "[", op, "] renorm: input needs at least 2 dimensions, got ",
              self.dim(), " dimensions");
  dim = wrap_dim(dim, self.dim(), op);
  EMBER_CHECK(isFloatingType(self.dtype()) || isComplexType(self.dtype()), "[", op,
              "] linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
              dtype_name(self.dtype()));
  DimVector rd;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != dim) rd.push_back(d);
  }
  Tensor norm = linalg_vector_norm(self, p, IntArrayRef(rd), /*keepdim=*/true);
  Tensor factor =
      where(norm.gt(maxnorm), norm.add(Scalar(1e-7)).reciprocal().mul(maxnorm), Scalar(1.0));
  return self.mul(factor.to(toRealValueType(self.dtype())));
}

Tensor Tensor::renorm(const Scalar& p, int64_t dim, const Scalar& maxnorm) const {
  return ember::renorm(*this, p, dim, maxnorm);
}

// As index_reduce_: the composite reads a clone when recording, since its rules save their
// input and copy_ then overwrites self.
Tensor& Tensor::renorm_(const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  const bool rec = autograd::any_needs_recording({*this});
  Tensor r = ember::renorm(rec ? clone() : *this, p, dim, maxnorm);
  copy_(r);
  return *this;
}

// ---- narrow_copy ----

Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  EMBER_OP(narrow_copy, self, dim, start, length);
  EMBER_CHECK(self.dim() > 0, "[narrow_copy] narrow() cannot be applied to a 0-dim tensor.");
  // PyTorch's narrow_copy reports a bad dim as a RuntimeError (narrow: IndexError).
  EMBER_CHECK(dim >= -self.dim() && dim < self.dim(), "[narrow_copy] dim ", dim,
              " is out of range for a tensor of ", self.dim(), " dims");
  return self.narrow(dim, start, length).clone().contiguous();
}

Tensor Tensor::narrow_copy(int64_t dim, int64_t start, int64_t length) const {
  return ember::narrow_copy(*this, dim, start, length);
}

// ---- rsub ----

Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  EMBER_OP(rsub, self, other, alpha);
  return sub(other, self, alpha);
}

Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  EMBER_OP(rsub, self, other, alpha);
  return sub(wrap_scalar(other), self, alpha);
}

// ---- fill ----

// The result keeps self's layout (empty_like). Filling a clone when self is recorded gives
// self its zero gradient through fill_'s own rule.
Tensor fill(const Tensor& self, const Scalar& value) {
  EMBER_OP(fill, self, value);
  EMBER_CHECK(self.defined(), "[fill] undefined tensor");
  if (autograd::any_needs_recording({self})) return self.clone().fill_(value);
  Tensor out = empty_like(self);
  out.fill_(value);
  return out;
}

Tensor fill(const Tensor& self, const Tensor& value) {
  EMBER_OP(fill, self, value);
  EMBER_CHECK(self.defined() && value.defined(), "[fill] undefined tensor");
  EMBER_CHECK(value.dim() == 0, "[fill] fill_ only supports 0-dimension value tensor but got ",
              "tensor with ", value.dim(), " dimensions.");
  const Scalar v = value.item();
  if (!autograd::any_needs_recording({value})) return fill(self, v);
  EMBER_CHECK(value_fits(v, self.dtype()), "[fill] value cannot be converted to type ",
              dtype_name(self.dtype()), " without overflow");
  // value's gradient is the sum of the output's: a where over an all-true mask.
  Tensor all = ones(self.sizes(), TensorOptions(kBool).device(self.device()));
  return where(all, value.to(self.dtype()), self);
}

// ---- sum_to_size ----

Tensor sum_to_size(const Tensor& self, IntArrayRef size) {
  EMBER_OP(sum_to_size, self, size);
  const int64_t lead = self.dim() - int64_t(size.size());
  bool ok = lead >= 0;
  for (size_t i = 0; ok && i < size.size(); ++i) {
    ok = size[i] == 1 || size[i] == self.size(lead + int64_t(i));
  }
  EMBER_CHECK(ok, "[sum_to_size] size {", shape_str(size), "} is not expandable to size {",
              shape_str(self.sizes()), "}.");
  DimVector dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 1 && self.size(lead + int64_t(i)) != 1) dims.push_back(lead + int64_t(i));
  }
  if (dims.empty()) return self;
  return self.sum(IntArrayRef(dims), /*keepdim=*/true).view(size);
}

Tensor Tensor::sum_to_size(IntArrayRef size) const { return ember::sum_to_size(*this, size); }

// ---- as_strided_scatter ----

// Written without writing into a view: the clone is seen as its flat storage, the view's
// storage positions are overwritten by a scatter, and the result is the clone's geometry over
// that storage. Every step is a recorded out-of-place op, so both inputs get their gradients and
// tangents.
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size,
                          IntArrayRef stride, std::optional<int64_t> storage_offset) {
  EMBER_OP(as_strided_scatter, self, src, size, stride, storage_offset);
  EMBER_CHECK(self.defined() && src.defined(), "[as_strided_scatter] undefined tensor");
  Tensor out = self.clone();  // dense, so its storage holds exactly numel elements
  const int64_t n = out.numel();
  // The storage positions the view reaches (as_strided checks them against the storage).
  Tensor pos = arange(n, TensorOptions(kLong)).as_strided(size, stride, storage_offset);
  EMBER_CHECK(pos.sizes().equals(src.sizes()),
              "[as_strided_scatter] expected src to have a size equal to the slice of self. "
              "src size = ",
              shape_str(src.sizes()), ", slice size = ", shape_str(pos.sizes()));
  Tensor flat = out.as_strided({n}, {1}, 0);
  Tensor values = src.to(self.dtype()).reshape({-1});
  flat = flat.scatter(0, pos.reshape({-1}), values);
  return flat.as_strided(out.sizes(), out.strides(), 0);
}

Tensor Tensor::as_strided_scatter(const Tensor& src, IntArrayRef size, IntArrayRef stride,
                                  std::optional<int64_t> storage_offset) const {
  return ember::as_strided_scatter(*this, src, size, stride, storage_offset);
}

// ---- hsplit / vsplit / dsplit ----

namespace {

/// The dim that `name` splits after checking self has at least `min_dim` dims.
int64_t split_dim(const Tensor& self, const char* name, int64_t min_dim, int64_t dim) {
  EMBER_CHECK(self.dim() >= min_dim, "[", name, "] torch.", name,
              " requires a tensor with at least ", min_dim, " dimension, but got a tensor with ",
              self.dim(), self.dim() == 1 ? " dimension!" : " dimensions!");
  return dim;
}

std::vector<Tensor> split_sections(const Tensor& self, int64_t sections, const char* name,
                                   int64_t dim) {
  EMBER_CHECK(sections != 0 && self.size(dim) % sections == 0, "[", name, "] torch.", name,
              " attempted to split along dimension ", dim, ", but the size of the dimension ",
              self.size(dim), " is not divisible by the split_size ", sections, "!");
  return tensor_split(self, sections, dim);
}

}  // namespace

std::vector<Tensor> hsplit(const Tensor& self, int64_t sections) {
  EMBER_OP(hsplit, self, sections);
  const int64_t d = split_dim(self, "hsplit", 1, self.dim() == 1 ? 0 : 1);
  return split_sections(self, sections, "hsplit", d);
}
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices) {
  EMBER_OP(hsplit, self, indices);
  const int64_t d = split_dim(self, "hsplit", 1, self.dim() == 1 ? 0 : 1);
  return tensor_split(self, indices, d);
}
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections) {
  EMBER_OP(vsplit, self, sections);
  return split_sections(self, sections, "vsplit", split_dim(self, "vsplit", 2, 0));
}
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices) {
  EMBER_OP(vsplit, self, indices);
  return tensor_split(self, indices, split_dim(self, "vsplit", 2, 0));
}
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections) {
  EMBER_OP(dsplit, self, sections);
  return split_sections(self, sections, "dsplit", split_dim(self, "dsplit", 3, 2));
}
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices) {
  EMBER_OP(dsplit, self, indices);
  return tensor_split(self, indices, split_dim(self, "dsplit", 3, 2));
}

std::vector<Tensor> Tensor::hsplit(int64_t sections) const {
  return ember::hsplit(*this, sections);
}
std::vector<Tensor> Tensor::hsplit(IntArrayRef indices) const {
  return ember::hsplit(*this, indices);
}
std::vector<Tensor> Tensor::vsplit(int64_t sections) const {
  return ember::vsplit(*this, sections);
}
std::vector<Tensor> Tensor::vsplit(IntArrayRef indices) const {
  return ember::vsplit(*this, indices);
}
std::vector<Tensor> Tensor::dsplit(int64_t sections) const {
  return ember::dsplit(*this, sections);
}
std::vector<Tensor> Tensor::dsplit(IntArrayRef indices) const {
  return ember::dsplit(*this, indices);
}

// ---- new_empty_strided / randint_like ----

namespace {

/// `opts` with self's dtype and device where it leaves them unset, without requires_grad.
TensorOptions like_options(const Tensor& self, const TensorOptions& opts) {
  return TensorOptions()
      .dtype(opts.has_dtype() ? opts.dtype() : self.dtype())
      .device(opts.has_device() ? opts.device() : self.device());
}

}  // namespace

Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                         const TensorOptions& opts) {
  EMBER_OP(new_empty_strided, self, size, stride, opts);
  EMBER_CHECK(size.size() == stride.size(), "[new_empty_strided] dimensionality of sizes (",
              size.size(), ") must match dimensionality of strides (", stride.size(), ")");
  for (int64_t s : size) {
    EMBER_CHECK(s >= 0, "[new_empty_strided] Trying to create tensor with negative dimension ", s,
                ": ", shape_str(size));
  }
  Tensor t = empty_strided(size, stride, like_options(self, opts));
  if (opts.requires_grad()) t.set_requires_grad(true);
  return t;
}

Tensor Tensor::new_empty_strided(IntArrayRef size, IntArrayRef stride,
                                 const TensorOptions& options) const {
  return ember::new_empty_strided(*this, size, stride, options);
}

Tensor randint_like(const Tensor& self, int64_t low, int64_t high, const TensorOptions& opts) {
  EMBER_OP(randint_like, self, low, high, opts);
  Tensor t = empty_like(self, like_options(self, opts));
  EMBER_CHECK(!isComplexType(t.dtype()), "[randint_like] check_random_bounds handles only ",
              "integral, floating-point and boolean types");
  t.random_(low, high);
  if (opts.requires_grad()) t.set_requires_grad(true);
  return t;
}

Tensor randint_like(const Tensor& self, int64_t high, const TensorOptions& opts) {
  EMBER_OP(randint_like, self, int64_t(0), high, opts);
  return randint_like(self, 0, high, opts);
}

// ---- resize_ / resize_as_ ----

// Note [resize_ storage]
// resize_ keeps the storage when it holds storage_offset + numel elements and otherwise moves
// the tensor to a larger storage holding a copy of the old bytes. PyTorch grows the shared
// storage itself, so its other views see the new memory; ember's storages have a fixed size,
// so other views of the old storage keep it (their elements are unchanged, but later writes
// through the resized tensor no longer reach them). Memory not backed by an allocator (from_blob,
// NumPy arrays) cannot grow, as in PyTorch.
Tensor& Tensor::resize_(IntArrayRef size) {
  EMBER_OP(resize_, *this, size);
  const char* op = "resize_";
  EMBER_CHECK(defined(), "[resize_] undefined tensor");
  EMBER_CHECK(!requires_grad(), "[resize_] cannot resize variables that require grad");
  for (int64_t s : size) {
    EMBER_CHECK(s >= 0, "[resize_] Trying to create tensor with negative dimension ", s, ": ",
                shape_str(size));
  }
  // As PyTorch, resizing to the current sizes keeps the strides too.
  if (sizes().equals(size)) return *this;
  TensorImpl* impl = unsafeGetTensorImpl();
  const size_t itemsize = impl->itemsize();
  const size_t need = checked_nbytes(op, size, itemsize);
  const size_t offset_bytes = size_t(impl->storage_offset()) * itemsize;
  const Storage& old = impl->storage();
  if (need > 0 && need + offset_bytes > old.nbytes()) {
    EMBER_CHECK(old.unsafeGetStorageImpl()->allocator() != nullptr,
                "[resize_] Trying to resize storage that is not resizable");
    const size_t total = need + offset_bytes;
    if (device().is_cpu() && total > host_memory_bytes()) throw_out_of_memory(op, total);
    Storage grown = Storage::allocate(total, device());
    const int64_t keep = int64_t(old.nbytes());
    if (keep > 0) {
      // Byte views of both storages: the copy goes through the copy kernel.
      Tensor from(make_intrusive<TensorImpl>(old, kByte, IntArrayRef({keep})));
      Tensor to(make_intrusive<TensorImpl>(grown, kByte, IntArrayRef({int64_t(total)})));
      to.narrow(0, 0, keep).copy_(from);
    }
    impl->set_storage(std::move(grown));
  }
  impl->set_sizes_and_strides(size, contiguous_strides(size), impl->storage_offset());
  return *this;
}

Tensor& Tensor::resize_as_(const Tensor& the_template) {
  EMBER_OP(resize_as_, *this, the_template);
  EMBER_CHECK(the_template.defined(), "[resize_as_] undefined template tensor");
  return resize_(the_template.sizes());
}

}  // namespace ember
