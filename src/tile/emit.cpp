// emit.cpp — the tile compiler as named stages: the list of (name, pass) pairs each target runs
// (the canonical ones, then what the target adds), CUPRIC_TILE_DUMP and the stage record of
// kernel.inspect; the two targets' wrappers around the shared body (the host shared object's entry,
// the CUDA __global__ kernel, a CUDA __device__ function for callers that run it per element); and the choice of
// threads per block and vector width on the GPU.
#include "cupric/tile_compiler/emit.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "cupric/errors.hpp"
#include "cupric/tile_compiler/passes.hpp"
#include "tile/emitter.hpp"

namespace cupric::tile {

namespace {

struct Launch {
  int threads = 1;
  int vec = 1;
};

/// GPU: 4 warps, 8 for big tiles; vectors of 16 bytes of the narrowest dtype moved.
Launch choose_launch(const Function& f, const EmitOptions& o) {
  if (o.target != Target::cuda) return {};  // one thread per block
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

std::string header(const Function& f, const char* target, const Launch& l, int smem, int producers = 0) {
  return cat("// cupric.tile kernel `", f.name, "` (", target, ") — generated; do not edit\n",
             "#define CUPRIC_TILE_THREADS ", l.threads, "\n#define CUPRIC_TILE_VEC ", l.vec,
             "\n#define CUPRIC_TILE_SMEM ", smem,
             producers > 0 ? cat("\n#define CUPRIC_TILE_PRODUCERS ", producers) : std::string(),
             "\n#include \"cupric/tile/tile.h\"\n");
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
      unpack +=
          cat("\n  const ", ty, " ", n, " = ::cu::tile::array_ref<", ctype(t.dtype), ", ", t.ndim, ">(args[", i, "]);");
    } else {
      decl += cat(ctype(t.dtype), " ", n);
      unpack +=
          cat("\n  const ", ctype(t.dtype), " ", n, " = *static_cast<const ", ctype(t.dtype), "*>(args[", i, "]);");
    }
  }
}

/// CPU blocks keep their tiles on the stack of a pool thread (8 MiB by default).
inline constexpr long long kHostTileBytes = 4ll << 20;

EmitResult emit_host(const Function& f, const EmitOptions& o, const Launch& l) {
  Emitter e(f, o, l.threads, l.vec);
  if (e.tile_bytes() > kHostTileBytes)
    throw ValueError(cat("cupric.tile: kernel `", f.name, "` keeps ", e.tile_bytes() >> 10,
                         " KiB of tiles per block; the CPU "
                         "target allows ",
                         kHostTileBytes >> 10, " KiB (use smaller tiles and a loop)"));
  const std::string body = e.body();
  std::string decl, unpack, pass;
  host_params(f, e, decl, unpack, pass);
  EmitResult r;
  r.entry = "cupric_tile_entry";
  r.source =
      header(f, "host C++", l, 0) +
      cat("\nnamespace {\n\n", e.preamble(), e.preamble().empty() ? "" : "\n",
          "void cupric_tile_block(const ::cu::tile::Block& blk", decl.empty() ? "" : ", ", decl, ") {", body,
          "\n}\n\n}  // namespace\n\n",
          "extern \"C\" __attribute__((visibility(\"default\"))) void cupric_tile_entry(\n",
          "    void* const* args, const long long* grid, long long begin, long long end, cupric_tile_status* status) {",
          unpack, "\n  (void)args;\n",
          "  ::cu::tile::Block blk{{0, 0, 0}, {grid[0], grid[1], grid[2]}, 0, nullptr, status};\n",
          "  for (long long b = begin; b < end; ++b) {\n", "    blk.bid[0] = b % grid[0];\n",
          "    blk.bid[1] = (b / grid[0]) % grid[1];\n", "    blk.bid[2] = b / (grid[0] * grid[1]);\n",
          "    cupric_tile_block(blk", pass, ");\n  }\n}\n");
  return r;
}

/// f with its deferred staged loops (StagedShape::defer) as they are without: a stage fewer, no
/// product in flight. Whether there were any.
bool undefer(Function& f) {
  bool any = false;
  walk(f.body, [&](Op& op) {
    if (op.staged.defer) {
      op.staged = {std::max(2, op.staged.stages - 1), 0, op.staged.min_blocks, op.staged.turns};
      any = true;
    }
  });
  return any;
}

EmitResult emit_cuda(const Function& given, const EmitOptions& o, const Launch& l) {
  std::optional<Emitter> emitter;
  std::string body;
  const auto emit = [&](const Function& f) {
    body = emitter.emplace(f, o, l.threads, l.vec).body();
    if (emitter->persistent() && emitter->smem_bytes() > 227 * 1024) {  // the ring beside the epilogue's scratch
      emitter.emplace(f, o, l.threads, l.vec).forbid_persistent();
      body = emitter->body();
    }
  };
  emit(given);
  // a deferred product's third stage gave up the scratch reserve: where the body's scratch then
  // does not fit, the loop as it was without
  std::optional<Function> undeferred;
  const Function* emitted = &given;
  if (emitter->smem_bytes() > 227 * 1024 && undefer(undeferred.emplace(given))) emit(*(emitted = &*undeferred));
  const Function& f = *emitted;
  const Emitter& e = *emitter;
  EmitResult r;
  r.entry = f.name;
  r.threads = l.threads + e.producers();  // the block: the tile code's threads, then a producer warpgroup
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
      views += cat("\n  const ::cu::tile::ArrayRef<", ty, ", ", t.ndim, "> ", n, "{", n, "_data, {", shape, "}, {",
                   stride, "}};");
    } else {
      params += cat(ctype(t.dtype), " ", n);
      r.params.push_back({ParamRole::scalar, t.dtype});
    }
  }
  for (const auto& [map, n] : e.tensor_maps()) {  // after the others: the launch appends them
    params += cat(", const __grid_constant__ ::cu::tile::TensorMap ", n);
    r.tensor_maps.push_back(map);
  }
  r.persistent = e.persistent();
  if (r.persistent) params += ", long long cupric_grid0, long long cupric_grid1, long long cupric_grid2";
  r.split_bytes = e.split_bytes();
  r.cluster = e.cluster();
  if (r.split_bytes)
    params += ", long long cupric_whole, long long cupric_splits, void* cupric_partials, unsigned int* cupric_counters";
  if (o.debug) {  // where failed checks are recorded; the launcher zeroes it and reads it back
    params += cat(params.empty() ? "" : ", ", "cupric_tile_status* cupric_status");
    r.params.push_back({ParamRole::status, DType::uint8});
  }
  r.source =
      header(f, "CUDA C++", l, std::max(r.smem_bytes, 16), e.producers()) + e.defines() + e.preamble() +
      cat("\nextern \"C\" __global__ void __launch_bounds__(", r.threads,
          e.min_blocks() > 1 ? cat(", ", e.min_blocks()) : std::string(), ") ", f.name, "(", params, ") {\n",
          "  extern __shared__ __align__(16) unsigned char cupric_smem[];\n",
          r.persistent
              ? std::string("  ::cu::tile::Block blk{{0, 0, 0}, {cupric_grid0, cupric_grid1, cupric_grid2},\n")
              : std::string("  const ::cu::tile::Block blk{{static_cast<long long>(blockIdx.x), static_cast<long "
                            "long>(blockIdx.y), static_cast<long long>(blockIdx.z)},\n"
                            "      {static_cast<long long>(gridDim.x), static_cast<long long>(gridDim.y), "
                            "static_cast<long long>(gridDim.z)},\n"),
          "      static_cast<int>(threadIdx.x), cupric_smem, ", o.debug ? "cupric_status" : "nullptr", "};", views,
          body, "\n}\n");
  return r;
}

