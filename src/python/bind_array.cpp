// bind_array.cpp — the ndarray class (properties, conversions, astype/copy/to_device), Device,
// and the basic creation functions (asarray, empty, zeros, ones, full and their _like forms).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <numeric>

#include "bind_cuda.hpp"
#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/backend.hpp"
#include "cupric/creation.hpp"
#include "cupric/errors.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/cpu_dispatch.hpp"
#include "cupric/thread_pool.hpp"

namespace cupric::py {

namespace {
nb::handle g_ndarray_type;

nb::tuple tuple_of(const std::vector<std::int64_t>& v) {
  nb::list l;
  for (auto x : v) l.append(x);
  return nb::tuple(l);
}

Array full_array(const Shape& shape, nb::handle fill, std::optional<DType> dtype, Device device) {
  Scalar s = scalar_from_py(fill);
  const DType t = dtype ? *dtype : (s.big_unsigned ? DType::uint64 : default_dtype(s.kind));
  Array out = Array::empty(shape, t, device);
  alignas(16) unsigned char value[16];
  s.store(t, value);
  if (out.size()) backend_for(device).fill(out, value);
  return out;
}

Array filled(const Shape& shape, int v, std::optional<DType> dtype, Device device) {
  if (v == 0) return zeros(shape, dtype.value_or(DType::float64), device);
  Array out = Array::empty(shape, dtype.value_or(DType::float64), device);
  alignas(16) unsigned char value[16];
  Scalar::from_int(v).store(out.dtype(), value);
  if (out.size()) backend_for(device).fill(out, value);
  return out;
}

/// The host copy of a (possibly device) array, C-contiguous.
Array host_contiguous(const Array& a) {
  if (a.device().is_cpu() && a.is_c_contiguous()) return a;
  Array h = convert_array(a, std::nullopt, Device::cpu(), std::nullopt);
  if (h.is_c_contiguous()) return h;
  return convert_array(h, std::nullopt, std::nullopt, true);
}

nb::object scalar_to_py(const Array& a) {
  if (a.size() != 1)
    throw ValueError(
        cat("can only convert an array of size 1 to a Python scalar (got shape ", shape_str(a.shape()), ")"));
  Array h = host_contiguous(a);
  return visit_dtype(h.dtype(), [&]<class T>() -> nb::object {
    T v;
    std::memcpy(&v, h.data(), sizeof(T));
    if constexpr (std::is_same_v<T, bool>) return nb::bool_(v);
    else if constexpr (std::is_integral_v<T>) return nb::int_(v);
    else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
      return nb::steal(PyComplex_FromDoubles(static_cast<double>(v.real()), static_cast<double>(v.imag())));
    else if constexpr (is_narrow_float_v<T>) return nb::float_(static_cast<double>(static_cast<float>(v)));
    else return nb::float_(static_cast<double>(v));
  });
}

/// int(), float() and complex() take 0-d arrays only (NumPy 2.x).
nb::object zero_dim_scalar(const Array& a) {
  if (a.ndim() != 0) throw TypeError("only 0-dimensional arrays can be converted to Python scalars");
  return scalar_to_py(a);
}

char order_from_py(nb::handle order) {
  const std::string s = order.is_none() ? "K" : nb::cast<std::string>(order);
  if (s.size() != 1 || std::string_view("CFAK").find(s[0]) == std::string_view::npos)
    throw ValueError(cat("order must be one of 'C', 'F', 'A', 'K', got '", s, "'"));
  return s[0];
}

/// ndarray.astype (NumPy's keywords plus the Array API's device=) and cu.astype. copy=False
/// returns `self` itself when dtype, device and order already hold, as NumPy and the standard say.
nb::object astype_py(nb::handle self, nb::handle dtype, char order, const std::string& casting, bool copy,
                     nb::handle device) {
  if (!nb::isinstance<Array>(self))
    throw TypeError(cat("astype expects a cupric array, got ", nb::cast<std::string>(nb::type_name(self.type()))));
  const Array& a = nb::cast<const Array&>(self);
  const DType t = dtype_from_py(dtype);
  if (!can_cast(a.dtype(), t, casting_from_name(casting)))
    throw TypeError(cat("Cannot cast array data from dtype('", name(a.dtype()), "') to dtype('", name(t),
                        "') according to the rule '", casting, "'"));
  const Device d = optional_device(device).value_or(a.device());
  const bool layout_holds = (order != 'C' || a.is_c_contiguous()) && (order != 'F' || a.is_f_contiguous());
  if (!copy && t == a.dtype() && d == a.device() && layout_holds) return nb::borrow(self);
  // copy the axes permuted into the wanted memory order (C-contiguous there), then permute back
  const std::vector<std::int64_t> axes = copy_axis_order(a, order);
  std::vector<std::int64_t> inverse(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i)
    inverse[static_cast<std::size_t>(axes[i])] = static_cast<std::int64_t>(i);
  Array out = convert_array(permute_dims(a, axes), t, d, true);
  return nb::cast(permute_dims(out, inverse));
}

/// x.to_device(device, stream=): a GPU copy runs on `stream`, and the device's current stream
/// then waits for it, so that later work never reads the array before its copy is done.
Array to_device_py(const Array& a, const Device& target, nb::handle stream) {
  if (stream.is_none()) return convert_array(a, std::nullopt, target, std::nullopt);
  const Device& gpu = target.is_cpu() ? a.device() : target;
  if (gpu.is_cpu())
    throw ValueError(
        cat("stream must be None for a copy between CPU arrays, got ", nb::cast<std::string>(nb::repr(stream))));
  const runtime::Stream s = stream_from_py(stream, gpu.index);
  if (s.device() != gpu.index)
    throw ValueError(cat("the stream is on cuda:", s.device(), " but this copy runs on ", gpu.str()));
  s.enter();
  Array out;
  try {
    out = convert_array(a, std::nullopt, target, std::nullopt);
  } catch (...) {
    runtime::Stream::exit();
    throw;
  }
  runtime::Stream::exit();
  const runtime::Stream current = runtime::Stream::current(gpu.index);
  if (!(current == s)) current.wait(s);
  return out;
}

nb::dict array_interface(const Array& a) {
  if (!a.device().is_cpu())
    throw nb::attribute_error(
        cat("__array_interface__ is only available for CPU arrays; this one is on ", a.device().str()).c_str());
  if (is_ml_dtype(a.dtype()))
    throw nb::attribute_error(cat(name(a.dtype()), " arrays have no __array_interface__ typestr").c_str());
  nb::dict d;
  const auto& inf = info(a.dtype());
  d["typestr"] = std::string(a.itemsize() == 1 ? "|" : "<") + inf.typestr_code;
  d["shape"] = tuple_of(a.shape());
  std::vector<std::int64_t> bs;
  for (auto s : a.strides()) bs.push_back(s * a.itemsize());
  d["strides"] = a.is_c_contiguous() ? nb::none() : nb::object(tuple_of(bs));
  d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), !a.writeable());
  d["version"] = 3;
  return d;
}

