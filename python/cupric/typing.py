"""The types in cupric's signatures (help(cu.sum), the .pyi stubs), as NumPy's numpy.typing names
them: what each argument accepts."""

from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Protocol, SupportsIndex, Union

if TYPE_CHECKING:
    import numpy as np

    from ._cupric import Device, ndarray
    from .cuda import Stream

__all__ = ["ArrayLike", "AxisLike", "DLPackDevice", "DTypeLike", "DeviceLike", "IndexLike", "ScalarLike", "SeedLike",
           "ShapeLike", "StreamLike", "SupportsDLPack"]

ScalarLike = Union[bool, int, float, complex, "np.generic"]
#: an array of any library (the buffer, array, CUDA-array or DLPack protocol), a nested sequence or a scalar
ArrayLike = Union["ndarray", ScalarLike, Sequence[Any], Any]
#: a dtype, a scalar type (cu.float32, float) or a name ("float32", "f4")
DTypeLike = Union["np.dtype[Any]", type, str, None]
#: "cpu", "cuda", "cuda:N" or a Device
DeviceLike = Union[str, "Device"]
AxisLike = SupportsIndex | Sequence[SupportsIndex]
ShapeLike = SupportsIndex | Sequence[SupportsIndex]
#: what x[key] takes: ints, slices, ..., None (a new axis), integer or bool arrays, or a tuple of them
IndexLike = Union[SupportsIndex, slice, EllipsisType, None, "ndarray", Sequence[Any], tuple[Any, ...]]
#: a random seed: None (fresh entropy), an int, a sequence or array of ints, or a numpy.random.SeedSequence
SeedLike = Union[None, SupportsIndex, Sequence[int], "ndarray", "np.random.SeedSequence"]
#: a CUDA stream: a cupric.cuda.Stream, a driver handle as an int, or another library's stream (an object
#: with __cuda_stream__, a PyTorch stream's .cuda_stream, a CuPy stream's .ptr)
StreamLike = Union["Stream", int, Any]
#: a (device_type, device_id) pair as DLPack numbers devices: (1, 0) is the CPU, (2, N) cuda:N
DLPackDevice = tuple[int, int]


class SupportsDLPack(Protocol):
    """An array of another library that DLPack can hand over (NumPy, CuPy, PyTorch, JAX, ...)."""

    def __dlpack__(self, *, stream: Any = ..., max_version: tuple[int, int] | None = ...) -> Any: ...

    def __dlpack_device__(self) -> DLPackDevice: ...
