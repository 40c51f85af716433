// emit_ops.cpp — the body emitter's calls into the header library for ops that are not
// elementwise: shape changes, reductions and scans, mma, loads/stores, gathers/scatters/atomics,
// print/assert. Each also records the shared scratch the op needs on the GPU; the formulas
// match the static_asserts in device_include/cupric/tile.
#include <algorithm>

#include "cupric/errors.hpp"
#include "cupric/reduction_table.hpp"
#include "cupric/tile_compiler/passes.hpp"
#include "tile/emitter.hpp"

namespace cupric::tile {

namespace {

long long align16(long long bytes) { return (bytes + 15) / 16 * 16; }
long long round_up(long long x, long long m) { return (x + m - 1) / m * m; }

/// Accumulator of max/min/argmax/argmin: 16-bit floats in float32, small integers in int32.
DType extremum_acc(DType t) {
  if (t == DType::float16 || t == DType::bfloat16 || t == DType::float8_e4m3fn || t == DType::float8_e5m2)
    return DType::float32;
  if (is_bool(t) || ((is_integer(t)) && itemsize(t) < 4)) return DType::int32;
  return t;
}

/// The accumulator of a reduction row in a tile: sums and products in the result's compute type,
/// extremes as extremum_acc, logical reductions in bool.
DType tile_accumulator(const ReductionRow& row, DType in, DType out) {
  switch (row.acc) {
    case AccRule::sum:
    case AccRule::product: return compute_dtype(out);
    case AccRule::same: return extremum_acc(in);
    case AccRule::boolean: return DType::bool_;
  }
  return out;
}

std::string c_string(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') r += cat("\\", static_cast<char>(c));
    else if (c < 32 || c > 126) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      r += buf;
    } else r += static_cast<char>(c);
  }
  return r + "\"";
}

}  // namespace

std::string Emitter::begin_result(int v) {
  const Type& t = f_.type(v);
  if (t.is_scalar()) {
    line() << "::cu::tile::Tile<" << ctype(t.dtype) << ", 1> " << name(v) << "_t;";
    return name(v) + "_t";
  }
  line() << tile_decl(v) << " " << name(v) << ";";
  return name(v);
}

void Emitter::end_result(int v) {
  const Type& t = f_.type(v);
  if (t.is_scalar()) line() << "const " << ctype(t.dtype) << " " << name(v) << " = " << name(v) << "_t.v[0];";
}

void Emitter::emit_shape_op(const Op& op) {
  const int v = op.result(), x = op.operands.at(0);
  const Type& tv = f_.type(v);
  const Type& tx = f_.type(x);
  if (deferred_.count(&op)) return;  // a streamed load's reshape (emit_streamed)
  if (auto t = through_.find(v); t != through_.end() && inlined(t->second)) return;  // made in its reader's loop
  if (op.kind == OpKind::reshape) {
    if (auto p = panels_.find(x); p != panels_.end()) {  // the same panels
      panels_[v] = p->second;
      return;
    }
    if (tx.is_scalar()) {
      line() << tile_decl(v) << " " << name(v) << ";";
      line() << name(v) << ".v[0] = " << name(x) << ";";
    } else if (tv.is_scalar()) {
      line() << "const " << ctype(tv.dtype) << " " << name(v) << " = " << name(x) << ".v[0];";
    } else {
      line() << "const auto& " << name(v) << " = " << name(x) << ";";
    }
    return;
  }
  const std::string out = begin_result(v);
  if (op.kind == OpKind::broadcast) {
    need_smem(align16(itemsize(tx.dtype) * tx.size()));
    line() << "::cu::tile::broadcast<" << dims(tx.shape) << ", " << dims(tv.shape) << ">(blk, " << out << ", "
           << name(x) << ");";
  } else {
    need_smem(align16(itemsize(tx.dtype) * tx.size()));
    line() << "::cu::tile::permute<" << dims(tx.shape) << ", " << dims(tv.shape) << ", " << dims(op.ints) << ">(blk, "
           << out << ", " << name(x) << ");";
  }
  end_result(v);
}