/// full's fill value: a cupric array stands for its scalar (0-d, or of one element).
nb::object fill_scalar(nb::handle fill_value) {
  return nb::isinstance<Array>(fill_value) ? scalar_to_py(nb::cast<Array>(fill_value)) : nb::borrow(fill_value);
}

}  // namespace

nb::handle ndarray_type() { return g_ndarray_type; }

const PyType_Slot* ndarray_buffer_slots();  // bind_buffer.cpp: the buffer protocol

void bind_array(nb::module_& m) {
  nb::class_<Device>(m, "Device", "Where an array lives: Device('cpu') or Device('cuda:0').")
      .def("__init__", [](Device* self, const std::string& s) { new (self) Device(Device::parse(s)); })
      .def_prop_ro("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_prop_ro("index", [](const Device& d) { return d.index; })
      .def("__eq__",
           [](const Device& d, nb::handle o) {
             try {
               return device_from_py(o) == d;
             } catch (const std::exception&) {
               PyErr_Clear();
               return false;
             }
           })
      .def("__hash__", [](const Device& d) { return nb::hash(nb::str(d.str().c_str())); })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) { return cat("Device('", d.str(), "')"); });

  auto cls = nb::class_<Array>(m, "ndarray", "An n-dimensional array on the CPU or a CUDA device.",
                               nb::type_slots(ndarray_buffer_slots()));
  g_ndarray_type = cls;
  cls.def_prop_ro("shape", [](const Array& a) { return tuple_of(a.shape()); })
      .def_prop_ro("dtype", [](const Array& a) { return nb::borrow<DTypeResult>(dtype_to_py(a.dtype())); })
      .def_prop_ro("ndim", &Array::ndim)
      .def_prop_ro("size", &Array::size)
      .def_prop_ro("itemsize", &Array::itemsize)
      .def_prop_ro("nbytes", &Array::nbytes)
      .def_prop_ro("device", &Array::device)
      .def_prop_ro(
          "strides",
          [](const Array& a) {
            std::vector<std::int64_t> bs;
            for (auto s : a.strides()) bs.push_back(s * a.itemsize());
            return tuple_of(bs);
          },
          "Strides in bytes, as NumPy reports them.")
      .def_prop_ro("_element_strides", [](const Array& a) { return tuple_of(a.strides()); })
      .def_prop_ro("_offset", &Array::offset)
      .def_prop_ro("_data_ptr", [](const Array& a) { return reinterpret_cast<std::uintptr_t>(a.data()); })
      .def_prop_ro("_storage_id", [](const Array& a) { return reinterpret_cast<std::uintptr_t>(a.storage().get()); })
      .def_prop_ro("flags",
                   [](const Array& a) {
                     nb::dict d;
                     d["C_CONTIGUOUS"] = a.is_c_contiguous();
                     d["F_CONTIGUOUS"] = a.is_f_contiguous();
                     d["WRITEABLE"] = a.writeable();
                     d["OWNDATA"] = false;
                     return d;
                   })
      .def_prop_ro("__array_interface__", &array_interface)
      // for ndarray.resize (python/cupric/_methods.py): how many arrays share this one's memory,
      // and taking over another array's memory, shape and layout in place
      .def_prop_ro("_storage_users", [](const Array& a) { return a.storage().use_count(); })
      .def("_become", [](Array& a, const Array& other) { a = other; })
      .def("__len__",
           [](const Array& a) {
             if (a.ndim() == 0) throw TypeError("len() of unsized object");
             return a.shape()[0];
           })
      .def("__bool__",
           [](const Array& a) {
             if (a.size() == 0)
               throw ValueError(
                   "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an array is not "
                   "empty.");
             if (a.size() != 1)
               throw ValueError(
                   "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
             return nb::cast<bool>(nb::bool_(scalar_to_py(a)));
           })
      .def("__float__", [](const Array& a) { return nb::float_(zero_dim_scalar(a)); })
      .def("__int__", [](const Array& a) { return nb::int_(zero_dim_scalar(a)); })
      .def("__complex__",
           [](const Array& a) { return nb::module_::import_("builtins").attr("complex")(zero_dim_scalar(a)); })
      .def("__index__",
           [](const Array& a) {
             if (!is_integer(a.dtype()) || a.ndim() != 0)
               throw TypeError("only integer scalar arrays can be converted to a scalar index");
             return nb::int_(scalar_to_py(a));
           })
      .def("item", [](const Array& a) { return scalar_to_py(a); })
      .def(
          "astype",
          [](nb::handle self, DTypeLike dtype, OrderLike order, const std::string& casting, bool, bool copy,
             DeviceLike device) {
            return nb::borrow<NdarrayResult>(astype_py(self, dtype, order_from_py(order), casting, copy, device));
          },
          nb::arg("dtype"), nb::arg("order") = "K", nb::arg("casting") = "unsafe", nb::arg("subok") = true,
          nb::arg("copy") = true, nb::kw_only(), nb::arg("device") = nb::none(),
          "A copy in dtype (NumPy's keywords; copy=False returns this array when nothing changes).")
      .def("copy", [](const Array& a) { return convert_array(a, std::nullopt, std::nullopt, true); })
      .def(
          "to_device",
          [](nb::handle self, DeviceLike device, StreamLike stream) {
            const Array& a = nb::cast<const Array&>(self);
            Array out = to_device_py(a, device_from_py(device), stream);
            return nb::borrow<NdarrayResult>(out.storage() == a.storage() ? nb::borrow(self)
                                                                          : nb::cast(std::move(out)));
          },
          nb::arg(), nb::kw_only(), nb::arg("stream") = nb::none(),
          "This array on `device` (itself when already there); a GPU copy runs on `stream` when given.")
      .def("_host_contiguous", &host_contiguous)
      .def("_weak_kind", [](const Array& a) { return static_cast<int>(a.weak()); });

  m.def(
      "asarray",
      [](ArrayLike obj, DTypeLike dtype, DeviceLike device, BoolLike copy) {
        std::optional<bool> c;
        if (!copy.is_none()) c = bool_from_py(copy, "copy");
        return array_from_py(obj, optional_dtype(dtype), optional_device(device), c);
      },
      nb::arg("obj"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), nb::arg("copy") = nb::none());
  m.def(
      "astype",
      [](ArrayLike x, DTypeLike dtype, bool copy, DeviceLike device) {
        return nb::borrow<NdarrayResult>(astype_py(x, dtype, 'K', "unsafe", copy, device));
      },
      nb::arg(), nb::arg(), nb::kw_only(), nb::arg("copy") = true, nb::arg("device") = nb::none(),
      "Array API astype(x, dtype, /, *, copy=True, device=None).");
  m.def(
      "empty",
      [](ShapeLike shape, DTypeLike dtype, DeviceLike device) {
        return Array::empty(shape_from_py(shape), optional_dtype(dtype).value_or(DType::float64),
                            device_from_py(device));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "zeros",
      [](ShapeLike shape, DTypeLike dtype, DeviceLike device) {
        return filled(shape_from_py(shape), 0, optional_dtype(dtype), device_from_py(device));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "ones",
      [](ShapeLike shape, DTypeLike dtype, DeviceLike device) {
        return filled(shape_from_py(shape), 1, optional_dtype(dtype), device_from_py(device));
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "full",
      [](ShapeLike shape, ScalarLike fill_value, DTypeLike dtype, DeviceLike device) {
        return full_array(shape_from_py(shape), fill_scalar(fill_value), optional_dtype(dtype), device_from_py(device));
      },
      nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());

  auto like = [](const Array& a, const DTypeLike& dtype, const DeviceLike& device, const ShapeLike& shape) {
    return std::make_tuple(shape.is_none() ? a.shape() : shape_from_py(shape),
                           optional_dtype(dtype).value_or(a.dtype()),
                           device.is_none() ? a.device() : device_from_py(device));
  };
  m.def(
      "empty_like",
      [like](const Array& a, DTypeLike dtype, DeviceLike device, ShapeLike shape) {
        auto [s, t, d] = like(a, dtype, device, shape);
        return Array::empty(s, t, d);
      },
      nb::arg("a"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), nb::arg("shape") = nb::none());
  m.def(
      "zeros_like",
      [like](const Array& a, DTypeLike dtype, DeviceLike device, ShapeLike shape) {
        auto [s, t, d] = like(a, dtype, device, shape);
        return filled(s, 0, t, d);
      },
      nb::arg("a"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), nb::arg("shape") = nb::none());
  m.def(
      "ones_like",
      [like](const Array& a, DTypeLike dtype, DeviceLike device, ShapeLike shape) {
        auto [s, t, d] = like(a, dtype, device, shape);
        return filled(s, 1, t, d);
      },
      nb::arg("a"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), nb::arg("shape") = nb::none());
  m.def(
      "full_like",
      [like](const Array& a, ScalarLike fill_value, DTypeLike dtype, DeviceLike device, ShapeLike shape) {
        auto [s, t, d] = like(a, dtype, device, shape);
        return full_array(s, fill_scalar(fill_value), t, d);
      },
      nb::arg("a"), nb::arg("fill_value"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("shape") = nb::none());

  m.def("get_num_threads", &cpu::num_threads,
        "Threads the CPU backend uses (CUPRIC_NUM_THREADS sets the start value).");
  m.def("set_num_threads", &cpu::set_num_threads, nb::arg("n"),
        "Sets the CPU backend's thread count (< 1: all cores; at most 4 per core, or 64 on small machines: "
        "ValueError above). Fewer threads than before end the workers no longer needed.");
  m.def("_cpu_dispatch", [] {  // for cupric.show_config(); raises on a bad CUPRIC_CPU_TARGETS
    const cpu::CpuDispatchReport r = cpu::cpu_dispatch_report();
    nb::dict d;
    d["variant"] = r.chosen;
    d["requested"] = r.requested;
    d["compiled"] = r.compiled;
    d["supported"] = r.supported;
    d["build_flags"] = r.build_flags;
    d["cpu_features"] = r.cpu_features;
#if defined(__clang__)
    d["compiler"] = "Clang " __clang_version__;
#else
    d["compiler"] = "GCC " __VERSION__;
#endif
    return d;
  });
  m.def("_get_default_device", &default_device);
  m.def("_set_default_device", [](nb::handle d) { set_default_device(device_from_py(d)); });
}

}  // namespace cupric::py
