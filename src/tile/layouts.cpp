// layouts.cpp — the GPU layout pass (assign_layouts): tiles made by a tensor-core mma, and the
// elementwise and loop-carried values computed from them, take the mma.sync accumulator layout,
// so that an accumulator stays in registers across a K loop; values that are cheap to make in any
// layout (full, arange, broadcast, elementwise ops of those) take their users' layout; and a
// convert_layout is inserted where a value meets a user that needs another layout.
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "cupric/errors.hpp"
#include "cupric/tile_compiler/passes.hpp"

namespace cupric::tile {

namespace {

enum class State : std::uint8_t { blocked, mma, flexible };

struct Info {
  State state = State::blocked;
  TileLayout layout;  ///< when state == mma
};

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool is_follower(const Function& f, const Op& op) {
  switch (op.kind) {
    case OpKind::ufunc:
    case OpKind::cast:
    case OpKind::where: return f.type(op.result()).size() > 1 && !f.type(op.result()).is_scalar();
    case OpKind::reshape: return f.type(op.result()).size() > 1;
    default: return false;
  }
}

bool is_flexible_source(const Function& f, const Op& op) {
  switch (op.kind) {
    case OpKind::full:
    case OpKind::arange:
    case OpKind::broadcast: return f.type(op.result()).size() > 1;
    default: return false;
  }
}

class LayoutPass {
 public:
  LayoutPass(Function& f, int threads) : f_(f), warps_(std::max(threads / 32, 1)), info_(f.values.size()) {}

  void run() {
    index(f_.body);
    infer(f_.body);
    resolve();
    for (std::size_t v = 0; v < info_.size(); ++v)
      f_.values[v].layout = info_[v].state == State::mma ? info_[v].layout : TileLayout{};
    insert_conversions();
  }

 private:
  // ---- analysis ------------------------------------------------------------------------------
  void index(Region& r) {
    for (Op& op : r.ops) {
      order_.push_back(&op);
      if (op.kind == OpKind::for_ && op.staged.stages > 0)
        for (const Op& o : op.regions.at(0).ops)
          if (o.kind == OpKind::mma) staged_.insert(&o);
      for (std::size_t i = 0; i < op.operands.size(); ++i) uses_[op.operands[i]].push_back({&op, i});
      for (Region& sub : op.regions) {
        if (!sub.ops.empty()) yield_parent_[&sub.ops.back()] = &op;
        index(sub);
      }
    }
  }

  bool tensor_core(const Op& op) const {
    const DType in = f_.type(op.operands.at(0)).dtype, acc = f_.type(op.result()).dtype;
    return acc == DType::float32 && (in == DType::float16 || in == DType::bfloat16 || in == DType::float8_e4m3fn ||
                                     in == DType::float8_e5m2 || (op.flag && in == DType::float32));
  }

  /// The warp grid for an (M, N) accumulator: fewest fragments per warp, then fewest fragment
  /// loads per k step (A: 4 registers per m16 row block, B: 2 per n8 column block), then more
  /// warps along M (row reductions stay within fewer warps).
  TileLayout choose(std::int64_t m, std::int64_t n) const {
    const std::int64_t fm = cdiv(m, 16), fn = cdiv(n, 8);
    TileLayout best;
    std::int64_t best_frags = 0, best_loads = 0;
    for (int wm = 1; wm <= warps_; ++wm) {
      if (warps_ % wm) continue;
      const int wn = warps_ / wm;
      const std::int64_t tm = cdiv(fm, wm), tn = cdiv(fn, wn), frags = tm * tn, loads = 4 * tm + 2 * tn;
      if (best.warps_m == 0 || frags < best_frags || (frags == best_frags && loads <= best_loads)) {
        best = TileLayout{wm, wn, m, n};
        best_frags = frags;
        best_loads = loads;
      }
    }
    return best;
  }

  Info join_carried(const Info& init, const Info& yielded) const {
    if (yielded.state == State::mma) return yielded;
    if (init.state == State::mma) return init;
    return {};
  }

