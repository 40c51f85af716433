// test_tile.cpp — the tile compiler's C++ side: builder type rules and messages, passes, the
// emitters' output, and the header library's CPU ops against plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cupric/cupric.hpp"
#include "cupric/tile/tile.h"
#include "cupric/tile_compiler/builder.hpp"
#include "cupric/tile_compiler/emit.hpp"
#include "cupric/tile_compiler/passes.hpp"

using namespace cupric;
using tile::Builder;

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(TileBuilder, InfersShapesAndDtypes) {
  Builder b("k");
  const int x = b.param_array("x", DType::bfloat16, 2);
  const int row = b.bid(0);
  const int t = b.load(x, {row, b.constant(Scalar::from_int(0))}, {1, 100}, Scalar::from_float(-INFINITY), false);
  EXPECT_EQ(b.type(t).str(), "bf16[1, 100]");
  const int m = b.reduce("max", t, 1, true);
  EXPECT_EQ(b.type(m).str(), "bf16[1, 1]");
  const int e = b.ufunc("exp", {b.ufunc("subtract", {t, m})});
  EXPECT_EQ(b.type(e).str(), "bf16[1, 100]");
  const int s = b.reduce("sum", b.cast(e, DType::int32), std::nullopt, false);
  EXPECT_EQ(b.type(s).str(), "i64");  // NumPy: sums of int32 widen to int64
  const int w = b.ufunc("multiply", {e, b.constant(Scalar::from_float(2.0))});
  EXPECT_EQ(b.type(w).dtype, DType::bfloat16);  // a Python float is weak (NEP 50)
  const int i = b.ufunc("add", {b.arange(0, 100, DType::int32), b.constant(Scalar::from_float(0.5))});
  EXPECT_EQ(b.type(i).dtype, DType::float64);
}

TEST(TileBuilder, ErrorsNameShapesAndDtypes) {
  Builder b("k");
  const int x = b.param_array("x", DType::float32, 1);
  const int a = b.load(x, {b.bid(0)}, {16}, Scalar::from_int(0), false);
  const int c = b.load(x, {b.bid(0)}, {17}, Scalar::from_int(0), false);
  EXPECT_EQ(message_of([&] { b.ufunc("add", {a, c}); }), "cannot broadcast shapes (16,) and (17,)");
  EXPECT_NE(message_of([&] {
              b.load(x, {b.bid(0), b.bid(1)}, {4, 4}, Scalar::from_int(0), false);
            }).find("the array has 1 dimension(s) but index has 2 entries"),
            std::string::npos);
  const int m = b.reshape(a, {4, 4});
  EXPECT_EQ(message_of([&] {
              b.mma(m, b.cast(m, DType::float16), b.full({4, 4}, b.constant(Scalar::from_int(0)), DType::float32),
                    false);
            }),
            "mma: a and b must have the same dtype, got float32 and float16; convert one with ct.astype");
  EXPECT_EQ(message_of([&] { b.reshape(a, {5, 3}); }),
            "cannot reshape a tile of size 16 (shape (16,)) into shape (5, 3)");
  EXPECT_NE(message_of([&] {
              b.full({1 << 21}, b.constant(Scalar::from_int(0)), DType::float32);
            }).find("the limit is 1048576"),
            std::string::npos);
}

TEST(TileBuilder, LoopsCarryValuesAndCheckTheirTypes) {
  Builder b("k");
  const int x = b.param_array("x", DType::float32, 1);
  const int acc = b.full({8}, b.constant(Scalar::from_int(0)), DType::float32);
  auto ids = b.begin_for(b.constant(Scalar::from_int(0)), b.array_dim(x, 0), b.constant(Scalar::from_int(8)), {acc});
  const int t = b.load(x, {ids[0]}, {8}, Scalar::from_int(0), true);
  auto out = b.end_for({b.ufunc("add", {ids[1], t})});
  EXPECT_EQ(b.type(out.at(0)).str(), "f32[8]");
  auto ids2 = b.begin_for(b.constant(Scalar::from_int(0)), b.constant(Scalar::from_int(4)),
                          b.constant(Scalar::from_int(1)), {acc});
  EXPECT_NE(
      message_of([&] { b.end_for({b.cast(ids2[1], DType::float64)}); }).find("changes type from f32[8] to f64[8]"),
      std::string::npos);
  b.rollback(1);
  b.store(x, {b.constant(Scalar::from_int(0))}, out[0], false);
  tile::Function f = b.finish();
  EXPECT_NE(tile::to_text(f).find("for "), std::string::npos);
}

