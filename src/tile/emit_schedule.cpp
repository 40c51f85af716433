// emit_schedule.cpp — how a producer kernel's work is scheduled on Hopper, decided before its code is
// written: which staged loop a producer warpgroup fills (producer_loop), whether its K loop can be
// split (split K: splittable, split_bounds, the persistent loop over work units), which ring
// operands a pair of blocks shares (cluster multicast: plan_pairs) and how registers move between
// the producer and the tile code (register_split). The code itself: emit_body.cpp.
#include <algorithm>
#include <unordered_set>

#include "cupric/errors.hpp"
#include "cupric/tile_compiler/passes.hpp"
#include "tile/emitter.hpp"

namespace cupric::tile {

const Op* Emitter::producer_loop(std::vector<std::size_t>& slice) const {
  if (opt_.target != Target::cuda || !ws_requested() || threads_ + 128 > 384) return nullptr;
  const Op* loop = nullptr;
  int staged = 0;
  walk(f_.body, [&](const Op& op) {
    if (op.kind == OpKind::for_ && op.staged.stages > 0) {
      ++staged;
      loop = &op;
    }
  });
  // one staged loop, at the top (the producer runs it once, from the kernel's start), with TMA,
  // one block per SM (the producer's registers come from the accumulators')
  // (two blocks per SM, 128 x 128 x 64, was tried: ptxas will not compile the products in the 80
  // registers a thread such a launch starts with, setmaxnreg or not — C7602)
  if (staged != 1 || region_of_.at(loop) != &f_.body || !tma_ring(loop->regions.at(0)) || loop->staged.min_blocks != 1)
    return nullptr;
  const Region& body = loop->regions.at(0);
  std::vector<int> need(loop->operands.begin(), loop->operands.begin() + 3);  // lb, ub, step
  std::unordered_set<int> inside(body.args.begin(), body.args.end());
  for (const Op& o : body.ops) inside.insert(o.results.begin(), o.results.end());
  for (const Op& load : body.ops)
    if (load.kind == OpKind::load && load.staging == LoadStaging::ring) {
      std::vector<int> operands(load.operands.begin() + 1, load.operands.end());
      const std::vector<std::size_t> chain = index_chain(f_, body, load).value_or(std::vector<std::size_t>{});
      for (std::size_t i : chain)
        operands.insert(operands.end(), body.ops[i].operands.begin(), body.ops[i].operands.end());
      for (int v : operands)
        if (!inside.count(v)) need.push_back(v);
    }
  // the producer may read one-element tiles (a grouped product's problem table) where nothing
  // before the loop writes memory (it reads them while the tile code runs what precedes the loop)
  bool writes = false;
  for (const Op& op : f_.body.ops) {
    if (&op == loop) break;
    writes = writes || writes_memory(op) || !op.regions.empty();
  }
  auto found = scalar_slice(f_, f_.body, need, !writes);
  if (!found) return nullptr;  // the copies' indices need tiles the producer would have to compute
  slice = std::move(*found);
  return loop;
}

bool Emitter::splittable(const Op& loop) const {
  const Region& body = loop.regions.at(0);
  if (body.args.size() != 2 || loop.results.size() != 1 || body.ops.empty()) return false;
  const Op& yield = body.ops.back();
  const int acc = body.args[1];
  const Type& t = f_.type(acc);
  if (yield.kind != OpKind::yield || yield.operands.size() != 1 || itemsize(t.dtype) != 4) return false;
  auto writes = [](const Op& o) { return writes_memory(o) || !o.regions.empty(); };  // (a region: it may)
  for (const Op& o : f_.body.ops) {  // before the loop: every split runs it
    if (&o == &loop) break;
    if (writes(o)) return false;
  }
  bool added = false;  // the accumulator: only the product that makes the yielded value reads it
  for (const Op& o : body.ops) {
    if (writes(o)) return false;
    for (std::size_t i = 0; i < o.operands.size(); ++i) {
      if (o.operands[i] != acc) continue;
      if (o.kind != OpKind::mma || i != 2 || o.result() != yield.operands[0]) return false;
      added = true;
    }
  }
  // it starts at zero (ct.zeros): each split adds its products to zero
  auto init = def_.find(loop.operands.at(3));
  if (!added || init == def_.end() || init->second->kind != OpKind::full) return false;
  auto fill = def_.find(init->second->operands.at(0));
  if (fill == def_.end() || fill->second->kind != OpKind::constant) return false;
  const Scalar& z = fill->second->value;
  return z.kind == WeakKind::floating ? z.f == 0 : (!z.big_unsigned && z.i == 0);
}

void Emitter::plan_pairs() {
  // the producer's loop at the top of the body (so every block runs it), with TMA; no debug build
  if (!producer_ || opt_.debug || !tma_ring(producer_->regions.at(0)) || !multicast_requested()) return;
  if (std::none_of(f_.body.ops.begin(), f_.body.ops.end(), [&](const Op& o) { return &o == producer_; })) return;
  // the values that can differ between blocks of a pair (the same but for bid(0)): bid(0), and
  // whatever an op computes from them; a loop's variable from its bounds, its carried values and an
  // if's results also from anything inside
  std::unordered_set<int> differ;
  auto any = [&](const std::vector<int>& vs, std::size_t from = 0) {
    for (std::size_t i = from; i < vs.size(); ++i)
      if (differ.count(vs[i])) return true;
    return false;
  };
  for (bool grew = true; grew;) {
    grew = false;
    auto mark = [&](int v) { grew = differ.insert(v).second || grew; };
    walk(f_.body, [&](const Op& op) {
      if (op.kind == OpKind::for_) {
        const std::vector<int>& args = op.regions.at(0).args;
        if (any({op.operands.at(0), op.operands.at(1), op.operands.at(2)})) mark(args.at(0));
        bool inside = any(op.operands, 3);
        walk(op.regions.at(0), [&](const Op& in) { inside = inside || any(in.results); });
        if (!inside) return;
        for (std::size_t i = 1; i < args.size(); ++i) mark(args[i]);
        for (int v : op.results) mark(v);
        return;
      }
      bool d = (op.kind == OpKind::bid && op.ints.at(0) == 0) || any(op.operands);
      for (const Region& r : op.regions) walk(r, [&](const Op& in) { d = d || any(in.results); });
      if (d)
        for (int v : op.results) mark(v);
    });
  }
  for (int i = 0; i < 3; ++i)  // the same iterations in both blocks
    if (differ.count(producer_->operands.at(static_cast<std::size_t>(i)))) return;
  for (const Op& load : producer_->regions.at(0).ops) {
    if (load.kind != OpKind::load || load.staging != LoadStaging::ring) continue;
    const Type& t = f_.type(load.result());
    const long long boxes = t.shape.back() * itemsize(t.dtype) / 128;  // tma_copy's boxes of 128 bytes
    if (boxes % 2 != 0 ||
        std::any_of(load.operands.begin(), load.operands.end(), [&](int v) { return differ.count(v) > 0; }))
      continue;
    shared_loads_.insert(&load);
  }
  if (!shared_loads_.empty()) cluster_ = 2;
}

std::string Emitter::ring_args(const Op& loop) const {
  return cat(loop.staged.stages, cluster_ > 1 && &loop == producer_ ? ", true" : "");
}

void Emitter::open_tile_loop() {
  line() << "for (long long cupric_t = blockIdx.x; ::cu::tile::next_tile(blk, cupric_t"
         << (split_bytes_ ? ", cupric_whole, cupric_splits" : "") << "); cupric_t += gridDim.x) {";
  ++indent_;
}

std::pair<std::string, std::string> Emitter::split_bounds(const Op& loop) {
  const std::string lb = name(loop.operands.at(0)), ub = name(loop.operands.at(1));
  if (!split_bytes_ || &loop != producer_) return {lb, ub};
  const std::string it = name(loop.regions.at(0).args.at(0));
  line() << "long long " << it << "_lo, " << it << "_hi;";
  line() << "const long long " << it << "_used = ::cu::tile::split_range(" << lb << ", " << ub << ", "
         << name(loop.operands.at(2)) << ", " << kSplitUnit << ", " << it << "_lo, " << it << "_hi);";
  return {it + "_lo", it + "_hi"};
}

std::pair<int, int> Emitter::register_split(int blocks) const {
  // each SM's 64 Ki registers over `blocks` blocks of threads_ + 128 threads: the launch gives every
  // thread the same share (ptxas' cap: a multiple of 8); the producer keeps 40 (24 at 2 blocks, the
  // least setmaxnreg allows being 24; 56 where it also runs split K's unit arithmetic, which spilled
  // at 40), the tile code takes the rest, up to 256
  const int launch = 65536 / (blocks * (threads_ + 128)) / 8 * 8;
  const int producer = blocks == 1 ? (split_bytes_ ? 56 : 40) : 24;
  const int consumer = std::min(256, (65536 / blocks - 128 * producer) / threads_ / 8 * 8);
  if (consumer <= launch || producer > launch) return {0, 0};  // nothing to move
  return {producer, consumer};
}

// ---- the deferred product (FlashAttention-3's intra-warpgroup overlap) -------------------------
//
// ptxas decides where a wgmma is waited for from the code between its issue and its wait: at the
// join of a branch there, or before a write to a register the product reads, it waits for every
// product in flight — before the softmax, which then no longer overlaps anything (measured in the
// SASS). So the deferred product is issued in every iteration, without a branch: in the first, its a
// is zeros and its b this iteration's stage (it adds zeros; stage_products asks for an accumulator
// that starts at +0); its a is carried as the float32 values its cast reads, and its fragments are
// made at the top of the next iteration, before the first product, so that no register the product
// reads is written before its wait; and the turn passes by a barrier number in a register.

void Emitter::begin_overlap(const Op& loop) {
  const Region& body = loop.regions.at(0);
  const Op *first = nullptr, *last = nullptr;
  for (const Op& o : body.ops)
    if (o.kind == OpKind::mma) (first ? last : first) = &o;
  if (!first || !last || body.ops.back().kind != OpKind::yield)
    throw ValueError("internal: a deferred staged loop is not two products and a yield");
  const Op& yield = body.ops.back();
  const auto k = std::find(yield.operands.begin(), yield.operands.end(), last->result()) - yield.operands.begin();
  auto cast = def_.find(last->operands.at(0));
  if (static_cast<std::size_t>(k) >= yield.operands.size() || cast == def_.end() ||
      cast->second->kind != OpKind::cast || region_of_.at(cast->second) != &body)
    throw ValueError("internal: a deferred product is not the loop's yield of a product of a cast");
  const std::string it = name(body.args.at(0));
  const int acc = body.args.at(static_cast<std::size_t>(k) + 1);
  // issued after the first product, or after the last branch before its wait (the first reader of
  // its accumulator, or its own spot)
  const Op* issue_after = first;
  for (auto op = body.ops.begin() + (first - body.ops.data()) + 1; op != body.ops.end() && &*op != last; ++op) {
    if (reads_value(*op, acc)) break;
    if (!op->regions.empty()) issue_after = &*op;
  }
  Overlap o{&body, first, last, cast->second, issue_after, acc, false, it + "_pa", it + "_pp", it + "_pb"};
  const long long K = f_.type(last->operands.at(0)).shape.at(1);
  line() << "::cu::tile::AFragments<" << K << "> " << o.frags << ";  // the deferred product's a";
  line() << tile_decl(o.cast->operands.at(0)) << " " << o.values << "{};  // ... as float32 (zeros at first)";
  line() << "const unsigned char* " << o.at << " = nullptr;  // ... and its b (none yet)";
  overlap_ = std::move(o);
}

bool Emitter::overlap_before(const Region& r, const Op& op) {
  if (!overlap_ || &r != overlap_->body) return true;
  if (&op == overlap_->cast) return false;
  if (overlap_->waited || &op == overlap_->first) return true;
  const int acc = overlap_->acc;
  if (!reads_value(op, acc) && &op != overlap_->last) return true;
  // (the last product's spot writes its operands' variables: the pending one must be done first)
  line() << "::cu::tile::products_done(" << name(acc) << ", " << overlap_->frags
         << ");  // the previous iteration's deferred product";
  overlap_->waited = true;
  return true;
}

bool Emitter::emit_overlap_mma(const Op& op) {
  if (!overlap_ || (&op != overlap_->first && &op != overlap_->last)) return false;
  const Overlap& o = *overlap_;
  const int a = op.operands.at(0), b = op.operands.at(1), c = op.operands.at(2);
  const auto pa = panels_.find(a), pb = panels_.find(b);
  if (pb == panels_.end()) throw ValueError("internal: a staged product's b is not in shared memory");
  const std::string acc = name(o.acc);
  if (&op == o.first) {
    // the previous iteration's a, then this iteration's first product and (in its turn, where
    // nothing branches between) the previous one's deferred product: the first is done when the
    // second's call returns (one group left in flight), the deferred one runs on under the work
    // that follows. With a branch between, the first is waited for and passes the turn itself.
    const bool turned = rings_.at(&op).second, together = o.issue_after == o.first;
    line() << "::cu::tile::make_fragments<" << ctype(f_.type(o.last->operands.at(0)).dtype) << ">(" << o.frags << ", "
           << o.values << ");";
    const std::string out = begin_result(op.result());
    line() << staged_call(op, together ? 1 : 0, turned ? (together ? 1 : 3) : 0, out,
                          pa != panels_.end() ? pa->second : name(a), pb->second, name(c));
    if (together) emit_overlap_issue(turned, out);
    end_result(op.result());
    return true;
  }
  // the last: its accumulator (scaled, say) into the carried variable, its a's float32 values and
  // b's stage kept for the next iteration (the stage is released an iteration later: in_flight 1)
  if (pa != panels_.end()) throw ValueError("internal: a deferred product's a is not in registers");
  if (name(c) != acc) line() << acc << " = " << name(c) << ";";
  line() << o.values << " = " << name(o.cast->operands.at(0)) << ";";
  line() << o.at << " = " << pb->second << ";";
  alias_[op.result()] = o.acc;
  return true;
}

void Emitter::overlap_after(const Region& r, const Op& op) {
  if (overlap_ && &r == overlap_->body && &op == overlap_->issue_after && &op != overlap_->first)
    emit_overlap_issue(false, "");
}

void Emitter::emit_overlap_issue(bool turned, const std::string& first_out) {
  const Overlap& o = *overlap_;
  const std::string acc = name(o.acc);
  const auto last_b = panels_.find(o.last->operands.at(1));
  if (last_b == panels_.end()) throw ValueError("internal: a staged product's b is not in shared memory");
  // (the first iteration's: zeros times this iteration's b)
  line() << staged_call(*o.last, 1, turned ? 2 : 0, acc, o.frags,
                        cat("(", o.at, " != nullptr ? ", o.at, " : ", last_b->second, ")"), acc)
         << "  // the previous iteration's deferred product";
  if (!first_out.empty()) line() << "::cu::tile::fence_registers(" << first_out << ");";
}

void Emitter::end_overlap() {
  const Overlap& o = *overlap_;
  const std::string acc = name(o.acc);
  line() << "if (" << o.at << " != nullptr) {  // the last iteration's deferred product";
  line() << "  ::cu::tile::make_fragments<" << ctype(f_.type(o.last->operands.at(0)).dtype) << ">(" << o.frags << ", "
         << o.values << ");";
  line() << "  " << staged_call(*o.last, 0, 0, acc, o.frags, o.at, acc);
  line() << "  ::cu::tile::fence_registers(" << acc << ");";
  line() << "}";
  overlap_.reset();
}

}  // namespace cupric::tile