std::string Emitter::reduction_op(const ReductionRow& row) {
  const std::string name = cat("cupric_reduce_", row.name);
  if (!reductions_.insert(row.name).second) return name;
  preamble_ +=
      cat("// reduction_table.def's ", row.name, ": starts from its identity, combines with ", row.ufunc, "\n",
          "struct ", name, " {\n  template <class A>\n  static CUPRIC_TD A identity() { return ",
          start_expression(row, "A"), "; }\n  template <class A>\n  static CUPRIC_TD A combine(A a, A b) { return ",
          "static_cast<A>(", combine_expression(row), "); }\n};\n");
  return name;
}

void Emitter::emit_reduction(const Op& op) {
  const int v = op.result(), x = op.operands.at(0);
  const Type& tx = f_.type(x);
  const Type& tv = f_.type(v);
  const long long n = tx.size(), no = tv.size();
  const std::string in = dims(tx.shape), axis = std::to_string(op.ints.at(0));
  const std::string out = begin_result(v);
  if (op.kind == OpKind::reduce) {
    const ReductionRow& row = *find_reduction(op.name);
    const DType acc = tile_accumulator(row, tx.dtype, tv.dtype);
    const long long sa = itemsize(acc);
    const TileLayout& l = tx.layout;
    if (l.is_accumulator() && tx.shape.size() == 2 && tx.shape[0] == l.rows && tx.shape[1] == l.cols) {
      // reduce.h mma_reduce: a partial result per warp sharing a row (column)
      const long long axis_i = op.ints.at(0);
      need_smem(align16(sa * (axis_i == 1 ? l.warps_n : l.warps_m) * (axis_i == 1 ? l.rows : l.cols)));
    } else if (no == 1 && !l.is_mma() && threads_ % 32 == 0) {
      need_smem(align16(sa * (threads_ / 32)));  // reduce.h reduce_all: a partial result per warp
      if (fused_reductions_.count(&op)) {        // the operand made slot by slot in the reduction's loop
        const std::string A = ctype(acc), R = reduction_op(row);
        line() << "{";
        ++indent_;
        line() << A << " acc = " << R << "::identity<" << A << ">();";
        line() << slot_loop(x);
        ++indent_;
        const std::string value = slot_value(*def_.at(x));
        line() << "if (" << layout_type(x) << "::owns(blk.tid, s)) acc = " << R << "::combine(acc, ::cu::tile::convert<"
               << A << ">(" << value << "));";
        --indent_;
        line() << "}";
        line() << "::cu::tile::reduce_finish<" << R << ">(blk, " << out << ", acc);";
        --indent_;
        line() << "}";
        end_result(v);
        return;
      }
    } else {
      need_smem(align16(sa * n) + align16(sa * no) + align16(sa * threads_));
    }
    line() << "::cu::tile::reduce<" << reduction_op(row) << ", " << in << ", " << axis << ", " << ctype(acc)
           << ">(blk, " << out << ", " << name(x) << ");";
  } else if (op.kind == OpKind::argreduce) {
    const DType acc = extremum_acc(tx.dtype);
    const long long sp = itemsize(acc) == 8 ? 16 : 8;  // sizeof(ArgAcc<acc>)
    need_smem(align16(sp * n) + align16(sp * no) + align16(sp * threads_));
    line() << "::cu::tile::argreduce<" << (op.name == "argmax" ? "true" : "false") << ", " << in << ", " << axis << ", "
           << ctype(acc) << ">(blk, " << out << ", " << name(x) << ");";
  } else {
    const ReductionRow& row = reduction_row(find_scan(op.name)->reduction);
    const DType acc = compute_dtype(tv.dtype);
    need_smem(align16(itemsize(acc) * n));
    line() << "::cu::tile::scan<" << reduction_op(row) << ", " << in << ", " << axis << ", " << ctype(acc) << ">(blk, "
           << out << ", " << name(x) << ");";
  }
  end_result(v);
}

bool Emitter::accumulates_in_place(const Op& op) const {
  // Nothing may read acc after the product: it has no other use, and it is made afresh where the
  // product runs (by an op of the same region, or as that region's argument: a loop's carried
  // accumulator), not a value from outside that the next iteration reads again.
  const int v = op.result(), c = op.operands.at(2);
  if (opt_.target != Target::host || uses_.at(c) != 1 || inlined(c) || !f_.type(c).same_as(f_.type(v))) return false;
  const Region* r = region_of_.at(&op);
  if (auto d = def_.find(c); d != def_.end()) return region_of_.at(d->second) == r;
  return std::find(r->args.begin(), r->args.end(), c) != r->args.end();
}

