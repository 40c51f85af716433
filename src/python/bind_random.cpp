// bind_random.cpp — cupric.random.Generator and default_rng over the C++ Generator.
#include <cstring>
#include <limits>
#include <random>

#include "convert.hpp"
#include "py_types.hpp"
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
  nb::object past =
      value - nb::int_(std::numeric_limits<std::int64_t>::max()) - nb::int_(std::numeric_limits<std::int64_t>::max());
  const long long d = PyLong_AsLongLongAndOverflow(past.ptr(), &overflow);
  if (overflow) return static_cast<__int128>(1) << 100;
  return base + d;
}

void check_axis0(const char* what, int axis) {
  if (axis != 0) throw NotImplementedError(cat(what, ": only axis=0 is supported so far, got axis=", axis));
}

DType float_dtype(nb::handle dtype) { return optional_dtype(dtype).value_or(DType::float64); }

[[noreturn]] void bad_seed(nb::handle seed) {
  throw TypeError(
      cat("seed must be None, a non-negative int, a sequence or array of non-negative ints, a SeedSequence "
          "or a Generator; got ",
          nb::cast<std::string>(nb::repr(seed))));
}

/// SplitMix64's step and output function (Steele, Lea, Flood 2014): mixes one word into a key.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// The Philox key of a seed given as 64-bit words: the first word itself (so a single word is its
/// own key, as an int seed is), each further word mixed in with key = splitmix64(key) ^ word.
std::uint64_t fold_words(const std::vector<std::uint64_t>& words) {
  std::uint64_t key = words.empty() ? 0 : words[0];
  for (std::size_t i = 1; i < words.size(); ++i) key = splitmix64(key) ^ words[i];
  return key;
}

/// A non-negative int as 64-bit words, least significant first (none for 0).
std::vector<std::uint64_t> int_words(nb::handle seed, const nb::int_& value) {
  if (nb::cast<bool>(value.attr("__lt__")(0)))
    throw ValueError(cat("seed must be non-negative, got ", nb::cast<std::string>(nb::str(seed))));
  std::vector<std::uint64_t> words;
  for (nb::object v = value; nb::cast<bool>(v.attr("__ne__")(0)); v = v.attr("__rshift__")(64))
    words.push_back(PyLong_AsUnsignedLongLongMask(v.ptr()));
  return words;
}

/// The entries of a (nested) list or tuple, each an int below 2**64, in order. Read one by one:
/// asarray would turn [2**64 - 1, 7] into float64.
void list_words(nb::handle seed, nb::handle obj, std::vector<std::uint64_t>& words) {
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    for (nb::handle item : obj) list_words(seed, item, words);
    return;
  }
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr())) bad_seed(seed);
  nb::int_ value = nb::steal<nb::int_>(PyNumber_Index(obj.ptr()));
  if (!value.is_valid()) {
    PyErr_Clear();
    bad_seed(seed);
  }
  if (nb::cast<bool>(value.attr("__lt__")(0)))
    throw ValueError(cat("seed values must be non-negative, got ", nb::cast<std::string>(nb::str(value))));
  std::vector<std::uint64_t> parts = int_words(seed, value);
  if (parts.size() > 1) bad_seed(seed);
  words.push_back(parts.empty() ? 0 : parts[0]);
}

/// The entries of an integer array (flattened in C order), each one word.
std::vector<std::uint64_t> array_words(nb::handle seed) {
  Array a;
  try {
    a = array_from_py(seed, std::nullopt, Device::cpu());
  } catch (const std::exception&) {
    bad_seed(seed);
  }
  if (a.size() == 0) return {};  // [] is float64 to asarray; NumPy takes it as no words
  if (!is_integer(a.dtype())) bad_seed(seed);
  const bool is_signed = is_signed_integer(a.dtype());
  Array h = convert_array(a, is_signed ? DType::int64 : DType::uint64, Device::cpu(), true);
  std::vector<std::uint64_t> words(static_cast<std::size_t>(h.size()));
  if (!words.empty()) std::memcpy(words.data(), h.data(), words.size() * sizeof(std::uint64_t));
  for (std::uint64_t w : words)
    if (is_signed && static_cast<std::int64_t>(w) < 0)
      throw ValueError(cat("seed values must be non-negative, got ", static_cast<std::int64_t>(w)));
  return words;
}

/// The Philox key of a seed (see default_rng's documentation in cupric/random/__init__.py).
std::uint64_t seed_from_py(nb::handle seed) {
  if (seed.is_none()) {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  if (PyBool_Check(seed.ptr())) bad_seed(seed);
  if (PyIndex_Check(seed.ptr())) {  // int, np.int64, 0-d integer arrays
    PyObject* index = PyNumber_Index(seed.ptr());
    if (index) return fold_words(int_words(seed, nb::steal<nb::int_>(index)));
    PyErr_Clear();  // arrays of more than one element: their entries are the seed
  }
  if (nb::hasattr(seed, "generate_state")) {  // numpy.random.SeedSequence and its kind: two 32-bit words
    nb::object state = seed.attr("generate_state")(2);
    return nb::cast<std::uint64_t>(state[0]) | (nb::cast<std::uint64_t>(state[1]) << 32);
  }
  if (PyUnicode_Check(seed.ptr()) || PyFloat_Check(seed.ptr())) bad_seed(seed);
  if (PyList_Check(seed.ptr()) || PyTuple_Check(seed.ptr())) {
    std::vector<std::uint64_t> words;
    list_words(seed, seed, words);
    return fold_words(words);
  }
  return fold_words(array_words(seed));
}
}  // namespace

