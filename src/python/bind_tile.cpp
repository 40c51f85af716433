// bind_tile.cpp — cupric._cupric._tile: the tile IR builder the Python frontend drives, the
// passes and emitters, and the CPU target's compiler, loader and launcher.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/tile_compiler/builder.hpp"
#include "cupric/tile_compiler/cost.hpp"
#include "cupric/tile_compiler/emit.hpp"
#include "cupric/tile_compiler/host_compiler.hpp"
#include "cupric/tile_compiler/passes.hpp"

namespace cupric::py {

void bind_tile_launch(nb::module_& t);  // bind_tile_launch.cpp: HostLauncher, launch plans

/// The 128 bytes of a TMA tensor map over a 16- or 8-bit array (data address, extents, strides in
/// elements) in boxes of box_cols x box_rows elements of its last two dimensions (a box row is 128
/// bytes: 64 16-bit values or 128 8-bit ones, which tells the element size), 128-byte swizzle,
/// zeros outside (tma.h), or 128 zero bytes where TMA cannot describe the view (rank, alignment,
/// strides, extents past int32 coordinates) or the driver cannot make maps: the kernel then copies
/// with cp.async. Kept per (address, extents, strides, box), so that a launch over the same arrays
/// encodes nothing.
std::array<std::uint64_t, 16> tile_tensor_map_bytes(std::uint64_t data, const std::vector<std::int64_t>& shape,
                                                    const std::vector<std::int64_t>& strides, int box_rows,
                                                    int box_cols) {
  using Key = std::tuple<std::uint64_t, std::vector<std::int64_t>, std::vector<std::int64_t>, int, int>;
  static std::mutex m;
  static std::map<Key, std::array<std::uint64_t, 16>> made;
  const std::size_t rank = shape.size();
  std::array<std::uint64_t, 16> map{};
  bool ok = rank >= 2 && rank <= 5 && strides.size() == rank && data % 16 == 0 && strides[rank - 1] == 1 &&
            box_rows >= 1 && box_rows <= 256 && (box_cols == 64 || box_cols == 128);
  const std::int64_t size = box_cols == 128 ? 1 : 2;  // bytes a value
  for (std::size_t d = 0; ok && d < rank; ++d)
    ok = shape[d] >= 1 && shape[d] < (std::int64_t{1} << 31) - 512 &&
         (d == rank - 1 ||
          (strides[d] > 0 && strides[d] * size % 16 == 0 && strides[d] * size < (std::int64_t{1} << 40)));
  const cuda::DriverApi* driver = ok ? cuda::loaded_driver() : nullptr;
  if (driver == nullptr || driver->TensorMapEncodeTiled == nullptr) return map;
  const Key key{data, shape, strides, box_rows, box_cols};
  std::lock_guard<std::mutex> lock(m);
  if (auto it = made.find(key); it != made.end()) return it->second;
  std::uint64_t dims[5], byte_strides[4];
  std::uint32_t box[5], steps[5];
  for (std::size_t i = 0; i < rank; ++i) {  // TMA's order: the innermost dimension first
    dims[i] = static_cast<std::uint64_t>(shape[rank - 1 - i]);
    box[i] = i == 0 ? static_cast<std::uint32_t>(box_cols) : i == 1 ? static_cast<std::uint32_t>(box_rows) : 1;
    steps[i] = 1;
    if (i > 0) byte_strides[i - 1] = static_cast<std::uint64_t>(strides[rank - 1 - i] * size);
  }
  constexpr int kUint8 = 0, kUint16 = 1, kNoInterleave = 0, kSwizzle128 = 3, kL2Promote256 = 3, kZeroFill = 0;
  if (driver->TensorMapEncodeTiled(map.data(), size == 1 ? kUint8 : kUint16, static_cast<unsigned>(rank),
                                   reinterpret_cast<void*>(data), dims, byte_strides, box, steps, kNoInterleave,
                                   kSwizzle128, kL2Promote256, kZeroFill) != cuda::CUDA_SUCCESS)
    map.fill(0);
  if (made.size() > 4096) made.clear();
  made[key] = map;
  return map;
}

namespace {

using tile::Builder;
using tile::Function;

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (auto d : s) l.append(d);
  return nb::tuple(l);
}

/// A load's or gather's value outside the array: 0 unless given.
Scalar pad_value(const std::optional<ScalarLike>& pad) { return pad ? scalar_from_py(*pad) : Scalar::from_int(0); }

tile::Target target_from_name(const std::string& target) {
  if (target == "host") return tile::Target::host;
  if (target == "cuda") return tile::Target::cuda;
  if (target == "device_function") return tile::Target::device_function;
  throw ValueError(cat("unknown target '", target, "' (expected 'host', 'cuda' or 'device_function')"));
}

void bind_builder(nb::module_& t) {
  nb::class_<Builder>(t, "Builder", "Builds one kernel's tile IR; every method type-checks and returns value ids.")
      .def(nb::init<std::string>())
      .def("set_location", &Builder::set_location)
      .def("param_array", [](Builder& b, const std::string& n, DTypeLike dt,
                             int nd) { return b.param_array(n, dtype_from_py(dt), nd); })
      .def("param_scalar",
           [](Builder& b, const std::string& n, DTypeLike dt, bool weak) {
             const DType t = dtype_from_py(dt);
             WeakKind w = WeakKind::none;
             if (weak) w = is_bool(t) ? WeakKind::boolean : is_integer(t) ? WeakKind::integer : WeakKind::floating;
             return b.param_scalar(n, t, w);
           })
      .def(
          "constant",
          [](Builder& b, ScalarLike v, DTypeLike dt) {
            return dt.is_none() ? b.constant(scalar_from_py(v)) : b.constant(scalar_from_py(v), dtype_from_py(dt));
          },
          nb::arg("value"), nb::arg("dtype") = nb::none())
      .def("bid", &Builder::bid)
      .def("num_blocks", &Builder::num_blocks)
      .def("array_dim", &Builder::array_dim)
      .def("array_stride", &Builder::array_stride)
      .def("ufunc", &Builder::ufunc, nb::arg("name"), nb::arg("operands"), nb::arg("flush_to_zero") = false)
      .def("cast", [](Builder& b, int v, DTypeLike dt) { return b.cast(v, dtype_from_py(dt)); })
      .def("where", &Builder::where)
      .def("broadcast_to", &Builder::broadcast_to)
      .def("reshape", &Builder::reshape)
      .def("permute", &Builder::permute)
      .def("expand_dims", &Builder::expand_dims)
      .def("full", [](Builder& b, Shape s, int v, DTypeLike dt) { return b.full(std::move(s), v, dtype_from_py(dt)); })
      .def("arange", [](Builder& b, std::int64_t lo, std::int64_t hi,
                        DTypeLike dt) { return b.arange(lo, hi, dtype_from_py(dt)); })
      .def("reduce", &Builder::reduce)
      .def("argreduce", &Builder::argreduce)
      .def("scan", &Builder::scan)
      .def("mma", &Builder::mma)
      .def("matmul", &Builder::matmul)
      .def("load", [](Builder& b, int a, std::vector<int> idx, Shape s, std::optional<ScalarLike> pad,
                      bool offsets) { return b.load(a, std::move(idx), std::move(s), pad_value(pad), offsets); })
      .def("store", &Builder::store)
      .def("gather", [](Builder& b, int a, std::vector<int> idx, int mask,
                        std::optional<ScalarLike> pad) { return b.gather(a, std::move(idx), mask, pad_value(pad)); })
      .def("scatter", &Builder::scatter)
      .def("atomic", &Builder::atomic)
      .def("print", &Builder::print)
      .def("assert_", &Builder::assert_)
      .def("begin_for", &Builder::begin_for)
      .def("end_for", &Builder::end_for)
      .def("begin_if", &Builder::begin_if)
      .def("begin_else", &Builder::begin_else)
      .def("end_if", &Builder::end_if)
      .def("depth", &Builder::depth)
      .def("rollback", &Builder::rollback)
      .def("constant_value",
           [](const Builder& b, int v) -> nb::object {
             auto c = b.constant_value(v);
             if (!c) return nb::none();
             switch (c->kind) {
               case WeakKind::boolean: return nb::bool_(c->b);
               case WeakKind::integer: return c->big_unsigned ? nb::int_(c->u) : nb::int_(c->i);
               default: return nb::float_(c->f);
             }
           })
      .def(
          "type",
          [](const Builder& b, int v) {
            const tile::Type& t = b.type(v);
            return nb::make_tuple(t.is_array() ? "array" : "tile", dtype_to_py(t.dtype), shape_tuple(t.shape), t.ndim,
                                  t.weak != WeakKind::none);
          },
          "(kind, dtype, shape, ndim, weak) of a value")
      .def("type_str", [](const Builder& b, int v) { return b.type(v).str(); })
      .def("text", [](const Builder& b) { return tile::to_text(b.function()); })
      .def("finish", &Builder::finish);
}

nb::bytes tile_tensor_map(std::uint64_t data, const std::vector<std::int64_t>& shape,
                          const std::vector<std::int64_t>& strides, int box_rows, int box_cols) {
  const std::array<std::uint64_t, 16> map = tile_tensor_map_bytes(data, shape, strides, box_rows, box_cols);
  return nb::bytes(map.data(), sizeof(map));
}

/// Function.block_cost: the cost model over the parameters' run-time values (cost.hpp).
tile::BlockCost block_cost_of(const Function& f, nb::dict params, std::array<std::int64_t, 3> grid,
                              std::array<std::int64_t, 3> block) {
  tile::CostInputs in;
  in.grid = grid;
  in.block = block;
  for (auto [name, value] : params) {
    if (nb::isinstance<nb::tuple>(value)) in.params[nb::cast<std::string>(name)] = shape_from_py(value);
    else in.params[nb::cast<std::string>(name)] = nb::cast<double>(value);
  }
  return tile::block_cost(f, in);
}

void bind_block_cost(nb::module_& t) {
  nb::class_<tile::BlockCost>(t, "BlockCost", "One block's bytes moved and flops, from the IR.")
      .def_ro("load_bytes", &tile::BlockCost::load_bytes)
      .def_ro("store_bytes", &tile::BlockCost::store_bytes)
      .def_ro("flops", &tile::BlockCost::flops)
      .def_ro("mma_flops", &tile::BlockCost::mma_flops)
      .def_ro("exact", &tile::BlockCost::exact)
      .def_ro("notes", &tile::BlockCost::notes);
}

}  // namespace

