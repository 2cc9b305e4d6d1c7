"""Variable-length sequence utilities (torch.nn.utils.rnn): PackedSequence, packing and padding.

Packing and padding are composed from ember ops (narrow, cat, stack), so gradients flow through
them exactly as through torch's _pack_padded_sequence / _pad_packed_sequence.
"""

from collections import namedtuple
from collections.abc import Iterable

import ember

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    if optional is None:
        return None
    return fn(optional)


class PackedSequence(PackedSequence_):
    """Time-major packed batch: data (sum(lengths), *), batch_sizes[t] = #sequences longer
    than t, and the permutation that sorted the batch by decreasing length."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes,
                                                                sorted_indices,
                                                                unsorted_indices))

    def cpu(self, *args, **kwargs):
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=ember.float64)

    def float(self):
        return self.to(dtype=ember.float32)

    def half(self):
        return self.to(dtype=ember.float16)

    def long(self):
        return self.to(dtype=ember.int64)

    def int(self):
        return self.to(dtype=ember.int32)

    def short(self):
        return self.to(dtype=ember.int16)

    def char(self):
        return self.to(dtype=ember.int8)

    def byte(self):
        return self.to(dtype=ember.uint8)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    @property
    def is_cuda(self):
        return getattr(self.data, "is_cuda", False)

    def is_pinned(self):
        return False


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None,
                               unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated by "
                             "functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn.")
        return data, batch_sizes, sorted_indices, unsorted_indices
    assert isinstance(data, (list, tuple)) and len(data) == 2
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    output = ember.empty_like(permutation)
    output.scatter_(0, permutation, ember.arange(0, permutation.numel(), dtype=permutation.dtype))
    return output


def _pack_padded(input, lengths, batch_first):
    # lengths: a list of ints sorted in decreasing order.
    if batch_first:
        input = input.transpose(0, 1)
    if input.dim() < 2:
        raise RuntimeError("pack_padded_sequence: expected an input with at least 2 dimensions, "
                           f"got {input.dim()}")
    batch = input.shape[1]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if batch == 0 or lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    for i in range(1, len(lengths)):
        if lengths[i] > lengths[i - 1]:
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
    if lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the max "
                           f"length {lengths[0]}, but got {input.shape[0]}")
    batch_sizes, steps = [], []
    for t in range(lengths[0]):
        bs = sum(1 for n in lengths if n > t)
        batch_sizes.append(bs)
        steps.append(input[t].narrow(0, 0, bs))
    return ember.cat(steps, 0), ember.tensor(batch_sizes, dtype=ember.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of given lengths."""
    if isinstance(lengths, ember.Tensor):
        lengths = lengths.to(ember.int64)
    else:
        lengths = ember.tensor(list(lengths), dtype=ember.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = ember.sort(lengths, descending=True)
        batch_dim = 0 if batch_first else 1
        input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _pack_padded(input, [int(n) for n in lengths.tolist()], batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: returns (padded batch, lengths as int64)."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    trailing = list(data.shape[1:])
    steps, offset = [], 0
    for bs in batch_sizes:
        step = data.narrow(0, offset, bs)
        offset += bs
        if bs < batch:
            fill = ember.full([batch - bs] + trailing, padding_value, dtype=data.dtype)
            step = ember.cat([step, fill], 0)
        steps.append(step)
    for _ in range(max_seq_length - len(batch_sizes)):
        steps.append(ember.full([batch] + trailing, padding_value, dtype=data.dtype))
    padded = ember.stack(steps, 0) if steps else \
        ember.full([max_seq_length, batch] + trailing, padding_value, dtype=data.dtype)
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(batch)]
    lengths = ember.tensor(lengths, dtype=ember.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks variable-length tensors (L_i, *) into (max L, B, *) (or (B, max L, *))."""
    if isinstance(sequences, ember.Tensor):
        sequences = sequences.unbind(0)
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    for s in sequences:
        if not isinstance(s, ember.Tensor):
            raise TypeError(f"pad_sequence: expected a sequence of Tensors, got "
                            f"{type(s).__name__}")
        if s.dim() == 0:
            raise RuntimeError("pad_sequence: every sequence needs at least one dimension")
    trailing = list(sequences[0].shape[1:])
    max_len = max(s.shape[0] for s in sequences)
    dtype = sequences[0].dtype
    padded = []
    for s in sequences:
        if list(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: the trailing dimensions of every sequence must "
                               f"match, got {list(s.shape[1:])} and {trailing}")
        s = s.to(dtype)
        if s.shape[0] < max_len:
            fill = ember.full([max_len - s.shape[0]] + trailing, padding_value, dtype=dtype)
            s = ember.cat([s, fill], 0)
        padded.append(s)
    return ember.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded batch back into a list of its unpadded sequences."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq.narrow(0, 0, int(length)) for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length tensors (pad_sequence then pack_padded_sequence)."""
    lengths = ember.tensor([v.size(0) for v in sequences], dtype=ember.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Inverse of pack_sequence: the list of sequences."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
