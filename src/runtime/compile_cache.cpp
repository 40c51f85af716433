// compile_cache.cpp — the two tiers of the compile cache. A disk entry is one file
// <dir>/v2/<kind>/<key[:2]>/<key>.bin: a header (magic, kind, lengths, SHA-256 of kind, key and
// payload), the key, the payload. It is used only if it is a regular file of this user's that no
// one else may write and its hash matches; the file's mtime is its last use (LRU trimming).
#include "cupric/runtime/compile_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/runtime/cache_files.hpp"
#include "runtime/sha256.hpp"

namespace cupric::runtime {
namespace fs = std::filesystem;
namespace {

constexpr std::array<ArtifactKindInfo, kArtifactKinds> kKinds = {{
    {ArtifactKind::nvrtc, "nvrtc", true, "NVRTC output of cupric.cuda.Program (array kernels, your programs)"},
    {ArtifactKind::cubin, "cubin", true, "tile kernels compiled for the GPU"},
    {ArtifactKind::shared_object, "shared_object", true, "tile kernels compiled for the CPU"},
    {ArtifactKind::precompiled_header, "precompiled_header", false, "GCC's precompiled tile.h"},
    {ArtifactKind::index, "index", true, "tile kernels' launch facts (a new process skips the frontend)"},
    {ArtifactKind::autotune, "autotune", true, "@ct.autotune's choices"},
    {ArtifactKind::compiler, "compiler", true, "what probing the host C++ compiler found"},
    {ArtifactKind::headers, "headers", true, "hashes of the device header library"},
}};
constexpr bool kinds_in_order() {
  for (std::size_t i = 0; i < kKinds.size(); ++i)
    if (static_cast<std::size_t>(kKinds[i].kind) != i) return false;
  return true;
}
static_assert(kinds_in_order());

constexpr char kMagic[8] = {'C', 'U', 'P', 'R', 'I', 'C', 'E', '2'};
constexpr std::uint64_t kDefaultMaxDisk = 2ull << 30;
constexpr std::uint64_t kDefaultMaxMemory = 256ull << 20;
constexpr std::int64_t kTouchAfterSeconds = 60;           // refresh a hit's mtime at most once a minute
constexpr const char* kLegacyFolders[] = {"v1", "tile"};  // layouts of earlier versions

struct Header {
  char magic[8];
  std::uint32_t kind;
  std::uint32_t key_length;
  std::uint64_t length;
  std::uint8_t sha256[32];
};

std::array<std::uint8_t, 32> entry_digest(ArtifactKind kind, std::string_view key, std::string_view payload) {
  Sha256 h;
  h.update_part(artifact_kind_name(kind));
  h.update_part(key);
  h.update_part(payload);
  return h.digest();
}

/// Up to `size` bytes of `fd` (fewer if the file shrank meanwhile).
std::string read_up_to(int fd, std::size_t size) {
  std::string bytes(size, '\0');
  std::size_t at = 0;
  while (at < size) {
    ssize_t got = ::read(fd, bytes.data() + at, size - at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    at += static_cast<std::size_t>(got);
  }
  bytes.resize(at);
  return bytes;
}

/// Reads the entry open as `fd` (`size` bytes) and checks it against its kind, key, length and
/// hash: "" and the payload, or why it is unusable.
std::string read_entry(int fd, std::size_t size, ArtifactKind kind, const std::string& key, std::string& payload) {
  Header h;
  const std::string head = read_up_to(fd, std::min(size, sizeof h + key.size()));
  if (head.size() < sizeof h) return "it is truncated";
  std::memcpy(&h, head.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return "it is not a cupric cache entry";
  if (h.kind != static_cast<std::uint32_t>(kind) || h.key_length != key.size())
    return "it holds another entry than its name says";
  if (head.size() < sizeof h + key.size()) return "it is truncated";
  if (head.compare(sizeof h, key.size(), key) != 0) return "it holds another entry than its name says";
  if (size - sizeof h - key.size() != h.length) return "it is truncated or has bytes appended";
  payload = read_up_to(fd, h.length);  // read once, into the value itself: precompiled headers are 50 MB
  if (payload.size() != h.length) return "it is truncated";
  if (std::memcmp(entry_digest(kind, key, payload).data(), h.sha256, sizeof h.sha256) != 0)
    return "its content does not match its SHA-256";
  return {};
}

std::string encode_entry(ArtifactKind kind, const std::string& key, std::string_view payload) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.kind = static_cast<std::uint32_t>(kind);
  h.key_length = static_cast<std::uint32_t>(key.size());
  h.length = payload.size();
  auto digest = entry_digest(kind, key, payload);
  std::memcpy(h.sha256, digest.data(), digest.size());
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  return out.append(key).append(payload);
}

struct DiskFile {
  fs::path path;
  std::uint64_t size;
  fs::file_time_type used;
};

/// The files under `root` (entries only: *.bin), without following symbolic links.
std::vector<DiskFile> list_files(const fs::path& root, bool entries_only = true) {
  std::vector<DiskFile> out;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root, ec))) return out;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec) || (entries_only && it->path().extension() != ".bin")) continue;
    std::error_code e2;
    auto size = it->file_size(e2);
    auto used = it->last_write_time(e2);
    if (!e2) out.push_back({it->path(), size, used});
  }
  return out;
}

