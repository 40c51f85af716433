"""cupric's version (a leaf module: _config and the package both read it)."""

__version__ = "0.1.0"  # as pyproject.toml says