TEST(TilePasses, FoldMergeAndRemove) {
  Builder b("k");
  const int x = b.param_array("x", DType::float32, 1);
  const int two = b.ufunc("add", {b.constant(Scalar::from_int(1)), b.constant(Scalar::from_int(1))});
  const int i0 = b.bid(0), i1 = b.bid(0);
  b.ufunc("exp", {b.load(x, {i0}, {4}, Scalar::from_int(0), false)});  // unused: removed
  b.store(x, {i1}, b.full({4}, two, DType::float32), false);
  tile::Function f = b.finish();
  EXPECT_GT(tile::canonicalize(f), 0);
  const std::string text = tile::to_text(f);
  EXPECT_EQ(text.find("exp"), std::string::npos);
  EXPECT_EQ(text.find("bid", text.find("bid") + 1), std::string::npos);  // one bid left
  EXPECT_NE(text.find("constant 2"), std::string::npos);
}

TEST(TileEmit, HostAndCudaShareTheBody) {
  Builder b("scale");
  const int x = b.param_array("x", DType::float32, 1);
  const int a = b.param_scalar("a", DType::float64, WeakKind::floating);
  const int t = b.load(x, {b.bid(0)}, {300}, Scalar::from_int(0), false);
  b.store(x, {b.bid(0)}, b.ufunc("multiply", {t, a}), false);
  tile::Function f = b.finish();
  tile::canonicalize(f);
  const tile::EmitResult host = tile::emit(f, {tile::Target::host});
  const tile::EmitResult cuda = tile::emit(f, {tile::Target::cuda});
  EXPECT_NE(host.source.find("extern \"C\" __attribute__((visibility(\"default\"))) void cupric_tile_entry"),
            std::string::npos);
  EXPECT_NE(cuda.source.find("__global__ void __launch_bounds__(128) scale("), std::string::npos);
  EXPECT_NE(host.source.find("::cu::tile::load<::cu::tile::Dims<300>>"), std::string::npos);
  // the GPU reads the load run by run in the product's loop (streamed); it stores into the array it
  // reads, so the product's tile is stored whole after the loop
  EXPECT_NE(cuda.source.find("::cu::tile::load_run<::cu::tile::Dims<300>>"), std::string::npos);
  EXPECT_NE(cuda.source.find("::cu::tile::store<::cu::tile::Dims<300>>"), std::string::npos);
  using tile::ParamRole;
  const std::vector<tile::KernelParam> params = {{ParamRole::data, DType::float32},
                                                 {ParamRole::extent, DType::int64},
                                                 {ParamRole::stride, DType::int64},
                                                 {ParamRole::scalar, DType::float64}};
  EXPECT_EQ(cuda.params, params);
  std::vector<std::string> declared;  // as the kernel's signature spells them
  for (const auto& p : cuda.params) declared.push_back(tile::param_ctype(p));
  EXPECT_EQ(declared, (std::vector<std::string>{"float*", "long long", "long long", "double"}));
  EXPECT_NE(cuda.source.find("scale(float* v0_data, long long v0_shape0, long long v0_stride0, double v1)"),
            std::string::npos)
      << cuda.source;
}