void Emitter::emit_mma(const Op& op) {
  const int v = op.result(), a = op.operands.at(0), b = op.operands.at(1), c = op.operands.at(2);
  const Type& ta = f_.type(a);
  const Type& tc = f_.type(c);
  const bool bt = op.b_transposed;  // b given as (N, K) (fold_transposes)
  const long long M = ta.shape[0], K = ta.shape[1], N = f_.type(b).shape[bt ? 0 : 1];
  if (auto ring = rings_.find(&op); ring != rings_.end()) {  // operands in shared-memory panels (a: or registers)
    if (emit_overlap_mma(op)) return;
    const auto pa = panels_.find(a), pb = panels_.find(b);
    if (pb == panels_.end()) throw ValueError("internal: a staged product's b is not in shared memory");
    const std::string out = begin_result(v);
    line() << staged_call(op, ring->second.first, ring->second.second ? 3 : 0, out,
                          pa != panels_.end() ? pa->second : name(a), pb->second, name(c));
    end_result(v);
    return;
  }
  const TileLayout& l = f_.type(v).layout;
  const bool tf32 = op.flag && ta.dtype == DType::float32;
  auto phase = mma_phase_.find(&op);
  const long long buffers = phase != mma_phase_.end() ? 2 : 1;
  auto staged = staged_a_.find(&op);
  const long long with_a = staged == staged_a_.end() ? 1 : 0;  // a staged before the loop
  if (l.is_mma()) {
    // operands staged in shared memory (buffers of mma.h's mma_smem), the accumulator in registers
    const long long tm = round_up(round_up(M, 16) / 16, l.warps_m) / l.warps_m;
    const long long tn = round_up(round_up(N, 8) / 8, l.warps_n) / l.warps_n;
    const long long ma = l.warps_m * tm * 16, nb = l.warps_n * tn * 8;
    if (tf32) {
      const long long ld = round_up(K, 8) + 4;
      need_smem(buffers * (with_a * align16(4 * ma * ld) + align16(4 * nb * ld)));
    } else {
      const long long kp = round_up(K, 16);
      const long long b_bytes =
          bt ? align16(2 * round_up(nb, 16) * (kp + 8)) : align16(2 * kp * (round_up(nb, 16) + 8));
      need_smem(buffers * (with_a * align16(2 * ma * (kp + 8)) + b_bytes));
    }
  } else {
    need_smem(align16(itemsize(tc.dtype) * M * K) + align16(itemsize(tc.dtype) * K * N));
  }
  // a loop's `acc = ct.mma(a, b, acc)` then adds into acc's tile: no copy in, none back by the yield
  const bool in_place = accumulates_in_place(op);
  const std::string out = in_place ? name(c) : begin_result(v);
  std::string flags = bt ? (tf32 ? ", true, true" : ", false, true") : (tf32 ? ", true" : "");
  if (buffers == 2) flags = cat(tf32 ? ", true" : ", false", bt ? ", true" : ", false", ", true");
  line() << "::cu::tile::mma<" << M << ", " << K << ", " << N << ", " << ctype(tc.dtype) << flags << ">(blk, " << out
         << ", " << (with_a ? name(a) : cat("::cu::tile::StagedA<", ctype(ta.dtype), ">{", staged->second, "}")) << ", "
         << name(b) << ", " << name(c) << (buffers == 2 ? cat(", ", phase->second) : "") << ");";
  if (buffers == 2) line() << phase->second << " ^= 1;";
  if (in_place) alias_[v] = c;
  else end_result(v);
}

std::string Emitter::staged_call(const Op& op, int in_flight, int turns, const std::string& out, const std::string& a,
                                 const std::string& b, const std::string& c) const {
  static const char* const kTurns[] = {"", ", ::cu::tile::kTurnWait", ", ::cu::tile::kTurnPass", ", ::cu::tile::kTurn"};
  const Type& ta = f_.type(op.operands.at(0));
  const bool bt = op.b_transposed;  // b given as (N, K) (fold_transposes)
  const long long M = ta.shape[0], K = ta.shape[1], N = f_.type(op.operands.at(1)).shape[bt ? 0 : 1];
  return cat("::cu::tile::mma_staged<", M, ", ", K, ", ", N, ", ", bt ? "true" : "false", ", ", in_flight, ", ",
             ctype(ta.dtype), kTurns[turns], ">(blk, ", out, ", ", a, ", ", b, ", ", c, ");");
}

