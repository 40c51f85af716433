// emit.cpp — the two targets' wrappers around the shared body: the host shared object's
// exported entry (runs a range of blocks) and the CUDA __global__ kernel; and the choice of
// threads per block and vector width on the GPU.
#include "tile/emit.hpp"

#include <algorithm>

#include "cupric/errors.hpp"
#include "tile/emitter.hpp"
#include "tile/passes.hpp"

namespace cupric::tile {

namespace {

struct Launch {
  int threads = 1;
  int vec = 1;
};

/// GPU: 4 warps, 8 for big tiles; vectors of 16 bytes of the narrowest dtype moved.
Launch choose_launch(const Function& f, const EmitOptions& o) {
  if (o.target == Target::host) return {};
  std::int64_t largest = 1;
  int narrowest = 16;
  walk(f.body, [&](const Op& op) {
    for (int v : op.results) largest = std::max(largest, f.type(v).size());
    if (op.kind == OpKind::load || op.kind == OpKind::store || op.kind == OpKind::load_offset ||
        op.kind == OpKind::store_offset)
      narrowest = std::min(narrowest, itemsize(f.type(op.operands.at(0)).dtype));
  });
  Launch l;
  l.threads = o.threads > 0 ? o.threads : (largest >= 8192 ? 256 : 128);
  if (o.threads <= 0)  // a product that can read staged operands: one warp per 16 rows of its accumulator
    walk(f.body, [&](const Op& op) {
      if (op.kind != OpKind::mma) return;
      const int t = static_cast<int>(f.type(op.result()).shape.at(0) / 16 * 32);
      if (t > 0 && t <= 1024 && staged_shape(f, op, t).stages > 0) l.threads = t;
    });
  if (l.threads % 32 != 0 || l.threads > 1024)
    throw ValueError(cat("cupric.tile: threads per block must be a multiple of 32 up to 1024, got ", l.threads));
  l.vec = std::clamp(16 / narrowest, 1, 8);
  return l;
}

std::string header(const Function& f, const char* target, const Launch& l, int smem) {
  return cat("// cupric.tile kernel `", f.name, "` (", target, ") — generated; do not edit\n",
             "#define CUPRIC_TILE_THREADS ", l.threads, "\n#define CUPRIC_TILE_VEC ", l.vec, "\n#define CUPRIC_TILE_SMEM ",
             smem, "\n#include \"cupric/tile/tile.h\"\n");
}

/// Parameter declarations of the host block function and how the entry unpacks args[i].
void host_params(const Function& f, const Emitter& e, std::string& decl, std::string& unpack, std::string& pass) {
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const int v = f.params[i];
    const Type& t = f.type(v);
    const std::string n = e.name(v);
    decl += cat(i ? ", " : "", "const ");
    pass += cat(", ", n);
    if (t.is_array()) {
      const std::string ty = cat("::cu::tile::ArrayRef<", ctype(t.dtype), ", ", t.ndim, ">");
      decl += cat(ty, "& ", n);
      unpack += cat("\n  const ", ty, " ", n, " = ::cu::tile::array_ref<", ctype(t.dtype), ", ", t.ndim, ">(args[", i, "]);");
    } else {
      decl += cat(ctype(t.dtype), " ", n);
      unpack += cat("\n  const ", ctype(t.dtype), " ", n, " = *static_cast<const ", ctype(t.dtype), "*>(args[", i, "]);");
    }
  }
}

/// CPU blocks keep their tiles on the stack of a pool thread (8 MiB by default).
inline constexpr long long kHostTileBytes = 4ll << 20;

EmitResult emit_host(const Function& f, const EmitOptions& o) {
  const Launch l = choose_launch(f, o);
  Emitter e(f, o, l.threads, l.vec);
  if (e.tile_bytes() > kHostTileBytes)
    throw ValueError(cat("cupric.tile: kernel `", f.name, "` keeps ", e.tile_bytes() >> 10, " KiB of tiles per block; the CPU "
                         "target allows ", kHostTileBytes >> 10, " KiB (use smaller tiles and a loop)"));
  const std::string body = e.body();
  std::string decl, unpack, pass;
  host_params(f, e, decl, unpack, pass);
  EmitResult r;
  r.entry = "cupric_tile_entry";
  r.source = header(f, "host C++", l, 0) +
             cat("\nnamespace {\n\nvoid cupric_tile_block(const ::cu::tile::Block& blk", decl.empty() ? "" : ", ", decl,
                 ") {", body, "\n}\n\n}  // namespace\n\n",
                 "extern \"C\" __attribute__((visibility(\"default\"))) void cupric_tile_entry(\n",
                 "    void* const* args, const long long* grid, long long begin, long long end, cupric_tile_status* status) {",
                 unpack, "\n  (void)args;\n",
                 "  ::cu::tile::Block blk{{0, 0, 0}, {grid[0], grid[1], grid[2]}, 0, nullptr, status};\n",
                 "  for (long long b = begin; b < end; ++b) {\n", "    blk.bid[0] = b % grid[0];\n",
                 "    blk.bid[1] = (b / grid[0]) % grid[1];\n", "    blk.bid[2] = b / (grid[0] * grid[1]);\n",
                 "    cupric_tile_block(blk", pass, ");\n  }\n}\n");
  return r;
}

EmitResult emit_cuda(const Function& unlaid, const EmitOptions& o) {
  const Launch l = choose_launch(unlaid, o);
  Function folded = unlaid;
  fold_transposes(folded);
  stage_products(folded, l.threads);
  const Function f = assign_layouts(pipeline_loads(folded), l.threads);
  Emitter e(f, o, l.threads, l.vec);
  const std::string body = e.body();
  EmitResult r;
  r.ir_layout = to_text(f);
  r.entry = f.name;
  r.threads = l.threads;
  r.vec = l.vec;
  r.smem_bytes = e.smem_bytes();
  std::string params, views;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const int v = f.params[i];
    const Type& t = f.type(v);
    const std::string n = e.name(v);
    if (!params.empty()) params += ", ";
    if (t.is_array()) {
      const std::string ty = ctype(t.dtype);
      params += cat(ty, "* ", n, "_data");
      r.params.push_back({ParamRole::data, t.dtype});
      std::string shape, stride;
      for (int d = 0; d < t.ndim; ++d) {
        params += cat(", long long ", n, "_shape", d);
        shape += cat(d ? ", " : "", n, "_shape", d);
        r.params.push_back({ParamRole::extent, DType::int64});
      }
      for (int d = 0; d < t.ndim; ++d) {
        params += cat(", long long ", n, "_stride", d);
        stride += cat(d ? ", " : "", n, "_stride", d);
        r.params.push_back({ParamRole::stride, DType::int64});
      }
      views += cat("\n  const ::cu::tile::ArrayRef<", ty, ", ", t.ndim, "> ", n, "{", n, "_data, {", shape, "}, {", stride, "}};");
    } else {
      params += cat(ctype(t.dtype), " ", n);
      r.params.push_back({ParamRole::scalar, t.dtype});
    }
  }
  r.source = header(f, "CUDA C++", l, std::max(r.smem_bytes, 16)) + e.defines() +
             cat("\nextern \"C\" __global__ void __launch_bounds__(", l.threads,
                 e.min_blocks() > 1 ? cat(", ", e.min_blocks()) : std::string(), ") ", f.name, "(", params, ") {\n",
                 "  extern __shared__ __align__(16) unsigned char cupric_smem[];\n",
                 "  const ::cu::tile::Block blk{{static_cast<long long>(blockIdx.x), static_cast<long long>(blockIdx.y), "
                 "static_cast<long long>(blockIdx.z)},\n",
                 "      {static_cast<long long>(gridDim.x), static_cast<long long>(gridDim.y), static_cast<long long>(gridDim.z)},\n",
                 "      static_cast<int>(threadIdx.x), cupric_smem, nullptr};", views, body, "\n}\n");
  return r;
}

}  // namespace

const char* role_name(ParamRole r) {
  static constexpr const char* names[] = {"data", "extent", "stride", "scalar"};
  return names[static_cast<int>(r)];
}

std::string param_ctype(const KernelParam& p) {
  if (p.role == ParamRole::data) return ctype(p.dtype) + "*";
  return p.role == ParamRole::scalar ? ctype(p.dtype) : "long long";
}

EmitResult emit(const Function& f, const EmitOptions& options) {
  return options.target == Target::host ? emit_host(f, options) : emit_cuda(f, options);
}

}  // namespace cupric::tile