TEST(TileStages, EachTargetRecordsTheIrAfterEachOfItsStages) {
  Builder b("k");
  const int x = b.param_array("x", DType::float32, 1);
  const int two = b.ufunc("add", {b.constant(Scalar::from_int(1)), b.constant(Scalar::from_int(1))});
  b.ufunc("exp", {b.load(x, {b.bid(0)}, {4}, Scalar::from_int(0), false)});  // unused
  b.store(x, {b.bid(0)}, b.full({4}, two, DType::float32), false);
  const tile::Function f = b.finish();
  for (tile::Target target : {tile::Target::host, tile::Target::cuda}) {
    tile::EmitOptions o{target};
    o.record_stages = true;
    const tile::EmitResult r = tile::emit(f, o);
    std::vector<std::string> names;
    for (const tile::StageText& s : r.stages) names.push_back(s.stage);
    EXPECT_EQ(names, tile::stage_names(target));
    auto ir_after = [&](const std::string& stage) {
      for (const tile::StageText& s : r.stages)
        if (s.stage == stage) return s.ir;
      return std::string("(no stage ") + stage + ")";
    };
    EXPECT_EQ(ir_after("frontend"), tile::to_text(f));  // the input, which emit leaves as it was
    EXPECT_NE(ir_after("frontend").find("ufunc add"), std::string::npos);
    EXPECT_EQ(ir_after("fold_constants").find("ufunc add"), std::string::npos);
    EXPECT_NE(ir_after("merge_common_subexpressions").find("exp"), std::string::npos);  // unused, still there
    EXPECT_EQ(ir_after("remove_dead_code").find("exp"), std::string::npos);
  }
  EXPECT_EQ(tile::stage_names(tile::Target::cuda).back(), "assign_layouts");
  EXPECT_TRUE(tile::emit(f, {tile::Target::host}).stages.empty());  // recorded only when asked
}

namespace {
/// The type text of every value made by an op of `kind` (in program order).
std::vector<std::string> types_of(const tile::Function& f, tile::OpKind kind) {
  std::vector<std::string> r;
  tile::walk(f.body, [&](const tile::Op& op) {
    if (op.kind == kind)
      for (int v : op.results) r.push_back(f.type(v).str());
  });
  return r;
}
int count_ops(const tile::Region& r, tile::OpKind kind) {
  int n = 0;
  tile::walk(r, [&](const tile::Op& op) { n += op.kind == kind; });
  return n;
}
}  // namespace