CacheUsage usage_of(const std::vector<DiskFile>& files) {
  CacheUsage u;
  for (const auto& f : files) ++u.entries, u.bytes += f.size;
  return u;
}

std::uint64_t max_bytes_from_env() {
  const char* v = std::getenv("CUPRIC_CACHE_MAX_BYTES");
  if (v == nullptr || *v == '\0') return kDefaultMaxDisk;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' ? n : kDefaultMaxDisk;
}

std::string memory_id(ArtifactKind kind, const std::string& key) { return cat(artifact_kind_name(kind), "/", key); }

std::mutex g_handler_mutex;
CompileCache::WarningHandler* g_handler = nullptr;  // null: stderr

}  // namespace

const std::array<ArtifactKindInfo, kArtifactKinds>& artifact_kinds() { return kKinds; }

const char* artifact_kind_name(ArtifactKind kind) { return kKinds[static_cast<std::size_t>(kind)].name; }

ArtifactKind artifact_kind_from_name(std::string_view name) {
  std::string names;
  for (const auto& k : kKinds) {
    if (name == k.name) return k.kind;
    names += cat(names.empty() ? "" : ", ", "'", k.name, "'");
  }
  throw ValueError(cat("unknown compile cache kind '", name, "': expected one of ", names));
}

CompileCache::CompileCache(std::string directory, std::uint64_t max_disk_bytes, std::uint64_t max_memory_bytes)
    : requested_(std::move(directory)), max_disk_bytes_(max_disk_bytes), max_memory_bytes_(max_memory_bytes) {}

CompileCache& CompileCache::global() {
  // Never destroyed: kernels may be compiled from other static destructors at exit.
  static CompileCache* cache = [] {
    auto* c = new CompileCache("", kDefaultMaxDisk, kDefaultMaxMemory);
    c->configure_from_environment();
    return c;
  }();
  return *cache;
}

void CompileCache::configure_from_environment() {
  std::lock_guard lock(mutex_);
  requested_ = cache_directory_from_environment();
  max_disk_bytes_ = max_bytes_from_env();
  checked_ = disk_scanned_ = warned_write_ = false;
}

std::string CompileCache::make_key(std::initializer_list<std::string_view> parts) {
  Sha256 h;
  for (auto p : parts) h.update_part(p);
  return h.hex_digest();
}

void CompileCache::check_key(std::string_view key) {
  const bool ok = !key.empty() && key.size() <= 128 && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
  });
  if (!ok)
    throw ValueError(cat("a compile cache key is 1 to 128 characters of 0-9, a-z, A-Z, '_' and '-' (it names a ",
                         "file); got '", key.substr(0, 200), "'"));
}

void CompileCache::set_warning_handler(WarningHandler handler) {
  std::lock_guard lock(g_handler_mutex);
  delete g_handler;
  g_handler = handler ? new WarningHandler(std::move(handler)) : nullptr;
}

void CompileCache::warn(const std::string& message) {
  WarningHandler handler;
  {
    std::lock_guard lock(g_handler_mutex);
    if (g_handler) handler = *g_handler;
  }
  if (handler) return handler(message);
  std::fprintf(stderr, "cupric: warning: %s\n", message.c_str());
}

std::string CompileCache::disk_directory() {
  std::string warning, dir;
  {
    std::lock_guard lock(mutex_);
    if (!checked_) {
      CacheDirectory d = secure_cache_directory(requested_);
      directory_ = d.path, note_ = d.note, warning = d.warning;
      checked_ = true;
      disk_scanned_ = false;
    }
    dir = directory_;
  }
  if (!warning.empty()) warn(warning);
  return dir;
}

std::string CompileCache::path_for(const std::string& dir, ArtifactKind kind, const std::string& key) const {
  return cat(dir, "/v2/", artifact_kind_name(kind), "/", key.substr(0, 2), "/", key, ".bin");
}