void Emitter::emit_convert_layout(const Op& op) {
  const int v = op.result(), x = op.operands.at(0);
  const Type& t = f_.type(x);
  need_smem(align16(itemsize(t.dtype) * t.size()));
  line() << tile_decl(v) << " " << name(v) << ";";
  line() << "::cu::tile::convert_layout(blk, " << name(v) << ", " << name(x) << ");";
}

std::string Emitter::access_site(const Op& op) const {
  const bool reads = op.kind == OpKind::load || op.kind == OpKind::load_offset || op.kind == OpKind::gather;
  const std::string fn = op.kind == OpKind::atomic ? "atomic_" + op.name : op_name(op.kind);
  auto param = def_.find(op.operands.at(0));
  const std::string array = param != def_.end() ? param->second->name : name(op.operands.at(0));
  return cat(op.loc.file.empty() ? "<kernel>" : op.loc.file, ":", op.loc.line, ": ct.", fn, reads ? " from '" : " to '",
             array, "'");
}

void Emitter::emit_window_check(const Op& op, bool offsets) {
  const bool is_load = op.kind == OpKind::load || op.kind == OpKind::load_offset;
  const int array = op.operands.at(0);
  const int nd = f_.type(array).ndim;
  const Shape& shape = f_.type(is_load ? op.result() : op.operands.back()).shape;
  std::string extents, given;
  for (int d = 0; d < nd; ++d) {
    extents += cat(d ? ", " : "", static_cast<std::size_t>(d) < shape.size() ? shape[static_cast<std::size_t>(d)] : 1);
    given +=
        cat(d ? ", " : "", "static_cast<::cu::tile::i64>(", name(op.operands.at(static_cast<std::size_t>(d) + 1)), ")");
  }
  line() << "{  // debug: bounds check";
  line() << "  const ::cu::tile::i64 st[" << nd << "] = " << window_corner(op, offsets) << ";";
  line() << "  const ::cu::tile::i64 ext[" << nd << "] = {" << extents << "};";
  line() << "  const ::cu::tile::i64 given[" << nd << "] = {" << given << "};";
  line() << "  ::cu::tile::check_window(blk, " << name(array) << ", st, ext, given, " << c_string(access_site(op))
         << ", " << (offsets ? "\"offset\"" : "\"tile index\"") << ");";
  line() << "}";
}

void Emitter::plan_streams(const Region& r) {
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const Op& load = r.ops[i];
    for (const Region& sub : load.regions) plan_streams(sub);
    if ((load.kind != OpKind::load && load.kind != OpKind::load_offset) || load.staging != LoadStaging::registers)
      continue;
    const Type& t = f_.type(load.result());
    if (t.size() <= 1 || t.layout.is_mma() || t.shape.back() % vec_ != 0) continue;
    // the load, then reshapes (the same slots), to the one elementwise op that reads it
    std::vector<const Op*> chain{&load};
    int v = load.result();
    while (uses_[v] == 1 && user_[v]->kind == OpKind::reshape && f_.type(user_[v]->result()).size() == t.size()) {
      chain.push_back(user_[v]);
      v = user_[v]->result();
    }
    if (uses_[v] != 1 || !is_elementwise(*user_[v])) continue;
    const Op* root = user_[v];
    while (inlined(root->result())) root = user_[root->result()];  // the fused loop it is read in
    const Type& tr = f_.type(root->result());
    if (region_of_[root] != &r || tr.size() != t.size() || tr.layout != t.layout) continue;
    bool clear = false, found = false;  // nothing between them writes memory or moves threads
    for (std::size_t j = i + 1; j < r.ops.size() && !found; ++j) {
      const Op& o = r.ops[j];
      found = &o == root;
      clear = found || !(writes_memory(o) || o.kind == OpKind::print || !o.regions.empty());
      if (!clear) break;
    }
    if (!found || !clear) continue;
    auto& group = streams_[root];
    group.insert(group.end(), chain.begin(), chain.end());
    deferred_.insert(chain.begin(), chain.end());
  }
  // a streamed root whose tile is only stored, its window's indices known before it: stored run by
  // run in the same loop (the tile is never whole)
  for (auto& [root, group] : streams_) {
    const int v = root->result();
    if (region_of_[root] != &r || uses_[v] != 1 || stream_store_.count(root)) continue;
    const Op* store = user_[v];
    if ((store->kind != OpKind::store && store->kind != OpKind::store_offset) || store->operands.back() != v ||
        region_of_[store] != &r || f_.type(store->operands.at(0)).dtype != f_.type(v).dtype)
      continue;
    bool reads_it = false;  // a run stored before a later run of the same array is read: not fused
    for (const Op* load : group) reads_it = reads_it || load->operands.at(0) == store->operands.at(0);
    if (reads_it) continue;
    const auto at = [&](const Op* op) { return op - r.ops.data(); };  // (an op of r: they are contiguous)
    const auto root_at = at(root);
    bool known = true;
    for (std::size_t i = 1; i + 1 < store->operands.size(); ++i) {
      const Op* d = def_.count(store->operands[i]) ? def_.at(store->operands[i]) : nullptr;
      known = known && (d == nullptr || d->kind == OpKind::param || region_of_[d] != &r || at(d) < root_at);
    }
    if (!known) continue;
    stream_store_[root] = store;
    deferred_.insert(store);
  }
}