TEST(TileLayouts, AccumulatorStaysInTheMmaLayoutAcrossTheLoop) {
  // acc = 0; for k: acc = mma(load a, load b, acc); out = relu(acc + bias[None, :] + c) -> store,
  // and a scatter of the accumulator (blocked only)
  Builder b("mm");
  const int a = b.param_array("a", DType::bfloat16, 2), bm = b.param_array("b", DType::bfloat16, 2);
  const int bias = b.param_array("bias", DType::float32, 1), out = b.param_array("out", DType::float32, 2);
  const int zero = b.constant(Scalar::from_int(0));
  const int acc0 = b.full({128, 128}, zero, DType::float32);
  const int c = b.load(out, {zero, zero}, {128, 128}, Scalar::from_int(0), false);
  auto ids = b.begin_for(zero, b.array_dim(a, 1), b.constant(Scalar::from_int(1)), {acc0});
  const int ta = b.load(a, {zero, ids[0]}, {128, 32}, Scalar::from_int(0), false);
  const int tb = b.load(bm, {ids[0], zero}, {32, 128}, Scalar::from_int(0), false);
  const int acc = b.end_for({b.mma(ta, tb, ids[1], false)}).at(0);
  const int row = b.reshape(b.load(bias, {zero}, {128}, Scalar::from_int(0), false), {1, 128});
  const int y = b.ufunc("maximum", {b.ufunc("add", {b.ufunc("add", {acc, row}), c}), zero});
  b.store(out, {zero, zero}, y, false);
  b.scatter(out,
            {b.broadcast_to(b.reshape(b.arange(0, 128, DType::int32), {128, 1}), {128, 128}),
             b.broadcast_to(b.reshape(b.arange(0, 128, DType::int32), {1, 128}), {128, 128})},
            acc, -1);
  tile::Function f = b.finish();
  tile::canonicalize(f);
  const std::string before = tile::to_text(f);
  const tile::Function g = tile::assign_layouts(f, 256);
  EXPECT_EQ(tile::to_text(f), before);  // a copy: the CPU target keeps the IR as built
  const std::string mma = "f32[128, 128] mma(128x128, warps 4x2)";
  EXPECT_EQ(types_of(g, tile::OpKind::mma), std::vector<std::string>{mma});
  EXPECT_EQ(types_of(g, tile::OpKind::for_), std::vector<std::string>{mma});
  EXPECT_EQ(types_of(g, tile::OpKind::full).at(0), mma);  // the zero accumulator is made in place
  EXPECT_EQ(types_of(g, tile::OpKind::broadcast).at(0), "f32[128, 128] mma(128x128, warps 4x2)");  // bias row
  for (const std::string& t : types_of(g, tile::OpKind::ufunc))
    if (t.find("[128, 128]") != std::string::npos) EXPECT_EQ(t, mma);
  // two conversions, both outside the loop: the loaded c into the mma layout, acc out of it (scatter)
  EXPECT_EQ(types_of(g, tile::OpKind::convert_layout),
            (std::vector<std::string>{"f32[128, 128] mma(128x128, warps 4x2)", "f32[128, 128]"}));
  for (const tile::Op& op : g.body.ops)
    if (op.kind == tile::OpKind::for_) EXPECT_EQ(count_ops(op.regions.at(0), tile::OpKind::convert_layout), 0);
  // the CUDA source declares the tiles with their layout; the host source has no layouts
  tile::EmitOptions recorded{tile::Target::cuda};
  recorded.record_stages = true;
  const tile::EmitResult cuda = tile::emit(f, recorded);
  EXPECT_NE(cuda.source.find("::cu::tile::Tile<float, 16384, ::cu::tile::MmaLayout<128, 128, 4, 2>>"),
            std::string::npos);
  EXPECT_NE(cuda.source.find("::cu::tile::convert_layout(blk, "), std::string::npos);
  // the loop's only user of the scratch is its product: two staging buffers by turns
  EXPECT_NE(cuda.source.find("::cu::tile::mma<128, 32, 128, float, false, false, true>(blk, "), std::string::npos);
  EXPECT_NE(cuda.source.find("_phase ^= 1;"), std::string::npos);
  EXPECT_EQ(cuda.stages.back().stage, "assign_layouts");
  EXPECT_NE(cuda.stages.back().ir.find(mma), std::string::npos);
  EXPECT_EQ(tile::emit(f, {tile::Target::host}).source.find("MmaLayout"), std::string::npos);
}

TEST(TileLayouts, WarpGridsAndNonTensorCoreProducts) {
  auto layout_of_mma = [](DType in, Shape mn, int threads, bool tf32 = false) {
    Builder b("k");
    const int x = b.param_array("x", in, 2);
    const int zero = b.constant(Scalar::from_int(0));
    const DType acc = in == DType::float64 ? DType::float64 : in == DType::int8 ? DType::int32 : DType::float32;
    const int ta = b.load(x, {zero, zero}, {mn[0], 16}, Scalar::from_int(0), false);
    const int tb = b.load(x, {zero, zero}, {16, mn[1]}, Scalar::from_int(0), false);
    b.store(b.param_array("o", acc, 2), {zero, zero}, b.mma(ta, tb, b.full(mn, zero, acc), tf32), false);
    return types_of(tile::assign_layouts(b.finish(), threads), tile::OpKind::mma).at(0);
  };
  EXPECT_EQ(layout_of_mma(DType::float16, {64, 32}, 256), "f32[64, 32] mma(64x32, warps 4x2)");
  EXPECT_EQ(layout_of_mma(DType::bfloat16, {64, 128}, 256), "f32[64, 128] mma(64x128, warps 2x4)");
  EXPECT_EQ(layout_of_mma(DType::bfloat16, {37, 29}, 128), "f32[37, 29] mma(37x29, warps 1x4)");
  EXPECT_EQ(layout_of_mma(DType::bfloat16, {16, 8}, 128), "f32[16, 8] mma(16x8, warps 4x1)");
  EXPECT_EQ(layout_of_mma(DType::float32, {32, 32}, 128, true), "f32[32, 32] mma(32x32, warps 2x2)");
  EXPECT_EQ(layout_of_mma(DType::float32, {32, 32}, 128), "f32[32, 32]");  // FMAs: blocked
  EXPECT_EQ(layout_of_mma(DType::float64, {32, 32}, 128), "f64[32, 32]");
  EXPECT_EQ(layout_of_mma(DType::int8, {32, 32}, 128), "i32[32, 32]");
}

