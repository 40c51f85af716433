// cache_files.cpp — where the compile cache may live, and the file operations it is built on.
#include "cupric/runtime/cache_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "cupric/errors.hpp"

namespace cupric::runtime {
namespace fs = std::filesystem;
namespace {

std::string env(const char* name, bool* set = nullptr) {
  const char* v = std::getenv(name);
  if (set) *set = v != nullptr;
  return v ? v : "";
}

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

/// Creates every missing folder of the absolute path `path` with mode 0700; 0 or the errno.
int make_private_directories(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return 0;  // the usual case: one call
  std::string prefix;
  for (const auto& part : fs::path(path)) {
    if (part == "/") {
      prefix = "/";
      continue;
    }
    prefix += (prefix.empty() || prefix.back() == '/' ? "" : "/") + part.string();
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  }
  return 0;
}

/// 0 when this process may create files in `dir` (its effective ids' permissions, and EROFS for a
/// read-only file system), else the errno. One access check: creating and removing a probe file
/// cost ~0.1 ms on the first cache lookup of every new process (a tile kernel's first launch).
int probe_writable(const std::string& dir) {
  return ::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) == 0 ? 0 : errno;
}

/// Why the folder `path` must not hold the cache ("" when it may): it must be this user's, and
/// no one else may write it.
std::string folder_problem(const std::string& path, bool follow_links) {
  struct stat st;
  if ((follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0)
    return cat("cannot be examined (", std::strerror(errno), ")");
  if (!S_ISDIR(st.st_mode)) return "is not a folder";
  return ownership_problem(st);
}

std::mutex g_temp_mutex;
std::vector<std::pair<std::string, pid_t>>* g_temp_dirs = nullptr;  // never destroyed: used at exit

void remove_temp_dirs() {
  std::lock_guard lock(g_temp_mutex);
  for (const auto& [path, owner] : *g_temp_dirs) {
    if (owner != ::getpid()) continue;  // a forked child exiting leaves its parent's folders alone
    std::error_code ec;
    fs::remove_all(path, ec);
  }
}

}  // namespace

std::string cache_directory_from_environment() {
  const std::string disabled = env("CUPRIC_DISABLE_DISK_CACHE");
  if (!disabled.empty() && disabled != "0") return {};
  bool set = false;
  std::string dir = env("CUPRIC_CACHE_DIR", &set);
  if (set) return dir;  // explicitly empty: memory only
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/cupric";
  std::string home = env("HOME");
  return home.empty() ? std::string() : home + "/.cache/cupric";
}

std::string ownership_problem(const struct stat& st) {
  if (st.st_uid != ::geteuid()) return cat("belongs to uid ", st.st_uid, ", not to you (uid ", ::geteuid(), ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return cat("can be written by ", (st.st_mode & S_IWOTH) ? "anyone" : "its group", " (mode ", octal_mode(st.st_mode),
               ")");
  return {};
}

CacheDirectory secure_cache_directory(const std::string& requested) {
  if (requested.empty()) return {};
  // an absolute path without "." or ".." parts or doubled slashes is normal already (the usual
  // case, taken without std::filesystem: its first use costs ~0.02 ms of a first launch)
  const std::string ends = requested + "/";
  const bool normal = requested[0] == '/' && ends.find("//") == std::string::npos &&
                      ends.find("/./") == std::string::npos && ends.find("/../") == std::string::npos;
  std::error_code ec;
  std::string path = normal ? requested : fs::absolute(requested, ec).lexically_normal().string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const auto memory_only = [&](int error) {
    const std::string why = cat("the compile cache folder ", path, " cannot be written (", std::strerror(error), ")");
    return CacheDirectory{"", "memory only: " + why, why + ": compiled code is kept in memory for this process"};
  };
  if (int e = make_private_directories(path)) return memory_only(e);
  // the folder itself may be reached through a symbolic link (~/.cache often is); v2, where the
  // entries are, may not
  std::string problem = folder_problem(path, true);
  if (problem.empty()) {
    if (int e = make_private_directory(path, "v2")) return memory_only(e);
    if (std::string p = folder_problem(path + "/v2", false); !p.empty()) problem = "holds a v2 folder that " + p;
  }
  if (!problem.empty()) {
    const std::string why = cat("the compile cache folder ", path, " ", problem);
    const std::string temp = private_temp_directory("cupric-cache");
    if (temp.empty() || make_private_directory(temp, "v2") != 0)
      return {"", "memory only: " + why, why + ": cupric keeps no code there; compiled code is kept in memory"};
    return {temp, cat("private temporary folder instead of ", path, ", which ", problem),
            cat(why, ": cupric keeps no code there, and uses the private temporary folder ", temp,
                " for this process instead (fix: chown the folder to yourself and chmod 700 it)")};
  }
  if (int e = probe_writable(path + "/v2")) return memory_only(e);
  return {path, "", ""};
}

int make_private_directory(const std::string& parent, const std::string& child) {
  const std::string path = parent + "/" + child;
  return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST ? 0 : errno;
}

std::string private_temp_directory(const char* prefix) {
  const std::string base = env("TMPDIR").empty() ? "/tmp" : env("TMPDIR");
  std::string tmpl = cat(base, "/", prefix, "-XXXXXX");
  if (::mkdtemp(tmpl.data()) == nullptr) return {};
  std::lock_guard lock(g_temp_mutex);
  if (g_temp_dirs == nullptr) {
    g_temp_dirs = new std::vector<std::pair<std::string, pid_t>>();
    std::atexit(remove_temp_dirs);
  }
  g_temp_dirs->emplace_back(tmpl, ::getpid());
  return tmpl;
}

bool write_all(int fd, std::string_view data) {
  const char* p = data.data();
  std::size_t n = data.size();
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

int write_new_file(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  bool ok = write_all(fd, data);
  int error = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) error = errno;
  if (error) ::unlink(path.c_str());
  return error;
}

bool read_whole_file(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  out.clear();
  char buf[1 << 16];
  while (ok) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ok = r == 0;
      break;
    }
    out.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fd);
  return ok;
}

}  // namespace cupric::runtime
