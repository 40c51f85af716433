// pipeline.cpp — GPU passes on loops of products: fold_transposes (a transposed b operand of mma is
// staged as it is) and load pipelining (pipeline_loads): in a loop without stores, a load
// whose tile feeds only mma operands and whose indices follow from the induction variable and
// values outside the loop is issued one iteration ahead — for iteration i + step at the top of
// iteration i, into a carried tile — so that its global-memory latency overlaps the mma of the
// current iteration. The first tile is loaded before the loop (a load past the end reads padding).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "cupric/errors.hpp"
#include "cupric/tile_compiler/passes.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::tile {

namespace {

/// A compiler switch from the environment (part of the kernel index's key): its value, one of
/// `allowed` ("" when unset); any other a ValueError that names the variable, the value and the
/// choices — a misspelt switch would otherwise compile quietly as if unset.
std::string env_switch(const char* name, std::initializer_list<const char*> allowed) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return "";
  std::string choices;
  for (const char* a : allowed) {
    if (std::string(v) == a) return v;
    choices += cat(choices.empty() ? "" : ", ", "'", a, "'");
  }
  throw ValueError(cat("cupric.tile: ", name, "='", v, "' is not one of ", choices, " (or unset)"));
}

bool writes_memory(const Region& r) {
  bool found = false;
  walk(r, [&](const Op& op) { found = found || writes_memory(op); });
  return found;
}

/// A pure op on scalars (and array shapes / strides) with one scalar result: cheap to compute
/// again, for another iteration.
bool is_scalar_pure(const Function& f, const Op& op) {
  if (!is_pure(op) || op.results.size() != 1 || !f.type(op.result()).is_scalar()) return false;
  for (int v : op.operands)
    if (f.type(v).is_tile() && !f.type(v).is_scalar()) return false;
  return true;
}

/// The loop index of `add` for int64 operands (the iv + step of the prefetch).
std::int64_t int64_add_loop() {
  const Ufunc& add = find_ufunc("add");
  for (std::size_t i = 0; i < add.loops.size(); ++i) {
    const UfuncLoop& l = add.loops[i];
    if (l.types[0] == DType::int64 && l.types[1] == DType::int64 && l.types[2] == DType::int64)
      return static_cast<std::int64_t>(i);
  }
  throw ValueError("internal: no int64 add loop");
}

}  // namespace

std::optional<std::vector<std::size_t>> index_chain(const Function& f, const Region& body, const Op& load) {
  return scalar_slice(f, body, load.operands);
}

std::optional<std::vector<std::size_t>> scalar_slice(const Function& f, const Region& body, std::vector<int> work,
                                                     bool reads) {
  std::unordered_map<int, std::size_t> def;
  for (std::size_t i = 0; i < body.ops.size(); ++i)
    if (body.ops[i].kind != OpKind::param)  // the kernel's parameters are there already
      for (int v : body.ops[i].results) def[v] = i;
  std::unordered_set<std::size_t> need;
  while (!work.empty()) {
    const int v = work.back();
    work.pop_back();
    // a carried value changes from one iteration to the next in a way only the body knows
    if (std::find(body.args.begin() + 1, body.args.end(), v) != body.args.end()) return std::nullopt;
    auto found = def.find(v);
    if (found == def.end() || need.count(found->second)) continue;  // defined outside the loop (or seen)
    const Op& op = body.ops[found->second];
    // reads: a one-element load (a value the kernel reads from an array: a grouped product's
    // problem, a block's offset) and its reshape to a scalar
    const bool read =
        reads &&
        ((op.kind == OpKind::load && f.type(op.result()).size() == 1) ||
         (op.kind == OpKind::reshape && f.type(op.result()).is_scalar() && f.type(op.operands.at(0)).size() == 1));
    if (!read && !is_scalar_pure(f, op)) return std::nullopt;
    need.insert(found->second);
    work.insert(work.end(), op.operands.begin(), op.operands.end());
  }
  std::vector<std::size_t> order(need.begin(), need.end());
  std::sort(order.begin(), order.end());
  return order;
}

namespace {

class Pipeliner {
 public:
  explicit Pipeliner(Function& f) : f_(f) {}

  void run(Region& r) {
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      for (Region& sub : r.ops[i].regions) run(sub);
      if (r.ops[i].kind == OpKind::for_ && !writes_memory(r.ops[i].regions.at(0))) i += pipeline(r, i);
    }
  }