void CompileCache::remember(const std::string& id, Value value) {
  // caller holds mutex_
  if (value->size() > max_memory_bytes_) return;
  auto it = memory_.find(id);
  if (it != memory_.end()) {
    stats_.memory_bytes -= it->second.value->size();
    lru_.erase(it->second.position);
    memory_.erase(it);
  }
  lru_.push_front(id);
  memory_.emplace(id, Entry{value, lru_.begin()});
  stats_.memory_bytes += value->size();
  while (stats_.memory_bytes > max_memory_bytes_ && !lru_.empty()) {
    auto victim = memory_.find(lru_.back());
    stats_.memory_bytes -= victim->second.value->size();
    memory_.erase(victim);
    lru_.pop_back();
  }
  stats_.memory_entries = memory_.size();
}

CompileCache::Value CompileCache::get(ArtifactKind kind, const std::string& key) {
  check_key(key);
  const std::int64_t t0 = profiler::recording() ? profiler::now_ns() : 0;
  auto profiled = [&](const char* outcome) {  // the profiler's compile records: lookups, hit or miss
    if (t0) profiler::record_span(profiler::EventKind::compile, cat("cache ", artifact_kind_name(kind)), t0, outcome);
  };
  const std::string id = memory_id(kind, key);
  {
    std::lock_guard lock(mutex_);
    auto it = memory_.find(id);
    if (it != memory_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.position);
      ++stats_.memory_hits;
      profiled("hit memory");
      return it->second.value;
    }
  }
  const std::string dir = disk_directory();
  const std::string path = dir.empty() ? std::string() : path_for(dir, kind, key);
  Value value;
  std::string problem;
  const Read read = dir.empty() ? Read::missing : read_disk(path, kind, key, value, problem);
  {
    std::lock_guard lock(mutex_);
    if (read == Read::hit) {
      ++stats_.disk_hits;
      if (artifact_kinds()[static_cast<std::size_t>(kind)].in_memory) remember(id, value);
    } else {
      ++stats_.misses;
      stats_.disk_errors += read == Read::rejected;
    }
  }
  if (read == Read::rejected)
    warn(cat("deleted the compile cache entry ", path, ": ", problem, "; it will be rebuilt"));
  profiled(read == Read::hit ? "hit disk" : "miss");
  return read == Read::hit ? value : nullptr;
}

CompileCache::Read CompileCache::read_disk(const std::string& path, ArtifactKind kind, const std::string& key,
                                           Value& value, std::string& problem) {
  // O_NOFOLLOW: not through a link; O_NONBLOCK: a FIFO in its place cannot hang the open
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) return Read::missing;
  struct stat st;
  if (fd < 0) {
    problem = errno == ELOOP ? "it is a symbolic link" : cat("it cannot be opened (", std::strerror(errno), ")");
  } else if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    problem = "it is not a regular file";
  } else if (std::string p = ownership_problem(st); !p.empty()) {
    problem = "it " + p;
  } else {
    auto payload = std::make_shared<std::string>();
    problem = read_entry(fd, static_cast<std::size_t>(st.st_size), kind, key, *payload);
    value = std::move(payload);
    if (problem.empty() && ::time(nullptr) - st.st_mtime > kTouchAfterSeconds) ::futimens(fd, nullptr);  // LRU
  }
  if (fd >= 0) ::close(fd);
  if (problem.empty()) return Read::hit;
  value = nullptr;
  ::unlink(path.c_str());
  return Read::rejected;
}

void CompileCache::put(ArtifactKind kind, const std::string& key, std::string_view value) {
  check_key(key);
  auto stored = std::make_shared<const std::string>(value);
  {
    std::lock_guard lock(mutex_);
    ++stats_.stores;
    if (artifact_kinds()[static_cast<std::size_t>(kind)].in_memory) remember(memory_id(kind, key), stored);
  }
  write_disk(kind, key, value);
}

void CompileCache::remove(ArtifactKind kind, const std::string& key) {
  check_key(key);
  const std::string id = memory_id(kind, key);
  {
    std::lock_guard lock(mutex_);
    auto it = memory_.find(id);
    if (it != memory_.end()) {
      stats_.memory_bytes -= it->second.value->size();
      lru_.erase(it->second.position);
      memory_.erase(it);
      stats_.memory_entries = memory_.size();
    }
  }
  if (const std::string dir = disk_directory(); !dir.empty()) ::unlink(path_for(dir, kind, key).c_str());
}