/// A one-thread block's body as a __device__ function: the host body (a block is one thread there
/// too), compiled by NVRTC. Tiles live in the calling thread's registers, so no op may need the
/// block's shared memory (the host emitter asks for none).
EmitResult emit_device_function(const Function& f, const EmitOptions& o, const Launch& l) {
  EmitOptions host = o;
  host.target = Target::host;
  Emitter e(f, host, l.threads, l.vec);
  const std::string body = e.body();
  std::string decl, unpack, pass;
  host_params(f, e, decl, unpack, pass);
  EmitResult r;
  r.entry = f.name;
  r.source = header(f, "CUDA device function", l, 0) +
             cat("\n", e.preamble(), e.preamble().empty() ? "" : "\n", "__device__ __forceinline__ void ", f.name,
                 "(const ::cu::tile::Block& blk", decl.empty() ? "" : ", ", decl, ") {\n  (void)blk;", body, "\n}\n");
  return r;
}

// ---- the stages --------------------------------------------------------------------------------

/// What a stage may read besides the IR: the options, and the CUDA block size (chosen from the
/// canonical IR: 0 while the canonical stages run).
struct StageContext {
  const EmitOptions& options;
  int threads = 0;
};

/// One named step of the compiler: a pass that rewrites the IR in place.
struct Stage {
  const char* name;
  void (*run)(Function& f, const StageContext& context);
};

