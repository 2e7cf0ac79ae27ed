"""`gt.TensorShape`: the shape of a tensor, a tuple that also equals lists."""


class TensorShape(tuple):
    """The static shape of a tensor. TF equivalent: ``tf.TensorShape``.

    A tuple of ints that prints like TF's (``(3, 2)``) and compares equal to tuples
    and lists of the same dimensions.

    >>> import gradtape as gt
    >>> gt.zeros([3, 2]).shape
    TensorShape([3, 2])
    >>> gt.zeros([3, 2]).shape == [3, 2]
    True
    """

    __slots__ = ()

    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    @property
    def rank(self):
        """Number of dimensions."""
        return len(self)

    @property
    def ndims(self):
        """Number of dimensions (TF's older name)."""
        return len(self)

    def as_list(self):
        """The dimensions as a list."""
        return list(self)

    def num_elements(self):
        """Product of the dimensions."""
        n = 1
        for d in self:
            n *= d
        return n

    def __eq__(self, other):
        if isinstance(other, (list, tuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __getitem__(self, key):
        r = super().__getitem__(key)
        return TensorShape(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return TensorShape(tuple(self) + tuple(other))

    def __radd__(self, other):
        return TensorShape(tuple(other) + tuple(self))

    def __str__(self):
        if len(self) == 1:
            return f"({self[0]},)"
        return "(" + ", ".join(str(d) for d in self) + ")"

    def __repr__(self):
        return f"TensorShape({list(self)})"