void CompileCache::write_disk(ArtifactKind kind, const std::string& key, std::string_view value) {
  static std::atomic<std::uint64_t> counter{0};
  const std::string dir = disk_directory();
  if (dir.empty()) return;
  const std::string kind_dir = cat(dir, "/v2/", artifact_kind_name(kind));
  int error = make_private_directory(dir + "/v2", artifact_kind_name(kind));
  if (!error) error = make_private_directory(kind_dir, key.substr(0, 2));
  const std::string path = path_for(dir, kind, key);
  const std::string tmp = cat(path, ".tmp.", ::getpid(), ".", counter++);
  const std::string bytes = encode_entry(kind, key, value);
  if (!error) error = write_new_file(tmp, bytes);
  // atomic: readers see the old file or the new one, never a part
  if (!error && ::rename(tmp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(tmp.c_str());
  }
  after_write(error == 0, error, dir, bytes.size());
}

void CompileCache::after_write(bool ok, int error, const std::string& dir, std::uint64_t bytes) {
  std::string warning;
  bool trim = false;
  std::uint64_t target = 0;
  {
    std::lock_guard lock(mutex_);
    if (!ok) {
      ++stats_.disk_errors;
      const bool denied = error == EACCES || error == EPERM || error == EROFS;
      if (denied && directory_ == dir) {  // the folder became unwritable: stop trying
        directory_.clear();
        const std::string why =
            cat("the compile cache folder ", dir, " cannot be written (", std::strerror(error), ")");
        note_ = "memory only: " + why;
        warning = why + ": compiled code is kept in memory for this process";
      } else if (!warned_write_) {
        warned_write_ = true;
        warning = cat("cannot write to the compile cache folder ", dir, " (", std::strerror(error),
                      "): what is compiled now is kept in memory only");
      }
    } else {
      if (!disk_scanned_) {
        disk_scanned_ = true;
        disk_bytes_estimate_ = usage_of(list_files(fs::path(dir) / "v2")).bytes;
      } else {
        disk_bytes_estimate_ += bytes;
      }
      trim = disk_bytes_estimate_ > max_disk_bytes_;
      target = max_disk_bytes_ / 10 * 8;
    }
  }
  if (!warning.empty()) warn(warning);
  if (trim) trim_disk(target);
}

std::uint64_t CompileCache::trim_disk(std::uint64_t target) {
  const std::string dir = disk_directory();
  if (dir.empty()) return 0;
  auto files = list_files(fs::path(dir) / "v2");
  std::sort(files.begin(), files.end(), [](const DiskFile& a, const DiskFile& b) { return a.used < b.used; });
  std::uint64_t total = usage_of(files).bytes, removed = 0;
  for (const auto& f : files) {
    if (total <= target) break;
    std::error_code ec;
    if (fs::remove(f.path, ec)) ++removed;
    total -= f.size;  // gone either way (another process may have removed it first)
  }
  std::lock_guard lock(mutex_);
  stats_.disk_evictions += removed;
  disk_bytes_estimate_ = total;
  disk_scanned_ = true;
  return removed;
}

std::uint64_t CompileCache::disk_usage() {
  const std::string dir = disk_directory();
  return dir.empty() ? 0 : usage_of(list_files(fs::path(dir) / "v2")).bytes;
}

CompileCacheInfo CompileCache::info() {
  CompileCacheInfo out;
  out.directory = disk_directory();
  {
    std::lock_guard lock(mutex_);
    out.note = note_;
    out.max_disk_bytes = max_disk_bytes_;
  }
  if (out.directory.empty()) return out;
  for (const auto& k : artifact_kinds())
    out.kinds[static_cast<std::size_t>(k.kind)] = usage_of(list_files(fs::path(out.directory) / "v2" / k.name));
  for (const char* legacy : kLegacyFolders) {
    CacheUsage u = usage_of(list_files(fs::path(out.directory) / legacy, false));
    out.legacy.entries += u.entries, out.legacy.bytes += u.bytes;
  }
  return out;
}

CompileCacheStats CompileCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CompileCache::clear(bool memory, bool disk) {
  {
    std::lock_guard lock(mutex_);
    if (memory) {
      memory_.clear();
      lru_.clear();
      stats_.memory_bytes = stats_.memory_entries = 0;
    }
    if (disk) disk_bytes_estimate_ = 0;
  }
  const std::string dir = disk ? disk_directory() : std::string();
  if (dir.empty()) return;
  std::error_code ec;
  fs::remove_all(fs::path(dir) / "v2", ec);
  for (const char* legacy : kLegacyFolders) fs::remove_all(fs::path(dir) / legacy, ec);
  make_private_directory(dir, "v2");
}

std::string CompileCache::directory() { return disk_directory(); }

void CompileCache::set_directory(std::string directory) {
  {
    std::lock_guard lock(mutex_);
    requested_ = std::move(directory);
    checked_ = disk_scanned_ = warned_write_ = false;
  }
  disk_directory();  // check it now: its warning belongs to this call
}

std::uint64_t CompileCache::max_disk_bytes() const {
  std::lock_guard lock(mutex_);
  return max_disk_bytes_;
}

void CompileCache::set_max_disk_bytes(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  max_disk_bytes_ = bytes;
}

}  // namespace cupric::runtime
