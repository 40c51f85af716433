// bind_jit_call.cpp — the warm path of @cu.jit: one C++ call checks that the arguments are
// exactly those a prepared call was made for, allocates its outputs and launches its kernels.
#include <nanobind/stl/shared_ptr.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/array.hpp"
#include "cupric/errors.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/profiler.hpp"

namespace cupric::py {

namespace {

/// What one argument of a prepared call must be: a cupric array of this dtype, device, shape
/// and strides, a Python number of exactly this type, or (static) an object of this type equal
/// to this value.
struct ArgKey {
  PyTypeObject* type = nullptr;
  nb::object value;  // static arguments
  DType dtype = DType::float64;
  Device device;
  Shape shape;
  Strides strides;
};

/// Where a kernel argument comes from: a call argument, a constant, a step's new output (as
/// allocated, or as its result: reshaped to the shape the function sees), each optionally
/// viewed under another shape (leading 1s, or a flat view) for the kernel.
struct Source {
  enum Kind : std::uint8_t { arg, constant, output, result } kind = arg;
  std::size_t index = 0;
  std::optional<Shape> view;
  nb::object value;  // constants
};

struct Output {
  Shape shape;
  DType dtype = DType::float64;
  Device device;
  std::optional<Shape> result;  // the shape the function sees, where the kernel writes another
};

struct Step {
  nb::object launch;  // the kernel's LaunchPlans.launch
  nb::object grid;
  std::vector<Source> sources;
};

Shape shape_of(nb::handle obj) { return obj.is_none() ? Shape{} : shape_from_py(obj); }

/// One signature's prepared call. call() returns the function's result, or None (nothing was
/// returned, nothing the caller sees was changed) when the arguments do not fit or a kernel's
/// launch plan no longer does: the caller then takes the full path.
class JitCall {
 public:
  /// args: the arguments of the call it is made from (it takes those of the same types, and
  /// for arrays of the same dtype, device, shape and strides); statics: the positions of the
  /// static ones (it takes equal values of the same type); outputs: (shape,
  /// dtype, device, result shape or None); steps: (launch, grid, sources) with sources
  /// (kind, index, view or None, value); result: an output index, or (tuple or list type, indices).
  JitCall(nb::tuple args, nb::list statics, nb::list outputs, nb::list steps, JitResult result) {
    std::vector<bool> is_static(args.size(), false);
    for (nb::handle i : statics) is_static.at(nb::cast<std::size_t>(i)) = true;
    for (std::size_t i = 0; i < args.size(); ++i) {
      nb::handle a = args[i];
      ArgKey k;
      k.type = Py_TYPE(a.ptr());
      if (is_static[i]) {
        k.value = nb::borrow(a);
      } else if (k.type == array_type()) {
        const Array& x = *nb::inst_ptr<Array>(a);
        k.dtype = x.dtype();
        k.device = x.device();
        k.shape = x.shape();
        k.strides = x.strides();
      } else if (!is_weak_scalar(a)) {
        throw TypeError("JitCall: arguments are cupric arrays and Python numbers");
      }
      types_.push_back(nb::borrow(reinterpret_cast<PyObject*>(k.type)));
      args_.push_back(std::move(k));
    }
    for (nb::handle o : outputs) {
      nb::tuple t = nb::cast<nb::tuple>(o);
      Output out{shape_of(t[0]), dtype_from_py(t[1]), device_from_py(t[2]), std::nullopt};
      if (!t[3].is_none()) out.result = shape_from_py(t[3]);
      outputs_.push_back(std::move(out));
    }
    for (nb::handle s : steps) {
      nb::tuple t = nb::cast<nb::tuple>(s);
      Step step{nb::borrow(t[0]), nb::borrow(t[1]), {}};
      for (nb::handle src : nb::cast<nb::list>(t[2])) {
        nb::tuple u = nb::cast<nb::tuple>(src);
        Source source;
        source.kind = static_cast<Source::Kind>(nb::cast<int>(u[0]));
        source.index = nb::cast<std::size_t>(u[1]);
        if (!u[2].is_none()) source.view = shape_from_py(u[2]);
        source.value = nb::borrow(u[3]);
        step.sources.push_back(std::move(source));
      }
      steps_.push_back(std::move(step));
    }
    if (nb::isinstance<nb::int_>(result)) {
      single_ = nb::cast<std::size_t>(result);
    } else {
      nb::tuple t = nb::cast<nb::tuple>(result);
      sequence_ = nb::borrow(t[0]);
      for (nb::handle i : nb::cast<nb::list>(t[1])) results_.push_back(nb::cast<std::size_t>(i));
    }
  }