/// Every target's first stages (passes.cpp).
constexpr Stage kCanonicalStages[] = {
    {"fold_constants", [](Function& f, const StageContext&) { fold_constants(f); }},
    {"merge_common_subexpressions", [](Function& f, const StageContext&) { merge_common_subexpressions(f); }},
    {"remove_dead_code", [](Function& f, const StageContext&) { remove_dead_code(f); }},
};

/// The host runs the canonical IR: one thread per block, no layouts, no shared memory to stage into.
void add_host_stages(std::vector<Stage>&, const EmitOptions&) {}

/// The GPU passes (pipeline.cpp, layouts.cpp), in the order each relies on: staging sees the folded
/// transposes, pipelining leaves the staged loads alone, layouts come last.
void add_cuda_stages(std::vector<Stage>& stages, const EmitOptions&) {
  stages.push_back({"fold_transposes", [](Function& f, const StageContext&) { fold_transposes(f); }});
  stages.push_back({"stage_products", [](Function& f, const StageContext& c) { stage_products(f, c.threads); }});
  stages.push_back({"widen_float8_products", [](Function& f, const StageContext&) { widen_float8_products(f); }});
  stages.push_back({"pipeline_loads", [](Function& f, const StageContext&) { f = pipeline_loads(f); }});
  stages.push_back({"assign_layouts", [](Function& f, const StageContext& c) { f = assign_layouts(f, c.threads); }});
}

/// What a target plugs into the compiler (Triton's backend add_stages): the stages it runs after
/// the canonical ones, and the wrapper it renders the final IR into.
struct TargetBackend {
  Target target;
  const char* name;
  void (*add_stages)(std::vector<Stage>& stages, const EmitOptions& options);
  EmitResult (*render)(const Function& f, const EmitOptions& options, const Launch& launch);
};

constexpr TargetBackend kTargets[] = {
    {Target::host, "host", add_host_stages, emit_host},
    {Target::cuda, "cuda", add_cuda_stages, emit_cuda},
    {Target::device_function, "device_function", add_host_stages, emit_device_function},
};

const TargetBackend& backend(Target t) {
  for (const TargetBackend& b : kTargets)
    if (b.target == t) return b;
  throw ValueError(cat("internal: no tile target ", static_cast<int>(t)));
}

/// What CUPRIC_TILE_DUMP asks for: comma-separated stage names, or `all`.
struct DumpRequest {
  bool all = false;
  std::set<std::string> stages;
  bool wants(const std::string& stage) const { return all || stages.count(stage) != 0; }
};

