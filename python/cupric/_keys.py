"""exact_key: a constant argument's value as a cache key — what a compiled specialisation (tile
kernels' ct.Constant, cu.jit's static arguments) is keyed by, matching the C++ plans' same_value."""


def exact_key(v):
    """v as a hashable key: equal for the same value of the same type, tuples and lists item by
    item, floats and complex by their exact value — -0.0 is not 0.0 (x + C differs in its sign of
    zero) and a NaN keys like itself (so its entry is found again); anything else as itself."""
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(exact_key(x) for x in v))
    if isinstance(v, float):
        return (type(v).__name__, float(v).hex())
    if isinstance(v, complex):
        return (type(v).__name__, v.real.hex(), v.imag.hex())
    return (type(v).__name__, v)
