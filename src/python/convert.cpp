// convert.cpp — Python objects to cupric dtypes, devices and arrays (asarray).
#include "convert.hpp"

#include "bind_cuda.hpp"
#include "foreign_array.hpp"

#include "cupric/cuda/loader.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/stream.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/manipulation.hpp"

namespace cupric::py {

// ---- dtypes ----------------------------------------------------------------------------------

namespace {
/// NumPy's dtype objects and scalar types, one per cupric DType, looked up by identity. numpy is
/// imported at the first dtype crossing the boundary (not at `import cupric`); ml_dtypes (0.6 s
/// to import) only when a bfloat16 or float8 does, or when the user already imported it.
struct NumpyDTypes {
  PyObject* dtype[kNumDTypes] = {};  ///< numpy.dtype instances (strong references, never freed)
  PyObject* type[kNumDTypes] = {};   ///< numpy scalar types: numpy.float32, ml_dtypes.bfloat16, ...
};

NumpyDTypes& numpy_dtypes_storage() {
  static NumpyDTypes t;
  return t;
}

void fill_slot(NumpyDTypes& t, DType d, nb::handle scalar_type, nb::handle np_dtype) {
  const int i = static_cast<int>(d);
  t.type[i] = scalar_type.inc_ref().ptr();
  t.dtype[i] = np_dtype(scalar_type).release().ptr();
}

/// Fills the slots of bfloat16 and the float8s from ml_dtypes (imports it): the dtypes NumPy does
/// not have.
void load_ml_dtypes(NumpyDTypes& t) {
  nb::object ml;
  try {
    ml = nb::module_::import_("ml_dtypes");
  } catch (nb::python_error&) {
    throw TypeError("bfloat16 and float8 arrays need ml_dtypes for their NumPy dtype: pip install ml_dtypes");
  }
  nb::object np_dtype = nb::module_::import_("numpy").attr("dtype");
  for (int i = 0; i < kNumDTypes; ++i)
    if (const DType d = static_cast<DType>(i); is_ml_dtype(d)) fill_slot(t, d, ml.attr(name(d)), np_dtype);
}

NumpyDTypes& numpy_dtypes(bool need_ml_dtypes) {
  NumpyDTypes& t = numpy_dtypes_storage();
  if (!t.dtype[0]) {
    nb::object np = nb::module_::import_("numpy");
    nb::object np_dtype = np.attr("dtype");
    for (int i = 0; i < kNumDTypes; ++i) {
      const DType d = static_cast<DType>(i);
      if (!is_ml_dtype(d)) fill_slot(t, d, np.attr(d == DType::bool_ ? "bool_" : name(d)), np_dtype);
    }
  }
  const int bf = static_cast<int>(DType::bfloat16);
  if (!t.dtype[bf] && (need_ml_dtypes || PyDict_GetItemString(PyImport_GetModuleDict(), "ml_dtypes")))
    load_ml_dtypes(t);
  return t;
}

/// The DType whose NumPy dtype object or scalar type `p` is, by identity; -1 when none.
int find_numpy_dtype(const NumpyDTypes& t, PyObject* p) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (p == t.dtype[i] || p == t.type[i]) return i;
  return -1;
}

[[noreturn]] void unsupported_dtype(nb::handle obj) {
  throw TypeError(cat("data type ", nb::cast<std::string>(nb::repr(obj)),
                      " is not supported by cupric (bool, int8-64, uint8-64, float16, bfloat16, float32/64, "
                      "complex64/128, float8_e4m3fn, float8_e5m2 are)"));
}
}  // namespace