 private:
  /// Pipelines the eligible loads of the loop r.ops[at], one at a time (the load it leaves in the
  /// body feeds the yield, so it is not eligible again); returns the ops inserted before the loop.
  std::size_t pipeline(Region& r, std::size_t at) {
    std::size_t inserted = 0;
    for (;;) {
      const Region& body = r.ops[at + inserted].regions.at(0);
      std::optional<std::size_t> load;
      for (std::size_t i = 0; i < body.ops.size() && !load; ++i)
        if (body.ops[i].kind == OpKind::load && body.ops[i].staging == LoadStaging::registers &&
            feeds_only_mma(body, body.ops[i].result()) && index_chain(f_, body, body.ops[i]).has_value())
          load = i;
      if (!load) return inserted;
      inserted += pipeline_one(r, at + inserted, *load);
    }
  }

  /// Whether v is used only as an a or b operand of mma ops, directly or through reshapes.
  bool feeds_only_mma(const Region& body, int v) const {
    bool ok = true;
    walk(body, [&](const Op& op) {
      for (std::size_t i = 0; i < op.operands.size(); ++i)
        if (op.operands[i] == v)
          ok = ok &&
               ((op.kind == OpKind::mma && i < 2) || (op.kind == OpKind::reshape && feeds_only_mma(body, op.result())));
    });
    return ok;
  }

  /// Copies of `ops` (and then of `load`) with operands renamed through `rename` (iv -> its value).
  std::vector<Op> clone(const Region& body, const std::vector<std::size_t>& ops, const Op& load,
                        std::unordered_map<int, int> rename, int& result) {
    std::vector<Op> out;
    auto copy = [&](const Op& op) {
      Op c = op;
      for (int& v : c.operands)
        if (auto it = rename.find(v); it != rename.end()) v = it->second;
      for (int& v : c.results) {
        const int nv = f_.add_value(f_.type(v));
        rename[v] = nv;
        v = nv;
      }
      out.push_back(std::move(c));
    };
    for (std::size_t i : ops) copy(body.ops[i]);
    copy(load);
    result = out.back().result();
    return out;
  }

  std::size_t pipeline_one(Region& r, std::size_t at, std::size_t load_at) {
    Op& loop = r.ops[at];
    Region& body = loop.regions.at(0);
    const Op load = body.ops[load_at];
    const std::vector<std::size_t> ops = *index_chain(f_, body, load);
    const int iv = body.args.at(0);
    // before the loop: the first iteration's tile
    int first = -1;
    std::vector<Op> prologue = clone(body, ops, load, {{iv, loop.operands.at(0)}}, first);
    // at the top of the body: the next iteration's tile, for iv + step
    Op next_iv;
    next_iv.kind = OpKind::ufunc;
    next_iv.name = "add";
    next_iv.ints = {int64_add_loop()};
    next_iv.operands = {iv, loop.operands.at(2)};
    next_iv.results = {f_.add_value(Type::scalar(DType::int64))};
    next_iv.loc = load.loc;
    int next = -1;
    std::vector<Op> ahead = clone(body, ops, load, {{iv, next_iv.result()}}, next);
    ahead.insert(ahead.begin(), next_iv);
    // the carried tile replaces the load's result in the body
    const int carried = f_.add_value(f_.type(load.result()));
    walk(body, [&](Op& op) {
      for (int& v : op.operands)
        if (v == load.result()) v = carried;
    });
    body.ops.erase(body.ops.begin() + static_cast<std::ptrdiff_t>(load_at));
    body.ops.back().operands.push_back(next);  // the yield
    body.ops.insert(body.ops.begin(), std::make_move_iterator(ahead.begin()), std::make_move_iterator(ahead.end()));
    body.args.push_back(carried);
    loop.operands.push_back(first);
    loop.results.push_back(f_.add_value(f_.type(load.result())));
    const std::size_t n = prologue.size();
    r.ops.insert(r.ops.begin() + static_cast<std::ptrdiff_t>(at), std::make_move_iterator(prologue.begin()),
                 std::make_move_iterator(prologue.end()));
    return n;
  }

  Function& f_;
};

}  // namespace

