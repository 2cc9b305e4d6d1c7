"""ember.Size: the shape of a tensor, a tuple of ints (as torch.Size)."""

import operator


class Size(tuple):
    """A tuple of dimension sizes; slicing and concatenation give Sizes."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        items = tuple(sizes)
        if all(type(s) is int for s in items):
            return tuple.__new__(cls, items)
        ints = []
        for i, s in enumerate(items):
            try:
                ints.append(operator.index(s))
            except TypeError:
                raise TypeError(f"ember.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')") from None
        return tuple.__new__(cls, ints)

    def __repr__(self):
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        """Number of elements of a tensor of this shape."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))