void bind_tile(nb::module_& m) {
  nb::module_ t = m.def_submodule("_tile", "cupric.tile's compiler: IR builder, passes, emitters, CPU runtime.");
  bind_builder(t);
  bind_block_cost(t);

  nb::class_<Function>(t, "Function", "A kernel's tile IR.")
      .def("text", [](const Function& f) { return tile::to_text(f); })
      .def("block_cost", &block_cost_of, nb::arg("params"), nb::arg("grid") = std::array<std::int64_t, 3>{1, 1, 1},
           nb::arg("block") = std::array<std::int64_t, 3>{0, 0, 0},
           "One block's BlockCost; params: name -> shape tuple (arrays) or number (scalars).")
      .def(
          "emit",
          [](const Function& f, const std::string& target, bool debug, int threads, bool record_stages,
             const std::string& ring) {
            tile::EmitOptions o;
            o.target = target_from_name(target);
            o.debug = debug;
            o.threads = threads;
            o.record_stages = record_stages;
            o.ring = ring;
            tile::EmitResult r = tile::emit(f, o);
            nb::dict d;
            d["source"] = r.source;
            d["entry"] = r.entry;
            d["threads"] = r.threads;
            d["vec"] = r.vec;
            d["smem_bytes"] = r.smem_bytes;
            nb::list params, declared;  // (role, dtype) per kernel parameter; the C types only for reading
            for (const tile::KernelParam& p : r.params) {
              params.append(nb::make_tuple(tile::role_name(p.role), dtype_to_py(p.dtype)));
              declared.append(tile::param_ctype(p));
            }
            d["params"] = params;
            d["param_types"] = declared;
            nb::list maps;  // (parameter index, box rows, box columns) per TMA tensor map, after the others
            for (const tile::TensorMapParam& p : r.tensor_maps)
              maps.append(nb::make_tuple(p.param, p.box_rows, p.box_cols));
            d["tensor_maps"] = maps;
            d["persistent"] = r.persistent;
            d["split_bytes"] = r.split_bytes;
            d["cluster"] = r.cluster;
            nb::list stages;
            for (const tile::StageText& s : r.stages) stages.append(nb::make_tuple(s.stage, s.ir));
            d["stages"] = stages;
            return d;
          },
          nb::arg("target"), nb::arg("debug") = false, nb::arg("threads") = 0, nb::arg("record_stages") = false,
          nb::arg("ring") = "",
          "Runs the target's stages on a copy and renders it: {'source', 'entry', 'threads', 'vec', 'smem_bytes', "
          "'params' ((role, dtype) per kernel parameter), 'param_types' (their C types, for reading), "
          "'tensor_maps', 'persistent', 'split_bytes', 'cluster', 'stages'} ('stages': (name, IR text) after each "
          "stage, with "
          "record_stages). ring: how staged loops' rings are filled on CUDA ('cp.async', 'tma', 'tma ws', 'tma ws "
          "plain', "
          "'tma ws persistent'; '': from the CUPRIC_TILE_* environment).");
  t.def("launch_cluster", &tile::launch_cluster, nb::arg("cluster"), nb::arg("grid_x"), nb::arg("blocks"),
        nb::arg("splits"),
        "Cluster multicast: the blocks per cluster (2 or 1) a launch of a kernel written for `cluster` uses.");
  t.def(
      "split_plan",
      [](long long tiles, long long sms) {
        const tile::SplitPlan p = tile::split_plan(tiles, sms);
        return nb::make_tuple(p.whole, p.splits);
      },
      nb::arg("tiles"), nb::arg("sms"),
      "Split K: (whole, splits) for `tiles` output tiles of a persistent kernel on `sms` SMs — the first "
      "`whole` tiles run whole, each later one as `splits` parts of its K loop.");
  t.def(
      "stage_names", [](const std::string& target) { return tile::stage_names(target_from_name(target)); },
      nb::arg("target"),
      "The stages the compiler runs for 'host', 'cuda' or 'device_function', in order ('frontend' first).");

  t.def("host_compiler", [] {
    const tile::HostCompiler& c = tile::host_compiler();
    nb::dict d;
    d["available"] = c.available;
    d["command"] = c.command;
    d["version"] = c.version;
    std::string flags;
    for (const auto& f : c.flags) flags += (flags.empty() ? "" : " ") + f;
    d["flags"] = flags;
    d["problem"] = c.problem;
    d["gcc"] = c.gcc;
    return d;
  });
  t.def(
      "compile_host",
      [](const std::string& source, const std::string& include_dir) {
        tile::HostBinary b;
        {
          nb::gil_scoped_release release;
          b = tile::compile_host(source, include_dir);
        }
        nb::dict d;
        d["key"] = b.key;
        d["cache_hit"] = b.cache_hit;
        d["compile_seconds"] = b.compile_seconds;
        return d;
      },
      nb::arg("source"), nb::arg("include_dir"),
      "Compiles (unless the compile cache has it) and loads a generated CPU kernel: {'key', 'cache_hit', "
      "'compile_seconds'}; HostLauncher(key, ...) launches it.");

  bind_tile_launch(t);
  t.def("tensor_map", &tile_tensor_map, nb::arg("data"), nb::arg("shape"), nb::arg("strides"), nb::arg("box_rows"),
        nb::arg("box_cols"),
        "The 128 bytes of a TMA tensor map over a 16-bit array's last two dimensions (zeros: not describable).");
  t.def("host_environment", &tile::host_environment, nb::arg("include_dir"),
        "Hash of the compiler, flags, CPU and header library the CPU kernels depend on.");
  t.def("headers_hash", &tile::headers_hash, nb::arg("include_dir"),
        "Hash of the header library's file names, sizes and modification times (once per process).");
}

}  // namespace cupric::py