void fold_transposes(Function& f) {
  std::unordered_map<int, const Op*> permutes;
  std::unordered_map<int, bool> only_b;
  walk(f.body, [&](const Op& op) {
    if (op.kind == OpKind::permute && op.ints == std::vector<std::int64_t>{1, 0}) permutes[op.result()] = &op;
    for (std::size_t i = 0; i < op.operands.size(); ++i) {
      const bool b_of_mma = op.kind == OpKind::mma && i == 1 && !op.b_transposed;
      auto [it, fresh] = only_b.emplace(op.operands[i], b_of_mma);
      if (!fresh) it->second = it->second && b_of_mma;
    }
  });
  std::unordered_map<int, int> source;
  for (const auto& [v, op] : permutes)
    if (only_b[v]) source[v] = op->operands.at(0);
  walk(f.body, [&](Op& op) {
    if (op.kind != OpKind::mma) return;
    if (auto it = source.find(op.operands.at(1)); it != source.end()) {
      op.operands[1] = it->second;
      op.b_transposed = true;
    }
  });
  canonicalize(f);  // drops the permutes
}

namespace {

/// Replaces the fp8 operands of the products in r that no ring stages with float16 casts of them.
void widen_region(Function& f, Region& r, bool staged) {
  std::vector<Op> out;
  out.reserve(r.ops.size());
  for (Op& op : r.ops) {
    for (std::size_t i = 0; i < op.regions.size(); ++i)
      widen_region(f, op.regions[i], op.kind == OpKind::for_ && op.staged.stages > 0);
    if (op.kind == OpKind::mma && !staged && is_float8(f.type(op.operands.at(0)).dtype)) {
      for (std::size_t i = 0; i < 2; ++i) {
        Shape shape = f.type(op.operands[i]).shape;
        Op cast;
        cast.kind = OpKind::cast;
        cast.operands = {op.operands[i]};
        cast.loc = op.loc;
        cast.results = {f.add_value(Type::tile(DType::float16, std::move(shape)))};
        op.operands[i] = cast.result();
        out.push_back(std::move(cast));
      }
    }
    out.push_back(std::move(op));
  }
  r.ops = std::move(out);
}
}  // namespace

void widen_float8_products(Function& f) { widen_region(f, f.body, false); }

