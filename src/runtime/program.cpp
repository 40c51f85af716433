// program.cpp — NVRTC compilation through the compile cache: options -> argv, the cache key,
// the cached payload format, and CompileError with the full log.
#include "cupric/runtime/program.hpp"

#include <cstring>
#include <optional>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/runtime/compile_cache.hpp"
#include "cupric/runtime/device.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

const char* code_kind_name(CodeKind kind) {
  switch (kind) {
    case CodeKind::ptx: return "ptx";
    case CodeKind::cubin: return "cubin";
    case CodeKind::ltoir: return "ltoir";
    case CodeKind::fatbin: return "fatbin";
  }
  return "?";
}

CodeKind code_kind_from_name(const std::string& name) {
  for (CodeKind k : {CodeKind::ptx, CodeKind::cubin, CodeKind::ltoir, CodeKind::fatbin})
    if (name == code_kind_name(k)) return k;
  throw ValueError(cat("unknown code kind '", name, "': expected 'ptx', 'cubin', 'ltoir' or 'fatbin'"));
}

std::pair<int, std::string> parse_arch(const std::string& arch) {
  std::string s = arch;
  for (const char* prefix : {"sm_", "compute_", "lto_"})
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::strlen(prefix));
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  std::string suffix = s.substr(digits);
  if (digits < 2 || digits > 3 || !(suffix.empty() || suffix == "a" || suffix == "f"))
    throw ValueError(cat("invalid CUDA arch '", arch, "': expected a form like 'sm_90', 'sm_90a' or 'compute_80'"));
  return {std::stoi(s.substr(0, digits)), suffix};
}

std::vector<std::string> nvrtc_arguments(const ProgramOptions& o, CodeKind target, const std::string& arch) {
  auto [number, suffix] = parse_arch(arch);
  bool real = target == CodeKind::cubin;
  std::vector<std::string> args{cat("-arch=", real ? "sm_" : "compute_", number, suffix), "-std=" + o.std};
  for (const auto& [name, value] : o.defines) args.push_back(value.empty() ? "-D" + name : cat("-D", name, "=", value));
  for (const auto& dir : o.include_paths) args.push_back("-I" + dir);
  if (o.lineinfo) args.push_back("-lineinfo");
  if (o.device_debug) args.push_back("-G");
  if (o.fast_math) args.push_back("--use_fast_math");
  if (o.relocatable || target == CodeKind::ltoir) args.push_back("-rdc=true");
  if (target == CodeKind::ltoir) args.push_back("-dlto");
  if (target == CodeKind::fatbin) throw ValueError("NVRTC cannot produce a fatbin: compile to 'cubin' or 'ptx'");
  args.insert(args.end(), o.extra.begin(), o.extra.end());
  return args;
}

namespace {

// Cached payload: [u32 n] n x ([u32 len] expr [u32 len] lowered) [u32 len] log, then the code;
// an entry of a cubin with its PTX has [u32 len] ptx after the log.
void put_u32(std::string& out, std::size_t v) {
  auto u = static_cast<std::uint32_t>(v);
  out.append(reinterpret_cast<const char*>(&u), 4);
}
void put_str(std::string& out, const std::string& s) {
  put_u32(out, s.size());
  out += s;
}
std::string serialize(const std::map<std::string, std::string>& lowered, const std::string& log, const std::string* ptx,
                      const std::string& code) {
  std::string out;
  put_u32(out, lowered.size());
  for (const auto& [k, v] : lowered) put_str(out, k), put_str(out, v);
  put_str(out, log);
  if (ptx) put_str(out, *ptx);
  return out + code;
}
bool deserialize(const std::string& in, std::map<std::string, std::string>& lowered, std::string& log, std::string* ptx,
                 std::string& code) {
  std::size_t pos = 0;
  auto get_u32 = [&](std::uint32_t& v) {
    if (in.size() - pos < 4) return false;
    std::memcpy(&v, in.data() + pos, 4);
    pos += 4;
    return true;
  };
  auto get_str = [&](std::string& s) {
    std::uint32_t n = 0;
    if (!get_u32(n) || in.size() - pos < n) return false;
    s.assign(in, pos, n);
    pos += n;
    return true;
  };
  std::uint32_t n = 0;
  if (!get_u32(n)) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string k, v;
    if (!get_str(k) || !get_str(v)) return false;
    lowered.emplace(std::move(k), std::move(v));
  }
  if (!get_str(log) || (ptx && !get_str(*ptx))) return false;
  code.assign(in, pos, std::string::npos);
  return true;
}

