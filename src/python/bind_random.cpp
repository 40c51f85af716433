// bind_random.cpp — cupric.random.Generator and default_rng over the C++ Generator.
#include <limits>
#include <random>

#include "convert.hpp"
#include "cupric/errors.hpp"
#include "cupric/random.hpp"

namespace cupric::py {

namespace {
Shape size_from_py(nb::handle size) { return size.is_none() ? Shape{} : shape_from_py(size); }

/// A bound of integers(): int(obj), as NumPy takes it, exact from -2^63 to 2^64 and a little
/// past (an exclusive high of 2^64 is the top of uint64); further out it is out of bounds for
/// every dtype, and integers() says so with NumPy's message.
__int128 bound_from_py(nb::handle obj) {
  nb::int_ value(obj);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (!overflow) return v;
  if (overflow < 0) return -(static_cast<__int128>(1) << 100);
  const __int128 base = 2 * static_cast<__int128>(std::numeric_limits<std::int64_t>::max());  // 2^64 - 2
  nb::object past = value - nb::int_(std::numeric_limits<std::int64_t>::max()) -
                    nb::int_(std::numeric_limits<std::int64_t>::max());
  const long long d = PyLong_AsLongLongAndOverflow(past.ptr(), &overflow);
  if (overflow) return static_cast<__int128>(1) << 100;
  return base + d;
}

void check_axis0(const char* what, int axis) {
  if (axis != 0) throw NotImplementedError(cat(what, ": only axis=0 is supported so far, got axis=", axis));
}

DType float_dtype(nb::handle dtype) { return optional_dtype(dtype).value_or(DType::float64); }

std::uint64_t seed_from_py(nb::handle seed) {
  if (seed.is_none()) {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  if (!PyLong_Check(seed.ptr()) || PyBool_Check(seed.ptr()))
    throw TypeError(cat("seed must be None or a non-negative int, got ", nb::cast<std::string>(nb::repr(seed))));
  nb::int_ value = nb::borrow<nb::int_>(seed);
  if (nb::cast<bool>(value.attr("__lt__")(0))) throw ValueError(cat("seed must be non-negative, got ", nb::cast<std::string>(nb::str(seed))));
  // fold arbitrarily large seeds into 64 bits, 64 bits at a time
  std::uint64_t key = 0;
  nb::object v = value;
  for (int part = 0; nb::cast<bool>(v.attr("__ne__")(0)); ++part) {
    const std::uint64_t low = PyLong_AsUnsignedLongLongMask(v.ptr());
    key = part == 0 ? low : (key * 0x9E3779B97F4A7C15ULL) ^ low;
    v = v.attr("__rshift__")(64);
  }
  return key;
}
}  // namespace

void bind_random(nb::module_& m) {
  nb::class_<Generator>(m, "Generator", "Counter-based (Philox4x32-10) generator: the same seed gives the same numbers on every device.")
      .def("__init__", [](Generator* g, nb::handle seed) { new (g) Generator(seed_from_py(seed)); }, nb::arg("seed") = nb::none())
      .def_prop_ro("seed", &Generator::seed)
      .def_prop_rw("counter", &Generator::counter, &Generator::set_counter, "Philox blocks consumed so far.")
      .def("random", [](Generator& g, nb::handle size, nb::handle dtype, nb::handle device) {
        return g.random(size_from_py(size), float_dtype(dtype), device_from_py(device));
      }, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none())
      .def("uniform", [](Generator& g, double low, double high, nb::handle size, nb::handle dtype, nb::handle device) {
        return g.uniform(low, high, size_from_py(size), float_dtype(dtype), device_from_py(device));
      }, nb::arg("low") = 0.0, nb::arg("high") = 1.0, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
         nb::arg("device") = nb::none())
      .def("standard_normal", [](Generator& g, nb::handle size, nb::handle dtype, nb::handle device) {
        return g.standard_normal(size_from_py(size), float_dtype(dtype), device_from_py(device));
      }, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none())
      .def("normal", [](Generator& g, double loc, double scale, nb::handle size, nb::handle dtype, nb::handle device) {
        return g.normal(loc, scale, size_from_py(size), float_dtype(dtype), device_from_py(device));
      }, nb::arg("loc") = 0.0, nb::arg("scale") = 1.0, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
         nb::arg("device") = nb::none())
      .def("exponential", [](Generator& g, double scale, nb::handle size, nb::handle dtype, nb::handle device) {
        return g.exponential(scale, size_from_py(size), float_dtype(dtype), device_from_py(device));
      }, nb::arg("scale") = 1.0, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none())
      .def("integers", [](Generator& g, nb::handle low, nb::handle high, nb::handle size, nb::handle dtype, bool endpoint,
                          nb::handle device) {
        const DType t = optional_dtype(dtype).value_or(DType::int64);
        __int128 lo = 0, hi = 0;
        if (high.is_none()) hi = bound_from_py(low);
        else {
          lo = bound_from_py(low);
          hi = bound_from_py(high);
        }
        return g.integers(lo, hi, size_from_py(size), t, device_from_py(device), endpoint);
      }, nb::arg("low"), nb::arg("high") = nb::none(), nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
         nb::arg("endpoint") = false, nb::arg("device") = nb::none())
      .def("permutation", [](Generator& g, nb::handle x, int axis, nb::handle device) {
        check_axis0("permutation", axis);
        if (PyLong_Check(x.ptr()) && !PyBool_Check(x.ptr())) return g.permutation(int64_from_py(x), device_from_py(device));
        return g.permutation(array_from_py(x));
      }, nb::arg("x"), nb::arg("axis") = 0, nb::arg("device") = nb::none(),
         "A random ordering of range(x) (x an int), or a copy of x reordered along axis 0.")
      .def("shuffle", [](Generator& g, const Array& x, int axis) {
        check_axis0("shuffle", axis);
        g.shuffle(x);
      }, nb::arg("x"), nb::arg("axis") = 0, "Reorders x along axis 0 in place.")
      .def("choice", [](Generator& g, nb::handle a, nb::handle size, bool replace, nb::handle p, int axis, nb::handle device) {
        check_axis0("choice", axis);
        std::optional<Array> pa, population;
        if (!p.is_none()) pa = array_from_py(p);
        std::int64_t n = 0;
        if (PyLong_Check(a.ptr()) && !PyBool_Check(a.ptr())) n = int64_from_py(a);
        else population = array_from_py(a);
        return g.choice(population ? &*population : nullptr, n, size_from_py(size), replace, pa ? &*pa : nullptr,
                        device_from_py(device));
      }, nb::arg("a"), nb::arg("size") = nb::none(), nb::arg("replace") = true, nb::arg("p") = nb::none(),
         nb::arg("axis") = 0, nb::arg("device") = nb::none(),
         "Samples of a (an array: along axis 0; an int n: of range(n)), with or without replacement, optionally weighted by p.");
}

}  // namespace cupric::py
