// bind_ufunc.cpp — cupric.ufunc objects (cu.add, cu.sin, ...) built from the ufunc table, and
// the Python operators of ndarray, which call them.
#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::py {

namespace {
struct PyUfunc {
  const Ufunc* uf;
};

/// out= may be an array, a 1-tuple of an array, or None.
Array out_from_py(nb::handle out) {
  if (!out.is_valid() || out.is_none()) return {};
  if (nb::isinstance<nb::tuple>(out)) {
    nb::tuple t = nb::borrow<nb::tuple>(out);
    if (nb::len(t) != 1)
      throw ValueError(cat("out= must be an array or a tuple of one array, got a tuple of ", nb::len(t)));
    return out_from_py(t[0]);
  }
  if (!nb::isinstance<Array>(out))
    throw TypeError(
        cat("return arrays must be cupric arrays, got ", nb::cast<std::string>(nb::str(nb::type_name(out.type())))));
  return nb::cast<Array>(out);
}

Array where_from_py(nb::handle where, Device device) {
  if (!where.is_valid() || (PyBool_Check(where.ptr()) && where.ptr() == Py_True)) return {};
  return array_from_py(where, std::nullopt, device);
}

bool is_equality(const Ufunc& uf) { return uf.name == "equal" || uf.name == "not_equal"; }

/// The shape NumPy gives an operand that has no cupric dtype (None, an object, a string, lists
/// holding them): lists and tuples by their lengths (first items inward), anything else 0-d.
Shape opaque_shape(nb::handle obj) {
  Shape shape;
  nb::object item = nb::borrow(obj);
  while (PyList_Check(item.ptr()) || PyTuple_Check(item.ptr())) {
    const auto n = static_cast<std::int64_t>(nb::len(item));
    shape.push_back(n);
    if (n == 0 || shape.size() > 64) break;
    item = nb::borrow<nb::sequence>(item)[0];
  }
  return shape;
}

/// == or != where one side has no cupric dtype: NumPy finds no element equal to it, so the
/// answer is False (==) or True (!=) over the broadcast shape (out= and where= as usual).
Array compare_opaque(const Ufunc& uf, const Array& x, nb::handle opaque, const UfuncOptions& options = {}) {
  const bool not_equal = uf.name == "not_equal";
  const Array filler =
      broadcast_to(scalar_array(Scalar::from_bool(not_equal), DType::bool_, x.device()), opaque_shape(opaque));
  const Array* inputs[2] = {&x, &filler};
  return apply_ufunc(find_ufunc(not_equal ? "logical_or" : "logical_and"), std::span<const Array* const>(inputs, 2),
                     options);
}

/// For np.equal / np.not_equal NumPy compares None and other objects as 0-d object arrays
/// (nothing is equal to them); strings and sequences it cannot convert have no loop (TypeError).
bool opaque_to_equality(nb::handle obj) {
  PyObject* p = obj.ptr();
  return !(PyUnicode_Check(p) || PyBytes_Check(p) || PyList_Check(p) || PyTuple_Check(p));
}

/// A ufunc call: `args` a tuple, `kwargs` a dict or null (CPython's tp_call passes null when
/// there are no keywords, so a plain call builds no dict).
Array call_ufunc(const Ufunc& uf, nb::tuple args, PyObject* kwargs) {
  const std::size_t nargs = args.size();
  const auto nin = static_cast<std::size_t>(uf.nin);
  auto too_many = [&](std::size_t given) {
    return TypeError(
        cat(uf.name, "() takes from ", nin, " to ", nin + 1, " positional arguments but ", given, " were given"));
  };
  if (nargs > nin + 1) {  // every argument is converted first, as below, so that its error comes first
    for (nb::handle a : args) operand_from_py(a);
    throw too_many(nargs);
  }
  std::optional<Operand> operands[kMaxUfuncArgs + 1];
  const Array* inputs[kMaxUfuncArgs + 1] = {};
  const bool comparison = is_comparison(uf);
  std::optional<Device> place;  // device_of_arrays over the tuple
  for (nb::handle a : args)
    if (!place && nb::isinstance<Array>(a)) place = nb::inst_ptr<Array>(a)->device();
  int opaque = -1;  // an input equal / not_equal compares as an object (None, ...)
  for (std::size_t i = 0; i < nargs; ++i) {
    try {
      inputs[i] = &operands[i].emplace(args[i], comparison, place).array();
    } catch (const TypeError&) {
      if (i >= nin || opaque >= 0 || !is_equality(uf) || !opaque_to_equality(args[i])) throw;
      opaque = static_cast<int>(i);
    }
  }
  std::size_t ninputs = nargs;
  UfuncOptions opt;
  nb::handle where;
  PyObject *key_obj = nullptr, *value_obj = nullptr;
  for (Py_ssize_t pos = 0; kwargs && PyDict_Next(kwargs, &pos, &key_obj, &value_obj);) {
    nb::handle key(key_obj), value(value_obj);
    const std::string k = nb::cast<std::string>(key);
    if (k == "out") opt.out = out_from_py(value);
    else if (k == "where") where = value;
    else if (k == "dtype") opt.dtype = optional_dtype(value);
    else if (k == "casting") opt.casting = casting_from_name(nb::cast<std::string>(value));
    else if (k == "order" || k == "subok") continue;  // accepted for NumPy compatibility
    else throw TypeError(cat("'", k, "' is an invalid keyword to ufunc '", uf.name, "'"));
  }
  if (nargs == nin + 1 && !opt.out.defined()) {  // positional out
    opt.out = out_from_py(args[nin]);
    ninputs = nin;
  }
  if (ninputs != nin) throw too_many(ninputs);
  Device dev = default_device();
  for (std::size_t i = 0; i < nin; ++i)
    if (inputs[i] && inputs[i]->weak() == WeakKind::none) {
      dev = inputs[i]->device();
      break;
    }
  opt.where = where_from_py(where, dev);
  if (opaque >= 0) {
    if (nin != 2 || !inputs[1 - opaque]) throw TypeError(cat(uf.name, ": no operand has a cupric dtype"));
    return compare_opaque(uf, *inputs[1 - opaque], args[static_cast<std::size_t>(opaque)], opt);
  }
  return apply_ufunc(uf, std::span<const Array* const>(inputs, nin), opt);
}

/// The out= object of a call (keyword, 1-tuple or positional), or an invalid handle.
nb::handle given_out(const Ufunc& uf, const nb::tuple& args, PyObject* kwargs) {
  nb::handle out;
  PyObject* keyword = kwargs ? PyDict_GetItemString(kwargs, "out") : nullptr;  // borrowed
  if (keyword) out = keyword;
  else if (static_cast<int>(args.size()) == uf.nin + 1) out = args[uf.nin];
  if (out.is_valid() && nb::isinstance<nb::tuple>(out)) out = nb::borrow<nb::tuple>(out)[0];
  return out.is_valid() && !out.is_none() ? out : nb::handle();
}

/// tp_call of ufunc objects: a raw slot rather than a bound __call__, so that a call does not go
/// through nanobind's dispatch and its (args, kwargs) conversion, which builds an empty dict.
PyObject* ufunc_tp_call(PyObject* self, PyObject* args, PyObject* kwargs) noexcept {
  try {
    const Ufunc& uf = *nb::inst_ptr<PyUfunc>(self)->uf;
    nb::tuple a = nb::borrow<nb::tuple>(args);
    Array result = call_ufunc(uf, a, kwargs);
    const bool maybe_out = kwargs || a.size() != static_cast<std::size_t>(uf.nin);
    nb::handle out = maybe_out ? given_out(uf, a, kwargs) : nb::handle();
    // NumPy returns out itself
    return out.is_valid() ? nb::borrow(out).release().ptr() : nb::cast(std::move(result)).release().ptr();
  } catch (...) {
    set_python_error(std::current_exception());
    return nullptr;
  }
}

PyType_Slot ufunc_slots[] = {{Py_tp_call, reinterpret_cast<void*>(&ufunc_tp_call)}, {0, nullptr}};

/// NumPy's binary operators step aside (NotImplemented) for operands that opt out of ufuncs.
bool defers_to(nb::handle other) {
  PyObject* attr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(other.ptr())), "__array_ufunc__");
  if (!attr) {
    PyErr_Clear();
    return false;
  }
  const bool defer = attr == Py_None;
  Py_DECREF(attr);
  return defer;
}

