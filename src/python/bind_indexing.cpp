// bind_indexing.cpp — ndarray.__getitem__ / __setitem__ / __iter__: Python index objects become
// a cupric::Index (semantics in src/array/indexing.cpp).
#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"

namespace cupric::py {

namespace {
[[noreturn]] void invalid_index() {
  throw IndexError(
      "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid "
      "indices");
}

Slice slice_from_py(nb::handle obj) {
  PyObject* s = obj.ptr();
  Py_ssize_t start = 0, stop = 0, step = 0;
  if (PySlice_Unpack(s, &start, &stop, &step) < 0) throw nb::python_error();  // TypeError for non-integers
  Slice out;
  auto* slice = reinterpret_cast<PySliceObject*>(s);
  if (slice->start != Py_None) out.start = start;
  if (slice->stop != Py_None) out.stop = stop;
  if (slice->step != Py_None) {
    if (step == 0) throw ValueError("slice step cannot be zero");
    out.step = step;
  }
  return out;
}

/// A list, NumPy array or other array-like used as an index (an empty list is an int array).
Array index_array_from_py(nb::handle obj, Device device) {
  if (PyList_Check(obj.ptr()) && PyList_GET_SIZE(obj.ptr()) == 0) return Array::empty({0}, DType::int64, device);
  Array a = array_from_py(obj, std::nullopt, device);
  if (a.size() == 0 && !is_bool(a.dtype())) a = Array::empty(a.shape(), DType::int64, device);  // [[]] too
  return a;
}

IndexItem item_from_py(nb::handle obj, Device device) {
  if (obj.is_none()) return IndexItem::newaxis();
  if (obj.ptr() == Py_Ellipsis) return IndexItem::ellipsis();
  if (PySlice_Check(obj.ptr())) return IndexItem::from_slice(slice_from_py(obj));
  if (PyBool_Check(obj.ptr()))
    return IndexItem::from_array(scalar_array(Scalar::from_bool(obj.ptr() == Py_True), DType::bool_, device));
  if (PyLong_Check(obj.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow)
      throw IndexError(cat("cannot fit '", nb::cast<std::string>(nb::str(obj)), "' into an index-sized integer"));
    return IndexItem::from_int(v);
  }
  if (nb::isinstance<Array>(obj)) return IndexItem::from_array(nb::cast<Array>(obj));
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()) || nb::hasattr(obj, "__array_interface__"))
    return IndexItem::from_array(index_array_from_py(obj, device));
  if (PyIndex_Check(obj.ptr())) return IndexItem::from_int(nb::cast<std::int64_t>(nb::int_(obj)));
  invalid_index();
}

Index index_from_py(nb::handle key, Device device) {
  Index index;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle item : nb::borrow<nb::tuple>(key)) index.push_back(item_from_py(item, device));
  } else {
    index.push_back(item_from_py(key, device));
  }
  return index;
}

/// Python objects assigned into `target`: lists convert in the target's dtype (so that
/// out-of-range Python ints raise OverflowError), scalars stay weak, arrays as they are.
Array value_from_py(nb::handle value, const Array& target) {
  if (nb::isinstance<Array>(value)) return nb::cast<Array>(value);
  if (is_python_scalar(value)) return scalar_array(scalar_from_py(value));
  if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()))
    return array_from_py(value, target.dtype(), target.device());
  return array_from_py(value, std::nullopt, target.device());
}

struct ArrayIterator {
  Array array;
  std::int64_t next = 0;
};
}  // namespace

void bind_indexing(nb::module_& m) {
  nb::class_<ArrayIterator>(m, "_ArrayIterator")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", [](ArrayIterator& it) {
        if (it.next >= it.array.shape()[0]) throw nb::stop_iteration();
        return getitem(it.array, {IndexItem::from_int(it.next++)});
      });

  nb::handle cls = ndarray_type();
  def_method(
      cls, "__getitem__", [](const Array& a, IndexLike key) { return getitem(a, index_from_py(key, a.device())); },
      nb::arg("key").none());
  def_method(
      cls, "__setitem__",
      [](const Array& a, IndexLike key, ArrayLike value) {
        a.check_writeable();
        Index index = index_from_py(key, a.device());
        setitem(a, index, value_from_py(value, a));
      },
      nb::arg("key").none(), nb::arg("value").none());
  def_method(cls, "__iter__", [](const Array& a) {
    if (a.ndim() == 0) throw TypeError("iteration over a 0-d array");
    return ArrayIterator{a, 0};
  });
}

}  // namespace cupric::py
