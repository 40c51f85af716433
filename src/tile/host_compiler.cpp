// host_compiler.cpp — finds the system C++ compiler and compiles generated kernels into shared
// objects kept in the compile cache (key: source, compiler version, flags with the instruction set,
// header library).
// The compiler runs through posix_spawn with an argument vector: no text from the environment or
// the cache ever reaches a shell.
#include "cupric/tile_compiler/host_compiler.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "cupric/cpu_dispatch.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/cache_files.hpp"
#include "cupric/runtime/compile_cache.hpp"

extern char** environ;

namespace cupric::tile {

namespace fs = std::filesystem;
using runtime::ArtifactKind;
using runtime::CompileCache;

namespace {

/// Runs argv[0] (searched on PATH) with exactly these arguments, stdin from /dev/null; returns
/// its exit status (-1 when it could not run or was killed) and its stdout and stderr together.
int run_program(const std::vector<std::string>& argv, std::string& output) {
  output.clear();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    output = cat("cannot run ", argv[0], ": ", std::strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    output = cat("cannot run ", argv[0], ": ", std::strerror(rc));
    return -1;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string joined(const std::vector<std::string>& words, char separator = ' ') {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : std::string(1, separator)) + w;
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 || line.rfind("CPU part", 0) == 0) return line;
  return "unknown cpu";
}

/// The compiler executable's resolved path, size and mtime (empty if not found on PATH): a probe
/// kept under this signature stays valid until the compiler changes.
std::string compiler_signature(const std::string& program) {
  std::vector<std::string> candidates;
  if (program.find('/') != std::string::npos) {
    candidates.push_back(program);
  } else if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) candidates.push_back(dir + "/" + program);
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    const fs::path real = fs::canonical(c, ec);
    if (ec || !fs::is_regular_file(real, ec)) continue;
    const auto size = fs::file_size(real, ec);
    const auto mtime = fs::last_write_time(real, ec).time_since_epoch().count();
    return cat(real.string(), "|", size, "|", mtime);
  }
  return {};
}

/// The instruction set kernels are compiled for: the CPU kernels' variant in use (cupric/cpu_dispatch.hpp),
/// so CUPRIC_CPU_TARGETS lowers both, and a kernel never uses an instruction the CPU lacks.
std::vector<std::string> target_flags() {
  const cpu::CpuTarget v = cpu::cpu_target();
  if (!*v.march) return {};
  std::vector<std::string> f = {cat("-march=", v.march)};
  if (std::string(v.name) == "avx512") f.push_back("-mprefer-vector-width=512");
  return f;
}

/// What every kernel is compiled with: fixed here, never read back from the cache.
std::vector<std::string> compiler_flags(bool libmvec) {
  std::vector<std::string> f = {
      "-std=c++20", "-O3", "-fPIC", "-shared", "-fvisibility=hidden", "-fno-math-errno", "-fno-trapping-math", "-w"};
  for (auto& t : target_flags()) f.push_back(std::move(t));
  if (libmvec) f.push_back("-DCUPRIC_TILE_LIBMVEC");
  return f;
}

void probe_compiler(HostCompiler& c) {
  std::string out;
  std::vector<std::string> argv = c.argv;
  argv.push_back("--version");
  if (run_program(argv, out) != 0 || out.empty()) {
    c.problem = cat("no C++ compiler: `", c.command, " --version` failed (set CXX to a C++20 compiler)");
    return;
  }
  c.version = out.substr(0, out.find('\n'));
  c.gcc = out.find("Free Software Foundation") != std::string::npos || c.version.find("g++") != std::string::npos ||
          c.version.find("GCC") != std::string::npos;
#if defined(__x86_64__)
  argv.back() = "-print-file-name=libmvec.so";
  c.libmvec = run_program(argv, out) == 0 && out.find('/') != std::string::npos;
#endif
  c.available = true;
}

/// The probe's record in the compile cache: version, gcc and libmvec, one a line.
std::string probe_record(const HostCompiler& c) {
  return cat(c.version, "\n", c.gcc ? "1" : "0", "\n", c.libmvec ? "1" : "0", "\n");
}

