"""The types in cupric's signatures (help(cu.sum), the .pyi stubs), as NumPy's numpy.typing names
them: what each argument accepts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex, Union

if TYPE_CHECKING:
    import numpy as np

    from ._cupric import Device, ndarray

__all__ = ["ArrayLike", "AxisLike", "DTypeLike", "DeviceLike", "ScalarLike", "ShapeLike"]

ScalarLike = Union[bool, int, float, complex, "np.generic"]
#: an array of any library (the buffer, array, CUDA-array or DLPack protocol), a nested sequence or a scalar
ArrayLike = Union["ndarray", ScalarLike, Sequence[Any], Any]
#: a dtype, a scalar type (cu.float32, float) or a name ("float32", "f4")
DTypeLike = Union["np.dtype[Any]", type, str, None]
#: "cpu", "cuda", "cuda:N" or a Device
DeviceLike = Union[str, "Device"]
AxisLike = SupportsIndex | Sequence[SupportsIndex]
ShapeLike = SupportsIndex | Sequence[SupportsIndex]
