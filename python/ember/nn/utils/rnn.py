"""Variable-length sequence utilities (torch.nn.utils.rnn): PackedSequence, packing and padding.

PackedSequence is a namedtuple, as torch's; packing and padding are the C++ ones
(ember::nn::utils::rnn), which receive and return a PackedSequence as its four fields.
"""

from collections import namedtuple

import ember
from ember import _C

_nn = _C._nn

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
    if batch_sizes is None:
        # PackedSequence((data, batch_sizes)), torch's older form.
        assert isinstance(data, (list, tuple)) and len(data) == 2
        data, batch_sizes = data
    return _nn.packed_sequence_fields(data, batch_sizes, sorted_indices, unsorted_indices)


def _packed(fields):
    return PackedSequence(*fields)


def invert_permutation(permutation):
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    return _nn.invert_permutation(permutation)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of given lengths."""
    return _packed(_nn.pack_padded_sequence(input, lengths, batch_first, enforce_sorted))


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: returns (padded batch, lengths as int64)."""
    return _nn.pad_packed_sequence(*sequence, batch_first, padding_value, total_length)


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks variable-length tensors (L_i, *) into (max L, B, *) (or (B, max L, *))."""
    return _nn.pad_sequence(sequences, batch_first, padding_value)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded batch back into a list of its unpadded sequences."""
    return _nn.unpad_sequence(padded_sequences, lengths, batch_first)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length tensors (pad_sequence then pack_padded_sequence)."""
    return _packed(_nn.pack_sequence(sequences, enforce_sorted))


def unpack_sequence(packed_sequences):
    """Inverse of pack_sequence: the list of sequences."""
    return _nn.unpack_sequence(*packed_sequences)