DType dtype_from_py(nb::handle obj) {
  if (obj.is_none()) throw TypeError("a dtype is required, got None");
  PyObject* p = obj.ptr();
  if (PyUnicode_Check(p)) return dtype_from_name(nb::cast<std::string>(obj));
  if (p == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::bool_;
  if (p == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::int64;
  if (p == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::float64;
  if (p == reinterpret_cast<PyObject*>(&PyComplex_Type)) return DType::complex128;
  const NumpyDTypes& t = numpy_dtypes(false);
  if (int i = find_numpy_dtype(t, p); i >= 0) return static_cast<DType>(i);
  // anything else NumPy reads as a dtype (its subclass instances, objects with a .dtype, ...)
  nb::object np_dtype;
  try {
    np_dtype = nb::module_::import_("numpy").attr("dtype")(obj);
  } catch (nb::python_error&) {
    throw TypeError(cat("data type ", nb::cast<std::string>(nb::repr(obj)), " not understood"));
  }
  if (int i = find_numpy_dtype(t, np_dtype.ptr()); i >= 0) return static_cast<DType>(i);
  if (!nb::cast<bool>(np_dtype.attr("isnative")))
    throw TypeError(cat("non-native byte order data type ", nb::cast<std::string>(nb::repr(np_dtype)),
                        " is not supported: use dtype.newbyteorder('=')"));
  // an equal dtype that is not NumPy's canonical instance (an unpickled one, one with metadata):
  // its scalar type is a singleton
  if (int i = find_numpy_dtype(t, np_dtype.attr("type").ptr()); i >= 0) return static_cast<DType>(i);
  // NumPy's second integer type of a width (longlong and ulonglong beside int64 and uint64 on
  // Linux, long beside int32 on Windows) has its own scalar type: it is the same integer
  const std::string kind = nb::cast<std::string>(np_dtype.attr("kind"));
  if (kind == "i" || kind == "u")
    return dtype_from_name(cat(kind == "i" ? "int" : "uint", 8 * nb::cast<int64_t>(np_dtype.attr("itemsize"))));
  unsupported_dtype(np_dtype);
}

std::optional<DType> optional_dtype(nb::handle obj) {
  if (!obj.is_valid() || obj.is_none()) return std::nullopt;
  return dtype_from_py(obj);
}

std::optional<DType> known_numpy_dtype(nb::handle obj) {
  const int i = find_numpy_dtype(numpy_dtypes(false), obj.ptr());
  if (i < 0) return std::nullopt;
  return static_cast<DType>(i);
}

nb::object dtype_to_py(DType t) { return nb::borrow(numpy_dtypes(is_ml_dtype(t)).dtype[static_cast<int>(t)]); }

nb::object scalar_type_to_py(DType t) { return nb::borrow(numpy_dtypes(is_ml_dtype(t)).type[static_cast<int>(t)]); }

// ---- devices ---------------------------------------------------------------------------------

namespace {
std::optional<Device>& default_device_slot() {
  static std::optional<Device> slot;
  return slot;
}
}  // namespace

Device default_device() {
  auto& slot = default_device_slot();
  if (!slot) {
    const char* env = std::getenv("CUPRIC_DEVICE");
    // decided at the first array creation (never at import): the first GPU when there is one
    if (env && *env) slot = Device::parse(env);
    else slot = cuda::is_available() ? Device::cuda(0) : Device::cpu();
  }
  return *slot;
}

void set_default_device(Device d) { default_device_slot() = d; }

Device device_from_py(nb::handle obj) {
  if (!obj.is_valid() || obj.is_none()) return default_device();
  if (nb::isinstance<Device>(obj)) return nb::cast<Device>(obj);
  if (nb::isinstance<nb::str>(obj)) return Device::parse(nb::cast<std::string>(obj));
  throw TypeError(cat("device must be 'cpu', 'cuda:N' or a cupric Device, got ", nb::cast<std::string>(nb::repr(obj))));
}

std::optional<Device> optional_device(nb::handle obj) {
  if (!obj.is_valid() || obj.is_none()) return std::nullopt;
  return device_from_py(obj);
}

// ---- scalars ---------------------------------------------------------------------------------

bool is_python_scalar(nb::handle obj) {
  return PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) || PyComplex_Check(obj.ptr());
}

bool is_weak_scalar(nb::handle obj) {
  PyObject* p = obj.ptr();
  return PyBool_Check(p) || PyLong_CheckExact(p) || PyFloat_CheckExact(p) || PyComplex_CheckExact(p);
}

bool same_value(PyObject* v, PyObject* c) {
  if (v == c) return true;
  if (Py_TYPE(v) != Py_TYPE(c)) return false;  // 1, 1.0 and True are other specialisations
  if (PyTuple_Check(v) || PyList_Check(v)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    if (n != PySequence_Fast_GET_SIZE(c)) return false;
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!same_value(PySequence_Fast_GET_ITEM(v, i), PySequence_Fast_GET_ITEM(c, i))) return false;
    return true;
  }
  const auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  if (PyFloat_Check(v)) return same_bits(PyFloat_AS_DOUBLE(v), PyFloat_AS_DOUBLE(c));
  if (PyComplex_Check(v))
    return same_bits(PyComplex_RealAsDouble(v), PyComplex_RealAsDouble(c)) &&
           same_bits(PyComplex_ImagAsDouble(v), PyComplex_ImagAsDouble(c));
  const int r = PyObject_RichCompareBool(v, c, Py_EQ);
  if (r < 0) PyErr_Clear();
  return r == 1;
}

Scalar scalar_from_py(nb::handle obj, bool huge_ints) {
  PyObject* p = obj.ptr();
  if (PyBool_Check(p)) return Scalar::from_bool(p == Py_True);
  if (PyLong_Check(p)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (!overflow) return Scalar::from_int(v);
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(p);
      if (!PyErr_Occurred()) return Scalar::from_uint(u);
      PyErr_Clear();
    }
    if (huge_ints) {
      double rounded = PyLong_AsDouble(p);
      if (PyErr_Occurred()) {  // past double's range
        PyErr_Clear();
        rounded = overflow > 0 ? HUGE_VAL : -HUGE_VAL;
      }
      return Scalar::from_huge_int(rounded);
    }
    throw OverflowError(
        cat("Python integer ", nb::cast<std::string>(nb::str(obj)), " is out of bounds for int64 and uint64"));
  }
  if (PyFloat_Check(p)) return Scalar::from_float(PyFloat_AsDouble(p));
  if (PyComplex_Check(p)) return Scalar::from_complex({PyComplex_RealAsDouble(p), PyComplex_ImagAsDouble(p)});
  throw TypeError(cat("not a Python scalar: ", nb::cast<std::string>(nb::repr(obj))));
}