TEST(TilePipeline, LoadsFeedingMmaAreIssuedAnIterationAhead) {
  auto build = [](bool store_in_loop, bool carried_index = false) {
    Builder b("mm");
    const int a = b.param_array("a", DType::float16, 2), o = b.param_array("o", DType::float32, 2);
    const int zero = b.constant(Scalar::from_int(0)), one = b.constant(Scalar::from_int(1), DType::int64);
    auto ids = b.begin_for(zero, b.array_dim(a, 1), b.constant(Scalar::from_int(1)),
                           {b.full({32, 32}, zero, DType::float32), b.full({}, one, DType::int64)});
    const int k = carried_index ? ids[2] : b.ufunc("multiply", {ids[0], b.constant(Scalar::from_int(2))});
    const int ta = b.load(a, {b.bid(0), k}, {32, 16}, Scalar::from_int(0), false);
    const int tb = b.load(a, {k, b.bid(1)}, {16, 32}, Scalar::from_int(0), false);
    const int acc = b.mma(ta, tb, ids[1], false);
    if (store_in_loop) b.store(o, {zero, zero}, acc, false);
    b.store(o, {zero, zero}, b.end_for({acc, b.ufunc("multiply", {ids[2], b.constant(Scalar::from_int(3))})}).at(0),
            false);
    tile::Function f = b.finish();
    tile::canonicalize(f);
    return tile::pipeline_loads(f);
  };
  const tile::Function g = build(false);
  const tile::Op* loop = nullptr;
  int loads_before = 0;
  for (const tile::Op& op : g.body.ops) {
    if (op.kind == tile::OpKind::for_) loop = &op;
    if (op.kind == tile::OpKind::load && !loop) ++loads_before;
  }
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loads_before, 2);  // the first iteration's tiles
  EXPECT_EQ(loop->results.size(), 4u);
  const tile::Region& body = loop->regions.at(0);
  EXPECT_EQ(body.args.size(), 5u);  // iv, acc, index, then the a and b tiles
  for (const tile::Op& op : body.ops)
    if (op.kind == tile::OpKind::mma) EXPECT_EQ(op.operands[0], body.args[3]);
  EXPECT_EQ(body.ops.back().operands.size(), 4u);                      // the yield carries the next tiles
  EXPECT_NE(tile::to_text(g).find("ufunc add %"), std::string::npos);  // iv + step
  // a loop that stores may write what it loads, and a carried index is known only in the body:
  // both are left as they are
  EXPECT_EQ(count_ops(build(true).body, tile::OpKind::load), 2);
  EXPECT_EQ(count_ops(build(false, true).body, tile::OpKind::load), 2);
}

// ---- the header library on the CPU ------------------------------------------------------------

