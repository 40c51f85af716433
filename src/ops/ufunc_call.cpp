// ufunc_call.cpp — calling a ufunc: devices, loop, broadcasting, out=/where= checks, then the
// backend. Every check happens before anything is written, so a failed call leaves `out` as it was.
#include <algorithm>
#include <iterator>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {
Device common_device(const std::string& what, const std::vector<Array>& inputs, const Array& out) {
  bool found = false;
  Device dev;
  auto visit = [&](const Array& a) {
    if (!a.defined() || a.weak() != WeakKind::none) return;
    if (!found) {
      dev = a.device();
      found = true;
    } else if (!(a.device() == dev)) {
      throw ValueError(cat(what, ": operands are on different devices (", dev.str(), " and ", a.device().str(),
                           "); move one with x.to_device(\"", dev.str(), "\")"));
    }
  };
  for (const Array& a : inputs) visit(a);
  visit(out);
  return found ? dev : Device::cpu();
}

/// True when a and b share memory but are not the same view (writing one would change what
/// is read from the other before it is read).
bool partial_overlap(const Array& a, const Array& b) {
  if (a.storage() != b.storage()) return false;
  return !(a.offset() == b.offset() && a.strides() == b.strides() && a.shape() == b.shape() && a.dtype() == b.dtype());
}

bool fits(const Scalar& s, DType t) {
  const IntInfo lim = iinfo(t);
  if (s.big_unsigned) return s.u <= lim.max;
  return s.i >= lim.min && (s.i < 0 || static_cast<std::uint64_t>(s.i) <= lim.max);
}

/// NumPy 2 compares integer arrays with Python ints outside their range without OverflowError:
/// every element then gets the same answer. Returns it when this call is such a comparison.
std::optional<bool> out_of_range_comparison(const Ufunc& uf, const UfuncLoop& loop, const std::vector<Array>& inputs) {
  static const char* const kComparisons[] = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
  if (uf.nin != 2 || std::find(std::begin(kComparisons), std::end(kComparisons), uf.name) == std::end(kComparisons))
    return std::nullopt;
  const int w = inputs[1].weak() == WeakKind::integer ? 1 : inputs[0].weak() == WeakKind::integer ? 0 : -1;
  if (w < 0 || !is_integer(inputs[1 - w].dtype()) || inputs[1 - w].weak() != WeakKind::none ||
      !is_integer(loop.types[w]))
    return std::nullopt;  // (bool arrays promote Python ints to int64, where big ones overflow)
  const Scalar s = scalar_of_weak(inputs[w]);
  if (fits(s, loop.types[w])) return std::nullopt;
  const bool weak_above = s.big_unsigned || s.i > 0;       // above every value of the type, else below
  const bool lhs_less = w == 1 ? weak_above : !weak_above;  // inputs[0] < inputs[1] everywhere
  if (uf.name == "equal") return false;
  if (uf.name == "not_equal") return true;
  if (uf.name == "less" || uf.name == "less_equal") return lhs_less;
  return !lhs_less;
}

Array copy_of(const Array& a) {
  Array c = Array::empty(a.shape(), a.dtype(), a.device());
  backend_for(a.device()).cast(elementwise_plan({&a, &c}, a.shape()));
  return c;
}
}  // namespace

Array apply_ufunc(const Ufunc& uf, const std::vector<Array>& inputs_in, const UfuncOptions& options) {
  const UfuncLoop& loop = resolve_loop(uf, inputs_in, options.dtype);
  if (auto answer = out_of_range_comparison(uf, loop, inputs_in)) {  // x == x is true for integers
    const Array& x = inputs_in[0].weak() == WeakKind::none ? inputs_in[0] : inputs_in[1];
    return apply_ufunc(*answer ? "equal" : "not_equal", {x, x}, options);
  }
  const Device device = common_device(uf.name, inputs_in, options.out);
  if (options.where.defined() && options.where.weak() == WeakKind::none && !(options.where.device() == device))
    throw ValueError(cat(uf.name, ": where= is on ", options.where.device().str(), " but the operands are on ", device.str()));

  // materialise weak Python scalars in the loop's type (OverflowError if they do not fit)
  std::vector<Array> inputs;
  std::vector<Shape> shapes;
  for (int i = 0; i < uf.nin; ++i) {
    const Array& a = inputs_in[i];
    // weak scalars stay in host memory: a device backend passes them to its kernel by value
    if (a.weak() != WeakKind::none) inputs.push_back(scalar_array(scalar_of_weak(a), loop.types[i], Device::cpu()));
    else {
      if (options.dtype && !can_cast(a.dtype(), loop.types[i], options.casting))
        throw TypeError(cat("Cannot cast ufunc '", uf.name, "' input ", i, " from ", name(a.dtype()), " to ",
                            name(loop.types[i]), " with casting rule '", casting_name(options.casting), "'"));
      inputs.push_back(a);
    }
    shapes.push_back(inputs.back().shape());
  }
  Array where;
  if (options.where.defined()) {
    if (options.where.dtype() != DType::bool_)
      throw TypeError(cat(uf.name, ": where= must be a bool array, got ", name(options.where.dtype())));
    where = options.where;
    shapes.push_back(where.shape());
  }
  Shape shape = broadcast_shapes(shapes);

  const DType out_dtype = loop.types[uf.nin];
  Array out = options.out;
  if (out.defined()) {
    Shape full = broadcast_shapes(shape, out.shape());
    if (full != out.shape())
      throw ValueError(cat("non-broadcastable output operand with shape ", shape_str(out.shape()),
                           " doesn't match the broadcast shape ", shape_str(full)));
    shape = full;
    out.check_writeable();
    if (!can_cast(out_dtype, out.dtype(), options.casting))
      throw TypeError(cat("Cannot cast ufunc '", uf.name, "' output from ", name(out_dtype), " to ", name(out.dtype()),
                          " with casting rule '", casting_name(options.casting), "'"));
    for (Array& a : inputs)
      if (partial_overlap(a, out)) a = copy_of(a);
    if (where.defined() && partial_overlap(where, out)) where = copy_of(where);
  } else {
    out = Array::empty(shape, out_dtype, device);
  }
  if (shape_size(shape) == 0) return out;

  std::vector<const Array*> operands;
  for (const Array& a : inputs) operands.push_back(&a);
  operands.push_back(&out);
  if (where.defined()) operands.push_back(&where);
  backend_for(device).elementwise(uf, loop, elementwise_plan(operands, shape), where.defined());
  return out;
}

Array apply_ufunc(std::string_view name, const std::vector<Array>& inputs, const UfuncOptions& options) {
  return apply_ufunc(find_ufunc(name), inputs, options);
}

}  // namespace cupric