  void infer_op(Op& op) {
    for (int v : op.results) info_[static_cast<std::size_t>(v)] = {};
    if (op.kind == OpKind::mma) {
      const Type& t = f_.type(op.result());
      // a product of staged operands gives each warp 16 whole rows (wgmma's layout, staged.h)
      const bool staged = staged_.count(&op) != 0;
      if (tensor_core(op) && t.size() > 1)
        info_[static_cast<std::size_t>(op.result())] = {
            State::mma, staged ? TileLayout{warps_, 1, t.shape[0], t.shape[1]} : choose(t.shape[0], t.shape[1])};
    } else if (op.kind == OpKind::reduce && op.ints.at(0) == 1) {
      // a row reduction of an accumulator: one value per row, held by the threads of that row
      const Info& in = info_[static_cast<std::size_t>(op.operands.at(0))];
      const Type& tx = f_.type(op.operands.at(0));
      if (in.state == State::mma && in.layout.is_accumulator() && tx.shape.size() == 2 &&
          tx.shape[0] == in.layout.rows && tx.shape[1] == in.layout.cols) {
        TileLayout rows = in.layout;
        rows.slice = TileLayout::rows_of;
        rows.cols = 0;  // the same rows in every accumulator of this height and warp grid
        info_[static_cast<std::size_t>(op.result())] = {State::mma, rows};
      }
    } else if (is_flexible_source(f_, op)) {
      info_[static_cast<std::size_t>(op.result())].state = State::flexible;
    } else if (is_follower(f_, op)) {
      const std::int64_t n = f_.type(op.result()).size();
      std::optional<Info> mma;
      bool all_flexible = true;
      for (int v : op.operands) {
        const Type& t = f_.type(v);
        if (!t.is_tile() || t.size() != n) continue;
        const Info& i = info_[static_cast<std::size_t>(v)];
        if (i.state == State::mma && !mma) mma = i;
        all_flexible = all_flexible && i.state == State::flexible;
      }
      Info& out = info_[static_cast<std::size_t>(op.result())];
      if (mma) out = *mma;
      else if (all_flexible) out.state = State::flexible;
    } else if (op.kind == OpKind::for_) {
      Region& body = op.regions.at(0);
      for (std::size_t i = 1; i < body.args.size(); ++i)
        info_[static_cast<std::size_t>(body.args[i])] =
            join_carried(info_[static_cast<std::size_t>(op.operands.at(i + 2))], {});
      for (int round = 0; round < 8; ++round) {  // monotone (blocked -> mma): settles in a few rounds
        infer(body);
        const Op& y = body.ops.back();
        bool changed = false;
        for (std::size_t i = 1; i < body.args.size(); ++i) {
          Info& carried = info_[static_cast<std::size_t>(body.args[i])];
          const Info next = join_carried(carried, info_[static_cast<std::size_t>(y.operands.at(i - 1))]);
          if (next.state != carried.state || next.layout != carried.layout) {
            carried = next;
            changed = true;
          }
        }
        if (!changed) break;
      }
      for (std::size_t i = 0; i < op.results.size(); ++i)
        info_[static_cast<std::size_t>(op.results[i])] = info_[static_cast<std::size_t>(body.args[i + 1])];
    } else if (op.kind == OpKind::if_) {
      for (Region& r : op.regions) infer(r);
      for (std::size_t i = 0; i < op.results.size(); ++i)
        info_[static_cast<std::size_t>(op.results[i])] =
            join_carried(info_[static_cast<std::size_t>(op.regions[0].ops.back().operands.at(i))],
                         info_[static_cast<std::size_t>(op.regions[1].ops.back().operands.at(i))]);
    }
  }

  void infer(Region& r) {
    for (Op& op : r.ops) infer_op(op);
  }

  TileLayout final_layout(int v) const {
    const Info& i = info_[static_cast<std::size_t>(v)];
    return i.state == State::mma ? i.layout : TileLayout{};
  }

  /// The layout operand `idx` of `user` must have, if the user needs one.
  std::optional<TileLayout> required(const Op& user, std::size_t idx) const {
    const int v = user.operands.at(idx);
    const Type& t = f_.type(v);
    if (!t.is_tile() || t.size() <= 1) return std::nullopt;
    if (is_follower(f_, user)) {
      if (t.size() != f_.type(user.result()).size()) return std::nullopt;
      return final_layout(user.result());
    }
    switch (user.kind) {
      case OpKind::mma:
        if (idx == 2) return final_layout(user.result());
        return std::nullopt;
      case OpKind::for_:
        if (idx >= 3) return final_layout(user.regions.at(0).args.at(idx - 2));
        return std::nullopt;
      case OpKind::yield: {
        auto found = yield_parent_.find(&user);
        if (found == yield_parent_.end()) return std::nullopt;
        const Op* parent = found->second;
        if (parent->kind == OpKind::for_) return final_layout(parent->regions.at(0).args.at(idx + 1));
        return final_layout(parent->results.at(idx));
      }
      case OpKind::broadcast: {
        // a row (column) vector broadcast over an accumulator: held by the threads of its rows (columns)
        // (only for sources that can be made in that layout or are in it: a loaded vector is
        // broadcast from where it is, at the cost a conversion would have)
        const Info& from = info_[static_cast<std::size_t>(v)];
        if (from.state != State::flexible && !(from.state == State::mma && from.layout.slice != TileLayout::whole))
          return std::nullopt;
        const TileLayout out = final_layout(user.result());
        const Shape& src = t.shape;
        if (!out.is_accumulator() || f_.type(user.result()).shape.size() != 2) return std::nullopt;
        TileLayout want = out;
        if (src.size() == 2 && src[1] == 1 && src[0] == out.rows) {
          want.slice = TileLayout::rows_of;
          want.cols = 0;  // (as the rows of a reduction)
        } else if ((src.size() == 2 && src[0] == 1 && src[1] == out.cols) || (src.size() == 1 && src[0] == out.cols)) {
          want.slice = TileLayout::cols_of;
          want.rows = 0;
        } else {
          return std::nullopt;
        }
        return want;
      }
      case OpKind::gather:
      case OpKind::scatter:
      case OpKind::atomic:
      case OpKind::print:
      case OpKind::assert_: return TileLayout{};
      default: return std::nullopt;  // stores, reductions, broadcast / permute sources, mma a / b: any layout
    }
  }

