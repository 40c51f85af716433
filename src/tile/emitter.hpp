// emitter.hpp — the body emitter shared by the host and CUDA targets (internal to src/tile).
// Values become C++ variables v<id>; chains of elementwise ops of one shape are fused into one
// loop over the tile's slots, their intermediate values staying scalars e<id> in that loop.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "cupric/tile_compiler/emit.hpp"

namespace cupric {
struct ReductionRow;
}

namespace cupric::tile {

/// Split K: the unit a persistent kernel's loop is at (made where it is used: tma.h's split_unit).
inline constexpr const char* kSplitUnit = "::cu::tile::split_unit(cupric_t, cupric_whole, cupric_splits)";

class Emitter {
 public:
  Emitter(const Function& f, const EmitOptions& options, int threads, int vec);

  /// The kernel body (ops of f.body), indented for a function.
  std::string body();
  int smem_bytes() const { return smem_ + static_cast<int>(resident_); }
  /// CUDA: threads of the producer warpgroup launched after `threads` (warp specialisation), or 0.
  int producers() const { return producer_ ? 128 : 0; }
  /// CUDA: a persistent kernel (it takes the launch's grid as three more parameters, after the
  /// tensor maps, and loops over the output tiles: launched with at most one block per SM).
  bool persistent() const { return persistent_; }
  /// CUDA: a persistent kernel that splits its K loop where the launch's tiles do not fill the GPU
  /// (it takes the split count, a scratch of that many partial accumulators per tile and a counter
  /// per tile after the grid): the bytes of one partial accumulator, or 0 (no split).
  long long split_bytes() const { return split_bytes_; }
  /// CUDA: blocks per cluster along grid x the kernel is written for (EmitResult::cluster).
  int cluster() const { return cluster_; }
  /// Emits the kernel without persistence (when its ring and the epilogue's scratch do not fit).
  void forbid_persistent() { allow_persistent_ = false; }
  /// Blocks per SM the CUDA kernel is built for (__launch_bounds__' second argument).
  int min_blocks() const { return min_blocks_; }
  /// Macros the body uses (the offsets of staged loops' rings), for the source's header.
  const std::string& defines() const { return defines_; }
  /// Types the body uses (the reductions' operators), for namespace scope before the kernel.
  const std::string& preamble() const { return preamble_; }
  /// Upper bound of the stack a CPU block needs for its tiles (every materialised tile at once).
  long long tile_bytes() const;
  /// CUDA: the TMA tensor maps the body reads (TMA rings), in parameter order, with their names.
  const std::vector<std::pair<TensorMapParam, std::string>>& tensor_maps() const { return tensor_maps_; }
  std::string name(int v) const {
    auto a = alias_.find(v);
    return "v" + std::to_string(a == alias_.end() ? v : a->second);
  }

 private:
  // analysis
  void analyse(const Region& r);
  bool is_elementwise(const Op& op) const;
  bool inlined(int v) const { return inlined_.count(v) != 0; }

  // output helpers
  std::ostringstream& line();
  std::string tile_decl(int v) const;    ///< "Tile<float, 1024>", "Tile<float, 1024, MmaLayout<32, 32, 2, 2>>"
  std::string layout_type(int v) const;  ///< "::cu::tile::Layout<1024>", "::cu::tile::MmaLayout<32, 32, 2, 2>"
  std::string slot_loop(int v) const;    ///< the loop over the slots of v's tile this thread holds
  std::string dims(const Shape& s) const;
  std::string literal(const Scalar& s, DType t) const;
  void need_smem(long long bytes);