/// Read on each compile (a process may set it when it wants to see a kernel); the names are checked
/// against the stages of every target.
DumpRequest dump_request() {
  DumpRequest request;
  const char* env = std::getenv("CUPRIC_TILE_DUMP");
  if (env == nullptr || *env == '\0') return request;
  std::vector<std::string> known;
  for (const TargetBackend& b : kTargets)
    for (std::string& n : stage_names(b.target))
      if (std::find(known.begin(), known.end(), n) == known.end()) known.push_back(std::move(n));
  const std::string text = env;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string name = text.substr(at, end - at);
    at = end + 1;
    if (name == "all") {
      request.all = true;
    } else if (std::find(known.begin(), known.end(), name) != known.end()) {
      request.stages.insert(name);
    } else {
      std::string list;
      for (const std::string& n : known) list += cat(n, ", ");
      throw ValueError(cat("CUPRIC_TILE_DUMP: unknown stage '", name, "'; the stages are ", list, "or all"));
    }
  }
  return request;
}

/// Runs stages on a copy of the input and shows the IR after each: to stderr where CUPRIC_TILE_DUMP
/// asks, into the record where options.record_stages does.
class StageRunner {
 public:
  StageRunner(const Function& input, const EmitOptions& options, const char* target)
      : f_(input), options_(options), target_(target), dump_(dump_request()) {
    after("frontend");
  }

  void run(const Stage& stage, const StageContext& context) {
    stage.run(f_, context);
    after(stage.name);
  }

  const Function& function() const { return f_; }
  std::vector<StageText> take_record() { return std::move(record_); }

 private:
  void after(const std::string& stage) {
    const bool dump = dump_.wants(stage);
    if (!dump && !options_.record_stages) return;
    std::string ir = to_text(f_);
    if (dump) {
      const std::string text =
          cat("// cupric.tile: kernel `", f_.name, "` after stage ", stage, " (", target_, ")\n", ir);
      std::fputs(text.c_str(), stderr);
      std::fflush(stderr);
    }
    if (options_.record_stages) record_.push_back({stage, std::move(ir)});
  }

  Function f_;
  const EmitOptions& options_;
  const char* target_;
  DumpRequest dump_;
  std::vector<StageText> record_;
};

}  // namespace

const char* role_name(ParamRole r) {
  static constexpr const char* names[] = {"data", "extent", "stride", "scalar", "status"};
  return names[static_cast<int>(r)];
}

std::string param_ctype(const KernelParam& p) {
  if (p.role == ParamRole::data) return ctype(p.dtype) + "*";
  if (p.role == ParamRole::status) return "cupric_tile_status*";
  return p.role == ParamRole::scalar ? ctype(p.dtype) : "long long";
}

EmitResult emit(const Function& f, const EmitOptions& options) {
  const RingModeScope ring(options.ring);  // the passes and the emitter read it
  const TargetBackend& target = backend(options.target);
  StageRunner runner(f, options, target.name);
  for (const Stage& stage : kCanonicalStages) runner.run(stage, {options});
  const Launch launch = choose_launch(runner.function(), options);  // from the canonical IR's tiles
  std::vector<Stage> own;
  target.add_stages(own, options);
  for (const Stage& stage : own) runner.run(stage, {options, launch.threads});
  EmitResult r = target.render(runner.function(), options, launch);
  r.stages = runner.take_record();
  return r;
}

std::vector<std::string> stage_names(Target target) {
  std::vector<std::string> names = {"frontend"};
  for (const Stage& s : kCanonicalStages) names.emplace_back(s.name);
  std::vector<Stage> own;
  EmitOptions o;
  o.target = target;
  backend(target).add_stages(own, o);
  for (const Stage& s : own) names.emplace_back(s.name);
  return names;
}

int launch_cluster(int cluster, long long grid_x, long long blocks, long long splits) {
  return cluster == 2 && grid_x % 2 == 0 && blocks % 2 == 0 && blocks > 0 && splits == 1 ? 2 : 1;
}

SplitPlan split_plan(long long tiles, long long sms) {
  if (tiles <= 0 || sms <= 0) return {std::max<long long>(tiles, 0), 1};
  const long long last = tiles % sms;  // the tiles of a last wave that is not full
  const long long split = 2 * tiles <= sms ? tiles : (last > 0 && 2 * last <= sms ? last : 0);
  if (split == 0) return {tiles, 1};
  return {tiles - split, std::min<long long>(sms / split, 16)};
}

}  // namespace cupric::tile
