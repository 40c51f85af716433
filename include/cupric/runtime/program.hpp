// cupric/runtime/program.hpp — CUDA C++ source -> NVRTC -> PTX / cubin / LTO-IR (through the
// compile cache), nvJitLink linking, and ObjectCode: code that loads on a device and gives kernels.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::runtime {

class Kernel;

enum class CodeKind { ptx, cubin, ltoir, fatbin };
const char* code_kind_name(CodeKind kind);
CodeKind code_kind_from_name(const std::string& name);

struct ProgramOptions {
  std::string arch;           ///< "sm_90", "sm_90a", "90", "compute_90a"; empty: current device
  std::string std = "c++17";  ///< C++ standard
  std::vector<std::pair<std::string, std::string>> defines;  ///< -DNAME=VALUE (empty VALUE: -DNAME)
  std::vector<std::string> include_paths;
  bool lineinfo = false;
  bool device_debug = false;
  bool fast_math = false;
  bool relocatable = false;        ///< -rdc (implied by the ltoir target)
  std::vector<std::string> extra;  ///< passed through as they are
};

/// "sm_90a" -> {90, 'a'} style parsing: returns the number and the suffix ("", "a", "f").
std::pair<int, std::string> parse_arch(const std::string& arch);

class ObjectCode {
 public:
  ObjectCode(CodeKind kind, std::string code, std::string name = {},
             std::map<std::string, std::string> lowered_names = {}, std::string log = {}, std::string ptx = {});
  static ObjectCode from_file(const std::string& path, CodeKind kind);

  CodeKind kind() const;
  const std::string& code() const;
  const std::string& name() const;
  const std::string& log() const;
  /// The PTX: the code itself for PTX, the PTX of the same NVRTC run for a cubin compiled
  /// `with_ptx`, else empty.
  const std::string& ptx() const;
  /// Name expression -> mangled name (from Program name_expressions).
  const std::map<std::string, std::string>& lowered_names() const;
  /// The kernel `name` (a name expression or a symbol), loaded on `device` (-1: current).
  Kernel get_kernel(const std::string& name, int device = -1) const;
  /// Loaded module on `device` (loaded at first use, then cached).
  cuda::CUmodule module(int device) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// The argv passed to NVRTC for these options and target (exposed for tests and cache keys).
std::vector<std::string> nvrtc_arguments(const ProgramOptions& options, CodeKind target, const std::string& arch);

class Program {
 public:
  Program(std::string source, std::string name = "program.cu", ProgramOptions options = {});
  /// Compiles to `target`, using the compile cache (in memory, then on disk) unless `use_cache`
  /// is false. `with_ptx` (a cubin only) keeps the PTX NVRTC made on the way, so that one compile
  /// gives both (ObjectCode::ptx). Throws CompileError with NVRTC's log.
  ObjectCode compile(CodeKind target, const std::vector<std::string>& name_expressions = {}, bool use_cache = true,
                     bool with_ptx = false) const;
  /// The cache key of a compile (source, options, name expressions, target, arch, NVRTC version;
  /// a cubin with its PTX has a key of its own).
  std::string cache_key(CodeKind target, const std::vector<std::string>& name_expressions,
                        const std::string& nvrtc_version, bool with_ptx = false) const;
  const std::string& source() const { return source_; }
  const ProgramOptions& options() const { return options_; }
  /// The arch compiled for ("sm_90"): options.arch, else the current device's.
  std::string resolved_arch() const;

 private:
  std::string source_, name_;
  ProgramOptions options_;
};

/// nvJitLink: PTX, cubin, fatbin and LTO-IR in, one cubin (or PTX) out.
class Linker {
 public:
  explicit Linker(std::string arch, std::vector<std::string> options = {});
  void add(const ObjectCode& code);
  ObjectCode link(CodeKind target = CodeKind::cubin) const;

 private:
  std::string arch_;
  std::vector<std::string> options_;
  std::vector<ObjectCode> inputs_;
};

}  // namespace cupric::runtime