void Emitter::emit_streamed(const Op& root) {
  const int v = root.result();
  const std::vector<const Op*>& group = streams_.at(&root);
  const auto store = stream_store_.find(&root);
  const Op* stored = store == stream_store_.end() ? nullptr : store->second;
  if (!stored) line() << tile_decl(v) << " " << name(v) << ";";
  line() << "{";
  ++indent_;
  std::string fast;
  if (stored) {
    const int a = stored->operands.at(0);
    line() << "const ::cu::tile::i64 st" << v << "[" << f_.type(a).ndim
           << "] = " << window_corner(*stored, stored->kind == OpKind::store_offset) << ";";
    fast = cat("::cu::tile::window_vectorisable<", dims(f_.type(v).shape), ", ::cu::tile::kVec>(", name(a), ", st", v,
               ")");
  }
  for (const Op* op : group) {
    if (op->kind == OpKind::reshape) continue;
    const int a = op->operands.at(0);
    const Shape& shape = f_.type(op->result()).shape;
    line() << "const ::cu::tile::i64 st" << op->result() << "[" << f_.type(a).ndim
           << "] = " << window_corner(*op, op->kind == OpKind::load_offset) << ";";
    fast += cat(fast.empty() ? "" : " && ", "::cu::tile::window_vectorisable<", dims(shape), ", ::cu::tile::kVec>(",
                name(a), ", st", op->result(), ")");
  }
  line() << "const bool fast = " << fast << ";  // every run one unchecked vector access";
  const std::string layout = layout_type(v);
  line() << "CUPRIC_TILE_UNROLL for (int j = 0; j < " << layout << "::kSlots / ::cu::tile::kVec; ++j) {";
  ++indent_;
  line() << "const int e = " << layout << "::elem(blk.tid, j * ::cu::tile::kVec);";
  for (const Op* op : group) {
    const int x = op->result();
    if (op->kind == OpKind::reshape) {
      stream_ref_[x] = stream_ref_.at(op->operands.at(0));
      continue;
    }
    const Type& t = f_.type(x);
    line() << "const auto r" << x << " = ::cu::tile::load_run<" << dims(t.shape) << ">(fast, "
           << name(op->operands.at(0)) << ", st" << x << ", e, " << literal(op->value, t.dtype) << ");";
    stream_ref_[x] = cat("r", x, ".v[t]");
  }
  if (stored) line() << "::cu::tile::VecOf<" << ctype(f_.type(v).dtype) << "> o;";
  line() << "CUPRIC_TILE_UNROLL for (int t = 0; t < ::cu::tile::kVec; ++t) {";
  ++indent_;
  line() << "const int s = j * ::cu::tile::kVec + t;";
  const std::string value = slot_value(root);
  line() << (stored ? "o.v[t]" : name(v) + ".v[s]") << " = " << value << ";";
  --indent_;
  line() << "}";
  if (stored)
    line() << "::cu::tile::store_run<" << dims(f_.type(v).shape) << ">(fast, " << name(stored->operands.at(0)) << ", st"
           << v << ", e, o);";
  --indent_;
  line() << "}";
  for (const Op* op : group) stream_ref_.erase(op->result());
  --indent_;
  line() << "}";
}