bool parse_probe_record(const std::string& record, HostCompiler& c) {
  std::vector<std::string> lines;
  std::istringstream in(record);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const auto is_flag = [](const std::string& s) { return s == "0" || s == "1"; };
  const bool printable = std::none_of(record.begin(), record.end(),
                                      [](char ch) { return static_cast<unsigned char>(ch) < 0x20 && ch != '\n'; });
  if (lines.size() != 3 || lines[0].empty() || !printable || !is_flag(lines[1]) || !is_flag(lines[2])) return false;
  c.version = lines[0], c.gcc = lines[1] == "1", c.libmvec = lines[2] == "1", c.available = true;
  return true;
}

/// The probe, from the compile cache when an earlier process kept it (saves two compiler runs per
/// process), else run and kept.
HostCompiler find_compiler() {
  HostCompiler c;
  const char* env = std::getenv("CXX");
  c.command = env && *env ? env : "c++";
  c.argv = split_words(c.command);
  if (c.argv.empty()) {
    c.problem = "no C++ compiler: CXX is blank (set CXX to a C++20 compiler)";
    return c;
  }
  const std::string sig = compiler_signature(c.argv[0]);
  const std::string key = sig.empty() ? "" : CompileCache::make_key({"tile-compiler-2", joined(c.argv, '\0'), sig});
  CompileCache& cache = CompileCache::global();
  if (!key.empty())
    if (auto record = cache.get(ArtifactKind::compiler, key)) {
      if (parse_probe_record(*record, c)) {
        c.flags = compiler_flags(c.libmvec);
        return c;
      }
      cache.remove(ArtifactKind::compiler, key);
      CompileCache::warn(cat("the compile cache's record of the C++ compiler ", c.command,
                             " is not in the expected form; it was deleted and the compiler is probed again"));
    }
  probe_compiler(c);
  c.flags = compiler_flags(c.libmvec);
  if (c.available && !key.empty()) cache.put(ArtifactKind::compiler, key, probe_record(c));
  return c;
}

std::mutex g_compile_mutex;

/// GCC only: tile.h precompiled once per compiler, flags and header library, so that each kernel
/// compiles without re-parsing <cmath> and the library (about 0.6 s -> 0.2 s). It is kept in the
/// compile cache; the compiler reads a verified copy in this process's private folder. Returns
/// the include folder holding cupric/tile/tile.h.gch, or "" when there is none. Called with
/// g_compile_mutex held.
std::string precompiled_header(const HostCompiler& cc, const std::string& include_dir, const std::string& env) {
  if (!cc.gcc || std::getenv("CUPRIC_TILE_NO_PCH")) return {};
  static std::unordered_map<std::string, std::string> ready;  // env -> include folder ("" = none)
  if (auto it = ready.find(env); it != ready.end()) return it->second;
  std::string& root = ready[env];
  const std::string dir = cat(host_work_directory(), "/pch-", env.substr(0, 16));
  if (runtime::make_private_directory(host_work_directory(), "pch-" + env.substr(0, 16)) ||
      runtime::make_private_directory(dir, "cupric") || runtime::make_private_directory(dir + "/cupric", "tile"))
    return root;
  const std::string gch = dir + "/cupric/tile/tile.h.gch";
  CompileCache& cache = CompileCache::global();
  if (auto bytes = cache.get(ArtifactKind::precompiled_header, env)) {
    if (runtime::write_new_file(gch, *bytes) == 0) root = dir;
    return root;
  }
  std::vector<std::string> argv = cc.argv;
  for (const auto& f : cc.flags)
    if (f != "-shared") argv.push_back(f);
  for (const char* a : {"-DCUPRIC_TILE_THREADS=1", "-DCUPRIC_TILE_VEC=1", "-DCUPRIC_TILE_SMEM=0", "-x", "c++-header"})
    argv.push_back(a);
  argv.insert(argv.end(), {"-I" + include_dir, include_dir + "/cupric/tile/tile.h", "-o", gch});
  std::string out, bytes;
  if (run_program(argv, out) != 0 || !runtime::read_whole_file(gch, bytes)) {
    ::unlink(gch.c_str());
    return root;  // no precompiled header: kernels compile without it
  }
  cache.put(ArtifactKind::precompiled_header, env, bytes);
  return root = dir;
}

