"""The tile kernels' index, kept in the compile cache (kind "index"): for a specialisation met
before (the kernel's fingerprint, its specialisation key, the target), the launch facts and the
cache key of its compiled code, so that a new process launches it without the frontend. An entry
names code only by its cache key, never by a path; one that is not exactly what this module writes
is deleted, with a warning, and the kernel is compiled again."""

import json
import re
import warnings

from .. import _cupric as _c

_FORMAT = "cupric.tile index 8"  # (8: cluster; 7: split K's split_bytes; 6: cubins assembled without unused globals)
_KEY = re.compile(r"[0-9a-f]{64}")


def _is_key(v):
    return isinstance(v, str) and _KEY.fullmatch(v) is not None


def _is_int(v, low, high):
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _is_host_param(p):
    return (
        isinstance(p, list)
        and len(p) == 4
        and isinstance(p[0], bool)
        and isinstance(p[1], str)
        and _is_int(p[2], 0, 64)
        and isinstance(p[3], bool)
    )


_ROLES = ("data", "extent", "stride", "scalar", "status")


def _is_kernel_param(p):
    return isinstance(p, list) and len(p) == 2 and p[0] in _ROLES and isinstance(p[1], str) and p[1].isidentifier()


# What each target's entry holds: field -> check.
HOST = {
    "shared_object": _is_key,
    "params": lambda v: isinstance(v, list) and all(_is_host_param(p) for p in v),
}
CUDA = {
    "cubin": _is_key,
    "entry": lambda v: isinstance(v, str) and v.isidentifier(),
    "threads": lambda v: _is_int(v, 1, 1024),
    "smem_bytes": lambda v: _is_int(v, 0, 1 << 30),
    "params": lambda v: isinstance(v, list) and all(_is_kernel_param(p) for p in v),
    "tensor_maps": lambda v: isinstance(v, list)
    and all(isinstance(m, list) and len(m) == 3 and all(_is_int(x, 0, 1 << 16) for x in m) for m in v),
    "persistent": lambda v: isinstance(v, bool),
    "split_bytes": lambda v: _is_int(v, 0, 1 << 30),
    "cluster": lambda v: _is_int(v, 1, 2),
}


def key(*parts):
    """The index key of a specialisation on a target, from the strings that identify it."""
    return _c.CompileCache.make_key(_FORMAT, *parts)


def load(index_key, fields):
    """The entry under `index_key` once it passes `fields` (HOST or CUDA), else None."""
    raw = _c.compile_cache.get("index", index_key)
    if raw is None:
        return None
    try:
        entry = json.loads(raw.decode())
    except ValueError:  # UnicodeDecodeError is one
        entry = None
    if not isinstance(entry, dict) or set(entry) != set(fields) or not all(ok(entry[f]) for f, ok in fields.items()):
        drop(index_key, f"it is not an index entry of the form {sorted(fields)}")
        return None
    return entry


def drop(index_key, why):
    """Deletes an unusable entry (the kernel is then compiled and indexed again)."""
    _c.compile_cache.remove("index", index_key)
    warnings.warn(
        f"cupric.tile: deleted the kernel index entry {index_key} from the compile cache: {why}; "
        "the kernel is compiled again",
        RuntimeWarning,
        stacklevel=4,
    )


def save(index_key, entry):
    _c.compile_cache.put("index", index_key, json.dumps(entry).encode())
