// py_types.hpp — the types the bindings' signatures show (help(cu.sum), the .pyi stubs): Python
// objects that each binding converts itself, named by what they accept. Any object passes the
// type check (the converters in convert.hpp raise NumPy's errors); the names are cupric.typing's.
#pragma once

#include <nanobind/nanobind.h>

namespace cupric::py {

namespace nb = nanobind;

inline bool accepts_any(PyObject*) { return true; }

#define CUPRIC_PY_TYPE(TYPE, NAME)                     \
  class TYPE : public nb::object {                     \
   public:                                             \
    NB_OBJECT_DEFAULT(TYPE, object, NAME, accepts_any) \
  };

CUPRIC_PY_TYPE(ArrayLike, "cupric.typing.ArrayLike")    ///< an array, nested sequence or scalar
CUPRIC_PY_TYPE(ScalarLike, "cupric.typing.ScalarLike")  ///< a Python or NumPy scalar
CUPRIC_PY_TYPE(DTypeLike, "cupric.typing.DTypeLike")    ///< a dtype, scalar type or dtype name
CUPRIC_PY_TYPE(DeviceLike, "cupric.typing.DeviceLike")  ///< "cpu", "cuda:0", a Device
CUPRIC_PY_TYPE(AxisLike, "cupric.typing.AxisLike")      ///< an int or a tuple of ints
CUPRIC_PY_TYPE(ShapeLike, "cupric.typing.ShapeLike")    ///< an int or a sequence of ints
CUPRIC_PY_TYPE(OutArray, "cupric.ndarray")              ///< out=: a cupric array (or a 1-tuple of one)
CUPRIC_PY_TYPE(NdarrayResult, "cupric.ndarray")         ///< a result: a cupric array (0-d for scalars)
CUPRIC_PY_TYPE(ArraysResult, "cupric.ndarray | tuple[cupric.ndarray, ...]")  ///< an array or a tuple of them
CUPRIC_PY_TYPE(DTypeResult, "numpy.dtype")                                   ///< a dtype (cupric's dtypes are NumPy's)
CUPRIC_PY_TYPE(BoolLike, "bool")                                             ///< a flag, read by its truth value
CUPRIC_PY_TYPE(IntLike, "int")                                               ///< an integer (operator.index)
CUPRIC_PY_TYPE(FloatLike, "float")                                           ///< a real number
CUPRIC_PY_TYPE(OrderLike, "str")                                             ///< "C", "F", "A" or "K"
CUPRIC_PY_TYPE(IndexLike, "cupric.typing.IndexLike")          ///< x[key]: ints, slices, ..., None, arrays, tuples
CUPRIC_PY_TYPE(SeedLike, "cupric.typing.SeedLike")            ///< None, an int, ints, a SeedSequence
CUPRIC_PY_TYPE(StreamLike, "cupric.typing.StreamLike")        ///< a cupric, PyTorch, CuPy... stream or a handle
CUPRIC_PY_TYPE(DLPackDevice, "cupric.typing.DLPackDevice")    ///< (device_type, device_id)
CUPRIC_PY_TYPE(DLPackVersion, "tuple[int, int]")              ///< (major, minor)
CUPRIC_PY_TYPE(DLPackSource, "cupric.typing.SupportsDLPack")  ///< an object with __dlpack__, or a capsule
// the private submodules' (cupric._cupric._cuda, _tile, ...): names their stubs resolve
CUPRIC_PY_TYPE(EventOrStream, "Event | cupric.typing.StreamLike")  ///< Stream.wait: an Event, or a stream to wait for
CUPRIC_PY_TYPE(Dims3Like, "int | tuple[int, ...]")                 ///< a CUDA grid, block or cluster: 1 to 3 extents
CUPRIC_PY_TYPE(TileGridLike, "int | tuple[int, ...] | collections.abc.Callable[[dict], int | tuple[int, ...]]")
///< a tile launch grid: extents, or a function of the kernel's constants giving them
CUPRIC_PY_TYPE(DefinesLike, "collections.abc.Mapping[str, str | None] | collections.abc.Iterable[str]")
///< preprocessor defines: {"NAME": "value"} or ["NAME=value", "FLAG"]
CUPRIC_PY_TYPE(ArchLike, "str | int")  ///< a GPU architecture: "sm_90a", "90" or 90
CUPRIC_PY_TYPE(LaunchArgs, "tuple")    ///< a launch's run-time arguments (no plan fits anything else)
CUPRIC_PY_TYPE(PlanTarget, "HostLauncher | tuple[cupric.cuda.Kernel, int, int, int, list[list[int]], int, int, int]")
///< what a launch plan runs: a CPU kernel, or (CUDA kernel, device, threads, shared bytes)
CUPRIC_PY_TYPE(JitResult, "int | tuple[type, list[int]]")
///< a jit call's result: an output's index, or (tuple or list, the outputs' indices)

#undef CUPRIC_PY_TYPE

}  // namespace cupric::py

namespace cupric {
class Array;
}

namespace cupric::py {

/// A result as Python sees it: `out` itself when one was given (as NumPy does; a 1-tuple's array),
/// else the new array (bind_reduce.cpp).
NdarrayResult result_to_py(const Array& r, nb::handle out);

}  // namespace cupric::py