std::int64_t int64_from_py(nb::handle obj) {
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow)
    throw OverflowError(cat("Python integer ", nb::cast<std::string>(nb::str(index)), " out of bounds for int64"));
  return v;
}

namespace {
[[noreturn]] void wrong_type(nb::handle obj, const char* what, const char* expected) {
  throw TypeError(cat(what, " must be ", expected, ", got ", nb::cast<std::string>(nb::repr(obj))));
}
}  // namespace

bool bool_from_py(nb::handle obj, const char* what) {
  PyObject* p = obj.ptr();
  if (PyBool_Check(p)) return p == Py_True;
  const bool numpy_bool = nb::cast<std::string>(nb::str(nb::type_name(obj.type()))) == "bool";
  if (numpy_bool || (PyLong_Check(p) && (PyLong_AsLong(p) == 0 || PyLong_AsLong(p) == 1))) {
    PyErr_Clear();
    return PyObject_IsTrue(p) == 1;
  }
  PyErr_Clear();
  wrong_type(obj, what, "a bool");
}

double float_from_py(nb::handle obj, const char* what) {
  if (PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) wrong_type(obj, what, "a number");
  const double v = PyFloat_AsDouble(obj.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    wrong_type(obj, what, "a number");
  }
  return v;
}

std::string str_from_py(nb::handle obj, const char* what) {
  if (!PyUnicode_Check(obj.ptr())) wrong_type(obj, what, "a string");
  return nb::cast<std::string>(obj);
}