nb::object binary_op(const Ufunc& uf, nb::handle a, nb::handle b, bool reflected) {
  std::optional<Operand> x, y;
  const bool comparison = is_comparison(uf);
  try {
    x.emplace(a);  // self: a cupric array
    y.emplace(b, comparison, x->array().device());
  } catch (const TypeError&) {
    // == and != answer elementwise for anything (NumPy 2); the others let Python try the
    // reflected operation, which raises TypeError when there is none
    if (!x || !is_equality(uf) || defers_to(b)) return nb::borrow(Py_NotImplemented);
    return nb::cast(compare_opaque(uf, x->array(), b));
  }
  const Array* inputs[2] = {&x->array(), &y->array()};
  if (reflected) std::swap(inputs[0], inputs[1]);
  return nb::cast(apply_ufunc(uf, std::span<const Array* const>(inputs, 2)));
}

nb::object inplace_op(const Ufunc& uf, nb::handle self, nb::handle other) {
  const Array& x = *nb::inst_ptr<Array>(self);
  Operand y(other, false, x.device());
  UfuncOptions opt;
  opt.out = x;
  const Array* inputs[2] = {&x, &y.array()};
  apply_ufunc(uf, std::span<const Array* const>(inputs, 2), opt);
  return nb::borrow(self);
}

