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
