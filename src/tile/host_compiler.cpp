// host_compiler.cpp — finds the system C++ compiler, compiles generated kernels into shared
// objects cached on disk (key: source, compiler version, flags, CPU, header library), loads them
// with dlopen and runs their blocks on the CPU thread pool.
#include "tile/host_compiler.hpp"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "backend/cpu/thread_pool.hpp"
#include "cupric/errors.hpp"

namespace cupric::tile {

namespace fs = std::filesystem;

namespace {

/// Runs a shell command; returns its exit status and combined output.
int run_command(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) output.append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

/// 128-bit FNV-1a (two 64-bit lanes with different offsets) as 32 hex digits.
struct Hash {
  std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  void add(const std::string& s) {
    for (unsigned char c : s) {
      a = (a ^ c) * 0x100000001b3ull;
      b = (b ^ c) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
    a = (a ^ 0xff) * 0x100000001b3ull;  // separator
  }
  std::string hex() const {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
    return buf;
  }
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 || line.rfind("CPU part", 0) == 0) return line;
  return "unknown cpu";
}

/// The compiler executable's resolved path, size and mtime (empty if not a plain command on PATH):
/// a probe saved under this signature stays valid until the compiler changes.
std::string compiler_signature(const std::string& command) {
  if (command.find_first_of(" \t'\"") != std::string::npos) return {};
  std::vector<std::string> candidates;
  if (command.find('/') != std::string::npos) {
    candidates.push_back(command);
  } else if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) candidates.push_back(dir + "/" + command);
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

HostCompiler probe_compiler(const std::string& command) {
  HostCompiler c;
  c.command = command;
  std::string out;
  if (run_command(c.command + " --version", out) != 0 || out.empty()) {
    c.problem = cat("no C++ compiler: `", c.command, " --version` failed (set CXX to a C++20 compiler)");
    return c;
  }
  c.version = out.substr(0, out.find('\n'));
  c.gcc = out.find("Free Software Foundation") != std::string::npos || c.version.find("g++") != std::string::npos ||
          c.version.find("GCC") != std::string::npos;
  c.flags = "-std=c++20 -O3 -fPIC -shared -fvisibility=hidden -fno-math-errno -fno-trapping-math -w";
#if defined(__x86_64__) || defined(__aarch64__)
  c.flags += " -march=native";
#endif
#if defined(__x86_64__)
  c.flags += " -mprefer-vector-width=512";
#endif
#if defined(__x86_64__)
  if (run_command(c.command + " -print-file-name=libmvec.so", out) == 0 && out.find('/') != std::string::npos)
    c.flags += " -DCUPRIC_TILE_LIBMVEC";
#endif
  c.available = true;
  return c;
}

/// The probe, read from `<cache_dir>/tile/compiler-<signature hash>` when an earlier process
/// saved it (saves two compiler runs per process), else run and saved.
HostCompiler find_compiler(const std::string& cache_dir) {
  const char* env = std::getenv("CXX");
  const std::string command = env && *env ? env : "c++";
  const std::string sig = compiler_signature(command);
  fs::path saved;
  if (!sig.empty() && !cache_dir.empty()) {
    Hash h;
    h.add(command);
    h.add(sig);
    saved = fs::path(cache_dir) / "tile" / ("compiler-" + h.hex());
    std::ifstream in(saved);
    HostCompiler c;
    std::string gcc;
    if (in && std::getline(in, c.version) && std::getline(in, c.flags) && std::getline(in, gcc)) {
      c.command = command;
      c.gcc = gcc == "1";
      c.available = true;
      return c;
    }
  }
  HostCompiler c = probe_compiler(command);
  if (c.available && !saved.empty()) {
    std::error_code ec;
    fs::create_directories(saved.parent_path(), ec);
    const std::string tmp = cat(saved.string(), ".tmp", getpid());
    std::ofstream(tmp) << c.version << "\n" << c.flags << "\n" << (c.gcc ? "1" : "0") << "\n";
    fs::rename(tmp, saved, ec);
  }
  return c;
}

/// Hash of the header library the kernels include, from each file's name, size and modification
/// time (so that editing a header invalidates the cache without reading every file per process).
std::string headers_hash(const std::string& include_dir) {
  static std::mutex m;
  static std::unordered_map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(include_dir);
  if (it != cache.end()) return it->second;
  std::vector<std::string> entries;
  std::error_code ec;
  for (auto i = fs::recursive_directory_iterator(fs::path(include_dir) / "cupric", ec); !ec && i != fs::end(i); i.increment(ec)) {
    if (!i->is_regular_file(ec)) continue;
    entries.push_back(cat(i->path().string(), "|", i->file_size(ec), "|", i->last_write_time(ec).time_since_epoch().count()));
  }
  std::sort(entries.begin(), entries.end());
  Hash h;
  for (const auto& e : entries) h.add(e);
  return cache[include_dir] = h.hex();
}

std::mutex g_compile_mutex;

}  // namespace

const HostCompiler& host_compiler(const std::string& cache_dir) {
  static const HostCompiler c = find_compiler(cache_dir);
  return c;
}

namespace {

/// GCC only: tile.h precompiled once per compiler, flags and header library, so that each
/// kernel compiles without re-parsing <cmath> and the library (about 0.6 s -> 0.2 s). Returns
/// the include directory holding cupric/tile/tile.h.gch, or "" when there is none.
std::string precompiled_header(const HostCompiler& cc, const std::string& include_dir, const fs::path& dir,
                               const std::string& key) {
  if (!cc.gcc || std::getenv("CUPRIC_TILE_NO_PCH")) return {};
  const fs::path root = dir / ("pch-" + key);
  const fs::path gch = root / "cupric" / "tile" / "tile.h.gch";
  if (fs::exists(gch)) return root.string();
  std::error_code ec;
  fs::create_directories(gch.parent_path(), ec);
  const std::string tmp = cat(gch.string(), ".tmp", getpid());
  std::string flags = cc.flags;
  if (const auto at = flags.find(" -shared"); at != std::string::npos) flags.erase(at, 8);
  const std::string cmd = cat(cc.command, " ", flags,
                              " -DCUPRIC_TILE_THREADS=1 -DCUPRIC_TILE_VEC=1 -DCUPRIC_TILE_SMEM=0 -x c++-header -I",
                              quote(include_dir), " ", quote(include_dir + "/cupric/tile/tile.h"), " -o ", quote(tmp));
  std::string out;
  if (run_command(cmd, out) != 0) {
    std::remove(tmp.c_str());
    return {};  // no PCH: compile without it
  }
  fs::rename(tmp, gch, ec);
  if (ec) return {};
  // older precompiled headers (other flags or header versions) are ~50 MB each: drop them; a
  // compile that still names one falls back to the plain headers
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().rfind("pch-", 0) == 0 && entry.path() != root) fs::remove_all(entry.path(), ec);
  return root.string();
}

}  // namespace