void Emitter::emit_memory(const Op& op) {
  if (deferred_.count(&op)) return;  // a streamed load: read in its fused loop (emit_streamed)
  const bool offsets = op.kind == OpKind::load_offset || op.kind == OpKind::store_offset;
  if (opt_.debug) emit_window_check(op, offsets);
  if (op.staging == LoadStaging::ring) {  // stage_products: copied ahead
    line() << "// " << name(op.result()) << ": in the ring of stages";
    return;
  }
  if (op.staging == LoadStaging::resident) {  // stage_products: a loop-invariant a
    const Type& t = f_.type(op.result());
    resident_ += itemsize(t.dtype) * t.size() + 1024;
    const std::string at = name(op.result()) + "_panels";
    line() << "unsigned char* const " << at << " = ::cu::tile::align_smem<1024>(blk.smem + (::cu::tile::kSmemBytes - "
           << resident_ << "));  // a loop-invariant product operand";
    line() << panel_copy(op, at);
    line() << "::cu::tile::cp_async_commit();  // waited for with the loop's first stage";
    panels_[op.result()] = at;
    return;
  }
  const bool is_load = op.kind == OpKind::load || op.kind == OpKind::load_offset;
  const int array = op.operands.at(0);
  const int nd = f_.type(array).ndim;
  const int tile = is_load ? op.result() : op.operands.back();
  const Shape& shape = f_.type(tile).shape;
  if (is_load) line() << tile_decl(tile) << " " << name(tile) << ";";
  line() << "{";
  line() << "  const ::cu::tile::i64 st[" << nd << "] = " << window_corner(op, offsets) << ";";
  if (is_load) {
    line() << "  ::cu::tile::load<" << dims(shape) << ">(blk, " << name(tile) << ", " << name(array) << ", st, "
           << literal(op.value, f_.type(tile).dtype) << ");";
  } else if (const long long staged = staged_store_bytes(op)) {
    need_smem(staged);
    // with TMA (sm_90): each chunk leaves by a bulk tensor store — unless the kernel touches the
    // array elsewhere (the bulk store's writes land asynchronously: a later load or store of the
    // same elements could pass them)
    bool alone = true;
    walk(f_.body, [&](const Op& other) {
      const bool access = other.kind == OpKind::load || other.kind == OpKind::load_offset ||
                          other.kind == OpKind::store || other.kind == OpKind::store_offset ||
                          other.kind == OpKind::gather || other.kind == OpKind::scatter || other.kind == OpKind::atomic;
      if (access && &other != &op && other.operands.at(0) == array) alone = false;
    });
    const std::string map = tma_requested() && alone ? ", " + tensor_map(op) : "";
    line() << "  ::cu::tile::store_staged<" << dims(shape) << ">(blk, " << name(tile) << ", " << name(array) << ", st"
           << map << ");  // through shared memory, whole rows";
  } else {
    line() << "  ::cu::tile::store<" << dims(shape) << ">(blk, " << name(tile) << ", " << name(array) << ", st);";
  }
  line() << "}";
}

long long Emitter::staged_store_bytes(const Op& op) const {
  if (opt_.target != Target::cuda || (op.kind != OpKind::store && op.kind != OpKind::store_offset)) return 0;
  const Type& t = f_.type(op.operands.back());
  const TileLayout& l = t.layout;
  const std::size_t rank = t.shape.size();  // (M, N), or with leading ones (attention's (1, M, D))
  if (!l.is_accumulator() || l.warps_n != 1 || rank < 2 || t.shape[rank - 2] != l.rows || t.shape[rank - 1] != l.cols)
    return 0;
  for (std::size_t d = 0; d + 2 < rank; ++d)
    if (t.shape[d] != 1) return 0;
  const long long item = itemsize(t.dtype);
  const bool exact = l.rows % (16LL * l.warps_m) == 0 && l.cols % 8 == 0;
  if (!exact || item > 2 || l.cols * item % 128 != 0) return 0;
  return 2 * l.rows * 128 + 1024;  // memory.h: kStagedStoreBytes
}

