"""Compile-time stand-ins for run-time values while a kernel is being compiled."""

PY_NUMBERS = (bool, int, float)


class Value:
    """An IR value during compilation: its id and type (kind 'tile' or 'array')."""

    __slots__ = ("id", "kind", "dtype", "shape", "ndim", "weak")

    def __init__(self, b, vid):
        self.id = vid
        self.kind, self.dtype, self.shape, self.ndim, self.weak = b.type(vid)

    @property
    def is_array(self):
        return self.kind == "array"

    def __repr__(self):
        return f"<tile value %{self.id} {self.dtype} {self.shape}>"

    def __bool__(self):
        raise TypeError(
            "the truth value of a run-time value is not known at compile time; use it in an `if` "
            "statement (run-time branch) or ct.where"
        )


class Method:
    """A tile method looked up for a call (t.astype(...), t.reshape(...), ...)."""

    def __init__(self, value, name):
        self.value = value
        self.name = name