  // ops
  void emit_region(const Region& r);
  void emit_op(const Op& op);
  void emit_scalar_op(const Op& op);
  void emit_fused(const Op& root);
  /// Inside a loop over slots `s`: the statements of root's fused chain for slot s; returns the
  /// variable ("e<id>") that holds its value.
  std::string slot_value(const Op& root);
  void emit_elem_stmt(const Op& op, int n);
  std::string elem_expr(const Op& op, int n);
  std::string elem_ref(int v, int n);
  std::string operand_ref(int v) const;  ///< slot s of a tile, a scalar, or element 0 of a size-1 tile
  std::string decl_of(int v) const;      ///< "T v<id>" or "Tile<...> v<id>"
  void emit_for(const Op& op);
  /// A K loop marked by stage_products: the ring of stages, the copies ahead, the staged product.
  void emit_staged_for(const Op& op);
  /// The copies of the ring's loads of `body` (their index ops first) into the stage at `to`.
  void emit_stage_copies(const Region& body, const std::string& to);
  /// The "{...}" corner of a load's or store's window (element offsets, or tile indices times the
  /// tile's extents) through core.h's window_start, so that no index near +-2^63 wraps around.
  std::string window_corner(const Op& op, bool offsets) const;
  /// The statement that starts copying a load's tile into panels at `to` (staged.h copy_async;
  /// tma.h tma_copy in a TMA ring).
  std::string panel_copy(const Op& load, const std::string& to);
  /// Whether a staged loop's ring can be filled by TMA: CUPRIC_TILE_TMA=1 and every ring load a
  /// box TMA can copy (at most 256 rows, arrays of at most 5 dimensions).
  bool tma_ring(const Region& body) const;
  /// Cluster multicast: the producer's ring loads every block of a pair along grid x copies the same
  /// tiles for (shared_loads_, cluster_ = 2), where such a load's boxes split evenly between them.
  void plan_pairs();
  /// The template arguments of the ring's set-up: its stages, and whether its CTAs may pair.
  std::string ring_args(const Op& loop) const;
  /// How many of a staged loop's products take turns (ping-pong): the pipeline's mark, on TMA rings
  /// only — a cp.async ring's barrier at each stage lines the warpgroups up every iteration, so
  /// there is nothing for turns to overlap (and racecheck reports that mix of barriers).
  int turns(const Op& loop) const;
  /// A staged loop's layout of one stage (the offsets of its loads, where the products find them);
  /// returns a stage's bytes, and with TMA the test that every operand's map was made.
  long long plan_ring(const Op& loop, std::string* maps_ready);
  /// A TMA ring's barriers (16 bytes a stage): their own shared memory at the end of the block's,
  /// apart from the scratch that ops before the loop use, so that setting them up needs no barrier
  /// of the tile code first (compute-sanitizer's racecheck reported one there as a hazard between
  /// mbarrier.init and the producer's first arrive, in kernels with setmaxnreg); the address, as code.
  std::string ring_barriers(const Op& loop);
  /// The staged loop a producer warpgroup fills (CUDA, TMA, warp specialisation requested): the only
  /// staged loop, at the top, one block per SM, its copies' indices computable from scalars
  /// (`slice`: the top-level ops that compute them). nullptr: none.
  const Op* producer_loop(std::vector<std::size_t>& slice) const;
  /// The producer warpgroup's code at the kernel's start: the slice, its side of the ring's set-up,
  /// then one thread issuing every iteration's TMA copies as stages free up; then returns.
  void emit_producer(const Op& loop, const std::vector<std::size_t>& slice);
  /// A producer kernel's registers a thread (producer, tile code) at `blocks` blocks per SM for
  /// setmaxnreg; {0, 0}: the launch's share already suffices.
  std::pair<int, int> register_split(int blocks) const;
  /// The name of the tensor map parameter of a ring load's or an epilogue store's array and box
  /// (the tile's rows x 128 bytes; made on first use).
  std::string tensor_map(const Op& access);
  /// The tensor-core mma of a loop body whose only user of the shared scratch it is (CUDA): it
  /// stages into two buffers by turns and skips its closing barrier.
  const Op* double_buffered_mma(const Region& body) const;
  void emit_if(const Op& op);
  void emit_yield(const Region& r, const std::vector<int>& targets, const Op& yield);
  void emit_shape_op(const Op& op);
  void emit_reduction(const Op& op);
  /// The operator struct of a reduction table row (added to the preamble on first use).
  std::string reduction_op(const ReductionRow& row);
  void emit_mma(const Op& op);
  /// Host: whether a product may accumulate into its acc operand's tile (see emit_ops.cpp).
  bool accumulates_in_place(const Op& op) const;
  void emit_convert_layout(const Op& op);
  void emit_memory(const Op& op);
  /// CUDA: the shared scratch a store of an accumulator tile goes through (store_staged in
  /// memory.h: an exact one-warp-column accumulator of 1- or 2-byte elements, rows of a multiple
  /// of 128 bytes), else 0.
  long long staged_store_bytes(const Op& op) const;
  /// Whether an op takes the block's shared scratch on the GPU.
  bool uses_scratch(const Op& op) const;
  /// Debug builds: "file:line: ct.load from 'x'", the access a bounds check names.
  std::string access_site(const Op& op) const;
  /// Debug builds: fails the launch where a load's or store's window lies wholly outside its array.
  void emit_window_check(const Op& op, bool offsets);
  void emit_indexed(const Op& op);
  void emit_debug(const Op& op);
  /// Declares the tile result of a header op; scalar results go through a size-1 tile.
  std::string begin_result(int v);
  void end_result(int v);

