// Nested tensors (include/ember/nested.h): the packed layout, construction and padding.
//
// Note [Nested tensor layout]
// A nested tensor is a 1-D buffer holding its components one after another, each contiguous
// in row-major order, plus an (n, rank) int64 CPU tensor of component sizes. Component i is the
// view buffer[offsets[i] : offsets[i] + numel_i].view(sizes_i). Because every op here is an
// ember op on the buffer or on such views, autograd needs nothing nested-specific: gradients
// reach the buffer, and through the ops that built the buffer (cat, index), the inputs.
#include "ember/nested.h"

#include <algorithm>
#include <string>

#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"

namespace ember::nested {

namespace {

const int64_t* size_rows(const Tensor& sizes) { return sizes.data_ptr<int64_t>(); }

std::string vec_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// `padding` as a Scalar of the kind `dtype` holds (full() of an integer tensor from a double
// would otherwise be rejected).
Scalar padding_scalar(double padding, ScalarType dtype) {
  if (dtype == kBool) return Scalar(padding != 0);
  if (isFloatingType(dtype) || isComplexType(dtype)) return Scalar(padding);
  return Scalar(int64_t(padding));
}

}  // namespace

NestedTensor::NestedTensor(Tensor buffer, Tensor nested_sizes) {
  EMBER_CHECK(buffer.defined() && nested_sizes.defined(),
              "[NestedTensor] buffer and nested sizes must be defined");
  EMBER_CHECK(buffer.dim() == 1, "[NestedTensor] the buffer must be 1-D, got ", buffer.dim(),
              " dims");
  EMBER_CHECK(nested_sizes.dtype() == kLong && nested_sizes.dim() == 2,
              "[NestedTensor] nested sizes must be an (n, rank) int64 tensor, got ",
              nested_sizes.dim(), " dims of ", dtype_name(nested_sizes.dtype()));
  sizes_ = nested_sizes.to(Device(kCPU)).contiguous();
  const int64_t n = sizes_.size(0), r = sizes_.size(1);
  const int64_t* s = size_rows(sizes_);
  offsets_.resize(size_t(n));
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    offsets_[size_t(i)] = total;
    int64_t numel = 1;
    for (int64_t d = 0; d < r; ++d) {
      EMBER_CHECK(s[i * r + d] >= 0, "[NestedTensor] component ", i, " has a negative size");
      numel *= s[i * r + d];
    }
    total += numel;
  }
  EMBER_CHECK(buffer.numel() == total, "[NestedTensor] the buffer has ", buffer.numel(),
              " elements but the nested sizes describe ", total);
  buffer_ = buffer.stride(0) == 1 ? std::move(buffer) : buffer.contiguous();
}

int64_t NestedTensor::dim() const {
  EMBER_CHECK(defined(), "[NestedTensor] undefined nested tensor");
  return 1 + sizes_.size(1);
}

NestedTensor& NestedTensor::requires_grad_(bool r) {
  buffer_.set_requires_grad(r);
  return *this;
}

int64_t NestedTensor::size(int64_t d) const {
  const int64_t nd = dim();
  EMBER_CHECK_INDEX(d >= -nd && d < nd,
                    "[size] Dimension out of range (expected to be in range of [", -nd, ", ",
                    nd - 1, "], but got ", d, ")");
  if (d < 0) d += nd;
  if (d == 0) return num_components();
  const int64_t n = num_components(), r = nd - 1;
  const int64_t* s = size_rows(sizes_);
  for (int64_t i = 1; i < n; ++i)
    EMBER_CHECK(s[i * r + d - 1] == s[d - 1], "[size] Given dimension ", d,
                " is irregular and does not have a size.");
  EMBER_CHECK(n > 0, "[size] Given dimension ", d, " is irregular and does not have a size.");
  return s[d - 1];
}

std::vector<int64_t> NestedTensor::component_sizes(int64_t i) const {
  const int64_t r = sizes_.size(1);
  const int64_t* s = size_rows(sizes_) + i * r;
  return std::vector<int64_t>(s, s + r);
}

Tensor NestedTensor::operator[](int64_t i) const {
  const int64_t n = num_components();
  EMBER_CHECK_INDEX(i >= -n && i < n, "[select] index ", i,
                    " is out of bounds for dimension 0 with size ", n);
  if (i < 0) i += n;
  auto sz = component_sizes(i);
  int64_t numel = 1;
  for (int64_t v : sz) numel *= v;
  return buffer_.narrow(0, offsets_[size_t(i)], numel).view(sz);
}

std::vector<Tensor> NestedTensor::unbind() const {
  std::vector<Tensor> out;
  out.reserve(size_t(num_components()));
  for (int64_t i = 0; i < num_components(); ++i) out.push_back((*this)[i]);
  return out;
}

Tensor NestedTensor::to_padded_tensor(double padding,
                                      std::optional<std::vector<int64_t>> output_size) const {
  return nested::to_padded_tensor(*this, padding, std::move(output_size));
}