std::string host_environment(const std::string& include_dir, const std::string& cache_dir) {
  static const std::string cpu = cpu_model();
  const HostCompiler& cc = host_compiler(cache_dir);
  Hash env;
  env.add(cc.version);
  env.add(cc.flags);
  env.add(cpu);
  env.add(headers_hash(include_dir));
  return env.hex();
}

HostBinary compile_host(const std::string& source, const std::string& include_dir, const std::string& cache_dir) {
  const HostCompiler& cc = host_compiler(cache_dir);
  if (!cc.available) throw NotImplementedError(cc.problem);
  const bool mvec = cc.flags.find("CUPRIC_TILE_LIBMVEC") != std::string::npos;
  const std::string env = host_environment(include_dir, cache_dir);
  Hash h;
  h.add(env);
  h.add(source);
  HostBinary bin;
  bin.key = h.hex();
  const fs::path dir = fs::path(cache_dir) / "tile";
  bin.path = (dir / (bin.key + ".so")).string();
  if (fs::exists(bin.path)) {
    bin.cache_hit = true;
    return bin;
  }
  std::lock_guard<std::mutex> lock(g_compile_mutex);
  if (fs::exists(bin.path)) {
    bin.cache_hit = true;
    return bin;
  }
  const auto t0 = std::chrono::steady_clock::now();
  fs::create_directories(dir);
  const std::string pch = precompiled_header(cc, include_dir, dir, env);
  const fs::path src = dir / (bin.key + ".cpp");
  std::ofstream(src) << source;
  const std::string tmp = cat(bin.path, ".tmp", getpid());
  const std::string cmd = cat(cc.command, " ", cc.flags, pch.empty() ? "" : " -I" + quote(pch), " -I", quote(include_dir),
                              " -o ", quote(tmp), " ", quote(src.string()), mvec ? " -lmvec" : "");
  std::string out;
  if (run_command(cmd, out) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(cat("cupric.tile: the C++ compiler failed on the generated kernel ", src.string(), "\n$ ", cmd,
                                 "\n", out));
  }
  fs::rename(tmp, bin.path);
  bin.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return bin;
}

std::shared_ptr<HostKernel> HostKernel::load(const std::string& path) {
  static std::mutex m;
  static auto* loaded = new std::unordered_map<std::string, std::shared_ptr<HostKernel>>();  // never unloaded
  std::lock_guard<std::mutex> lock(m);
  auto it = loaded->find(path);
  if (it != loaded->end()) return it->second;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw std::runtime_error(cat("cupric.tile: cannot load ", path, ": ", dlerror()));
  void* sym = dlsym(handle, "cupric_tile_entry");
  if (!sym) {
    dlclose(handle);
    throw std::runtime_error(cat("cupric.tile: ", path, " has no cupric_tile_entry"));
  }
  std::shared_ptr<HostKernel> k(new HostKernel());
  k->handle_ = handle;
  k->entry_ = reinterpret_cast<cupric_tile_entry_fn>(sym);
  (*loaded)[path] = k;
  return k;
}

HostKernel::~HostKernel() {
  if (handle_) dlclose(handle_);
}

void HostKernel::launch(const std::int64_t grid[3], const std::vector<void*>& args, cupric_tile_status* status) const {
  const long long g[3] = {grid[0], grid[1], grid[2]};
  const std::int64_t total = grid[0] * grid[1] * grid[2];
  if (total <= 0) return;
  cpu::parallel_for(total, 1, [&](std::int64_t begin, std::int64_t end) { entry_(args.data(), g, begin, end, status); });
}

}  // namespace cupric::tile