std::string Emitter::window_corner(const Op& op, bool offsets) const {
  const bool is_load = op.kind == OpKind::load || op.kind == OpKind::load_offset;
  const int array = op.operands.at(0);
  const Shape& shape = f_.type(is_load ? op.result() : op.operands.back()).shape;
  std::string corner = "{";
  for (std::size_t d = 0; d < static_cast<std::size_t>(f_.type(array).ndim); ++d) {
    const long long n = d < shape.size() ? shape[d] : 1;
    corner += cat(d ? ", " : "", "::cu::tile::window_start(", name(op.operands.at(d + 1)), ", ", offsets ? 1 : n, ", ",
                  n, ", ", name(array), ".shape[", d, "])");
  }
  return corner + "}";
}

void Emitter::emit_indexed(const Op& op) {
  const int array = op.operands.at(0);
  const Type& ta = f_.type(array);
  const int nd = ta.ndim;
  long long n = 1;
  for (std::size_t i = 1; i < op.operands.size(); ++i) n = std::max<long long>(n, f_.type(op.operands[i]).size());
  const bool gather = op.kind == OpKind::gather;
  const std::size_t value_at = static_cast<std::size_t>(nd) + 1;
  const std::size_t mask_at = gather ? value_at : value_at + 1;
  if (gather) line() << tile_decl(op.result()) << " " << name(op.result()) << ";";
  line() << "CUPRIC_TILE_FOR(s, " << n << ") {";  // blocked layouts (assign_layouts)
  std::string idx;
  for (int d = 0; d < nd; ++d)
    idx += cat(d ? ", " : "", "static_cast<::cu::tile::i64>(",
               operand_ref(op.operands.at(static_cast<std::size_t>(d) + 1)), ")");
  line() << "  const ::cu::tile::i64 idx[" << nd << "] = {" << idx << "};";
  line() << "  ::cu::tile::i64 off = 0;";
  line() << "  const bool inside = ::cu::tile::index_offset(" << name(array) << ", idx, off);";
  const std::string mask = op.flag ? operand_ref(op.operands.at(mask_at)) : "true";
  line() << "  const bool ok = " << (op.flag ? mask + " && " : "") << "inside;";
  if (opt_.debug)  // the elements a masked-out lane would touch are not accesses
    line() << "  if (!inside && " << (op.flag ? mask + " && " : "") << "::cu::tile::Layout<" << n
           << ">::valid(blk.tid, s)) ::cu::tile::check_index(blk, " << name(array) << ", idx, "
           << c_string(access_site(op)) << ");";
  if (gather) {
    line() << "  " << name(op.result()) << ".v[s] = ok ? " << name(array)
           << ".data[off] : " << literal(op.value, ta.dtype) << ";";
  } else {
    const std::string owner = cat("::cu::tile::Layout<", n, ">::owns(blk.tid, s)");
    const std::string value = operand_ref(op.operands.at(value_at));
    if (op.kind == OpKind::scatter) {
      line() << "  if (ok && " << owner << ") " << name(array) << ".data[off] = " << value << ";";
    } else {
      const char* fn = op.name == "add" ? "AtomicAdd" : op.name == "max" ? "AtomicMax" : "AtomicMin";
      line() << "  if (ok && " << owner << ") ::cu::tile::atomic_update(" << name(array) << ".data + off, " << value
             << ", ::cu::tile::" << fn << "{});";
    }
  }
  line() << "}";
}

void Emitter::emit_debug(const Op& op) {
  if (!opt_.debug) {
    line() << "// " << op_name(op.kind) << " dropped (compile with debug=True to keep it)";
    return;
  }
  if (op.kind == OpKind::assert_) {
    line() << "::cu::tile::check(blk, " << name(op.operands.at(0)) << ", " << c_string(op.name) << ");";
    return;
  }
  line() << "{";
  line() << "  ::cu::tile::PrintLine line(blk, " << c_string(op.name) << ");";
  for (int v : op.operands) line() << "  line.add(" << name(v) << ");";
  line() << "}";
}

}  // namespace cupric::tile