/// A ufunc's docstring: its call, the table's doc column, the dtypes it has loops for.
std::string ufunc_doc(const Ufunc& uf) {
  std::string args;
  for (int i = 0; i < uf.nin; ++i) args += uf.nin == 1 ? std::string("x, ") : cat("x", i + 1, ", ");
  std::string dtypes;
  for (const UfuncLoop& loop : uf.loops) dtypes += cat(dtypes.empty() ? "" : ", ", name(loop.types[0]));
  return cat(uf.name, "(", args, "/, out=None, *, where=True, casting='same_kind', dtype=None)\n\n", uf.doc,
             "\n\nInputs with a loop: ", dtypes,
             " (other dtypes are cast to the first of these they convert to safely).\n"
             "On the CPU and on CUDA devices; `expression` is the scalar C++ every backend compiles.");
}

}  // namespace

void bind_ufunc(nb::module_& m) {
  nb::class_<PyUfunc>(m, "ufunc", "An elementwise function from cupric's ufunc table.", nb::type_slots(ufunc_slots))
      .def_prop_ro("name", [](const PyUfunc& u) { return u.uf->name; })
      .def_prop_ro("nin", [](const PyUfunc& u) { return u.uf->nin; })
      .def_prop_ro("nout", [](const PyUfunc&) { return 1; })
      .def_prop_ro("nargs", [](const PyUfunc& u) { return u.uf->nin + 1; })
      .def_prop_ro("types", [](const PyUfunc& u) { return u.uf->type_signatures(); })
      .def_prop_ro(
          "expression", [](const PyUfunc& u) { return u.uf->expression; },
          "The scalar C++ expression every backend instantiates.")
      .def_prop_ro("_doc", [](const PyUfunc& u) { return ufunc_doc(*u.uf); })
      .def("__repr__", [](const PyUfunc& u) { return cat("<ufunc '", u.uf->name, "'>"); });

  // every row of the table (and alias), also where the namespace puts a richer function under
  // the same name (cu.clip, cu.where): the tile language and tools read the table from here
  // an alias is the same object as its target (cu.abs is cu.absolute, as in NumPy), so that a
  // ufunc pickles by its one name
  nb::dict table;
  for (const Ufunc& uf : all_ufuncs()) {
    nb::object obj = nb::cast(PyUfunc{&uf});
    m.attr(uf.name.c_str()) = obj;
    table[uf.name.c_str()] = obj;
  }
  for (const auto& [alias, target] : ufunc_aliases()) {
    m.attr(alias.c_str()) = table[target.c_str()];
    table[alias.c_str()] = table[target.c_str()];
  }
  m.attr("_ufunc_table") = table;

  nb::handle cls = ndarray_type();
  struct OpName {
    const char* py;
    const char* ufunc;
  };
  static const OpName binary[] = {
      {"add", "add"},         {"sub", "subtract"},          {"mul", "multiply"},
      {"truediv", "divide"},  {"floordiv", "floor_divide"}, {"mod", "remainder"},
      {"pow", "power"},       {"and", "bitwise_and"},       {"or", "bitwise_or"},
      {"xor", "bitwise_xor"}, {"lshift", "left_shift"},     {"rshift", "right_shift"},
  };
  for (const OpName& op : binary) {
    const Ufunc* uf = &find_ufunc(op.ufunc);
    // (any operand, None too: the operators themselves answer or return NotImplemented)
    def_method(
        cls, cat("__", op.py, "__").c_str(), [uf](ArrayLike a, ArrayLike b) { return binary_op(*uf, a, b, false); },
        nb::arg("other").none());
    def_method(
        cls, cat("__r", op.py, "__").c_str(), [uf](ArrayLike a, ArrayLike b) { return binary_op(*uf, a, b, true); },
        nb::arg("other").none());
    def_method(
        cls, cat("__i", op.py, "__").c_str(), [uf](ArrayLike a, ArrayLike b) { return inplace_op(*uf, a, b); },
        nb::arg("other").none());
  }
  static const OpName compare[] = {{"lt", "less"},          {"le", "less_equal"}, {"gt", "greater"},
                                   {"ge", "greater_equal"}, {"eq", "equal"},      {"ne", "not_equal"}};
  for (const OpName& op : compare) {
    const Ufunc* uf = &find_ufunc(op.ufunc);
    def_method(
        cls, cat("__", op.py, "__").c_str(), [uf](ArrayLike a, ArrayLike b) { return binary_op(*uf, a, b, false); },
        nb::arg("other").none());
  }
  // == is elementwise and arrays are mutable: unhashable, as NumPy's (Python does this for
  // classes that define __eq__ in their body; these methods were added afterwards)
  nb::setattr(cls, "__hash__", nb::none());
  static const OpName unary[] = {{"neg", "negative"}, {"pos", "positive"}, {"abs", "absolute"}, {"invert", "invert"}};
  for (const OpName& op : unary) {
    const Ufunc* uf = &find_ufunc(op.ufunc);
    def_method(cls, cat("__", op.py, "__").c_str(), [uf](const Array& a) {
      const Array* inputs[1] = {&a};
      return apply_ufunc(*uf, std::span<const Array* const>(inputs, 1));
    });
  }
}

}  // namespace cupric::py
