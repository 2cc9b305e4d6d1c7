"""ember.Size: the shape of a tensor, a tuple of ints (as torch.Size)."""


class Size(tuple):
    """A tuple of dimension sizes; slicing and concatenation give Sizes."""

    __slots__ = ()

    def __repr__(self):
        return f"ember.Size([{', '.join(str(int(s)) for s in self)}])"

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
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))
