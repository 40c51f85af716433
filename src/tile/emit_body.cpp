// emit_body.cpp — the shared body emitter: value analysis (which elementwise values fuse into
// their user's loop), literals, scalar and fused elementwise code, and structured control flow.
// Memory, reduction, shape and debugging ops are in emit_ops.cpp.
#include <algorithm>
#include <cstring>
#include <set>

#include "cupric/errors.hpp"
#include "cupric/tile_compiler/passes.hpp"
#include "cupric/ufunc.hpp"
#include "tile/emitter.hpp"

namespace cupric::tile {

std::string ctype(DType t) {
  const char* type = info(t).tile_type;
  if (type == nullptr) throw NotImplementedError(cat("cupric.tile: no tile type for ", name(t)));
  return type;
}

Emitter::Emitter(const Function& f, const EmitOptions& options, int threads, int vec)
    : f_(f), opt_(options), threads_(threads), vec_(vec) {
  analyse(f_.body);
  // an elementwise tile read through a reshape (the same slots: an alias) by one elementwise op is
  // made in that op's loop too (an arange's mask: otherwise a register per slot)
  for (const auto& [v, def] : def_) {
    if (!is_elementwise(*def) || uses_[v] != 1 || user_[v]->kind != OpKind::reshape) continue;
    const Op* alias = user_[v];
    const int a = alias->result();
    const Type& t = f_.type(v);
    if (uses_[a] != 1 || !is_elementwise(*user_[a]) || region_of_[alias] != region_of_[def] ||
        region_of_[user_[a]] != region_of_[def] || t.is_scalar() || f_.type(a).size() != t.size() ||
        f_.type(a).layout != t.layout || f_.type(user_[a]->result()).size() != t.size() ||
        f_.type(user_[a]->result()).layout != t.layout)
      continue;
    through_[a] = v;
    user_[v] = user_[a];  // for the rule below: v's one reader is the reshape's
  }
  for (const auto& [v, def] : def_) {
    if (!is_elementwise(*def) || uses_[v] != 1) continue;
    const Op* user = user_[v];
    if (!is_elementwise(*user) || region_of_[user] != region_of_[def]) continue;
    const Type& tu = f_.type(user->result());
    if (tu.size() == f_.type(v).size() && tu.layout == f_.type(v).layout) inlined_.insert(v);
  }
  // CUDA: an elementwise tile whose only use is a reduction of a blocked tile to one value is made
  // in the reduction's loop (reduce_finish), slot by slot: it is never held whole
  if (opt_.target == Target::cuda && threads_ % 32 == 0)
    for (const auto& [v, def] : def_) {
      if (!is_elementwise(*def) || uses_[v] != 1) continue;
      const Op* user = user_[v];
      if (user->kind != OpKind::reduce || region_of_[user] != region_of_[def] || f_.type(user->result()).size() != 1 ||
          f_.type(v).layout.is_mma())
        continue;
      inlined_.insert(v);
      fused_reductions_.insert(user);
    }
  if (opt_.target == Target::cuda && !opt_.debug && vec_ > 1) plan_streams(f_.body);
}

long long Emitter::tile_bytes() const {
  long long total = 0;
  for (const auto& [v, def] : def_) {
    const Type& t = f_.type(v);
    if (t.is_array() || t.is_scalar() || inlined(v) || def->kind == OpKind::reshape) continue;
    total += t.size() * itemsize(t.dtype);
  }
  return total;
}

void Emitter::analyse(const Region& r) {
  for (const Op& op : r.ops) {
    region_of_[&op] = &r;
    for (int v : op.results) def_[v] = &op;
    for (int v : op.operands) {
      ++uses_[v];
      user_[v] = &op;
    }
    for (const Region& sub : op.regions) analyse(sub);
  }
}

bool Emitter::is_elementwise(const Op& op) const {
  switch (op.kind) {
    case OpKind::ufunc:
    case OpKind::cast:
    case OpKind::where:
    case OpKind::full:
    case OpKind::arange: return !f_.type(op.result()).is_scalar();
    default: return false;
  }
}

std::ostringstream& Emitter::line() {
  out_ << "\n" << std::string(static_cast<std::size_t>(indent_) * 2, ' ');
  return out_;
}

std::string Emitter::dims(const Shape& s) const {
  std::string d = "::cu::tile::Dims<";
  for (std::size_t i = 0; i < s.size(); ++i) d += cat(i ? ", " : "", s[i]);
  return d + ">";
}

std::string Emitter::tile_decl(int v) const {
  const Type& t = f_.type(v);
  if (t.layout.is_mma()) return cat("::cu::tile::Tile<", ctype(t.dtype), ", ", t.size(), ", ", layout_type(v), ">");
  return cat("::cu::tile::Tile<", ctype(t.dtype), ", ", t.size(), ">");
}

std::string Emitter::layout_type(int v) const {
  const Type& t = f_.type(v);
  const TileLayout& l = t.layout;
  if (!l.is_mma()) return cat("::cu::tile::Layout<", t.size(), ">");
  return cat(l.slice == TileLayout::rows_of   ? "::cu::tile::MmaRows<"
             : l.slice == TileLayout::cols_of ? "::cu::tile::MmaCols<"
                                              : "::cu::tile::MmaLayout<",
             l.rows, ", ", l.cols, ", ", l.warps_m, ", ", l.warps_n, ">");
}

std::string Emitter::slot_loop(int v) const {
  const Type& t = f_.type(v);
  if (!t.layout.is_mma()) return cat("CUPRIC_TILE_FOR(s, ", t.size(), ") {");
  return cat("CUPRIC_TILE_FOR_L(s, ", layout_type(v), ") {");
}

void Emitter::need_smem(long long bytes) {
  if (opt_.target == Target::cuda && bytes > smem_) smem_ = static_cast<int>(bytes);
}

std::string Emitter::literal(const Scalar& s, DType t) const {
  alignas(16) unsigned char buf[16] = {0};
  s.store(t, buf);
  auto bits = [&](int n) {
    std::uint64_t u = 0;
    std::memcpy(&u, buf, static_cast<std::size_t>(n));
    return u;
  };
  switch (t) {
    case DType::bool_: return buf[0] ? "true" : "false";
    case DType::float16: return cat("::cu::tile::f16{", bits(2), "}");
    case DType::bfloat16: return cat("::cu::tile::bf16{", bits(2), "}");
    case DType::float8_e4m3fn: return cat("::cu::tile::f8e4m3{", bits(1), "}");
    case DType::float8_e5m2: return cat("::cu::tile::f8e5m2{", bits(1), "}");
    case DType::float32: {
      float x;
      std::memcpy(&x, buf, 4);
      if (std::isfinite(x)) {
        char text[64];
        std::snprintf(text, sizeof(text), "%.9gf", static_cast<double>(x));
        std::string r = text;
        if (r.find_first_of(".e") == std::string::npos) r.insert(r.size() - 1, ".0");
        return r;
      }
      return cat("::cu::tile::bits_float(", bits(4), "u)");
    }
    case DType::float64: {
      double x;
      std::memcpy(&x, buf, 8);
      if (std::isfinite(x)) {
        char text[64];
        std::snprintf(text, sizeof(text), "%.17g", x);
        std::string r = text;
        if (r.find_first_of(".e") == std::string::npos) r += ".0";
        return r;
      }
      return cat("::cu::tile::bits_double(", bits(8), "ull)");
    }
    default: break;
  }
  const int n = itemsize(t);
  std::uint64_t u = bits(n);
  if (is_signed_integer(t)) {
    const int shift = 64 - 8 * n;
    const std::int64_t v = static_cast<std::int64_t>(u << shift) >> shift;  // sign-extend
    if (v == INT64_MIN) return cat("static_cast<", ctype(t), ">(-9223372036854775807LL - 1)");
    return cat("static_cast<", ctype(t), ">(", v, "LL)");
  }
  return cat("static_cast<", ctype(t), ">(", u, "ULL)");
}

// ---- regions and dispatch -------------------------------------------------------------------

std::string Emitter::body() {
  std::vector<std::size_t> slice;
  producer_ = producer_loop(slice);
  const bool split = producer_ && split_requested() && splittable(*producer_);
  // persistent for split K by default only where nothing before the loop reads memory: the grouped
  // product's table reads made its persistent kernel spill (236 bytes; 0 one tile a block)
  bool reads = false;
  for (const Op& o : f_.body.ops) {
    if (&o == producer_) break;
    reads = reads || o.kind == OpKind::load || o.kind == OpKind::load_offset || o.kind == OpKind::gather;
  }
  persistent_ = producer_ && allow_persistent_ && !opt_.debug && (persistent_requested() || (split && !reads));
  if (persistent_ && split) {
    const Type& acc = f_.type(producer_->results.at(0));
    split_bytes_ = acc.size() * itemsize(acc.dtype);
  }
  plan_pairs();
  if (producer_) emit_producer(*producer_, slice);
  if (persistent_) {
    emit_ring_setup(*producer_);
    open_tile_loop();
    emit_region(f_.body);
    --indent_;
    line() << "}";
    const std::string it = name(producer_->regions.at(0).args.at(0));
    line() << "::cu::tile::tma_ring_end(blk, " << it << "_bars);";
    // the ring after every op's scratch (the producer fills it while the epilogue runs)
    const long long at = (smem_ + 15) / 16 * 16;
    defines_ += cat("#define CUPRIC_TILE_RING_", it, " ", at, "\n");
    smem_ = static_cast<int>(at + persistent_ring_);
    return out_.str();
  }
  emit_region(f_.body);
  return out_.str();
}

void Emitter::emit_region(const Region& r) {
  for (const Op& op : r.ops)
    if (overlap_before(r, op)) {
      emit_op(op);
      overlap_after(r, op);
    }
}

void Emitter::emit_op(const Op& op) {
  switch (op.kind) {
    case OpKind::param:
    case OpKind::yield: return;
    case OpKind::constant: {
      const Type& t = f_.type(op.result());
      line() << "const " << ctype(t.dtype) << " " << name(op.result()) << " = " << literal(op.value, t.dtype) << ";";
      return;
    }
    case OpKind::bid:
    case OpKind::num_blocks:
      line() << "const ::cu::tile::i32 " << name(op.result()) << " = static_cast<::cu::tile::i32>(blk."
             << (op.kind == OpKind::bid ? "bid[" : "nblocks[") << op.ints.at(0) << "]);";
      return;
    case OpKind::array_dim:
    case OpKind::array_stride:
      line() << "const ::cu::tile::i64 " << name(op.result()) << " = " << name(op.operands.at(0))
             << (op.kind == OpKind::array_dim ? ".shape[" : ".stride[") << op.ints.at(0) << "];";
      return;
    case OpKind::ufunc:
    case OpKind::cast:
    case OpKind::where:
    case OpKind::full:
    case OpKind::arange:
      if (f_.type(op.result()).is_scalar()) emit_scalar_op(op);
      else if (!inlined(op.result())) emit_fused(op);
      return;
    case OpKind::broadcast:
    case OpKind::reshape:
    case OpKind::permute: emit_shape_op(op); return;
    case OpKind::reduce:
    case OpKind::argreduce:
    case OpKind::scan: emit_reduction(op); return;
    case OpKind::mma: emit_mma(op); return;
    case OpKind::convert_layout: emit_convert_layout(op); return;
    case OpKind::load:
    case OpKind::store:
    case OpKind::load_offset:
    case OpKind::store_offset: emit_memory(op); return;
    case OpKind::gather:
    case OpKind::scatter:
    case OpKind::atomic: emit_indexed(op); return;
    case OpKind::print:
    case OpKind::assert_: emit_debug(op); return;
    case OpKind::for_: emit_for(op); return;
    case OpKind::if_: emit_if(op); return;
  }
}

// ---- elementwise ------------------------------------------------------------------------------

std::string Emitter::operand_ref(int v) const {
  if (auto r = stream_ref_.find(v); r != stream_ref_.end()) return r->second;
  const Type& t = f_.type(v);
  if (t.is_scalar()) return name(v);
  if (t.size() == 1) return name(v) + ".v[0]";
  return name(v) + ".v[s]";
}

std::string Emitter::elem_ref(int v, int n) {
  if (auto t = through_.find(v); t != through_.end() && inlined(t->second)) return elem_ref(t->second, n);
  if (!inlined(v)) return operand_ref(v);
  if (!emitted_in_loop_.count(v)) emit_elem_stmt(*def_.at(v), n);
  return "e" + std::to_string(v);
}

std::string Emitter::elem_expr(const Op& op, int n) {
  std::vector<std::string> refs;
  for (int v : op.operands) refs.push_back(n < 0 ? operand_ref(v) : elem_ref(v, n));
  const std::string T = ctype(f_.type(op.result()).dtype);
  switch (op.kind) {
    case OpKind::ufunc: {
      const Ufunc& uf = find_ufunc(op.name);
      const UfuncLoop& loop = uf.loops.at(static_cast<std::size_t>(op.ints.at(0)));
      static const char* const kArgs[] = {"a", "b", "c"};
      std::string s = "{ ";
      for (std::size_t i = 0; i < refs.size(); ++i) {
        const std::string C = ctype(loop.compute[i]);
        s += cat("const ", C, " ", kArgs[i], " = ::cu::tile::convert<", C, ">(", refs[i], "); ");
      }
      const bool ftz = op.ints.size() > 1 && op.ints[1] != 0;  // exp2(..., flush_to_zero=True)
      return s + cat("@ = ::cu::tile::convert<", T, ">(", ftz ? "::cu::tile::exp2_ftz(a)" : uf.expression, "); }");
    }
    case OpKind::cast: return cat("@ = ::cu::tile::convert<", T, ">(", refs.at(0), ");");
    case OpKind::where: return cat("@ = ", refs.at(0), " ? ", refs.at(1), " : ", refs.at(2), ";");
    case OpKind::full: return cat("@ = ", refs.at(0), ";");
    case OpKind::arange:
      return cat("@ = ::cu::tile::convert<", T, ">(", op.ints.at(0), " + ", layout_type(op.result()),
                 "::elem(blk.tid, s));");
    default: throw ValueError(cat("internal: ", op_name(op.kind), " is not elementwise"));
  }
}

namespace {
std::string replace_target(std::string stmt, const std::string& target) {
  const auto at = stmt.find('@');
  return stmt.replace(at, 1, target);
}
}  // namespace

void Emitter::emit_elem_stmt(const Op& op, int n) {
  const int v = op.result();
  const std::string stmt = elem_expr(op, n);  // emits inlined operands first
  emitted_in_loop_.insert(v);
  line() << ctype(f_.type(v).dtype) << " e" << v << ";";
  line() << replace_target(stmt, "e" + std::to_string(v));
}

void Emitter::emit_scalar_op(const Op& op) {
  const int v = op.result();
  const std::string stmt = elem_expr(op, -1);
  line() << ctype(f_.type(v).dtype) << " " << name(v) << ";";
  line() << replace_target(stmt, name(v));
}

std::string Emitter::slot_value(const Op& root) {
  emitted_in_loop_.clear();
  emit_elem_stmt(root, static_cast<int>(f_.type(root.result()).size()));
  return "e" + std::to_string(root.result());
}

void Emitter::emit_fused(const Op& root) {
  if (streams_.count(&root)) return emit_streamed(root);
  const int v = root.result();
  line() << tile_decl(v) << " " << name(v) << ";";
  line() << slot_loop(v);
  ++indent_;
  const std::string value = slot_value(root);  // (its statements first)
  line() << name(v) << ".v[s] = " << value << ";";
  --indent_;
  line() << "}";
}

// ---- control flow ------------------------------------------------------------------------------

std::string Emitter::decl_of(int v) const {
  const Type& t = f_.type(v);
  if (t.is_scalar()) return cat(ctype(t.dtype), " ", name(v));
  return cat(tile_decl(v), " ", name(v));
}

void Emitter::emit_yield(const Region& r, const std::vector<int>& targets, const Op& yield) {
  (void)r;
  // by variable names: a value may live in another's variable (alias_)
  bool crossed = false;
  for (std::size_t i = 0; i < targets.size(); ++i)
    for (std::size_t j = 0; j < targets.size(); ++j)
      crossed = crossed || (i != j && name(yield.operands[i]) == name(targets[j]));
  if (!crossed) {
    for (std::size_t i = 0; i < targets.size(); ++i)
      if (name(yield.operands[i]) != name(targets[i]))
        line() << name(targets[i]) << " = " << name(yield.operands[i]) << ";";
    return;
  }
  line() << "{";
  for (std::size_t i = 0; i < targets.size(); ++i)
    line() << "  const auto t" << i << " = " << name(yield.operands[i]) << ";";
  for (std::size_t i = 0; i < targets.size(); ++i) line() << "  " << name(targets[i]) << " = t" << i << ";";
  line() << "}";
}

namespace {
bool uses_scratch_kind(OpKind k) {
  switch (k) {
    case OpKind::broadcast:
    case OpKind::permute:
    case OpKind::reduce:
    case OpKind::argreduce:
    case OpKind::scan:
    case OpKind::mma:
    case OpKind::convert_layout: return true;
    default: return false;
  }
}
}  // namespace

bool Emitter::uses_scratch(const Op& op) const { return uses_scratch_kind(op.kind) || staged_store_bytes(op) > 0; }

const Op* Emitter::double_buffered_mma(const Region& body) const {
  if (opt_.target != Target::cuda) return nullptr;
  const Op* found = nullptr;
  int users = 0;
  walk(body, [&](const Op& op) {
    if (uses_scratch(op)) {
      ++users;
      found = &op;
    }
  });
  if (users != 1 || found->kind != OpKind::mma || !f_.type(found->result()).layout.is_mma()) return nullptr;
  for (const Op& op : body.ops)
    if (&op == found) return found;  // not under an if
  return nullptr;
}

void Emitter::stage_invariant_operands(const Region& body) {
  if (opt_.target != Target::cuda) return;
  std::unordered_set<int> inside(body.args.begin(), body.args.end());
  walk(body, [&](const Op& op) { inside.insert(op.results.begin(), op.results.end()); });
  for (const Op& op : body.ops) {
    const TileLayout& l = op.kind == OpKind::mma ? f_.type(op.result()).layout : TileLayout{};
    const int a = op.kind == OpKind::mma ? op.operands.at(0) : -1;
    if (!l.is_mma() || inside.count(a)) continue;
    const Type& ta = f_.type(a);
    const long long M = ta.shape[0], K = ta.shape[1];
    const long long rows = l.warps_m * ((((M + 15) / 16) + l.warps_m - 1) / l.warps_m) * 16;
    const bool tf32 = ta.dtype == DType::float32;
    const long long bytes =
        tf32 ? (4 * rows * ((K + 7) / 8 * 8 + 4) + 15) / 16 * 16 : (2 * rows * ((K + 15) / 16 * 16 + 8) + 15) / 16 * 16;
    resident_ += bytes;  // mma.h: mma_smem_a; regions are counted from the end of the block's memory
    const std::string at = cat(name(op.result()), "_a");
    staged_a_[&op] = at;
    const TileLayout& acc = l;
    line() << "unsigned char* const " << at << " = blk.smem + (::cu::tile::kSmemBytes - " << resident_
           << ");  // loop-invariant a, staged once";
    line() << "::cu::tile::mma_stage_a<" << M << ", " << K << ", " << f_.type(op.result()).shape[1] << ", "
           << (tf32 ? "true" : "false") << ", ::cu::tile::MmaLayout<" << acc.rows << ", " << acc.cols << ", "
           << acc.warps_m << ", " << acc.warps_n << ">>(blk, " << at << ", " << name(a) << ");";
  }
}

std::string Emitter::panel_copy(const Op& load, const std::string& to) {
  const int nd = f_.type(load.operands.at(0)).ndim;
  const Shape& shape = f_.type(load.result()).shape;
  const std::string pad(static_cast<std::size_t>(indent_) * 2 + 2, ' ');
  const std::string copy = tma_ring_.empty() ? cat("::cu::tile::copy_async<", shape[shape.size() - 2], ", ",
                                                   shape.back(), ">(blk, ", to, ", ")
                                             : cat("::cu::tile::tma_copy<", shape[shape.size() - 2], ", ", shape.back(),
                                                   shared_loads_.count(&load) ? ", true" : "", ">(blk, ", tma_ring_,
                                                   ", ", tma_fill_, ", ", to, ", ", tensor_map(load), ", ");
  return cat("{\n", pad, "const ::cu::tile::i64 st[", nd, "] = ", window_corner(load, false), ";\n", pad, copy,
             name(load.operands.at(0)), ", st);\n", std::string(static_cast<std::size_t>(indent_) * 2, ' '), "}");
}

int Emitter::turns(const Op& loop) const { return tma_ring(loop.regions.at(0)) ? loop.staged.turns : 0; }

bool Emitter::tma_ring(const Region& body) const {
  if (opt_.target != Target::cuda || !tma_requested()) return false;
  for (const Op& load : body.ops)
    if (load.kind == OpKind::load && load.staging == LoadStaging::ring) {
      const Shape& shape = f_.type(load.result()).shape;
      if (shape[shape.size() - 2] > 256 || f_.type(load.operands.at(0)).ndim > 5) return false;
    }
  return true;
}

std::string Emitter::tensor_map(const Op& access) {
  const int array = access.operands.at(0);
  const auto param = std::find(f_.params.begin(), f_.params.end(), array);
  const bool is_load = access.kind == OpKind::load || access.kind == OpKind::load_offset;
  const Type& t = f_.type(is_load ? access.result() : access.operands.back());
  const Shape& shape = t.shape;
  // a box is 128 bytes of a row (the swizzle's span): 64 16-bit values, 128 8-bit ones
  const TensorMapParam want{static_cast<int>(param - f_.params.begin()), static_cast<int>(shape[shape.size() - 2]),
                            128 / itemsize(t.dtype)};
  for (const auto& [p, n] : tensor_maps_)
    if (p == want) return n;
  tensor_maps_.push_back({want, cat("tm", tensor_maps_.size())});
  return tensor_maps_.back().second;
}

void Emitter::emit_stage_copies(const Region& body, const std::string& to) {
  std::set<std::size_t> chain;  // the index ops of the ring's loads, each once, in body order
  for (const Op& load : body.ops)
    if (load.kind == OpKind::load && load.staging == LoadStaging::ring) {
      const std::vector<std::size_t> c = index_chain(f_, body, load).value();
      chain.insert(c.begin(), c.end());
    }
  for (std::size_t i : chain) emit_op(body.ops[i]);
  for (const Op& load : body.ops)
    if (auto at = ring_offset_.find(&load); at != ring_offset_.end())
      line() << panel_copy(load, cat(to, " + ", at->second));
  if (tma_ring_.empty()) line() << "::cu::tile::cp_async_commit();";
}

std::string Emitter::ring_barriers(const Op& loop) {
  auto [it, fresh] = ring_barriers_.emplace(&loop, 0);
  if (fresh) {
    resident_ = (resident_ + 15) / 16 * 16 + 16LL * loop.staged.stages;
    it->second = resident_;
  }
  return cat("blk.smem + (::cu::tile::kSmemBytes - ", it->second, ")");
}

long long Emitter::plan_ring(const Op& op, std::string* maps_ready) {
  const Region& body = op.regions.at(0);
  const std::string it = name(body.args.at(0));
  const bool tma = tma_ring(body);
  long long stage = 0;  // a stage: the ring's loads one after another, in body order
  int products = 0;
  const int turned = turns(op);  // the first `turned` products take turns
  for (const Op& o : body.ops) {
    if (o.kind == OpKind::load && o.staging == LoadStaging::ring) {
      ring_offset_[&o] = stage;
      panels_[o.result()] = cat(it, "_at + ", stage);  // in the stage this iteration reads
      stage += itemsize(f_.type(o.result()).dtype) * f_.type(o.result()).size();
      if (tma && maps_ready)
        *maps_ready += cat(maps_ready->empty() ? "" : " && ", "::cu::tile::tma_ready(", tensor_map(o), ")");
    }
    if (o.kind == OpKind::mma) rings_[&o] = {op.staged.in_flight, products++ < turned};
  }
  return stage;
}

void Emitter::emit_producer(const Op& op, const std::vector<std::size_t>& slice) {
  const Region& body = op.regions.at(0);
  const int stages = op.staged.stages;
  const std::string it = name(body.args.at(0)), count = it + "_k", bars = it + "_bars", ring = it + "_ring";
  std::string maps_ready;
  const long long stage = plan_ring(op, &maps_ready);
  line() << "if (blk.tid >= ::cu::tile::kThreads) {  // the producer warpgroup: it only fills the ring, by TMA";
  ++indent_;
  const auto [producer_regs, consumer_regs] = register_split(op.staged.min_blocks);
  if (consumer_regs > 0) line() << "::cu::tile::producer_registers<" << producer_regs << ">();";
  if (!persistent_)
    for (std::size_t i : slice) emit_op(f_.body.ops[i]);
  line() << "unsigned char* const " << ring << " = ::cu::tile::align_smem<1024>(blk.smem + CUPRIC_TILE_RING_" << it
         << ");";
  line() << "const ::cu::tile::TmaRing<" << stages << "> " << bars << " = ::cu::tile::tma_ring_join<" << ring_args(op)
         << ">(" << ring_barriers(op) << ", " << maps_ready << ");";
  line() << "if (" << bars << ".tma && blk.tid == ::cu::tile::kTmaIssuer) {";
  ++indent_;
  line() << "long long " << count << " = 0;";
  if (persistent_) {  // every output tile of this block, the fills numbered on across them
    open_tile_loop();
    for (std::size_t i : slice) emit_op(f_.body.ops[i]);
  }
  const auto [lb, ub] = split_bounds(op);
  line() << "for (::cu::tile::i64 " << it << " = " << lb << "; " << it << " < " << ub << "; " << it
         << " += " << name(op.operands[2]) << ", ++" << count << ") {";
  ++indent_;
  line() << "::cu::tile::tma_fill_begin<" << stages << ">(blk, " << bars << ", " << count << ", " << stage << ");";
  tma_ring_ = bars;
  tma_fill_ = count;
  emit_stage_copies(body, cat(ring, " + (", count, " % ", stages, ") * ", stage));
  tma_ring_.clear();
  --indent_;
  line() << "}";
  if (persistent_) {
    --indent_;
    line() << "}";
  }
  --indent_;
  line() << "}";
  if (!persistent_) line() << "::cu::tile::tma_ring_leave();  // the tile code invalidates the ring's barriers next";
  line() << "return;";
  --indent_;
  line() << "}";
  if (consumer_regs > 0) line() << "::cu::tile::consumer_registers<" << consumer_regs << ">();";
}

void Emitter::emit_ring_setup(const Op& op) {
  const int stages = op.staged.stages;
  const std::string it = name(op.regions.at(0).args.at(0)), ring = it + "_ring", bars = it + "_bars";
  std::string maps_ready;
  const long long stage = plan_ring(op, &maps_ready);
  persistent_ring_ = stages * stage + 1024;  // the stages and their alignment (the barriers: ring_barriers)
  line() << "unsigned char* const " << ring << " = ::cu::tile::align_smem<1024>(blk.smem + CUPRIC_TILE_RING_" << it
         << ");  // " << stages << " stages of the products' operands, for every output tile";
  line() << "const ::cu::tile::TmaRing<" << stages << "> " << bars << " = ::cu::tile::tma_ring_begin<" << ring_args(op)
         << ">(blk, " << ring_barriers(op) << ", " << maps_ready << ");";
  line() << "long long " << it << "_k = 0;  // iterations done, over the output tiles";
}

void Emitter::emit_staged_for(const Op& op) {
  const Region& body = op.regions.at(0);
  const int iv = body.args.at(0);
  const int stages = op.staged.stages, in_flight = op.staged.in_flight;
  const int ahead = stages - 1 - in_flight;  // tiles in flight ahead of the one the products read
  min_blocks_ = std::max(min_blocks_, op.staged.min_blocks);
  const std::string it = name(iv), ring = it + "_ring", slot = it + "_stage", step = name(op.operands.at(2));
  const bool tma = tma_ring(body), produced = &op == producer_;
  const std::pair<std::string, std::string> bounds = split_bounds(op);  // (a lambda below reads ub)
  const std::string &lb = bounds.first, &ub = bounds.second;
  const std::string count = it + "_k", bars = it + "_bars";
  std::string maps_ready;
  const long long stage = plan_ring(op, &maps_ready);
  // the ring starts at a 1024-byte boundary (the swizzle's period) past the shared scratch the
  // body's other ops use (known once the body is emitted: a macro in the header); before and after
  // the loop it is scratch for the ops there. A TMA ring's barriers have their own memory
  // (ring_barriers), and the block-wide barrier after their set-up orders the ring's first fills
  // after the scratch's earlier users; a cp.async ring's first fills need a barrier of their own.
  const std::string offset = cat("CUPRIC_TILE_RING_", it);
  const bool persistent = produced && persistent_;  // the ring is set up before the loop over tiles
  if (!persistent) {
    if (!tma) line() << "CUPRIC_TILE_SYNC();  // earlier users of the scratch are done with it";
    line() << "unsigned char* const " << ring << " = ::cu::tile::align_smem<1024>(blk.smem + " << offset << ");  // "
           << stages << " stages of the products' operands";
    if (tma)
      line() << "const ::cu::tile::TmaRing<" << stages << "> " << bars << " = ::cu::tile::tma_ring_begin<"
             << ring_args(op) << ">(blk, " << ring_barriers(op) << ", " << maps_ready << ");";
  } else {
    line() << "const long long " << count << "0 = " << count << ";  // this tile's first iteration";
  }
  // fills are numbered on across a persistent kernel's tiles
  const std::string first = persistent ? cat(count, "0") : std::string("0");
  // the copies of the tiles of iteration `at` (a fill of the ring) into the stage at `to`; with a
  // producer warpgroup only where TMA cannot (the maps of zeros: cp.async by these threads)
  auto fill = [&](const std::string& at, const std::string& number, const std::string& to) {
    if (!tma) return emit_stage_copies(body, to);
    if (produced) {
      line() << "if (!" << bars << ".tma) {";
      ++indent_;
    }
    line() << "if (" << at << " < " << ub << ") {";
    ++indent_;
    line() << "::cu::tile::tma_fill_begin<" << stages << ">(blk, " << bars << ", " << number << ", " << stage << ");";
    line() << "const ::cu::tile::i64 " << it << " = " << at << ";";
    tma_ring_ = bars;
    tma_fill_ = number;
    emit_stage_copies(body, to);
    tma_ring_.clear();
    --indent_;
    line() << "}";
    line() << "::cu::tile::tma_fill_end();";
    if (produced) {
      --indent_;
      line() << "}";
    }
  };
  line() << "for (int " << slot << " = 0; " << slot << " < " << ahead << "; ++" << slot << ") {";
  ++indent_;
  line() << "const ::cu::tile::i64 " << it << (tma ? "_first" : "") << " = " << lb << " + " << slot << " * " << step
         << ";";
  fill(it + "_first", persistent ? cat(count, " + ", slot) : slot,
       cat(ring, " + (", first, " + ", slot, ") % ", stages, " * ", stage));
  --indent_;
  line() << "}";
  line() << "int " << slot << " = " << (persistent ? cat("static_cast<int>(", first, " % ", stages, ")") : "0") << ";";
  if (tma && !persistent) line() << "long long " << count << " = 0;  // iterations done";
  for (std::size_t i = 1; i < body.args.size(); ++i)
    line() << decl_of(body.args[i]) << " = " << name(op.operands.at(i + 2)) << ";";
  if (op.staged.defer) begin_overlap(op);
  if (turns(op) > 0) line() << "::cu::tile::turns_begin(blk);  // the first warpgroup issues first";
  // stage_products marks loops of a positive constant step
  line() << "for (::cu::tile::i64 " << it << " = " << lb << "; " << it << " < " << ub << "; " << it << " += " << step
         << ") {";
  ++indent_;
  if (tma)
    line() << "::cu::tile::tma_stage_ready<" << ahead << ">(" << bars << ", " << count
           << (persistent ? ", " + first : "") << ");";
  else line() << "::cu::tile::stage_ready<" << ahead - 1 << ">();";
  line() << "{";
  ++indent_;
  line() << "const ::cu::tile::i64 " << it << "_ahead = " << it << " + " << ahead << " * " << step << ";";
  line() << "const int " << slot << "_to = (" << slot << " + " << ahead << ") % " << stages << ";";
  if (!tma) line() << "const ::cu::tile::i64 " << it << " = " << it << "_ahead;";
  fill(it + "_ahead", cat(count, " + ", ahead), cat(ring, " + ", slot, "_to * ", stage));
  --indent_;
  line() << "}";
  line() << "unsigned char* const " << it << "_at = " << ring << " + " << slot << " * " << stage << ";";
  const int outer = smem_;
  smem_ = 0;
  emit_region(body);
  const long long body_scratch = (smem_ + 15) / 16 * 16;
  if (persistent) {
    smem_ = std::max<int>(outer, static_cast<int>(body_scratch));  // body() places the ring after all scratch
  } else {
    defines_ += cat("#define ", offset, " ", body_scratch, "\n");
    smem_ = std::max<int>(outer, static_cast<int>(body_scratch + stages * stage + 1024));
  }
  if (tma)
    line() << "::cu::tile::tma_stage_done<" << in_flight << ">(blk, " << bars << ", " << count << "++"
           << (persistent ? ", " + first : "") << ");";
  line() << slot << " = " << slot << " + 1 == " << stages << " ? 0 : " << slot << " + 1;";
  emit_yield(body, std::vector<int>(body.args.begin() + 1, body.args.end()), body.ops.back());
  --indent_;
  line() << "}";
  if (turns(op) > 0) line() << "::cu::tile::turns_end(blk);  // the turn the last warpgroup passed on";
  if (overlap_) end_overlap();
  if (persistent)
    line() << "::cu::tile::tma_tile_end<" << in_flight << ">(blk, " << bars << ", " << count << ", " << first << ");";
  else
    line() << (tma ? cat("::cu::tile::tma_ring_end", produced ? "<true>" : "", "(blk, ", bars, ");")
                   : std::string("::cu::tile::staged_loop_end();"));
  if (persistent && split_bytes_)  // split K: the last split to finish adds the partials, and runs the rest
    line() << "if (!::cu::tile::split_combine<" << split_bytes_ << ">(blk, " << name(body.args.at(1))
           << ", cupric_partials, cupric_counters, " << kSplitUnit << ", " << it << "_used)) continue;";
  for (std::size_t i = 0; i < op.results.size(); ++i)
    line() << "const auto& " << name(op.results[i]) << " = " << name(body.args[i + 1]) << ";";
}

void Emitter::emit_for(const Op& op) {
  if (op.staged.stages > 0) {
    emit_staged_for(op);
    return;
  }
  const Region& body = op.regions.at(0);
  const int iv = body.args.at(0);
  stage_invariant_operands(body);
  const Op* buffered = double_buffered_mma(body);
  if (buffered) {
    mma_phase_[buffered] = name(iv) + "_phase";
    line() << "int " << name(iv) << "_phase = 0;  // the mma's staging buffer (of two)";
  }
  for (std::size_t i = 1; i < body.args.size(); ++i)
    line() << decl_of(body.args[i]) << " = " << name(op.operands.at(i + 2)) << ";";
  const std::string lb = name(op.operands[0]), ub = name(op.operands[1]), step = name(op.operands[2]);
  std::string cond = cat("(", step, " > 0 ? ", name(iv), " < ", ub, " : ", name(iv), " > ", ub, ")");
  if (auto it = def_.find(op.operands[2]); it != def_.end() && it->second->kind == OpKind::constant) {
    const Scalar& s = it->second->value;
    const bool positive = s.kind == WeakKind::floating ? s.f > 0 : (s.big_unsigned || s.i > 0);
    cond = cat(name(iv), positive ? " < " : " > ", ub);
  }
  line() << "for (::cu::tile::i64 " << name(iv) << " = " << lb << "; " << cond << "; " << name(iv) << " += " << step
         << ") {";
  ++indent_;
  emit_region(body);
  emit_yield(body, std::vector<int>(body.args.begin() + 1, body.args.end()), body.ops.back());
  --indent_;
  line() << "}";
  if (buffered) line() << "CUPRIC_TILE_SYNC();  // the last product's reads before the scratch is used again";
  for (std::size_t i = 0; i < op.results.size(); ++i)
    line() << "const auto& " << name(op.results[i]) << " = " << name(body.args[i + 1]) << ";";
}

void Emitter::emit_if(const Op& op) {
  for (int v : op.results) line() << decl_of(v) << ";";
  line() << "if (" << name(op.operands.at(0)) << ") {";
  for (int i = 0; i < 2; ++i) {
    const Region& r = op.regions.at(static_cast<std::size_t>(i));
    ++indent_;
    emit_region(r);
    const Op& y = r.ops.back();
    for (std::size_t k = 0; k < op.results.size(); ++k)
      line() << name(op.results[k]) << " = " << name(y.operands[k]) << ";";
    --indent_;
    line() << (i == 0 ? "} else {" : "}");
  }
}

}  // namespace cupric::tile