std::string nvrtc_error(const NvrtcApi& api, nvrtcResult rc) {
  const char* s = api.GetErrorString(rc);
  return s ? s : cat("NVRTC_ERROR_", rc);
}

std::string program_log(const NvrtcApi& api, nvrtcProgram prog) {
  std::size_t n = 0;
  if (api.GetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n <= 1) return {};
  std::string log(n, '\0');
  api.GetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

struct ProgramHandle {
  const NvrtcApi& api;
  nvrtcProgram prog = nullptr;
  ~ProgramHandle() {
    if (prog) api.DestroyProgram(&prog);
  }
};

void nvrtc_check(const NvrtcApi& api, nvrtcResult rc, const char* operation) {
  if (rc != NVRTC_SUCCESS) {
    std::string name = nvrtc_error(api, rc);
    throw CudaError(cat(operation, " failed: ", name, " (", rc, ")"), rc, name, operation, false);
  }
}

std::string output(const NvrtcApi& api, nvrtcProgram prog, CodeKind target) {
  auto size_fn = target == CodeKind::ptx     ? api.GetPTXSize
                 : target == CodeKind::cubin ? api.GetCUBINSize
                                             : api.GetLTOIRSize;
  auto get_fn = target == CodeKind::ptx ? api.GetPTX : target == CodeKind::cubin ? api.GetCUBIN : api.GetLTOIR;
  if (!size_fn || !get_fn) throw NotImplementedError("this NVRTC cannot emit LTO-IR (needs CUDA 12.0 or newer)");
  std::size_t n = 0;
  nvrtc_check(api, size_fn(prog, &n), "nvrtcGet*Size");
  std::string code(n, '\0');
  nvrtc_check(api, get_fn(prog, code.data()), "nvrtcGet*");
  if (target == CodeKind::ptx && !code.empty() && code.back() == '\0') code.pop_back();
  return code;
}

/// The entry under `key` as an ObjectCode (with its PTX for an entry of a cubin with its PTX),
/// or nothing when there is none or it does not parse.
std::optional<ObjectCode> cached(CompileCache& cache, const std::string& key, bool with_ptx, CodeKind target,
                                 const std::string& name) {
  auto hit = cache.get(ArtifactKind::nvrtc, key);
  if (!hit) return std::nullopt;
  std::map<std::string, std::string> lowered;
  std::string log, ptx, code;
  if (!deserialize(*hit, lowered, log, with_ptx ? &ptx : nullptr, code)) return std::nullopt;
  return ObjectCode(target, std::move(code), name, std::move(lowered), std::move(log), std::move(ptx));
}

/// What an NVRTC run leaves besides its outputs (read from the program afterwards).
struct Compiled {
  std::string log;
  std::map<std::string, std::string> lowered;
};

/// Compiles `source` into `h` (created here); CompileError with the log when NVRTC refuses it.
Compiled run_nvrtc(ProgramHandle& h, const std::string& source, const std::string& name, const std::string& arch,
                   const std::vector<std::string>& args, const std::vector<std::string>& name_expressions) {
  const NvrtcApi& api = h.api;
  Compiled c;
  nvrtc_check(api, api.CreateProgram(&h.prog, source.c_str(), name.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  for (const auto& n : name_expressions)
    nvrtc_check(api, api.AddNameExpression(h.prog, n.c_str()), "nvrtcAddNameExpression");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  nvrtcResult rc = api.CompileProgram(h.prog, static_cast<int>(argv.size()), argv.data());
  c.log = program_log(api, h.prog);
  if (rc != NVRTC_SUCCESS) {
    std::string error = nvrtc_error(api, rc);
    std::string flags;
    for (const auto& a : args) flags += " " + a;
    throw CompileError(
        cat("NVRTC could not compile '", name, "' for ", arch, " (", error, "); options:", flags, "\n", c.log), rc,
        error, "nvrtcCompileProgram", c.log);
  }
  for (const auto& n : name_expressions) {
    const char* mangled = nullptr;
    nvrtc_check(api, api.GetLoweredName(h.prog, n.c_str(), &mangled), "nvrtcGetLoweredName");
    c.lowered[n] = mangled;
  }
  return c;
}

}  // namespace

Program::Program(std::string source, std::string name, ProgramOptions options)
    : source_(std::move(source)), name_(std::move(name)), options_(std::move(options)) {}

std::string Program::resolved_arch() const {
  if (!options_.arch.empty()) {
    auto [number, suffix] = parse_arch(options_.arch);
    return cat("sm_", number, suffix);
  }
  if (!is_available())
    throw ValueError("Program: no arch given and no CUDA device to take it from: pass arch='sm_90' (or another)");
  return Device::current().properties().arch;
}

std::string Program::cache_key(CodeKind target, const std::vector<std::string>& name_expressions,
                               const std::string& nvrtc_version, bool with_ptx) const {
  std::string args, names;
  for (const auto& a : nvrtc_arguments(options_, target, resolved_arch())) args += a + '\0';
  for (const auto& n : name_expressions) names += n + '\0';
  const std::string kind = cat(code_kind_name(target), with_ptx ? "+ptx" : "");
  return CompileCache::make_key({"cupric-nvrtc-1", nvrtc_version, kind, name_, args, names, source_});
}

ObjectCode Program::compile(CodeKind target, const std::vector<std::string>& name_expressions, bool use_cache,
                            bool with_ptx) const {
  with_ptx = with_ptx && target == CodeKind::cubin;  // a PTX compile is its own PTX; LTO-IR has none
  const std::int64_t t0 = profiler::recording() ? profiler::now_ns() : 0;
  auto profiled = [&](const char* outcome, const ObjectCode& code) {  // the profiler's compile record
    if (t0)
      profiler::record_span(profiler::EventKind::compile, "nvrtc " + name_, t0, outcome, 0, -1, 0,
                            static_cast<std::int64_t>(code.code().size()));
    return code;
  };
  const NvrtcApi& api = nvrtc();
  std::string key;
  CompileCache& cache = CompileCache::global();
  const std::string version = cat(api.major, ".", api.minor);
  if (use_cache) {
    key = cache_key(target, name_expressions, version, with_ptx);
    if (auto hit = cached(cache, key, with_ptx, target, name_)) return profiled("cached", *hit);
  }
  const std::string arch = resolved_arch();
  ProgramHandle h{api};
  Compiled c = run_nvrtc(h, source_, name_, arch, nvrtc_arguments(options_, target, arch), name_expressions);
  std::string code = output(api, h.prog, target);
  // NVRTC keeps the PTX of an sm_XX compile too: one compile gives both
  std::string ptx = with_ptx ? output(api, h.prog, CodeKind::ptx) : std::string();
  if (use_cache) {
    cache.put(ArtifactKind::nvrtc, key, serialize(c.lowered, c.log, with_ptx ? &ptx : nullptr, code));
    if (with_ptx)  // the same cubin for later plain requests (one lookup each, as every compile)
      cache.put(ArtifactKind::nvrtc, cache_key(target, name_expressions, version),
                serialize(c.lowered, c.log, nullptr, code));
  }
  return profiled("compiled",
                  ObjectCode(target, std::move(code), name_, std::move(c.lowered), std::move(c.log), std::move(ptx)));
}

}  // namespace cupric::runtime