NestedTensor NestedTensor::with_buffer(Tensor buffer) const {
  NestedTensor r;
  EMBER_CHECK(buffer.dim() == 1 && buffer.numel() == buffer_.numel(),
              "[NestedTensor] a replacement buffer must be 1-D with ", buffer_.numel(),
              " elements, got shape ", buffer.sizes());
  r.buffer_ = buffer.stride(0) == 1 ? std::move(buffer) : buffer.contiguous();
  r.sizes_ = sizes_;
  r.offsets_ = offsets_;
  return r;
}

bool NestedTensor::has_uniform_trailing_dims() const {
  const int64_t n = num_components(), r = sizes_.size(1);
  if (n == 0 || r == 0) return false;
  const int64_t* s = size_rows(sizes_);
  for (int64_t i = 1; i < n; ++i)
    for (int64_t d = 1; d < r; ++d)
      if (s[i * r + d] != s[d]) return false;
  return true;
}

Tensor NestedTensor::packed_rows() const {
  EMBER_CHECK(has_uniform_trailing_dims(),
              "[packed_rows] needs at least one component of rank >= 1, all with the same "
              "trailing dims");
  const int64_t n = num_components(), r = sizes_.size(1);
  const int64_t* s = size_rows(sizes_);
  std::vector<int64_t> shape(s, s + r);
  shape[0] = 0;
  for (int64_t i = 0; i < n; ++i) shape[0] += s[i * r];
  return buffer_.view(shape);
}

bool same_structure(const NestedTensor& a, const NestedTensor& b) {
  if (a.num_components() != b.num_components() || a.dim() != b.dim()) return false;
  const int64_t cnt = a.nested_sizes().numel();
  return std::equal(size_rows(a.nested_sizes()), size_rows(a.nested_sizes()) + cnt,
                    size_rows(b.nested_sizes()));
}

namespace {

// Shared by nested_tensor (detached components) and as_nested_tensor (keeping autograd).
NestedTensor from_list(const std::vector<Tensor>& tensors, std::optional<ScalarType> dtype,
                       std::optional<Device> device, bool detach, const char* op) {
  const int64_t n = int64_t(tensors.size());
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK_TYPE(tensors[size_t(i)].defined(), "[", op, "] component ", i, " is undefined");
    EMBER_CHECK(tensors[size_t(i)].dim() == tensors[0].dim(), "[", op,
                "] All Tensors given to nested_tensor must have the same dimension. Found "
                "dimension ",
                tensors[size_t(i)].dim(), " for Tensor at index ", i, " and dimension ",
                tensors[0].dim(), " for Tensor at index 0.");
  }
  const int64_t r = n ? tensors[0].dim() : 0;
  const ScalarType dt = dtype ? *dtype : (n ? tensors[0].dtype() : get_default_dtype());
  const Device dev = device ? *device : (n ? tensors[0].device() : Device(kCPU));
  Tensor sizes = empty({n, r}, TensorOptions().dtype(kLong));
  int64_t* s = sizes.data_ptr<int64_t>();
  std::vector<Tensor> parts;
  parts.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& t = tensors[size_t(i)];
    for (int64_t d = 0; d < r; ++d) s[i * r + d] = t.size(d);
    Tensor p = detach ? t.detach() : t;
    parts.push_back(p.to(dev, dt).reshape({-1}));
  }
  Tensor buffer;
  if (parts.empty()) {
    buffer = empty({0}, TensorOptions().dtype(dt).device(dev));
  } else {
    buffer = cat(parts, 0);
    // The buffer owns its elements: a lone component must not be shared with the caller.
    if (buffer.is_alias_of(tensors[0])) buffer = buffer.clone();
  }
  return NestedTensor(buffer, sizes);
}

}  // namespace

NestedTensor nested_tensor(const std::vector<Tensor>& tensors, std::optional<ScalarType> dtype,
                           bool requires_grad, std::optional<Device> device) {
  NestedTensor nt = from_list(tensors, dtype, device, /*detach=*/true, "nested_tensor");
  if (requires_grad) nt.requires_grad_(true);
  return nt;
}

NestedTensor as_nested_tensor(const std::vector<Tensor>& tensors, std::optional<ScalarType> dtype,
                              std::optional<Device> device) {
  return from_list(tensors, dtype, device, /*detach=*/false, "as_nested_tensor");
}

