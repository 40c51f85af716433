// cost.cpp — the tile IR's cost model (cost.hpp): a walk over the canonical IR that evaluates the
// scalars loop bounds are made of (constants, parameters, array extents, grid) and weighs each
// region by its trip count.
#include "cupric/tile_compiler/cost.hpp"

#include <cmath>
#include <optional>

#include "cupric/errors.hpp"
#include "cupric/tile_compiler/passes.hpp"

namespace cupric::tile {

namespace {

double scalar_value(const Scalar& s) {
  switch (s.kind) {
    case WeakKind::boolean: return s.b ? 1 : 0;
    case WeakKind::integer: return s.big_unsigned ? static_cast<double>(s.u) : static_cast<double>(s.i);
    default: return s.f;
  }
}

std::optional<double> apply_scalar_ufunc(const std::string& name, const std::vector<std::optional<double>>& in,
                                         bool integer) {
  for (const auto& v : in)
    if (!v) return std::nullopt;
  const double a = *in[0], b = in.size() > 1 ? *in[1] : 0;
  if (name == "add") return a + b;
  if (name == "subtract") return a - b;
  if (name == "multiply") return a * b;
  if (name == "floor_divide") return b == 0 ? std::optional<double>() : std::floor(a / b);
  if (name == "divide" || name == "true_divide") return b == 0 ? std::optional<double>() : a / b;
  if (name == "remainder") return b == 0 ? std::optional<double>() : a - b * std::floor(a / b);
  if (name == "minimum") return std::min(a, b);
  if (name == "maximum") return std::max(a, b);
  if (name == "negative") return -a;
  if (name == "positive") return a;
  if (name == "left_shift" && integer) return a * std::pow(2.0, b);
  if (name == "right_shift" && integer) return std::floor(a / std::pow(2.0, b));
  return std::nullopt;
}

class CostWalk {
 public:
  CostWalk(const Function& f, const CostInputs& in) : f_(f), in_(in), values_(f.values.size()) {}

  BlockCost region(const Region& r) {
    BlockCost c;
    for (const Op& op : r.ops) add(c, op);
    return c;
  }

 private:
  const Function& f_;
  const CostInputs& in_;
  std::vector<std::optional<double>> values_;  // the scalars known so far, by value id
  std::vector<const Shape*> shapes_ = std::vector<const Shape*>(f_.values.size(), nullptr);  // arrays

  double elements(int v) const { return static_cast<double>(f_.type(v).size()); }
  double bytes(int v) const { return elements(v) * itemsize(f_.type(v).dtype); }
  std::optional<double> known(int v) const { return values_.at(static_cast<std::size_t>(v)); }
  void set(const Op& op, std::optional<double> v) {
    if (!op.results.empty()) values_[static_cast<std::size_t>(op.result())] = v;
  }

  void evaluate(const Op& op) {
    switch (op.kind) {
      case OpKind::constant: set(op, scalar_value(op.value)); break;
      case OpKind::param: {
        auto it = in_.params.find(op.name);
        if (it == in_.params.end()) break;
        if (const double* d = std::get_if<double>(&it->second)) set(op, *d);
        else shapes_[static_cast<std::size_t>(op.result())] = &std::get<Shape>(it->second);
        break;
      }
      case OpKind::bid: set(op, static_cast<double>(in_.block.at(static_cast<std::size_t>(op.ints.at(0))))); break;
      case OpKind::num_blocks:
        set(op, static_cast<double>(in_.grid.at(static_cast<std::size_t>(op.ints.at(0)))));
        break;
      case OpKind::array_dim: {
        const Shape* s = shapes_.at(static_cast<std::size_t>(op.operands.at(0)));
        const auto d = static_cast<std::size_t>(op.ints.at(0));
        if (s && d < s->size()) set(op, static_cast<double>((*s)[d]));
        break;
      }
      case OpKind::cast:
        if (auto v = known(op.operands.at(0))) set(op, is_integer(f_.type(op.result()).dtype) ? std::trunc(*v) : *v);
        break;
      case OpKind::ufunc: {
        if (!f_.type(op.result()).is_scalar()) break;
        std::vector<std::optional<double>> in;
        for (int v : op.operands) in.push_back(known(v));
        set(op, apply_scalar_ufunc(op.name, in, is_integer(f_.type(op.result()).dtype)));
        break;
      }
      default: break;
    }
  }

  static void scale_into(BlockCost& c, const BlockCost& r, double times) {
    c.load_bytes += r.load_bytes * times;
    c.store_bytes += r.store_bytes * times;
    c.flops += r.flops * times;
    c.mma_flops += r.mma_flops * times;
    c.exact = c.exact && r.exact;
    c.notes.insert(c.notes.end(), r.notes.begin(), r.notes.end());
  }

  std::string where(const Op& op) const { return cat(op.loc.file, ":", op.loc.line); }

  void add_loop(BlockCost& c, const Op& op) {
    const auto lb = known(op.operands.at(0)), ub = known(op.operands.at(1)), step = known(op.operands.at(2));
    const BlockCost body = region(op.regions.at(0));
    if (lb && ub && step && *step != 0) {
      scale_into(c, body, std::max(0.0, std::ceil((*ub - *lb) / *step)));
      return;
    }
    scale_into(c, body, 1);
    c.exact = false;
    c.notes.push_back(cat("loop at ", where(op), ": trip count not known from the arguments, counted once"));
  }

  void add_branch(BlockCost& c, const Op& op) {
    BlockCost then_cost = region(op.regions.at(0));
    BlockCost else_cost = op.regions.size() > 1 ? region(op.regions[1]) : BlockCost{};
    const auto cond = known(op.operands.at(0));
    const bool then_side =
        cond ? *cond != 0 : then_cost.bytes() + then_cost.total_flops() >= else_cost.bytes() + else_cost.total_flops();
    scale_into(c, then_side ? then_cost : else_cost, 1);
  }

  void add(BlockCost& c, const Op& op) {
    evaluate(op);
    switch (op.kind) {
      case OpKind::load:
      case OpKind::load_offset:
      case OpKind::gather: c.load_bytes += bytes(op.result()); break;
      case OpKind::store:
      case OpKind::store_offset: c.store_bytes += bytes(op.operands.back()); break;
      case OpKind::scatter:
      case OpKind::atomic: c.store_bytes += bytes(op.operands.at(1 + static_cast<std::size_t>(op.ints.at(0)))); break;
      case OpKind::ufunc:
        if (!f_.type(op.result()).is_scalar()) c.flops += elements(op.result());
        break;
      case OpKind::reduce:
      case OpKind::argreduce:
      case OpKind::scan: c.flops += elements(op.operands.at(0)); break;
      case OpKind::mma: {
        const Shape& a = f_.type(op.operands.at(0)).shape;  // (..., M, K)
        c.mma_flops += 2 * elements(op.result()) * static_cast<double>(a.back());
        break;
      }
      case OpKind::for_: add_loop(c, op); break;
      case OpKind::if_: add_branch(c, op); break;
      default: break;
    }
  }
};

}  // namespace

BlockCost block_cost(const Function& f, const CostInputs& inputs) {
  for (int d = 0; d < 3; ++d)
    if (inputs.grid[static_cast<std::size_t>(d)] < 1)
      throw ValueError(cat("block_cost: grid extents must be positive, got ", inputs.grid[static_cast<std::size_t>(d)],
                           " along axis ", d));
  Function canonical = f;
  canonicalize(canonical);
  return CostWalk(canonical, inputs).region(canonical.body);
}

}  // namespace cupric::tile
