// compile_cache.cpp — the two tiers of the compile cache. Disk entries are single files
// <dir>/v1/<key[:2]>/<key>.bin holding a header (magic, length, checksum) and the payload; the
// file's mtime is its last use, which drives least-recently-used trimming.
#include "runtime/compile_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "runtime/sha256.hpp"

namespace cupric::runtime {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'C', 'U', 'P', 'R', 'I', 'C', 'K', '1'};
constexpr std::uint64_t kDefaultMaxDisk = 2ull << 30;
constexpr std::uint64_t kDefaultMaxMemory = 256ull << 20;
constexpr std::int64_t kTouchAfterSeconds = 60;  // refresh a hit's mtime at most once a minute

struct Header {
  char magic[8];
  std::uint64_t length;
  std::uint64_t checksum;
};

std::uint64_t fnv1a(std::string_view data) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string env_or(const char* name, const char* fallback, bool* set = nullptr) {
  const char* v = std::getenv(name);
  if (set) *set = v != nullptr;
  return v ? v : fallback;
}

std::string default_directory() {
  bool set = false;
  std::string dir = env_or("CUPRIC_CACHE_DIR", "", &set);
  if (set) return dir;  // explicitly empty: no disk cache
  std::string xdg = env_or("XDG_CACHE_HOME", "");
  if (!xdg.empty()) return xdg + "/cupric";
  std::string home = env_or("HOME", "");
  return home.empty() ? std::string() : home + "/.cache/cupric";
}

bool disk_disabled_by_env() {
  std::string v = env_or("CUPRIC_DISABLE_DISK_CACHE", "");
  return !v.empty() && v != "0";
}

std::uint64_t max_bytes_from_env() {
  std::string v = env_or("CUPRIC_CACHE_MAX_BYTES", "");
  if (v.empty()) return kDefaultMaxDisk;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  return end && *end == '\0' ? n : kDefaultMaxDisk;
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w, n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, std::size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= static_cast<std::size_t>(r);
  }
  return true;
}

struct DiskFile {
  fs::path path;
  std::uint64_t size;
  fs::file_time_type used;
};

std::vector<DiskFile> list_entries(const std::string& directory) {
  std::vector<DiskFile> out;
  std::error_code ec;
  fs::path root = fs::path(directory) / "v1";
  if (!fs::exists(root, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".bin") continue;
    std::error_code e2;
    auto size = it->file_size(e2);
    auto used = it->last_write_time(e2);
    if (!e2) out.push_back({it->path(), size, used});
  }
  return out;
}

}  // namespace

CompileCache::CompileCache(std::string directory, std::uint64_t max_disk_bytes, std::uint64_t max_memory_bytes)
    : directory_(std::move(directory)), max_disk_bytes_(max_disk_bytes), max_memory_bytes_(max_memory_bytes) {}

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
  directory_ = disk_disabled_by_env() ? std::string() : default_directory();
  max_disk_bytes_ = max_bytes_from_env();
  disk_scanned_ = false;
}

std::string CompileCache::make_key(std::initializer_list<std::string_view> parts) {
  Sha256 h;
  for (auto p : parts) h.update_part(p);
  return h.hex_digest();
}

std::string CompileCache::path_for(const std::string& key) const {
  return directory_ + "/v1/" + key.substr(0, 2) + "/" + key + ".bin";
}

void CompileCache::remember(const std::string& key, Value value) {
  // caller holds mutex_
  if (value->size() > max_memory_bytes_) return;
  auto it = memory_.find(key);
  if (it != memory_.end()) {
    stats_.memory_bytes -= it->second.value->size();
    lru_.erase(it->second.position);
    memory_.erase(it);
  }
  lru_.push_front(key);
  memory_.emplace(key, Entry{value, lru_.begin()});
  stats_.memory_bytes += value->size();
  while (stats_.memory_bytes > max_memory_bytes_ && !lru_.empty()) {
    auto victim = memory_.find(lru_.back());
    stats_.memory_bytes -= victim->second.value->size();
    memory_.erase(victim);
    lru_.pop_back();
  }
  stats_.memory_entries = memory_.size();
}