Tensor to_padded_tensor(const NestedTensor& nt, double padding,
                        std::optional<std::vector<int64_t>> output_size) {
  const char* op = "[to_padded_tensor] ";
  EMBER_CHECK(nt.defined(), op, "undefined nested tensor");
  const int64_t n = nt.num_components(), r = nt.dim() - 1;
  const Scalar pad = padding_scalar(padding, nt.dtype());
  const TensorOptions opts = nt.buffer().options();
  // The padded size: the largest size in each dim.
  std::vector<int64_t> target(size_t(r + 1), 0);
  target[0] = n;
  const int64_t* s = size_rows(nt.nested_sizes());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d < r; ++d)
      target[size_t(d + 1)] = std::max(target[size_t(d + 1)], s[i * r + d]);
  if (output_size) {
    EMBER_CHECK(int64_t(output_size->size()) == r + 1, op,
                "Length of output_size does not match NestedTensor dims. Broadcasting is not "
                "supported. (output_size ",
                vec_str(*output_size), ", nested tensor of ", r + 1, " dims)");
    for (int64_t d = 0; d <= r; ++d)
      EMBER_CHECK((*output_size)[size_t(d)] >= target[size_t(d)], op,
                  "Value in output_size is less than NestedTensor padded size. Truncation is not "
                  "supported. (output_size ",
                  vec_str(*output_size), ", padded size ", vec_str(target), ")");
    target = *output_size;
  }
  if (n == 0) return output_size ? full(target, pad, opts) : empty({0}, opts);

  // Components that differ only in dim 0 (the ragged batch of sequences (L_i, E)) scatter their
  // packed rows into the padded rows in one index_put instead of n pads.
  bool trailing_fit = nt.has_uniform_trailing_dims();
  for (int64_t d = 2; trailing_fit && d <= r; ++d) trailing_fit = target[size_t(d)] == s[d - 1];
  if (trailing_fit) {
    const int64_t rows_per = target[1];
    Tensor rows = nt.packed_rows();
    Tensor idx = empty({rows.size(0)}, TensorOptions().dtype(kLong));
    int64_t* p = idx.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s[i * r]; ++j) *p++ = i * rows_per + j;
    std::vector<int64_t> flat(target.begin() + 1, target.end());
    flat[0] = target[0] * rows_per;
    Tensor out = full(flat, pad, opts);
    std::vector<std::optional<Tensor>> where{idx.to(nt.device())};
    out = out.index_put(where, rows, /*accumulate=*/false);
    return out.view(target);
  }
  std::vector<Tensor> padded;
  padded.reserve(size_t(target[0]));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> pairs;
    for (int64_t d = r - 1; d >= 0; --d) {
      pairs.push_back(0);
      pairs.push_back(target[size_t(d + 1)] - s[i * r + d]);
    }
    padded.push_back(r == 0 ? nt[i] : constant_pad_nd(nt[i], pairs, pad));
  }
  std::vector<int64_t> comp(target.begin() + 1, target.end());
  for (int64_t i = n; i < target[0]; ++i) padded.push_back(full(comp, pad, opts));
  return stack(padded, 0);
}

NestedTensor from_packed_rows(const Tensor& rows, const std::vector<int64_t>& lengths) {
  EMBER_CHECK(rows.defined() && rows.dim() >= 1, "[from_packed_rows] rows must be at least 1-D");
  const int64_t n = int64_t(lengths.size()), r = rows.dim();
  Tensor sizes = empty({n, r}, TensorOptions().dtype(kLong));
  int64_t* s = sizes.data_ptr<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(lengths[size_t(i)] >= 0, "[from_packed_rows] negative length ", lengths[size_t(i)]);
    s[i * r] = lengths[size_t(i)];
    for (int64_t d = 1; d < r; ++d) s[i * r + d] = rows.size(d);
    total += lengths[size_t(i)];
  }
  EMBER_CHECK(total == rows.size(0), "[from_packed_rows] the lengths sum to ", total,
              " but rows has ", rows.size(0), " rows");
  return NestedTensor(rows.reshape({-1}), sizes);
}

NestedTensor from_padded(const Tensor& padded, const Tensor& padding_mask) {
  EMBER_CHECK(padded.defined() && padded.dim() >= 2,
              "[from_padded] expected a padded batch (B, S, *), got ",
              padded.defined() ? padded.dim() : 0, " dims");
  EMBER_CHECK_TYPE(padding_mask.defined() && padding_mask.dtype() == kBool,
                   "[from_padded] padding_mask must be a bool tensor (true = padding)");
  EMBER_CHECK(padding_mask.dim() == 2 && padding_mask.size(0) == padded.size(0) &&
                  padding_mask.size(1) == padded.size(1),
              "[from_padded] padding_mask of shape ", padding_mask.sizes(),
              " does not match the batch and sequence dims of padded ", padded.sizes());
  Tensor keep = logical_not(padding_mask).to(padded.device());
  Tensor len_t = keep.sum(IntArrayRef{1}, false, kLong).to(Device(kCPU)).contiguous();
  const int64_t* l = len_t.data_ptr<int64_t>();
  std::vector<int64_t> lengths(l, l + len_t.numel());
  // Boolean indexing yields the kept rows in row-major (b, s) order: exactly the packed layout.
  Tensor rows = padded.index({indexing::TensorIndex(keep)});
  return from_packed_rows(rows, lengths);
}

void throw_unsupported(std::string_view op) {
  throw NotImplementedError(
      detail::str_cat("[", op, "] ", op, " is not supported for nested tensors"));
}

}  // namespace ember::nested
