// ufunc_call.cpp — calling a ufunc: devices, loop, broadcasting, out=/where= checks, then the
// backend. Every check happens before anything is written, so a failed call leaves `out` as it was.
#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <span>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {
Device common_device(const std::string& what, std::span<const Array* const> inputs, const Array& out) {
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
  for (const Array* a : inputs) visit(*a);
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
  if (s.beyond) return false;
  if (s.big_unsigned) return s.u <= lim.max;
  return s.i >= lim.min && (s.i < 0 || static_cast<std::uint64_t>(s.i) <= lim.max);
}

enum class Comparison : std::uint8_t { none, equal, not_equal, less, less_equal, greater, greater_equal };

/// Which comparison ufunc `uf` is (looked up by id once, not by name on every call).
Comparison comparison_of(const Ufunc& uf) {
  static const std::vector<Comparison> by_id = [] {
    std::vector<Comparison> v(all_ufuncs().size(), Comparison::none);
    const std::pair<const char*, Comparison> names[] = {
        {"equal", Comparison::equal},     {"not_equal", Comparison::not_equal},
        {"less", Comparison::less},       {"less_equal", Comparison::less_equal},
        {"greater", Comparison::greater}, {"greater_equal", Comparison::greater_equal}};
    for (const auto& [n, c] : names) v[static_cast<std::size_t>(find_ufunc(n).id)] = c;
    return v;
  }();
  return by_id[static_cast<std::size_t>(uf.id)];
}

}  // namespace

bool is_comparison(const Ufunc& uf) { return comparison_of(uf) != Comparison::none; }

namespace {
/// NumPy 2 compares integer arrays with Python ints outside their range (of any size) without
/// OverflowError: every element then gets the same answer. Returns it when this call is such a
/// comparison.
std::optional<bool> out_of_range_comparison(const Ufunc& uf, const UfuncLoop& loop,
                                            std::span<const Array* const> inputs) {
  if (uf.nin != 2) return std::nullopt;
  const Comparison cmp = comparison_of(uf);
  if (cmp == Comparison::none) return std::nullopt;
  const int w = inputs[1]->weak() == WeakKind::integer ? 1 : inputs[0]->weak() == WeakKind::integer ? 0 : -1;
  if (w < 0 || !is_integer(inputs[1 - w]->dtype()) || inputs[1 - w]->weak() != WeakKind::none ||
      !is_integer(loop.types[w]))
    return std::nullopt;  // (bool arrays promote Python ints to int64, where big ones overflow)
  const Scalar s = scalar_of_weak(*inputs[w]);
  if (fits(s, loop.types[w])) return std::nullopt;
  const bool weak_above =
      s.beyond > 0 || s.big_unsigned || (!s.beyond && s.i > 0);  // above every value of the type, else below
  const bool lhs_less = w == 1 ? weak_above : !weak_above;       // inputs[0] < inputs[1] everywhere
  switch (cmp) {
    case Comparison::equal: return false;
    case Comparison::not_equal: return true;
    case Comparison::less:
    case Comparison::less_equal: return lhs_less;
    default: return !lhs_less;
  }
}

Array copy_of(const Array& a, DType t) {
  Array c = Array::empty(a.shape(), t, a.device());
  backend_for(a.device()).cast(elementwise_plan({&a, &c}, a.shape()));
  return c;
}
Array copy_of(const Array& a) { return copy_of(a, a.dtype()); }

/// The inputs as the kernel sees them: arrays as given (checked against dtype=/casting=), weak
/// Python scalars materialised in the loop's type in host memory held here (OverflowError if
/// they do not fit): a device backend passes those to its kernel by value. Nothing is allocated.
class LoopInputs {
 public:
  LoopInputs(const Ufunc& uf, const UfuncLoop& loop, std::span<const Array* const> given, const UfuncOptions& options) {
    for (int i = 0; i < uf.nin; ++i) {
      const Array& a = *given[i];
      if (a.weak() != WeakKind::none) {
        scalars_[i].emplace(scalar_of_weak(a), loop.types[i]);
        arrays_[i] = &scalars_[i]->array();
        continue;
      }
      if (options.dtype && !can_cast(a.dtype(), loop.types[i], options.casting))
        throw TypeError(cat("Cannot cast ufunc '", uf.name, "' input ", i, " from ", name(a.dtype()), " to ",
                            name(loop.types[i]), " with casting rule '", casting_name(options.casting), "'"));
      arrays_[i] = &a;
      // NumPy casts each input to the loop's type first: an int8 or float16 input of a float8 loop
      // is rounded to float8 before the float32 math (the engines would widen it exactly)
      if (is_float8(loop.types[i]) && a.dtype() != loop.types[i]) {
        copies_[i] = copy_of(a, loop.types[i]);
        arrays_[i] = &copies_[i];
      }
    }
  }
  LoopInputs(const LoopInputs&) = delete;
  const Array& operator[](int i) const { return *arrays_[i]; }
  /// Replaces input i by a copy that this object keeps (out= overlaps it).
  void replace_with_copy(int i) {
    copies_[i] = copy_of(*arrays_[i]);
    arrays_[i] = &copies_[i];
  }