Shape shape_from_py(nb::handle obj) {
  auto dimension = [](nb::handle d) {
    try {
      return int64_from_py(d);
    } catch (const OverflowError&) {
      throw ValueError("Maximum allowed dimension exceeded");
    }
  };
  if (PyIndex_Check(obj.ptr())) return {dimension(obj)};
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr()))
    throw TypeError(cat("'", nb::cast<std::string>(nb::str(nb::type_name(obj.type()))),
                        "' object cannot be interpreted as an integer"));
  nb::object seq = nb::steal(PySequence_Fast(obj.ptr(), "a shape is an int or a sequence of ints"));
  if (!seq.is_valid()) throw nb::python_error();
  check_ndim(static_cast<std::size_t>(PySequence_Fast_GET_SIZE(seq.ptr())));  // before reading a million entries
  Shape s;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.ptr()); ++i)
    s.push_back(dimension(PySequence_Fast_GET_ITEM(seq.ptr(), i)));
  return s;
}

Array operand_from_py(nb::handle obj, std::optional<Device> device) {
  if (nb::isinstance<Array>(obj)) return nb::cast<Array>(obj);
  if (is_weak_scalar(obj)) return scalar_array(scalar_from_py(obj));
  return array_from_py(obj, std::nullopt, device);
}

std::optional<Device> device_of_arrays(std::initializer_list<nb::handle> operands) {
  for (nb::handle a : operands)
    if (nb::isinstance<Array>(a)) return nb::inst_ptr<Array>(a)->device();
  return std::nullopt;
}

Operand::Operand(nb::handle obj, bool huge_ints, std::optional<Device> device) {
  if (nb::isinstance<Array>(obj)) {
    array_ = nb::inst_ptr<Array>(obj);
  } else if (is_weak_scalar(obj)) {
    array_ = &scalar_.emplace(scalar_from_py(obj, huge_ints)).array();
  } else {
    converted_ = array_from_py(obj, std::nullopt, device);
    array_ = &converted_;
  }
}

// ---- arrays ----------------------------------------------------------------------------------

Array convert_array(const Array& a, std::optional<DType> dtype, std::optional<Device> device,
                    std::optional<bool> copy) {
  const DType t = dtype.value_or(a.dtype());
  const Device d = device.value_or(a.device());
  const bool needed = t != a.dtype() || !(d == a.device());
  if (!needed && !copy.value_or(false)) return a;
  if (needed && copy.has_value() && !*copy)
    throw ValueError(cat("Unable to avoid copy while converting ", a.str(), " to ", name(t), " on ", d.str()));
  Array src = a;
  if (!(d == a.device())) {  // move dense bytes across, then convert
    // axes in memory order (NumPy's 'K'): a Fortran-ordered or transposed array moves as it is
    // and keeps its layout; anything else is packed first
    const std::vector<std::int64_t> axes = copy_axis_order(a, 'K');
    const Array dense = permute_dims(a, axes);
    Array packed = dense;
    if (!dense.is_c_contiguous()) {
      packed = Array::empty(dense.shape(), a.dtype(), a.device());
      backend_for(a.device()).cast(elementwise_plan({&dense, &packed}, dense.shape()));
    }
    Array moved = Array::empty(dense.shape(), a.dtype(), d);
    const auto nbytes = static_cast<std::size_t>(packed.nbytes());
    if (a.device().is_cpu()) backend_for(d).copy_from_host(moved.data(), packed.data(), nbytes);
    else if (d.is_cpu()) backend_for(a.device()).copy_to_host(moved.data(), packed.data(), nbytes);
    else {
      Array host = Array::empty(dense.shape(), a.dtype());
      backend_for(a.device()).copy_to_host(host.data(), packed.data(), nbytes);
      backend_for(d).copy_from_host(moved.data(), host.data(), nbytes);
    }
    std::vector<std::int64_t> inverse(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i)
      inverse[static_cast<std::size_t>(axes[i])] = static_cast<std::int64_t>(i);
    src = permute_dims(moved, inverse);
    if (t == src.dtype()) return src;
  }
  Array out = Array::empty(src.shape(), t, d);
  backend_for(d).cast(elementwise_plan({&src, &out}, src.shape()));
  return out;
}

