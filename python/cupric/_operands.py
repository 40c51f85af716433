"""How the Python compositions (_shape_functions, _math_extras, _index_extras, _polynomials, ...)
read their operands: lists, scalars and NumPy arrays go to the device of the cupric arrays beside
them, as cupric's own functions put them (not to the default device)."""

from . import _cupric as _c


def device_of(*objs):
    """The device of the first cupric array among objs (looking one level into lists and tuples),
    or None (then new arrays go to the default device)."""
    for obj in objs:
        if isinstance(obj, _c.ndarray):
            return obj.device
        if isinstance(obj, (list, tuple)):
            for item in obj:
                if isinstance(item, _c.ndarray):
                    return item.device
    return None


def on(x, device):
    """x as a cupric array on `device` (cupric arrays stay where they are: mixing devices is the
    operation's error to raise)."""
    if isinstance(x, _c.ndarray):
        return x
    return _c.asarray(x) if device is None else _c.asarray(x, device=device)


def to_host(value):
    """A cupric array as NumPy's (a GPU array copied to the host), lists and tuples of them
    element by element; anything else as it is (for NumPy's own readers, writers and checks)."""
    if isinstance(value, _c.ndarray):
        return value.get()
    if isinstance(value, (list, tuple)) and any(isinstance(v, _c.ndarray) for v in value):
        return type(value)(to_host(v) for v in value)
    return value