 private:
  std::array<const Array*, kMaxUfuncArgs> arrays_{};
  std::array<std::optional<InlineScalar>, kMaxUfuncArgs> scalars_;
  std::array<Array, kMaxUfuncArgs> copies_;
};

/// NumPy refuses integers to negative integer powers (ValueError) where C would truncate to 0:
/// the exponents the loop would read (those where= selects) are checked before anything runs.
void check_integer_power(const Ufunc& uf, const UfuncLoop& loop, const LoopInputs& inputs, const Array* where,
                         const Shape& shape) {
  static const Ufunc* power = &find_ufunc("power");
  if (&uf != power || !is_signed_integer(loop.types[1]) || shape_size(shape) == 0) return;
  const Array& exponent = inputs[1];
  Array negative = apply_ufunc("less", {exponent, scalar_array(Scalar::from_int(0))});
  if (where) negative = apply_ufunc("logical_and", {negative, *where});
  const Array found = any(negative);
  bool any_negative = false;
  if (found.device().is_cpu()) any_negative = *static_cast<const bool*>(found.data());
  else backend_for(found.device()).copy_to_host(&any_negative, found.data(), 1);
  if (any_negative) throw ValueError("Integers to negative integer powers are not allowed.");
}

/// The broadcast shape of the inputs and where= (ValueError naming the shapes when they do not
/// broadcast; the same pairwise order, so the same message, as broadcast_shapes of all of them).
Shape broadcast_inputs(const LoopInputs& inputs, int nin, const Array& where) {
  Shape shape = inputs[0].shape();
  for (int i = 1; i < nin; ++i)
    if (inputs[i].shape() != shape) shape = broadcast_shapes(shape, inputs[i].shape());
  if (where.defined() && where.shape() != shape) shape = broadcast_shapes(shape, where.shape());
  return shape;
}

/// Checks out= against the broadcast shape, the output dtype and the casting rule; returns the
/// full shape (out may broadcast the inputs further).
Shape check_out(const Ufunc& uf, DType out_dtype, const Array& out, const Shape& shape, Casting casting) {
  Shape full = shape == out.shape() ? shape : broadcast_shapes(shape, out.shape());
  if (full != out.shape())
    throw ValueError(cat("non-broadcastable output operand with shape ", shape_str(out.shape()),
                         " doesn't match the broadcast shape ", shape_str(full)));
  out.check_writeable();
  if (!can_cast(out_dtype, out.dtype(), casting))
    throw TypeError(cat("Cannot cast ufunc '", uf.name, "' output from ", name(out_dtype), " to ", name(out.dtype()),
                        " with casting rule '", casting_name(casting), "'"));
  return full;
}
}  // namespace

const UfuncLoop& resolve_loop(const Ufunc& uf, const std::vector<Array>& inputs, std::optional<DType> dtype) {
  SmallVector<const Array*, kMaxUfuncArgs> ptrs;
  for (const Array& a : inputs) ptrs.push_back(&a);
  return resolve_loop(uf, std::span<const Array* const>(ptrs.data(), ptrs.size()), dtype);
}

Array apply_ufunc(const Ufunc& uf, std::span<const Array* const> inputs_in, const UfuncOptions& options) {
  profiler::OpScope profiled(profiler::OpModel::elementwise, uf.name.c_str(), inputs_in);
  const UfuncLoop& loop = resolve_loop(uf, inputs_in, options.dtype);
  if (auto answer = out_of_range_comparison(uf, loop, inputs_in)) {  // x == x is true for integers
    const Array& x = inputs_in[0]->weak() == WeakKind::none ? *inputs_in[0] : *inputs_in[1];
    return apply_ufunc(*answer ? "equal" : "not_equal", {x, x}, options);
  }
  const Device device = common_device(uf.name, inputs_in, options.out);
  if (options.where.defined() && options.where.weak() == WeakKind::none && !(options.where.device() == device))
    throw ValueError(
        cat(uf.name, ": where= is on ", options.where.device().str(), " but the operands are on ", device.str()));

  LoopInputs inputs(uf, loop, inputs_in, options);
  const Array* where = nullptr;
  if (options.where.defined()) {
    if (options.where.dtype() != DType::bool_)
      throw TypeError(cat(uf.name, ": where= must be a bool array, got ", name(options.where.dtype())));
    where = &options.where;
  }
  Shape shape = broadcast_inputs(inputs, uf.nin, options.where);
  check_integer_power(uf, loop, inputs, where, shape);

  const DType out_dtype = loop.types[uf.nin];
  Array out = options.out;
  Array where_copy;
  if (out.defined()) {
    shape = check_out(uf, out_dtype, out, shape, options.casting);
    for (int i = 0; i < uf.nin; ++i)
      if (partial_overlap(inputs[i], out)) inputs.replace_with_copy(i);
    if (where && partial_overlap(*where, out)) {
      where_copy = copy_of(*where);
      where = &where_copy;
    }
  } else {
    out = Array::empty(shape, out_dtype, device);
  }
  if (shape_size(shape) == 0) return out;

  std::array<const Array*, kMaxUfuncArgs + 2> operands{};
  int nop = 0;
  for (int i = 0; i < uf.nin; ++i) operands[nop++] = &inputs[i];
  operands[nop++] = &out;
  if (where) operands[nop++] = where;
  backend_for(device).elementwise(uf, loop, elementwise_plan(std::span(operands.data(), nop), shape), where != nullptr);
  profiled.output(out);
  return out;
}

Array apply_ufunc(const Ufunc& uf, const std::vector<Array>& inputs, const UfuncOptions& options) {
  SmallVector<const Array*, kMaxUfuncArgs> ptrs;
  for (const Array& a : inputs) ptrs.push_back(&a);
  return apply_ufunc(uf, std::span<const Array* const>(ptrs.data(), ptrs.size()), options);
}

Array apply_ufunc(std::string_view name, const std::vector<Array>& inputs, const UfuncOptions& options) {
  return apply_ufunc(find_ufunc(name), inputs, options);
}

}  // namespace cupric