void bind_random(nb::module_& m) {
  nb::class_<Generator>(
      m, "Generator", "Counter-based (Philox4x32-10) generator: the same seed gives the same numbers on every device.")
      .def(
          "__init__", [](Generator* g, SeedLike seed) { new (g) Generator(seed_from_py(seed)); },
          nb::arg("seed") = nb::none())
      .def_prop_ro("seed", &Generator::seed)
      .def_prop_rw("counter", &Generator::counter, &Generator::set_counter, "Philox blocks consumed so far.")
      .def(
          "random",
          [](Generator& g, ShapeLike size, DTypeLike dtype, DeviceLike device) {
            return g.random(size_from_py(size), float_dtype(dtype), device_from_py(device));
          },
          nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none())
      .def(
          "uniform",
          [](Generator& g, double low, double high, ShapeLike size, DTypeLike dtype, DeviceLike device) {
            return g.uniform(low, high, size_from_py(size), float_dtype(dtype), device_from_py(device));
          },
          nb::arg("low") = 0.0, nb::arg("high") = 1.0, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
          nb::arg("device") = nb::none())
      .def(
          "standard_normal",
          [](Generator& g, ShapeLike size, DTypeLike dtype, DeviceLike device) {
            return g.standard_normal(size_from_py(size), float_dtype(dtype), device_from_py(device));
          },
          nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none())
      .def(
          "normal",
          [](Generator& g, double loc, double scale, ShapeLike size, DTypeLike dtype, DeviceLike device) {
            return g.normal(loc, scale, size_from_py(size), float_dtype(dtype), device_from_py(device));
          },
          nb::arg("loc") = 0.0, nb::arg("scale") = 1.0, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
          nb::arg("device") = nb::none())
      .def(
          "exponential",
          [](Generator& g, double scale, ShapeLike size, DTypeLike dtype, DeviceLike device) {
            return g.exponential(scale, size_from_py(size), float_dtype(dtype), device_from_py(device));
          },
          nb::arg("scale") = 1.0, nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
          nb::arg("device") = nb::none())
      .def(
          "integers",
          [](Generator& g, IntLike low, IntLike high, ShapeLike size, DTypeLike dtype, bool endpoint,
             DeviceLike device) {
            const DType t = optional_dtype(dtype).value_or(DType::int64);
            __int128 lo = 0, hi = 0;
            if (high.is_none()) hi = bound_from_py(low);
            else {
              lo = bound_from_py(low);
              hi = bound_from_py(high);
            }
            return g.integers(lo, hi, size_from_py(size), t, device_from_py(device), endpoint);
          },
          nb::arg("low"), nb::arg("high") = nb::none(), nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
          nb::arg("endpoint") = false, nb::arg("device") = nb::none())
      .def(
          "permutation",
          [](Generator& g, ArrayLike x, int axis, DeviceLike device) {
            check_axis0("permutation", axis);
            if (PyLong_Check(x.ptr()) && !PyBool_Check(x.ptr()))
              return g.permutation(int64_from_py(x), device_from_py(device));
            return g.permutation(array_from_py(x));
          },
          nb::arg("x"), nb::arg("axis") = 0, nb::arg("device") = nb::none(),
          "A random ordering of range(x) (x an int), or a copy of x reordered along axis 0.")
      .def(
          "shuffle",
          [](Generator& g, const Array& x, int axis) {
            check_axis0("shuffle", axis);
            g.shuffle(x);
          },
          nb::arg("x"), nb::arg("axis") = 0, "Reorders x along axis 0 in place.")
      .def(
          "choice",
          [](Generator& g, ArrayLike a, ShapeLike size, bool replace, ArrayLike p, int axis, DeviceLike device) {
            check_axis0("choice", axis);
            std::optional<Array> pa, population;
            if (!p.is_none()) pa = array_from_py(p);
            std::int64_t n = 0;
            if (PyLong_Check(a.ptr()) && !PyBool_Check(a.ptr())) n = int64_from_py(a);
            else population = array_from_py(a);
            return g.choice(population ? &*population : nullptr, n, size_from_py(size), replace, pa ? &*pa : nullptr,
                            device_from_py(device));
          },
          nb::arg("a"), nb::arg("size") = nb::none(), nb::arg("replace") = true, nb::arg("p") = nb::none(),
          nb::arg("axis") = 0, nb::arg("device") = nb::none(),
          "Samples of a (an array: along axis 0; an int n: of range(n)), with or without replacement, optionally "
          "weighted by p.");
}

}  // namespace cupric::py