  /// Flexible values take the layout most of their users need (mma on a tie), users first.
  void resolve() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const Op& op = **it;
      if (op.results.size() != 1) continue;
      const int v = op.result();
      Info& info = info_[static_cast<std::size_t>(v)];
      if (info.state != State::flexible) continue;
      std::map<std::string, std::pair<int, TileLayout>> votes;
      for (const auto& [user, idx] : uses_[v])
        if (auto want = required(*user, idx)) {
          auto& slot = votes[want->str()];
          ++slot.first;
          slot.second = *want;
        }
      info = {};
      int best = 0;
      for (const auto& [key, vote] : votes)
        if (vote.first > best || (vote.first == best && vote.second.is_mma())) {
          best = vote.first;
          if (vote.second.is_mma()) info = {State::mma, vote.second};
          else info = {};
        }
    }
  }

  // ---- conversions ---------------------------------------------------------------------------
  struct Pending {
    Op* user;
    std::size_t idx;
    TileLayout layout;
  };

  void insert_conversions() {
    std::vector<Pending> pending;
    for (Op* op : order_)
      for (std::size_t i = 0; i < op->operands.size(); ++i)
        if (auto want = required(*op, i); want && *want != f_.type(op->operands[i]).layout)
          pending.push_back({op, i, *want});
    if (pending.empty()) return;
    std::unordered_map<int, std::pair<Region*, int>> def_at;  // value -> (region, op index; -1 = region argument)
    locate(f_.body, def_at);
    std::map<std::pair<int, std::string>, int> made;  // (value, layout) -> converted value
    for (const Pending& p : pending) {
      const int v = p.user->operands[p.idx];
      auto key = std::make_pair(v, p.layout.str());
      auto found = made.find(key);
      if (found == made.end()) {
        Type t = f_.type(v);
        t.layout = p.layout;
        const int nv = f_.add_value(t);
        const auto [region, at] = def_at.at(v);
        Op conv;
        const Op* def = at >= 0 ? &region->ops[static_cast<std::size_t>(at)] : nullptr;
        if (def && (def->kind == OpKind::full || def->kind == OpKind::arange)) {
          conv = *def;  // cheaper to make again in the wanted layout
          conv.results = {nv};
        } else {
          conv.kind = OpKind::convert_layout;
          conv.operands = {v};
          conv.results = {nv};
          if (def) conv.loc = def->loc;
        }
        inserts_[region].emplace_back(at, std::move(conv));
        found = made.emplace(key, nv).first;
      }
      p.user->operands[p.idx] = found->second;
    }
    apply_inserts(f_.body);
  }

  void locate(Region& r, std::unordered_map<int, std::pair<Region*, int>>& def_at) {
    for (int a : r.args) def_at[a] = {&r, -1};
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      for (int v : r.ops[i].results) def_at[v] = {&r, static_cast<int>(i)};
      for (Region& sub : r.ops[i].regions) locate(sub, def_at);
    }
  }

  /// Inserts the pending ops after their definitions; nested regions first, so that the regions
  /// recorded by pointer are still in place when they are rebuilt.
  void apply_inserts(Region& r) {
    for (Op& op : r.ops)
      for (Region& sub : op.regions) apply_inserts(sub);
    auto it = inserts_.find(&r);
    if (it == inserts_.end()) return;
    std::vector<Op> ops;
    ops.reserve(r.ops.size() + it->second.size());
    auto add_after = [&](int at) {
      for (auto& [where, op] : it->second)
        if (where == at) ops.push_back(std::move(op));
    };
    add_after(-1);
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      ops.push_back(std::move(r.ops[i]));
      add_after(static_cast<int>(i));
    }
    r.ops = std::move(ops);
  }

  Function& f_;
  int warps_;
  std::vector<Info> info_;
  std::vector<Op*> order_;  ///< every op, parents before their regions' ops
  std::unordered_map<int, std::vector<std::pair<Op*, std::size_t>>> uses_;
  std::unordered_set<const Op*> staged_;                   ///< the products of loops marked by stage_products
  std::unordered_map<const Op*, const Op*> yield_parent_;  ///< a region's closing yield -> the for / if
  std::unordered_map<Region*, std::vector<std::pair<int, Op>>> inserts_;
};

}  // namespace

Function assign_layouts(const Function& f, int threads) {
  Function out = f;
  LayoutPass(out, threads).run();
  canonicalize(out);  // drops what the conversions left unused, merges repeated conversions
  return out;
}

}  // namespace cupric::tile
