"""numpy.lib's parts that array libraries reach for through the namespace (xarray's rolling windows
call `xp.lib.stride_tricks.sliding_window_view`)."""

from . import stride_tricks  # noqa: F401