TEST(TileHeaders, LoadPadsAndStoreDrops) {
  float data[5 * 7];
  for (int i = 0; i < 35; ++i) data[i] = static_cast<float>(i);
  cu::tile::ArrayRef<float, 2> a{data, {5, 7}, {7, 1}};
  cu::tile::Block blk{{0, 0, 0}, {1, 1, 1}, 0, nullptr, nullptr};
  cu::tile::Tile<float, 12> t;
  const cu::tile::i64 start[2] = {3, 5};
  cu::tile::load<cu::tile::Dims<3, 4>>(blk, t, a, start, -1.0f);
  const float want[12] = {26, 27, -1, -1, 33, 34, -1, -1, -1, -1, -1, -1};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(t.v[i], want[i]) << i;
  for (int i = 0; i < 12; ++i) t.v[i] = 100.0f + static_cast<float>(i);
  cu::tile::store<cu::tile::Dims<3, 4>>(blk, t, a, start);
  EXPECT_EQ(data[3 * 7 + 5], 100.0f);
  EXPECT_EQ(data[4 * 7 + 6], 105.0f);
  EXPECT_EQ(data[4 * 7 + 4], 32.0f);  // outside the window: untouched
}

namespace {
/// The operator the emitter renders for reduction_table.def's `sum` (Emitter::reduction_op).
struct TableSum {
  template <class A>
  static A identity() {
    return cu::reduction_start<A, cu::Identity::zero, cu::NanRule::none>();
  }
  template <class A>
  static A combine(A a, A b) {
    return static_cast<A>(a + b);
  }
};
}  // namespace

TEST(TileHeaders, ReduceAndMmaMatchLoops) {
  cu::tile::Block blk{{0, 0, 0}, {1, 1, 1}, 0, nullptr, nullptr};
  constexpr int M = 7, K = 19, N = 37;
  cu::tile::Tile<cu::tile::bf16, M * K> a;
  cu::tile::Tile<cu::tile::bf16, K * N> b;
  cu::tile::Tile<float, M * N> c, out;
  for (int i = 0; i < M * K; ++i) a.v[i] = cu::tile::to_bf16(static_cast<float>(i % 5) - 2);
  for (int i = 0; i < K * N; ++i) b.v[i] = cu::tile::to_bf16(static_cast<float>(i % 7) * 0.5f);
  for (int i = 0; i < M * N; ++i) c.v[i] = 1.0f;
  cu::tile::mma<M, K, N, float>(blk, out, a, b, c);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float s = 1.0f;
      for (int k = 0; k < K; ++k) s += cu::tile::to_float(a.v[m * K + k]) * cu::tile::to_float(b.v[k * N + n]);
      EXPECT_FLOAT_EQ(out.v[m * N + n], s);
    }
  cu::tile::Tile<float, N> col;
  cu::tile::reduce<TableSum, cu::tile::Dims<M, N>, 0, float>(blk, col, out);
  for (int n = 0; n < N; ++n) {
    float s = 0;
    for (int m = 0; m < M; ++m) s += out.v[m * N + n];
    EXPECT_FLOAT_EQ(col.v[n], s);
  }
  cu::tile::Tile<int, M> am;
  cu::tile::argreduce<true, cu::tile::Dims<M, N>, 1, float>(blk, am, out);
  for (int m = 0; m < M; ++m) {
    int best = 0;
    for (int n = 1; n < N; ++n) best = out.v[m * N + n] > out.v[m * N + best] ? n : best;
    EXPECT_EQ(am.v[m], best);
  }
}

TEST(TileHeaders, HalfConversionsMatchTheCore) {
  for (float f : {1.0f, -2.5f, 65504.0f, 65520.0f, 1e-7f, 3.14159f, -0.0f}) {
    EXPECT_EQ(cu::tile::to_f16(f).bits, cupric::float16(f).bits) << f;
    EXPECT_EQ(cu::tile::to_bf16(f).bits, cupric::bfloat16(f).bits) << f;
  }
  EXPECT_TRUE(std::isnan(cu::tile::to_float(cu::tile::to_bf16(NAN))));
}

