"""A module proxy that imports on first use: `import cupric` must not pay for NumPy's import
(0.1-0.5 s) when the program never hands cupric arrays to NumPy."""

import importlib
import sys


class LazyModule:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        module = sys.modules.get(self._name) or importlib.import_module(self._name)
        return getattr(module, attr)


numpy = LazyModule("numpy")