  bool fits(PyObject* args) const {
    if (static_cast<std::size_t>(PyTuple_GET_SIZE(args)) != args_.size()) return false;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      PyObject* v = PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(i));
      const ArgKey& k = args_[i];
      if (Py_TYPE(v) != k.type) return false;
      if (k.value.is_valid()) {
        if (!same_value(v, k.value.ptr())) return false;
        continue;
      }
      if (k.type != array_type()) continue;
      if (!nb::inst_ready(v)) return false;  // (an ndarray whose __init__ did not run: the full path says so)
      const Array& a = *nb::inst_ptr<Array>(v);
      if (a.dtype() != k.dtype || a.shape() != k.shape || a.strides() != k.strides || !(a.device() == k.device))
        return false;
    }
    return true;
  }

  nb::object call(PyObject* args) const {
    std::vector<nb::object> made(outputs_.size()), results(outputs_.size());
    for (std::size_t j = 0; j < outputs_.size(); ++j) {
      const Output& o = outputs_[j];
      Array a = Array::empty(o.shape, o.dtype, o.device);
      results[j] = o.result ? nb::cast(reshape(a, *o.result)) : nb::object();
      made[j] = nb::cast(std::move(a));
      if (!o.result) results[j] = made[j];
    }
    for (const Step& s : steps_) {
      nb::object kernel_args = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(s.sources.size())));
      if (!kernel_args.is_valid()) throw nb::python_error();
      for (std::size_t i = 0; i < s.sources.size(); ++i) {
        nb::object v = source(s.sources[i], args, made, results);
        PyTuple_SET_ITEM(kernel_args.ptr(), static_cast<Py_ssize_t>(i), v.release().ptr());
      }
      if (s.launch(s.grid, nb::none(), kernel_args).is_none()) return nb::none();
    }
    if (!sequence_.is_valid()) return results[single_];
    nb::list out;
    for (std::size_t j : results_) out.append(results[j]);
    return sequence_.ptr() == reinterpret_cast<PyObject*>(&PyTuple_Type) ? nb::object(nb::tuple(out)) : out;
  }

 private:
  static PyTypeObject* array_type() { return reinterpret_cast<PyTypeObject*>(ndarray_type().ptr()); }

  static nb::object source(const Source& s, PyObject* args, const std::vector<nb::object>& made,
                           const std::vector<nb::object>& results) {
    nb::object v;
    switch (s.kind) {
      case Source::arg: v = nb::borrow(PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(s.index))); break;
      case Source::constant: v = s.value; break;
      case Source::output: v = made[s.index]; break;
      case Source::result: v = results[s.index]; break;
    }
    if (!s.view) return v;
    return nb::cast(reshape(nb::cast<const Array&>(v), *s.view));
  }

  std::vector<ArgKey> args_;
  std::vector<nb::object> types_;  // holds the argument types compared by address
  std::vector<Output> outputs_;
  std::vector<Step> steps_;
  std::size_t single_ = 0;
  nb::object sequence_;  // tuple or list; unset for a single result
  std::vector<std::size_t> results_;
};

/// A jit function's prepared calls, the latest first: call(args) runs the one the arguments
/// fit and returns its result; None when none fits, a profiler mode is on (its records are
/// made on the full path), or a kernel's plan did not take the launch (that call is dropped).
class JitCalls {
 public:
  nb::object call(nb::args args) {
    if (calls_.empty() || profiler::modes() != 0) return nb::none();
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      std::shared_ptr<JitCall> c = calls_[i];  // held: a launch may run Python code that changes calls_
      if (!c->fits(args.ptr())) continue;
      nb::object r = c->call(args.ptr());
      if (r.is_none()) {
        if (i < calls_.size() && calls_[i] == c) calls_.erase(calls_.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (i > 0 && i < calls_.size() && calls_[i] == c) {
        std::swap(calls_[i], calls_[i - 1]);  // in use: forward
      }
      return r;
    }
    return nb::none();
  }
  void add(std::shared_ptr<JitCall> c) {
    if (calls_.size() >= kMax) calls_.pop_back();
    calls_.insert(calls_.begin(), std::move(c));
  }
  void clear() { calls_.clear(); }
  std::size_t size() const { return calls_.size(); }

 private:
  static constexpr std::size_t kMax = 64;
  std::vector<std::shared_ptr<JitCall>> calls_;
};

}  // namespace

void bind_jit_call(nb::module_& t) {
  nb::class_<JitCall>(t, "JitCall", "A @cu.jit call prepared for exact arguments (see JitCalls).")
      .def(nb::init<nb::tuple, nb::list, nb::list, nb::list, JitResult>(), nb::arg("args"), nb::arg("statics"),
           nb::arg("outputs"), nb::arg("steps"), nb::arg("result"));
  nb::class_<JitCalls>(t, "JitCalls", "A jit function's prepared calls: call(*args) -> result, or None.")
      .def(nb::init<>())
      .def("call", &JitCalls::call, "The result of the prepared call the arguments fit; None when none does.")
      .def("add", &JitCalls::add)
      .def("clear", &JitCalls::clear)
      .def("__len__", &JitCalls::size);
}

}  // namespace cupric::py
