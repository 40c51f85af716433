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

HostCompiler find_compiler() {
  HostCompiler c;
  const char* env = std::getenv("CXX");
  c.command = env && *env ? env : "c++";
  std::string out;
  if (run_command(c.command + " --version", out) != 0 || out.empty()) {
    c.problem = cat("no C++ compiler: `", c.command, " --version` failed (set CXX to a C++20 compiler)");
    return c;
  }
  c.version = out.substr(0, out.find('\n'));
  c.flags = "-std=c++20 -O3 -fPIC -shared -fvisibility=hidden -fno-math-errno -fno-trapping-math -w";
#if defined(__x86_64__) || defined(__aarch64__)
  c.flags += " -march=native";
#endif
#if defined(__x86_64__)
  if (run_command(c.command + " -print-file-name=libmvec.so", out) == 0 && out.find('/') != std::string::npos)
    c.flags += " -DCUPRIC_TILE_LIBMVEC";
#endif
  c.available = true;
  return c;
}

/// Hash of the header library the kernels include (so that editing a header invalidates).
std::string headers_hash(const std::string& include_dir) {
  static std::mutex m;
  static std::unordered_map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(include_dir);
  if (it != cache.end()) return it->second;
  Hash h;
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto i = fs::recursive_directory_iterator(fs::path(include_dir) / "cupric", ec); !ec && i != fs::end(i); i.increment(ec))
    if (i->is_regular_file()) files.push_back(i->path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    h.add(p.filename().string());
    h.add(s.str());
  }
  return cache[include_dir] = h.hex();
}

std::mutex g_compile_mutex;

}  // namespace

const HostCompiler& host_compiler() {
  static const HostCompiler c = find_compiler();
  return c;
}

HostBinary compile_host(const std::string& source, const std::string& include_dir, const std::string& cache_dir) {
  const HostCompiler& cc = host_compiler();
  if (!cc.available) throw NotImplementedError(cc.problem);
  const bool mvec = cc.flags.find("CUPRIC_TILE_LIBMVEC") != std::string::npos;
  Hash h;
  h.add(source);
  h.add(cc.version);
  h.add(cc.flags);
  h.add(cpu_model());
  h.add(headers_hash(include_dir));
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
  const fs::path src = dir / (bin.key + ".cpp");
  std::ofstream(src) << source;
  const std::string tmp = cat(bin.path, ".tmp", getpid());
  const std::string cmd = cat(cc.command, " ", cc.flags, " -I", quote(include_dir), " -o ", quote(tmp), " ", quote(src.string()),
                              mvec ? " -lmvec" : "");
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