CompileCache::Value CompileCache::get(const std::string& key) {
  {
    std::lock_guard lock(mutex_);
    auto it = memory_.find(key);
    if (it != memory_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.position);
      ++stats_.memory_hits;
      return it->second.value;
    }
  }
  Value value = read_disk(key);
  std::lock_guard lock(mutex_);
  if (!value) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.disk_hits;
  remember(key, value);
  return value;
}

CompileCache::Value CompileCache::read_disk(const std::string& key) {
  std::string path;
  {
    std::lock_guard lock(mutex_);
    if (directory_.empty()) return nullptr;
    path = path_for(key);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  Header header;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && read_all(fd, reinterpret_cast<char*>(&header), sizeof header) &&
            std::memcmp(header.magic, kMagic, sizeof kMagic) == 0 &&
            header.length == static_cast<std::uint64_t>(st.st_size) - sizeof header;
  auto value = std::make_shared<std::string>();
  if (ok) {
    value->resize(header.length);
    ok = read_all(fd, value->data(), header.length) && fnv1a(*value) == header.checksum;
  }
  if (ok && ::time(nullptr) - st.st_mtime > kTouchAfterSeconds) ::futimens(fd, nullptr);  // LRU: mark as used
  ::close(fd);
  if (!ok) {  // truncated or corrupt (a crashed writer cannot leave one: writes are renamed in)
    ::unlink(path.c_str());
    std::lock_guard lock(mutex_);
    ++stats_.disk_errors;
    return nullptr;
  }
  return value;
}

void CompileCache::put(const std::string& key, std::string_view value) {
  auto stored = std::make_shared<const std::string>(value);
  {
    std::lock_guard lock(mutex_);
    ++stats_.stores;
    remember(key, stored);
  }
  write_disk(key, value);
}

void CompileCache::write_disk(const std::string& key, std::string_view value) {
  static std::atomic<std::uint64_t> counter{0};
  std::string path;
  {
    std::lock_guard lock(mutex_);
    if (directory_.empty()) return;
    path = path_for(key);
  }
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  Header header;
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.length = value.size();
  header.checksum = fnv1a(value);
  bool ok = fd >= 0 && write_all(fd, reinterpret_cast<const char*>(&header), sizeof header) &&
            write_all(fd, value.data(), value.size());
  if (fd >= 0) ok = (::close(fd) == 0) && ok;
  ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;  // atomic: readers see the old file or the new one
  if (!ok) ::unlink(tmp.c_str());
  bool trim = false;
  std::uint64_t target = 0;
  {
    std::lock_guard lock(mutex_);
    if (!ok) {
      ++stats_.disk_errors;
      return;
    }
    if (!disk_scanned_) {
      disk_scanned_ = true;
      disk_bytes_estimate_ = 0;
      for (const auto& f : list_entries(directory_)) disk_bytes_estimate_ += f.size;
    } else {
      disk_bytes_estimate_ += value.size() + sizeof(Header);
    }
    trim = disk_bytes_estimate_ > max_disk_bytes_;
    target = max_disk_bytes_ / 10 * 8;
  }
  if (trim) trim_disk(target);
}

std::uint64_t CompileCache::trim_disk(std::uint64_t target) {
  std::string dir = directory();
  if (dir.empty()) return 0;
  auto files = list_entries(dir);
  std::sort(files.begin(), files.end(), [](const DiskFile& a, const DiskFile& b) { return a.used < b.used; });
  std::uint64_t total = 0, removed = 0;
  for (const auto& f : files) total += f.size;
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

std::uint64_t CompileCache::disk_usage() const {
  std::uint64_t total = 0;
  for (const auto& f : list_entries(directory())) total += f.size;
  return total;
}

CompileCacheStats CompileCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CompileCache::clear(bool memory, bool disk) {
  std::string dir;
  {
    std::lock_guard lock(mutex_);
    if (memory) {
      memory_.clear();
      lru_.clear();
      stats_.memory_bytes = stats_.memory_entries = 0;
    }
    dir = directory_;
    if (disk) disk_bytes_estimate_ = 0;
  }
  if (disk && !dir.empty()) {
    std::error_code ec;
    fs::remove_all(fs::path(dir) / "v1", ec);
  }
}

std::string CompileCache::directory() const {
  std::lock_guard lock(mutex_);
  return directory_;
}

void CompileCache::set_directory(std::string directory) {
  std::lock_guard lock(mutex_);
  directory_ = std::move(directory);
  disk_scanned_ = false;
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