namespace {

bool is_zero(const Scalar& v) {
  switch (v.kind) {
    case WeakKind::floating: return v.f == 0.0;
    case WeakKind::boolean: return !v.b;
    case WeakKind::complex: return v.c == std::complex<double>{};
    default: return !v.big_unsigned && v.i == 0;
  }
}

/// What stage_products knows of the whole function: constants, every op by result, every use.
struct FunctionIndex {
  std::unordered_map<int, Op*> def;
  std::unordered_map<int, std::vector<std::pair<const Op*, std::size_t>>> uses;  // user, operand index
};

/// v, or the value it is a reshape of (repeatedly).
int through_reshapes(const FunctionIndex& ix, int v) {
  for (;;) {
    auto d = ix.def.find(v);
    if (d == ix.def.end() || d->second->kind != OpKind::reshape) return v;
    v = d->second->operands.at(0);
  }
}

/// Whether every use of v (through reshapes) is as operand `operand` (0: a, 1: b, -1: either) of
/// one of `products`.
bool only_operand_of(const FunctionIndex& ix, int v, int operand, const std::vector<Op*>& products) {
  auto u = ix.uses.find(v);
  if (u == ix.uses.end()) return false;
  for (const auto& [op, i] : u->second) {
    if (op->kind == OpKind::reshape) {
      if (!only_operand_of(ix, op->result(), operand, products)) return false;
    } else if (std::find(products.begin(), products.end(), op) == products.end() || i > 1 ||
               (operand >= 0 && static_cast<int>(i) != operand)) {
      return false;
    }
  }
  return true;
}

/// A load whose tile (through reshapes) can go through shared memory panels: 16-bit, an array of
/// 2 or more dimensions, the tile 1 x ... x 1 x R x C, padding 0.
bool panel_load(const Function& f, const Op& op) {
  if (op.kind != OpKind::load || op.staging != LoadStaging::registers || !is_zero(op.value)) return false;
  const Type& t = f.type(op.result());
  if (f.type(op.operands.at(0)).ndim < 2 || t.shape.size() < 2) return false;
  for (std::size_t d = 0; d + 2 < t.shape.size(); ++d)
    if (t.shape[d] != 1) return false;
  return true;
}

/// Whether v (a value of the loop body) is computed elementwise from the result of one of
/// `products` of the same shape: it then has that accumulator's layout (assign_layouts), the one
/// a register operand of a staged product takes.
bool from_product(const Function& f, const FunctionIndex& ix, int v, const std::vector<Op*>& products, int depth = 0) {
  auto d = ix.def.find(v);
  if (d == ix.def.end() || depth > 64) return false;
  const Op& op = *d->second;
  if (std::find(products.begin(), products.end(), &op) != products.end()) return true;
  if (op.kind == OpKind::if_) {  // a value an if/else yields (a product masked in some iterations only)
    const auto k = static_cast<std::size_t>(std::find(op.results.begin(), op.results.end(), v) - op.results.begin());
    for (const Region& branch : op.regions) {
      if (branch.ops.empty() || branch.ops.back().kind != OpKind::yield) return false;
      if (!from_product(f, ix, branch.ops.back().operands.at(k), products, depth + 1)) return false;
    }
    return true;
  }
  if (op.kind != OpKind::ufunc && op.kind != OpKind::cast && op.kind != OpKind::where) return false;
  for (int x : op.operands)
    if (f.type(x).shape == f.type(v).shape && from_product(f, ix, x, products, depth + 1)) return true;
  return false;
}

/// Whether a staged loop of two products can issue the second in the next iteration, right after
/// the first (FlashAttention-3's intra-warpgroup overlap: the tensor cores run the previous
/// iteration's p @ v while this one's softmax runs): the second's only use is the loop's yield of a
/// carried accumulator that starts at +0 (the emitter issues it in the first iteration too, adding
/// zeros: no branch), that value is not read before the first product (the emitter waits for the
/// deferred product before its first reader), and its a is a cast of float32 values made in the
/// loop for it alone (the emitter carries those, and makes a's fragments where the product is
/// issued; b is in the ring, whose stages are released an iteration later).
bool deferrable(const Function& f, const FunctionIndex& ix, const Op& loop, const Op& first, const Op& last) {
  const Region& body = loop.regions.at(0);
  const std::vector<Op>& ops = body.ops;
  const auto at = [&](const Op& op) { return static_cast<std::size_t>(&op - ops.data()); };
  if (ops.empty() || ops.back().kind != OpKind::yield || at(first) >= at(last) || at(last) >= ops.size()) return false;
  auto u = ix.uses.find(last.result());
  if (u == ix.uses.end() || u->second.size() != 1 || u->second[0].first != &ops.back()) return false;
  const std::size_t k = u->second[0].second;
  if (std::any_of(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(at(first)) + 1,
                  [&](const Op& o) { return reads_value(o, body.args.at(k + 1)); }))
    return false;
  // the accumulator's start: a tile of +0
  auto init = ix.def.find(loop.operands.at(k + 3));
  if (init == ix.def.end() || init->second->kind != OpKind::full) return false;
  auto zero = ix.def.find(init->second->operands.at(0));
  if (zero == ix.def.end() || zero->second->kind != OpKind::constant || !is_zero(zero->second->value) ||
      (zero->second->value.kind == WeakKind::floating && std::signbit(zero->second->value.f)))
    return false;
  // a: a cast of float32 values, in the body, for this product alone
  const int a = last.operands.at(0);
  auto cast = ix.def.find(a);
  auto au = ix.uses.find(a);
  return cast != ix.def.end() && cast->second->kind == OpKind::cast &&
         std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return &o == cast->second; }) != ops.end() &&
         f.type(cast->second->operands.at(0)).dtype == DType::float32 && au != ix.uses.end() && au->second.size() == 1;
}