namespace {
struct Nested {
  Shape shape;
  std::vector<nb::object> leaves;  // owned: a leaf's conversion may run Python code that changes the lists
  std::vector<Array> leaf_arrays;  // converted non-scalar leaves (same order as leaves)
};

bool is_sequence_like(nb::handle obj) { return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()); }

[[noreturn]] void too_deep() {
  throw ValueError(
      cat("setting an array element with a sequence. The requested array would exceed the maximum number "
          "of dimension of ",
          kMaxDims, "."));
}

/// The shape read along the first elements; stops at kMaxDims levels, so that deep nesting and
/// self-referential lists (l = [l]) end with an error instead of a crash or a hang.
void nested_shape(nb::handle obj, Shape& shape) {
  nb::object item = nb::borrow(obj);
  while (is_sequence_like(item)) {
    if (shape.size() == static_cast<std::size_t>(kMaxDims)) too_deep();
    const auto n = static_cast<std::int64_t>(PySequence_Fast_GET_SIZE(item.ptr()));
    shape.push_back(n);
    if (n == 0) return;
    item = nb::borrow(PySequence_Fast_GET_ITEM(item.ptr(), 0));
  }
  if (!is_python_scalar(item)) {
    Array leaf = array_from_py(item);
    if (shape.size() + leaf.shape().size() > static_cast<std::size_t>(kMaxDims)) too_deep();
    for (auto d : leaf.shape()) shape.push_back(d);
  }
}

void nested_collect(nb::handle obj, const Shape& shape, std::size_t depth, Nested& out) {
  if (is_sequence_like(obj)) {
    nb::sequence seq = nb::borrow<nb::sequence>(obj);
    if (depth >= shape.size() || static_cast<std::int64_t>(nb::len(seq)) != shape[depth])
      throw ValueError(
          cat("setting an array element with a sequence. The requested array has an inhomogeneous shape after ", depth,
              " dimensions. The detected shape was ", shape_str(Shape(shape.begin(), shape.begin() + depth)),
              " + inhomogeneous part."));
    for (nb::handle item : seq) nested_collect(item, shape, depth + 1, out);
    return;
  }
  if (is_python_scalar(obj)) {
    if (depth != shape.size())
      throw ValueError(
          cat("setting an array element with a sequence: inhomogeneous shape after ", depth, " dimensions"));
    out.leaves.push_back(nb::borrow(obj));
    out.leaf_arrays.emplace_back();
    return;
  }
  Array leaf = array_from_py(obj);
  if (Shape(shape.begin() + static_cast<std::ptrdiff_t>(depth), shape.end()) != leaf.shape())
    throw ValueError(cat("setting an array element with a sequence: inhomogeneous shape after ", depth, " dimensions"));
  out.leaves.push_back(nb::borrow(obj));
  out.leaf_arrays.push_back(leaf);
}

Array from_nested(nb::handle obj, std::optional<DType> dtype) {
  Nested nested;
  nested_shape(obj, nested.shape);
  nested_collect(obj, nested.shape, 0, nested);
  std::vector<TypeOperand> kinds;
  for (std::size_t i = 0; i < nested.leaves.size(); ++i) {
    if (nested.leaf_arrays[i].defined()) kinds.push_back({nested.leaf_arrays[i].dtype()});
    else {
      Scalar s = scalar_from_py(nested.leaves[i]);
      kinds.push_back({s.big_unsigned ? DType::uint64 : default_dtype(s.kind)});
    }
  }
  const DType t = dtype ? *dtype : (kinds.empty() ? DType::float64 : result_type(kinds));
  Array out = Array::empty(nested.shape, t);
  char* dst = static_cast<char*>(out.data());
  const std::int64_t isz = itemsize(t);
  for (std::size_t i = 0; i < nested.leaves.size(); ++i) {
    if (!nested.leaf_arrays[i].defined()) {
      scalar_from_py(nested.leaves[i]).store(t, dst);
      dst += isz;
      continue;
    }
    const Array& leaf = nested.leaf_arrays[i];
    Array host = convert_array(leaf, t, Device::cpu(), std::nullopt);
    Array target(out.storage(), leaf.shape(), c_strides(leaf.shape()), (dst - static_cast<char*>(out.data())) / isz, t);
    backend_for(Device::cpu()).cast(elementwise_plan({&host, &target}, leaf.shape()));
    dst += host.nbytes();
  }
  return out;
}

