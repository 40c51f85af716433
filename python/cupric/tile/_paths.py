"""Where cupric.tile's files are and which build made them: the device header folder and the
extension's build stamp. A leaf module (it imports only the extension), so that the compiler
(_kernel), the CUDA launcher (_cuda) and the autotuner all read them without importing each other."""

import functools
import os
from pathlib import Path

from .. import _cupric as _c


@functools.lru_cache(maxsize=1)
def include_dir():
    """device_include: the source tree's when running from a checkout, else the installed copy."""
    here = os.path.dirname(os.path.abspath(__file__))
    ext = os.path.dirname(os.path.abspath(_c.__file__))
    candidates = [
        os.path.normpath(os.path.join(here, "..", "..", "..", "device_include")),
        os.path.join(ext, "device_include"),
    ]
    for c in candidates:
        if os.path.isfile(os.path.join(c, "cupric", "tile", "tile.h")):
            return c
    # (the paths as given: resolving symlinks first costs ~0.2 ms at a new process' first launch)
    candidates = [str(Path(here).resolve().parents[2] / "device_include"), str(Path(ext).resolve() / "device_include")]
    for c in candidates:
        if os.path.isfile(os.path.join(c, "cupric", "tile", "tile.h")):
            return c
    raise RuntimeError(f"cupric.tile: the device header library was not found (looked in {candidates})")


def build_stamp():
    """Which build of the extension this is: a rebuilt one may emit other code."""
    st = os.stat(_c.__file__)
    return f"{_c.__file__}:{st.st_size}:{st.st_mtime_ns}"


def headers_identity(include):
    """What stands for the device headers under `include` in the kernel index's keys. An installed
    copy (the one beside the extension) changes only with the extension, so the build stamp names
    it (listing its ~40 files cost ~0.15 ms of a new process' first launch); a source checkout's
    headers are listed (names, sizes, modification times) so that an edit is seen."""
    if os.path.dirname(include) == os.path.dirname(os.path.abspath(_c.__file__)):
        return f"installed with {build_stamp()}"
    return _c._tile.headers_hash(include)