/// Marks the loops of r (and nested ones) whose products can read staged operands.
void stage_region(Function& f, Region& r, int threads, const std::unordered_map<int, const Op*>& constants,
                  const FunctionIndex& ix) {
  for (Op& loop : r.ops) {
    for (Region& sub : loop.regions) stage_region(f, sub, threads, constants, ix);
    if (loop.kind != OpKind::for_ || loop.staged.stages > 0) continue;
    auto step = constants.find(loop.operands.at(2));  // a positive constant step (the emitter's loop test)
    if (step == constants.end() || step->second->value.kind != WeakKind::integer || step->second->value.i <= 0)
      continue;
    Region& body = loop.regions.at(0);
    if (writes_memory(body)) continue;
    std::unordered_set<const Op*> in_body, top, beside;  // ops of the body, its top level, the loop's region
    int nested_products = 0;
    walk(body, [&](const Op& op) { in_body.insert(&op); });
    for (const Op& op : body.ops) top.insert(&op);
    for (const Op& op : r.ops) beside.insert(&op);
    for (const Op& op : body.ops)
      for (const Region& sub : op.regions) walk(sub, [&](const Op& o) { nested_products += o.kind == OpKind::mma; });
    std::vector<Op*> products;
    for (Op& op : body.ops)
      if (op.kind == OpKind::mma) products.push_back(&op);
    if (products.empty() || nested_products > 0) continue;
    std::vector<Op*> ring, resident;  // loads copied ahead into the ring; loop-invariant a loads
    std::int64_t ring_bytes = 0, resident_bytes = 0;
    bool ok = true;
    StagedShape shape;
    for (Op* product : products) {
      shape = staged_shape(f, *product, threads);
      ok = ok && shape.stages > 0;
      for (int i = 0; i < 2 && ok; ++i) {
        const int v = through_reshapes(ix, product->operands.at(static_cast<std::size_t>(i)));
        auto d = ix.def.find(v);
        Op* load = d != ix.def.end() && panel_load(f, *d->second) ? d->second : nullptr;
        const std::int64_t bytes = itemsize(f.type(v).dtype) * f.type(v).size();
        if (load && top.count(load) && only_operand_of(ix, v, -1, products) &&
            index_chain(f, body, *load).has_value()) {
          if (std::find(ring.begin(), ring.end(), load) == ring.end()) {
            ring.push_back(load);
            ring_bytes += bytes;
          }
        } else if (i == 0 && load && beside.count(load) && only_operand_of(ix, v, 0, products)) {
          if (std::find(resident.begin(), resident.end(), load) == resident.end()) {
            resident.push_back(load);
            resident_bytes += bytes;
          }
        } else if (!(i == 0 && in_body.count(d != ix.def.end() ? d->second : nullptr) && !is_float8(f.type(v).dtype) &&
                     from_product(f, ix, product->operands.at(0), products))) {
          // b not a load of the loop, or a neither a load nor computed from a product (16-bit: an
          // 8-bit a in registers is not a wgmma operand cupric makes)
          ok = false;
        }
      }
    }
    if (!ok || ring.empty()) continue;
    if (products.size() > 1 || !resident.empty() || ring.size() != 2) {
      // several products, or operands that are not both in the ring: each product is waited for
      // (its result is used in the iteration), one block per SM, as many stages as fit beside the
      // resident operands and a reserve for the loop's other scratch
      const std::int64_t room = 227 * 1024 - 2048 - resident_bytes - 32 * 1024;
      const std::int64_t fit = std::min<std::int64_t>(4, room / ring_bytes);
      if (fit < 2) continue;
      // several products waited for in each iteration, by two or more warpgroups of their own rows:
      // they take turns to issue them, so that the tensor cores run one's products while the others
      // do the work between (FlashAttention-3's ping-pong). A turn for the first product of each
      // iteration: measured on the H200 (attention, docs/performance.md) as fast as no turns and
      // 2-3 % faster causal; a turn for every product 20 % slower (a warpgroup's second product then
      // waits for the other's softmax). CUPRIC_TILE_PINGPONG: "0" no turns, "all" every product,
      // "first" (or unset) the first.
      // The emitter keeps the turns on TMA rings only (Emitter::turns).
      const std::string how = env_switch("CUPRIC_TILE_PINGPONG", {"0", "first", "all"});
      int turns = 0;
      if (products.size() > 1 && threads >= 256 && threads <= 384 && threads % 128 == 0 && how != "0")
        turns = how == "all" ? static_cast<int>(products.size()) : 1;
      shape = {static_cast<int>(fit), 0, 1, turns};
      // the last of two products deferred to the next iteration: its stage is read an iteration
      // longer (one in flight), so it takes a third stage to keep a fill ahead — the scratch
      // reserve given up for it (emit_cuda emits the loop undeferred where the body's scratch
      // then does not fit). Off unless CUPRIC_TILE_OVERLAP=1: measured slower on the H200
      // (attention 550 / causal 418 TFLOP/s against 573 / 495 without; ptxas interleaves the
      // deferred product's issue with the softmax — docs/tile.md, "Attention's overlap").
      const std::int64_t deferred_fit = std::min<std::int64_t>(4, (room + 32 * 1024) / ring_bytes);
      if (products.size() == 2 && deferred_fit >= 3 && env_switch("CUPRIC_TILE_OVERLAP", {"0", "1"}) == "1" &&
          deferrable(f, ix, loop, *products[0], *products[1]))
        shape = {static_cast<int>(deferred_fit), 1, 1, turns, true};
    }
    for (Op* load : ring) load->staging = LoadStaging::ring;
    for (Op* load : resident) load->staging = LoadStaging::resident;
    loop.staged = shape;
  }
}

}  // namespace