/// asarray imports host arrays whose strides are not multiples of the item size as a contiguous copy.
const ImportOptions kAsarray = [] {
  ImportOptions o;
  o.copy_unaligned = true;
  return o;
}();

/// A NumPy scalar as a 0-d array that owns its data (its own __array_interface__ points into a
/// temporary array); anything else as it is.
nb::object numpy_scalar_as_array(nb::handle obj) {
  PyObject* np = PyImport_GetModule(nb::str("numpy").ptr());  // only when NumPy is imported
  if (!np) {
    PyErr_Clear();
    return nb::borrow(obj);
  }
  nb::module_ numpy = nb::steal<nb::module_>(np);
  return nb::isinstance(obj, numpy.attr("generic")) ? numpy.attr("asarray")(obj) : nb::borrow(obj);
}

/// A cupric view of a NumPy array (np.asarray's result for __array__ objects and buffers).
Array numpy_view(nb::handle ndarray) {
  ForeignArray f;
  if (!import_as(ndarray, ForeignKind::numpy, kAsarray, f))
    throw TypeError(cat("numpy.asarray gave ", nb::cast<std::string>(nb::repr(nb::type_name(ndarray.type()))),
                        ", not a numpy.ndarray"));
  return to_array(f);
}
}  // namespace

Array array_from_py(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
                    std::optional<bool> copy) {
  if (nb::isinstance<Array>(obj)) return convert_array(nb::cast<Array>(obj), dtype, device, copy);
  Array a;
  bool fresh = false;  // a is a new array nobody else sees (no copy needed for copy=True)
  if (is_python_scalar(obj)) {
    Scalar s = scalar_from_py(obj);
    a = scalar_array(s, dtype ? *dtype : (s.big_unsigned ? DType::uint64 : default_dtype(s.kind)));
    fresh = true;
  } else if (PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) {  // bytes has the buffer protocol
    throw TypeError(cat("cannot convert ", nb::cast<std::string>(nb::repr(nb::type_name(obj.type()))),
                        " to a cupric array (cupric has no string dtypes)"));
  } else if (std::optional<ForeignArray> f = import_foreign(numpy_scalar_as_array(obj), kAsarrayOrder, kAsarray)) {
    a = to_array(*f);
  } else if (nb::hasattr(obj, "__array__")) {
    // pandas Series/DataFrame, xarray DataArray, ...: NumPy's view of their data, as np.asarray
    // reads them (before the sequence protocol, which would go element by element)
    a = numpy_view(nb::module_::import_("numpy").attr("asarray")(obj));
  } else if (is_sequence_like(obj)) {
    a = from_nested(obj, dtype);
    fresh = true;
  } else if (PyObject_CheckBuffer(obj.ptr())) {
    nb::object np = nb::module_::import_("numpy");
    a = numpy_view(np.attr("asarray")(nb::module_::import_("builtins").attr("memoryview")(obj)));
  } else {
    throw TypeError(
        cat("cannot convert ", nb::cast<std::string>(nb::repr(nb::type_name(obj.type()))), " to a cupric array"));
  }
  if (fresh && copy.value_or(false)) copy = std::nullopt;
  // host data (NumPy arrays, lists, buffers, any producer's CPU array) goes to the default device, as
  // CuPy puts it on the current device; a producer's device array stays where it is
  if (!device && a.device().is_cpu()) device = default_device();
  return convert_array(a, dtype, device, copy);
}

}  // namespace cupric::py
