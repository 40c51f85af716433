// cache_files.hpp — the compile cache's footing on the file system: the one decision of its folder
// from the environment, the checks a folder passes before cupric keeps code in it, private
// temporary folders, and whole-file reads and writes that follow no symbolic link.
#pragma once

#include <sys/stat.h>
#include <string>
#include <string_view>

namespace cupric::runtime {

/// The folder the environment asks for: "" (memory only) for CUPRIC_DISABLE_DISK_CACHE=1 or an
/// empty CUPRIC_CACHE_DIR, else CUPRIC_CACHE_DIR, $XDG_CACHE_HOME/cupric or $HOME/.cache/cupric.
std::string cache_directory_from_environment();

/// The outcome of checking a cache folder.
struct CacheDirectory {
  std::string path;     ///< the folder to use ("" = memory only)
  std::string note;     ///< why it is not the one asked for ("" when it is)
  std::string warning;  ///< what to tell the user ("" when nothing)
};
/// Creates `requested` (missing folders with mode 0700) and checks it: a folder that is not the
/// user's, or that group or others may write, is replaced by a private temporary folder; one that
/// cannot be created or written leaves the cache in memory.
CacheDirectory secure_cache_directory(const std::string& requested);

/// Why a file or folder with this status must not be trusted ("" when it may): it is not owned by
/// this user, or group or others may write it.
std::string ownership_problem(const struct stat& st);

/// Creates `parent`/`child` with mode 0700 unless it exists; returns 0 or the errno.
int make_private_directory(const std::string& parent, const std::string& child);

/// A new folder (mode 0700) under $TMPDIR (else /tmp), removed when this process exits; "" when
/// none could be made.
std::string private_temp_directory(const char* prefix);

/// Writes `data` to a new file (mode 0600; fails if `path` exists, even as a symbolic link).
/// Returns 0 or the errno.
int write_new_file(const std::string& path, std::string_view data);
/// Writes all of `data` to `fd`; false on an error (errno set).
bool write_all(int fd, std::string_view data);
/// The whole content of a regular file, not through a symbolic link; false when it cannot be read.
bool read_whole_file(const std::string& path, std::string& out);

}  // namespace cupric::runtime