TEST(TileHeaders, WindowStartsNeverWrapAndKeepWhatIsInside) {
  // the window [start, start + n) holds the same elements of [0, extent) as the exact product does
  const std::int64_t big = std::int64_t{1} << 62, top = INT64_MAX;
  for (std::int64_t extent : {std::int64_t{0}, std::int64_t{16}, big, top - 3})
    for (std::int64_t scale : {1, 8, 100})
      for (std::int64_t index : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{2}, big / 4, -big / 4,
                                 big, -big, top, INT64_MIN, extent / scale, extent / scale + 1, -1 - 8 / scale}) {
        const std::int64_t n = 8;
        const std::int64_t s = ::cu::tile::window_start(index, scale, n, extent);
        const __int128 exact = static_cast<__int128>(index) * scale;
        for (std::int64_t i = 0; i < n && extent <= top - n; ++i) {  // (exact for extents up to 2^63 - 1 - n)
          const bool inside = exact + i >= 0 && exact + i < extent;
          EXPECT_EQ(static_cast<__int128>(s) + i >= 0 && static_cast<__int128>(s) + i < extent, inside)
              << "index " << index << " scale " << scale << " extent " << extent << " element " << i;
          if (inside) EXPECT_EQ(static_cast<__int128>(s), exact);
        }
        EXPECT_LE(static_cast<__int128>(s) + n, static_cast<__int128>(INT64_MAX));  // start + i never overflows
      }
}

TEST(TileStaging, PassesMarkProductsLoadsAndLoopsForTheEmitter) {
  // for k: acc = mma(load a[bid, k], permute(load b[bid, k]), acc) at 256 threads: 128 x 64 x 128 bf16
  Builder b("mm");
  const int a = b.param_array("a", DType::bfloat16, 2), bm = b.param_array("b", DType::bfloat16, 2);
  const int out = b.param_array("out", DType::float32, 2);
  const int zero = b.constant(Scalar::from_int(0));
  auto ids =
      b.begin_for(zero, b.array_dim(a, 1), b.constant(Scalar::from_int(1)), {b.full({128, 128}, zero, DType::float32)});
  const int ta = b.load(a, {b.bid(0), ids[0]}, {128, 64}, Scalar::from_int(0), false);
  const int tb = b.load(bm, {b.bid(1), ids[0]}, {128, 64}, Scalar::from_int(0), false);
  const int acc = b.end_for({b.mma(ta, b.permute(tb, {1, 0}), ids[1], false)}).at(0);
  b.store(out, {b.bid(0), b.bid(1)}, acc, false);
  tile::Function f = b.finish();
  tile::canonicalize(f);
  tile::fold_transposes(f);
  tile::stage_products(f, 256);
  const tile::Op* loop = nullptr;
  for (const tile::Op& op : f.body.ops)
    if (op.kind == tile::OpKind::for_) loop = &op;
  ASSERT_NE(loop, nullptr);
  EXPECT_GT(loop->staged.stages, 1);
  int ring = 0;
  for (const tile::Op& op : loop->regions.at(0).ops) {
    if (op.kind == tile::OpKind::mma) EXPECT_TRUE(op.b_transposed);
    if (op.kind == tile::OpKind::load) ring += op.staging == tile::LoadStaging::ring;
    EXPECT_NE(op.kind, tile::OpKind::permute);  // folded into the product
  }
  EXPECT_EQ(ring, 2);
  const std::string text = tile::to_text(f);
  EXPECT_NE(text.find(" b_transposed"), std::string::npos);
  EXPECT_NE(text.find(" staged(ring)"), std::string::npos);
  EXPECT_NE(text.find(cat(" staged(", loop->staged.stages, " stages, ")), std::string::npos);
  // pipeline_loads leaves the staged loads in the loop; the emitter reads the ring
  const tile::Function g = tile::pipeline_loads(f);
  EXPECT_EQ(tile::to_text(g), text);
  const std::string src = tile::emit(f, {tile::Target::cuda, 256}).source;
  EXPECT_NE(src.find("::cu::tile::mma_staged<128, 64, 128, true, "), std::string::npos);
}
