// joining.cpp — arrays made from several arrays: concatenate and stack (where, which picks from
// several arrays, is a ufunc row: src/ops/where.cpp).
#include <algorithm>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"

namespace cupric {

namespace {
void check_same_device(const std::vector<Array>& arrays, const char* what) {
  for (const Array& a : arrays)
    if (!(a.device() == arrays.front().device()))
      throw ValueError(cat(what, ": arrays are on different devices (", arrays.front().device().str(), " and ",
                           a.device().str(), "); move one with x.to_device(\"", arrays.front().device().str(), "\")"));
}

DType joined_dtype(const std::vector<Array>& arrays, std::optional<DType> dtype, Casting casting) {
  std::vector<TypeOperand> ops;
  for (const Array& a : arrays) ops.push_back({a.dtype()});
  if (!dtype) return result_type(ops);
  for (const Array& a : arrays)
    if (!can_cast(a.dtype(), *dtype, casting))
      throw TypeError(cat("Cannot cast array data from dtype('", name(a.dtype()), "') to dtype('", name(*dtype),
                          "') according to the rule '", casting_name(casting), "'"));
  return *dtype;
}

/// The joined shape; NumPy's messages for arrays that do not fit together.
Shape joined_shape(const std::vector<Array>& arrays, int axis) {
  const Array& first = arrays.front();
  Shape shape = first.shape();
  shape[axis] = 0;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const Array& a = arrays[i];
    if (a.ndim() != first.ndim())
      throw ValueError(cat("all the input arrays must have same number of dimensions, but the array at index 0 has ",
                           first.ndim(), " dimension(s) and the array at index ", i, " has ", a.ndim(),
                           " dimension(s)"));
    for (int d = 0; d < a.ndim(); ++d) {
      if (d != axis && a.shape()[d] != first.shape()[d])
        throw ValueError(
            cat("all the input array dimensions except for the concatenation axis must match exactly, but "
                "along dimension ",
                d, ", the array at index 0 has size ", first.shape()[d], " and the array at index ", i, " has size ",
                a.shape()[d]));
    }
    if (__builtin_add_overflow(shape[axis], a.shape()[axis], &shape[axis]))
      throw ValueError(cat("array is too big: the joined arrays' extents along axis ", axis, " add up past 2**63 - 1"));
  }
  return shape;
}
}  // namespace

Array concatenate(const std::vector<Array>& arrays_in, std::optional<std::int64_t> axis_in, std::optional<DType> dtype,
                  Casting casting) {
  if (arrays_in.empty()) throw ValueError("need at least one array to concatenate");
  std::vector<Array> arrays = arrays_in;
  if (!axis_in) {
    for (Array& a : arrays) a = ravel(a);
    axis_in = 0;
  }
  check_same_device(arrays, "concatenate");
  if (arrays.front().ndim() == 0) throw ValueError("zero-dimensional arrays cannot be concatenated");
  const int axis = normalize_axis(*axis_in, arrays.front().ndim());
  const Shape shape = joined_shape(arrays, axis);
  const DType t = joined_dtype(arrays, dtype, casting);
  Array out = Array::empty(shape, t, arrays.front().device());
  std::int64_t start = 0;
  for (const Array& a : arrays) {
    Shape part_shape = shape;
    part_shape[axis] = a.shape()[axis];
    const Array part = out.view(part_shape, out.strides(), start * out.strides()[axis]);
    copy_into(part, a);
    start += a.shape()[axis];
  }
  return out;
}

Array stack(const std::vector<Array>& arrays, std::int64_t axis_in, std::optional<DType> dtype, Casting casting) {
  if (arrays.empty()) throw ValueError("need at least one array to stack");
  for (const Array& a : arrays)
    if (a.shape() != arrays.front().shape()) throw ValueError("all input arrays must have the same shape");
  const int axis = normalize_axis(axis_in, arrays.front().ndim() + 1);
  std::vector<Array> expanded;
  for (const Array& a : arrays) expanded.push_back(expand_dims(a, {axis}));
  return concatenate(expanded, axis, dtype, casting);
}

}  // namespace cupric