namespace {
thread_local const std::string* g_ring_mode = nullptr;  // RingModeScope's, when not empty

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == value;
}
}  // namespace

RingModeScope::RingModeScope(const std::string& mode) : saved_(g_ring_mode) {
  if (!mode.empty()) {
    if (mode != "cp.async" && mode != "tma" && mode != "tma ws" && mode != "tma ws plain" &&
        mode != "tma ws persistent")
      throw ValueError(
          cat("cupric.tile: unknown ring mode '", mode, "' (cp.async, tma, tma ws, tma ws plain, tma ws persistent)"));
    g_ring_mode = &mode;
  }
}
RingModeScope::~RingModeScope() { g_ring_mode = saved_; }

bool tma_requested() {
  if (g_ring_mode) return g_ring_mode->rfind("tma", 0) == 0;
  return env_is("CUPRIC_TILE_TMA", "1");
}

bool ws_requested() {
  if (g_ring_mode) return g_ring_mode->rfind("tma ws", 0) == 0;
  return tma_requested() && !env_is("CUPRIC_TILE_WS", "0");
}

bool persistent_requested() {
  if (g_ring_mode) return *g_ring_mode == "tma ws persistent";
  return ws_requested() && env_is("CUPRIC_TILE_PERSISTENT", "1");
}

bool split_requested() {
  if (g_ring_mode) return *g_ring_mode == "tma ws" || *g_ring_mode == "tma ws persistent";
  return ws_requested() && !env_is("CUPRIC_TILE_PERSISTENT", "0");
}

bool multicast_requested() { return env_switch("CUPRIC_TILE_MULTICAST", {"0", "1"}) == "1"; }

StagedShape staged_shape(const Function& f, const Op& mma, int threads) {
  const Type& ta = f.type(mma.operands.at(0));
  const Type& tb = f.type(mma.operands.at(1));
  const Type& tc = f.type(mma.result());
  const bool f8 = is_float8(ta.dtype);  // (wgmma reads 8-bit operands K-major only: b given as (N, K))
  if (ta.dtype != tb.dtype || (ta.dtype != DType::float16 && ta.dtype != DType::bfloat16 && !f8) ||
      (f8 && !mma.b_transposed) || tc.dtype != DType::float32 || ta.shape.size() != 2 || tc.shape.size() != 2)
    return {};
  const std::int64_t m = ta.shape[0], k = ta.shape[1], n = tc.shape[1], warps = threads / 32;
  const std::int64_t size = itemsize(ta.dtype), panel = 128 / size;  // a panel row: 128 bytes
  // each warp 16 whole rows (wgmma: warpgroups of 64); panels of 128 bytes; wgmma widths <= 256
  if (warps % 4 != 0 || m != 16 * warps || k % panel != 0 || n % 64 != 0 || n > 256) return {};
  // a ring of stages in shared memory: 2 blocks per SM (228 KiB) where their accumulators fit the
  // registers (64 float32 a thread), else as many stages (up to 4) as one block can have (227 KiB);
  // one product left in flight where there are 3 stages or more
  const std::int64_t stage = size * (m * k + k * n), ring = 1024;  // + the ring's alignment
  if (n <= 128 && 2 * (3 * stage + ring + 1024) <= 228 * 1024) return {3, 1, 2};
  // TMA (no copies in the consumers' registers, a barrier per stage): up to 5 stages
  const std::int64_t fit = std::min<std::int64_t>(tma_requested() ? 5 : 4, (227 * 1024 - ring - 80) / stage);
  if (fit < 2) return {};
  return {static_cast<int>(fit), fit >= 3 ? 1 : 0, 1};
}

void stage_products(Function& f, int threads) {
  std::unordered_map<int, const Op*> constants;
  FunctionIndex ix;
  walk(f.body, [&](Op& op) {
    if (op.kind == OpKind::constant) constants[op.result()] = &op;
    for (int v : op.results) ix.def[v] = &op;
    for (std::size_t i = 0; i < op.operands.size(); ++i) ix.uses[op.operands[i]].push_back({&op, i});
  });
  stage_region(f, f.body, threads, constants, ix);
}

Function pipeline_loads(const Function& f) {
  Function out = f;
  Pipeliner(out).run(out.body);
  canonicalize(out);  // merges the copies of index computations with the originals, drops the rest
  return out;
}

}  // namespace cupric::tile