  const Function& f_;
  EmitOptions opt_;
  int threads_, vec_;
  std::ostringstream out_;
  int indent_ = 1;
  int smem_ = 0;
  std::unordered_map<int, const Op*> def_;
  std::unordered_map<int, int> uses_;
  std::unordered_map<int, const Op*> user_;
  std::unordered_map<const Op*, const Region*> region_of_;
  std::unordered_set<int> inlined_;
  std::unordered_map<int, int> alias_;  ///< a value held in another's variable (a product accumulated in place)
  std::unordered_set<int> emitted_in_loop_;
  std::unordered_map<const Op*, std::string> mma_phase_;  ///< double-buffered mma -> its phase variable
  std::unordered_map<const Op*, std::string> staged_a_;   ///< mma with a loop-invariant a -> where a is staged
  /// a product of a staged loop -> (products left in flight, whether the warpgroups take turns)
  std::unordered_map<const Op*, std::pair<int, bool>> rings_;
  std::unordered_map<int, std::string> panels_;           ///< a tile in shared-memory panels -> their address
  std::unordered_map<const Op*, long long> ring_offset_;  ///< a load copied into a ring -> its offset in a stage
  int min_blocks_ = 1;
  std::string defines_;
  std::string preamble_;
  std::unordered_set<std::string> reductions_;  ///< rows whose operator struct is in the preamble
  long long resident_ = 0;  ///< CUDA: shared memory of the staged operands, at the end of the block's
  std::unordered_map<const Op*, long long> ring_barriers_;  ///< a TMA ring's barriers: their resident_ offset
  std::vector<std::pair<TensorMapParam, std::string>> tensor_maps_;
  std::string tma_ring_;          ///< in a TMA ring's copies: its barriers' variable
  std::string tma_fill_;          ///< ... and the fill (iteration number) the copies are for
  const Op* producer_ = nullptr;  ///< the staged loop a producer warpgroup fills (warp specialisation)
  bool persistent_ = false, allow_persistent_ = true;
  long long split_bytes_ = 0;                   ///< split_bytes()
  int cluster_ = 1;                             ///< cluster()
  std::unordered_set<const Op*> shared_loads_;  ///< plan_pairs
  /// Whether the producer's loop can be split (split K): it carries one 32-bit accumulator that
  /// starts at zero and only a product adds to, and nothing before it or in it writes memory.
  bool splittable(const Op& loop) const;
  /// The persistent kernel's loop over its output tiles (and their splits of K), opened.
  void open_tile_loop();
  /// A split loop's bounds: emits split_range into `<it>_lo` / `_hi` / `_used`, returns (lb, ub);
  /// else the loop's own.
  std::pair<std::string, std::string> split_bounds(const Op& loop);
  long long persistent_ring_ = 0;  ///< a persistent kernel's ring and barriers (bytes, placed after all scratch)
  /// A persistent kernel's ring set-up, before its loop over output tiles (the loop's own code skips it).
  void emit_ring_setup(const Op& loop);
  // Streamed loads (CUDA): a load whose only use is a fused elementwise loop later in its region,
  // with nothing that writes memory between them, is read run by run inside that loop where its
  // window is vectorisable, so that its tile is never held whole (layer norm's w and b: 64
  // registers a thread, which cost the kernel half its blocks per SM).
  std::unordered_map<const Op*, std::vector<const Op*>> streams_;  ///< fused root -> its loads, then their reshapes
  std::unordered_set<const Op*> deferred_;                         ///< those loads and reshapes
  std::unordered_map<int, std::string> stream_ref_;                ///< a streamed value -> its slot's expression
  std::unordered_map<const Op*, const Op*> stream_store_;          ///< fused root -> the store of its tile, fused too
  void plan_streams(const Region& r);
  std::unordered_map<int, int> through_;            ///< a reshape read in a fused loop -> the inlined tile it aliases
  std::unordered_set<const Op*> fused_reductions_;  ///< reductions to one value made in their operand's loop
  /// emit_fused for a root with streamed loads: the run-by-run loop where every window is
  /// vectorisable, else the loads as usual and the plain loop.
  void emit_streamed(const Op& root);
  /// Stages the loop-invariant a operands of the loop body's tensor-core products before the loop.
  void stage_invariant_operands(const Region& body);
  // A staged loop whose last product is deferred (StagedShape::defer), while its body is emitted:
  // that product's a (as the float32 values its cast reads) and b's stage live in variables across
  // iterations; it is issued right after the next iteration's first product (in the same turn),
  // waited for before the first op that reads its accumulator, and issued once more after the loop.
  struct Overlap {
    const Region* body = nullptr;
    const Op* first = nullptr;  ///< the product it is issued after
    const Op* last = nullptr;   ///< the deferred product
    const Op* cast = nullptr;   ///< the cast that makes its a (not emitted: its operand is carried)
    /// the op after which it is issued: the first product, or the last branch (if / for) between
    /// that and its wait — at a branch's join ptxas waits for every product in flight
    const Op* issue_after = nullptr;
    int acc = -1;         ///< the loop-carried accumulator it adds into (in place)
    bool waited = false;  ///< products_done emitted in this iteration's code
    std::string frags, values, at;
  };
  std::optional<Overlap> overlap_;
  /// Declares a deferred loop's variables (before the loop) and starts its Overlap.
  void begin_overlap(const Op& loop);
  /// Before each op of the loop's body: the wait for the deferred product before its
  /// accumulator's first reader. False: the op is not emitted (Overlap::cast).
  bool overlap_before(const Region& r, const Op& op);
  /// After each op of the loop's body: the deferred product's issue after Overlap::issue_after.
  void overlap_after(const Region& r, const Op& op);
  /// A product of the deferred loop: the first issued with the pending one, the last kept pending.
  /// False: not one of them.
  bool emit_overlap_mma(const Op& op);
  /// The deferred product's issue (its turn passed where `turned`); first_out: the first product's
  /// result, left in flight until this call's wait.
  void emit_overlap_issue(bool turned, const std::string& first_out);
  /// After the loop: the last pending product issued and waited for.
  void end_overlap();
  /// The staged product's call: out = c + a @ b with a and b as given.
  std::string staged_call(const Op& op, int in_flight, int turns, const std::string& out, const std::string& a,
                          const std::string& b, const std::string& c) const;
};

}  // namespace cupric::tile
