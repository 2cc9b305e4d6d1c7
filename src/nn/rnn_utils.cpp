// Packed sequences (torch.nn.utils.rnn) composed of differentiable ember ops (narrow, cat,
// stack, index_select), so gradients reach the padded input exactly as through PyTorch's
// _pack_padded_sequence / _pad_packed_sequence. Lengths and batch sizes are read on the CPU.
#include "ember/nn/utils/rnn.h"

#include <algorithm>

#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/sort.h"

namespace ember::nn::utils::rnn {

namespace {
std::vector<int64_t> to_vector(const Tensor& t, const char* name) {
  EMBER_CHECK(t.dim() == 1, "[", name, "] expected a 1-D tensor, got ", t.sizes());
  Tensor c = t.to(kLong).cpu().contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

Tensor long_tensor(const std::vector<int64_t>& v) {
  Tensor t = empty({int64_t(v.size())}, TensorOptions().dtype(kLong));
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return t;
}
}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return {};
  Tensor out = empty_like(permutation);
  return out.scatter_(0, permutation, arange(0, permutation.numel(), permutation.options()));
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices,
                               Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
  EMBER_CHECK_VALUE(!batch_sizes_.defined() || !batch_sizes_.is_cuda(),
                    "[PackedSequence] batch_sizes should always be on CPU. Instances of "
                    "PackedSequence should never be created manually. They should be "
                    "instantiated by functions like pack_sequence and pack_padded_sequences in "
                    "nn.utils.rnn.");
}

PackedSequence PackedSequence::to(const TensorOptions& options) const {
  Tensor d = data_.to(options);
  if (d.is_same(data_)) return *this;
  Device dev = d.device();
  auto move = [&](const Tensor& t) { return t.defined() ? t.to(dev) : t; };
  return PackedSequence(d, batch_sizes_, move(sorted_indices_), move(unsorted_indices_));
}

PackedSequence PackedSequence::cpu() const { return to(TensorOptions().device(kCPU)); }

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first,
                                    bool enforce_sorted) {
  Tensor sorted_indices;
  lengths = lengths.to(kLong).cpu();
  if (!enforce_sorted) {
    auto [sorted, order] = sort(lengths, /*stable=*/true, 0, /*descending=*/true);
    lengths = sorted;
    sorted_indices = order.to(input.device());
    input = input.index_select(batch_first ? 0 : 1, sorted_indices);
  }
  if (batch_first) input = input.transpose(0, 1);
  EMBER_CHECK(input.dim() >= 2,
              "[pack_padded_sequence] expected an input with at least 2 dimensions, got ",
              input.dim());
  std::vector<int64_t> lens = to_vector(lengths, "pack_padded_sequence");
  int64_t batch = input.size(1);
  EMBER_CHECK(int64_t(lens.size()) == batch,
              "[pack_padded_sequence] Expected `len(lengths)` to be equal to batch_size, but got ",
              lens.size(), " (batch_size=", batch, ")");
  EMBER_CHECK(batch > 0 && lens.back() > 0,
              "[pack_padded_sequence] Length of all samples has to be greater than 0, but found "
              "an element in 'lengths' that is <= 0");
  for (size_t i = 1; i < lens.size(); ++i) {
    EMBER_CHECK(lens[i] <= lens[i - 1],
                "[pack_padded_sequence] `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
                "do not need ONNX exportability.");
  }
  EMBER_CHECK(lens[0] <= input.size(0),
              "[pack_padded_sequence] Expected sequence length to be larger than or equal to the "
              "max length ",
              lens[0], ", but got ", input.size(0));
  std::vector<Tensor> steps;
  std::vector<int64_t> batch_sizes;
  int64_t bs = batch;
  for (int64_t t = 0; t < lens[0]; ++t) {
    while (bs > 0 && lens[size_t(bs - 1)] <= t) --bs;
    batch_sizes.push_back(bs);
    steps.push_back(input.select(0, t).narrow(0, 0, bs));
  }
  return PackedSequence(cat(steps, 0), long_tensor(batch_sizes), sorted_indices, {});
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first,
                                               double padding_value,
                                               std::optional<int64_t> total_length) {
  std::vector<int64_t> sizes = to_vector(sequence.batch_sizes(), "pad_packed_sequence");
  int64_t max_len = int64_t(sizes.size());
  if (total_length) {
    EMBER_CHECK_VALUE(*total_length >= max_len,
                      "[pad_packed_sequence] Expected total_length to be at least the length of "
                      "the longest sequence in input, but got total_length=",
                      *total_length, " and max sequence length being ", max_len);
    max_len = *total_length;
  }
  const Tensor& data = sequence.data();
  int64_t batch = sizes.empty() ? 0 : sizes[0];
  std::vector<int64_t> step_shape = data.sizes().vec();
  step_shape[0] = batch;
  auto fill = [&](int64_t rows) {
    std::vector<int64_t> shape = step_shape;
    shape[0] = rows;
    return full(shape, padding_value, data.options());
  };
  std::vector<Tensor> steps;
  int64_t offset = 0;
  for (int64_t bs : sizes) {
    Tensor step = data.narrow(0, offset, bs);
    offset += bs;
    steps.push_back(bs < batch ? cat({step, fill(batch - bs)}, 0) : step);
  }
  for (int64_t t = int64_t(sizes.size()); t < max_len; ++t) steps.push_back(fill(batch));
  std::vector<int64_t> padded_shape = step_shape;
  padded_shape.insert(padded_shape.begin(), max_len);
  Tensor padded = steps.empty() ? full(padded_shape, padding_value, data.options()) : stack(steps);
  std::vector<int64_t> lens(size_t(batch), 0);
  for (int64_t bs : sizes)
    for (int64_t b = 0; b < bs; ++b) ++lens[size_t(b)];
  Tensor lengths = long_tensor(lens);
  if (batch_first) padded = padded.transpose(0, 1);
  const Tensor& unsorted = sequence.unsorted_indices();
  if (unsorted.defined()) {
    padded = padded.index_select(batch_first ? 0 : 1, unsorted);
    lengths = lengths.index_select(0, unsorted.cpu());
  }
  return {padded, lengths};
}

Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first, double padding_value) {
  EMBER_CHECK(!sequences.empty(), "[pad_sequence] received an empty list of sequences");
  const Tensor& first = sequences[0];
  int64_t max_len = 0;
  for (const Tensor& s : sequences) {
    EMBER_CHECK(s.dim() > 0, "[pad_sequence] every sequence needs at least one dimension");
    EMBER_CHECK(s.sizes().slice(1).vec() == first.sizes().slice(1).vec(),
                "[pad_sequence] the trailing dimensions of every sequence must match, got ",
                s.sizes(), " and ", first.sizes());
    max_len = std::max(max_len, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& seq : sequences) {
    Tensor s = seq.to(first.scalar_type());
    if (s.size(0) < max_len) {
      std::vector<int64_t> shape = s.sizes().vec();
      shape[0] = max_len - s.size(0);
      s = cat({s, full(shape, padding_value, s.options())}, 0);
    }
    padded.push_back(s);
  }
  return stack(padded, batch_first ? 0 : 1);
}

std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const Tensor& lengths,
                                   bool batch_first) {
  Tensor p = batch_first ? padded_sequences : padded_sequences.transpose(0, 1);
  std::vector<int64_t> lens = to_vector(lengths, "unpad_sequence");
  EMBER_CHECK(int64_t(lens.size()) <= p.size(0), "[unpad_sequence] got ", lens.size(),
              " lengths for a batch of ", p.size(0));
  std::vector<Tensor> out;
  for (size_t i = 0; i < lens.size(); ++i)
    out.push_back(p.select(0, int64_t(i)).narrow(0, 0, lens[i]));
  return out;
}

PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted) {
  std::vector<int64_t> lens;
  for (const Tensor& s : sequences) {
    EMBER_CHECK(s.dim() > 0, "[pack_sequence] every sequence needs at least one dimension");
    lens.push_back(s.size(0));
  }
  return pack_padded_sequence(pad_sequence(sequences), long_tensor(lens), false, enforce_sorted);
}

std::vector<Tensor> unpack_sequence(const PackedSequence& packed_sequences) {
  auto [padded, lengths] = pad_packed_sequence(packed_sequences, true);
  return unpad_sequence(padded, lengths, true);
}

}  // namespace ember::nn::utils::rnn