/// "path|size|mtime_ns" of every regular file under dir (one fstatat each: the listing is on the
/// path of a new process' first launch), appended to out; cupric/kernels (the CUDA backend's kernel
/// bodies, which tile kernels never include) is left out.
void list_files(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0))) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, 0) != 0) continue;
    const std::string path = cat(dir, "/", e->d_name);
    if (S_ISDIR(st.st_mode)) {
      if (std::strcmp(e->d_name, "kernels") != 0) list_files(path, out);
    } else if (S_ISREG(st.st_mode)) {
      out.push_back(cat(path, "|", st.st_size, "|", st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec));
    }
  }
  ::closedir(d);
}

}  // namespace

std::string headers_hash(const std::string& include_dir) {
  static std::mutex m;
  static std::unordered_map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(include_dir);
  if (it != cache.end()) return it->second;
  std::vector<std::string> entries;
  list_files(include_dir + "/cupric", entries);
  std::sort(entries.begin(), entries.end());
  return cache[include_dir] = CompileCache::make_key({joined(entries, '\0')});
}

const HostCompiler& host_compiler() {
  static const HostCompiler c = find_compiler();
  return c;
}

const std::string& host_work_directory() {
  static const std::string dir = [] {
    std::string d = runtime::private_temp_directory("cupric-tile");
    if (d.empty())
      throw std::runtime_error(
          cat("cupric.tile: cannot create a private temporary folder under $TMPDIR (", std::strerror(errno), ")"));
    return d;
  }();
  return dir;
}

std::string host_environment(const std::string& include_dir) {
  // the flags name the instruction set (-march=x86-64-v3); -march=native names none, so the CPU does
  static const std::string cpu = std::string(cpu::cpu_target().march) == "native" ? cpu_model() : "";
  const HostCompiler& cc = host_compiler();
  return CompileCache::make_key(
      {"tile-host-env-3", cc.version, joined(cc.flags), cpu::cpu_target().name, cpu, headers_hash(include_dir)});
}

HostBinary compile_host(const std::string& source, const std::string& include_dir) {
  const HostCompiler& cc = host_compiler();
  if (!cc.available) throw NotImplementedError(cc.problem);
  const std::string env = host_environment(include_dir);
  HostBinary bin;
  bin.key = CompileCache::make_key({"tile-host-so-2", env, source});
  std::lock_guard<std::mutex> lock(g_compile_mutex);  // one compile at a time; a second caller finds the first's
  if (HostKernel::load(bin.key)) {
    bin.cache_hit = true;
    return bin;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string pch = precompiled_header(cc, include_dir, env);
  const std::string src = cat(host_work_directory(), "/", bin.key, ".cpp");
  const std::string out = cat(host_work_directory(), "/", bin.key, ".build.so");
  ::unlink(src.c_str());
  ::unlink(out.c_str());
  if (int e = runtime::write_new_file(src, source))
    throw std::runtime_error(cat("cupric.tile: cannot write ", src, ": ", std::strerror(e)));
  std::vector<std::string> argv = cc.argv;
  argv.insert(argv.end(), cc.flags.begin(), cc.flags.end());
  if (!pch.empty()) argv.push_back("-I" + pch);
  argv.insert(argv.end(), {"-I" + include_dir, "-o", out, src});
  if (cc.libmvec) argv.push_back("-lmvec");
  std::string log, bytes;
  if (run_program(argv, log) != 0 || !runtime::read_whole_file(out, bytes))
    throw std::runtime_error(
        cat("cupric.tile: the C++ compiler failed on the generated kernel ", src, "\n$ ", joined(argv), "\n", log));
  ::unlink(src.c_str());
  ::unlink(out.c_str());
  CompileCache::global().put(ArtifactKind::shared_object, bin.key, bytes);
  HostKernel::load(bin.key, bytes);
  bin.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return bin;
}

}  // namespace cupric::tile
