// test_compile_cache.cpp — the compile cache without a GPU: SHA-256 vectors, keys and kinds, memory
// and disk tiers, LRU trimming, several threads writing the same keys, and its defences: every
// kind of tampered, truncated or foreign entry is deleted with a warning, folders that others
// may write or that are not the user's are not used, unwritable folders leave it in memory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "cupric/errors.hpp"
#include "cupric/runtime/compile_cache.hpp"
#include "runtime/sha256.hpp"

using cupric::runtime::ArtifactKind;
using cupric::runtime::CompileCache;
using cupric::runtime::sha256_hex;
namespace fs = std::filesystem;

namespace {
constexpr ArtifactKind kNvrtc = ArtifactKind::nvrtc;

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/cupric-cache-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, ec);
    fs::remove_all(path, ec);
  }
};

/// Collects the cache's warnings while alive.
struct Warnings {
  std::vector<std::string> messages;
  Warnings() {
    CompileCache::set_warning_handler([this](const std::string& m) { messages.push_back(m); });
  }
  ~Warnings() { CompileCache::set_warning_handler(nullptr); }
  bool any_contains(const std::string& text) const {
    for (const auto& m : messages)
      if (m.find(text) != std::string::npos) return true;
    return false;
  }
};

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() || e.is_symlink() || e.is_fifo()) out.push_back(e.path());
  return out;
}

fs::path entry_path(const fs::path& dir, ArtifactKind kind, const std::string& key) {
  return dir / "v2" / cupric::runtime::artifact_kind_name(kind) / key.substr(0, 2) / (key + ".bin");
}

unsigned mode_of(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& p, const std::string& data) { std::ofstream(p, std::ios::binary) << data; }
}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The CPU's SHA instructions (where it has them) and the portable code agree on every length
// around the block and padding boundaries, and in pieces of any size.
TEST(Sha256, CpuInstructionsAgreeWithThePortableCode) {
  std::string data(200000, '\0');
  std::uint32_t x = 12345;
  for (auto& c : data) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  const auto hex = [](cupric::runtime::Sha256& h) { return h.hex_digest(); };
  for (std::size_t n : {0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 200000}) {
    cupric::runtime::Sha256 fast, portable(true), pieces;
    fast.update(std::string_view(data).substr(0, n));
    portable.update(std::string_view(data).substr(0, n));
    for (std::size_t at = 0, step = 1; at < n; at += step, step = step * 3 % 97 + 1)
      pieces.update(std::string_view(data).substr(at, std::min(step, n - at)));
    const std::string expected = hex(portable);
    EXPECT_EQ(hex(fast), expected) << n;
    EXPECT_EQ(hex(pieces), expected) << n;
  }
}

TEST(CompileCache, KeysSeparateParts) {
  EXPECT_NE(CompileCache::make_key({"ab", "c"}), CompileCache::make_key({"a", "bc"}));
  EXPECT_EQ(CompileCache::make_key({"src", "-arch=sm_90", "13.0"}),
            CompileCache::make_key({"src", "-arch=sm_90", "13.0"}));
  EXPECT_NE(CompileCache::make_key({"src", "-arch=sm_90", "13.0"}),
            CompileCache::make_key({"src", "-arch=sm_90", "13.1"}));
  EXPECT_EQ(CompileCache::make_key({"x"}).size(), 64u);
}

TEST(CompileCache, KeysThatCouldNameOtherFilesAreRefused) {
  CompileCache cache("", 1 << 20, 1 << 20);
  for (const std::string& bad :
       std::vector<std::string>{"", "../../etc/passwd", "a/b", "a.b", "key with space", std::string(129, 'a')}) {
    EXPECT_THROW(cache.get(kNvrtc, bad), cupric::ValueError) << bad;
    EXPECT_THROW(cache.put(kNvrtc, bad, "x"), cupric::ValueError) << bad;
  }
  EXPECT_NO_THROW(cache.put(kNvrtc, std::string(128, 'a'), "x"));
}

TEST(CompileCache, KindsHaveNamesAndSeparateEntries) {
  for (const auto& k : cupric::runtime::artifact_kinds())
    EXPECT_EQ(cupric::runtime::artifact_kind_from_name(k.name), k.kind);
  EXPECT_THROW(cupric::runtime::artifact_kind_from_name("so"), cupric::ValueError);
  TempDir dir;
  CompileCache cache(dir.path.string(), 1 << 20, 1 << 20);
  const std::string key = CompileCache::make_key({"same key"});
  cache.put(ArtifactKind::cubin, key, "a cubin");
  cache.put(ArtifactKind::index, key, "an index");
  CompileCache fresh(dir.path.string(), 1 << 20, 1 << 20);
  EXPECT_EQ(*fresh.get(ArtifactKind::cubin, key), "a cubin");
  EXPECT_EQ(*fresh.get(ArtifactKind::index, key), "an index");
  EXPECT_EQ(fresh.get(ArtifactKind::shared_object, key), nullptr);
  auto info = fresh.info();
  EXPECT_EQ(info.kinds[static_cast<int>(ArtifactKind::cubin)].entries, 1u);
  EXPECT_EQ(info.kinds[static_cast<int>(ArtifactKind::index)].entries, 1u);
  EXPECT_EQ(info.kinds[static_cast<int>(ArtifactKind::nvrtc)].entries, 0u);
}

TEST(CompileCache, MemoryOnlyWhenDirectoryEmpty) {
  CompileCache cache("", 1 << 20, 1 << 20);
  EXPECT_EQ(cache.get(kNvrtc, "k"), nullptr);
  cache.put(kNvrtc, "k", "value");
  ASSERT_NE(cache.get(kNvrtc, "k"), nullptr);
  EXPECT_EQ(*cache.get(kNvrtc, "k"), "value");
  auto s = cache.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.memory_hits, 2u);
  EXPECT_EQ(s.stores, 1u);
}

TEST(CompileCache, FolderPathsAreNormalisedWhateverTheirSpelling) {
  TempDir dir;
  const std::string base = dir.path.string();
  const std::string want = base + "/cache";
  for (const std::string& spelling :
       {want, want + "/", base + "//cache", base + "/./cache", base + "/x/../cache", base + "/.hidden/../cache"}) {
    CompileCache cache(spelling, 1 << 20, 1 << 20);
    EXPECT_EQ(cache.directory(), want) << spelling;
  }
  CompileCache hidden(base + "/.hidden", 1 << 20, 1 << 20);  // a dot folder is a name, not "."
  EXPECT_EQ(hidden.directory(), base + "/.hidden");
}

TEST(CompileCache, DiskTierSurvivesANewCacheInPrivateFiles) {
  TempDir dir;
  std::string key = CompileCache::make_key({"source"});
  const fs::path fresh_dir = dir.path / "a" / "b" / "cache";  // created, with its parents, 0700
  {
    CompileCache writer(fresh_dir.string(), 1 << 20, 1 << 20);
    writer.put(kNvrtc, key, std::string("\0binary\xff", 8));
  }
  CompileCache reader(fresh_dir.string(), 1 << 20, 1 << 20);
  auto v = reader.get(kNvrtc, key);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, std::string("\0binary\xff", 8));
  EXPECT_EQ(reader.stats().disk_hits, 1u);
  reader.get(kNvrtc, key);
  EXPECT_EQ(reader.stats().memory_hits, 1u);  // promoted to memory
  for (const fs::path& p :
       {dir.path / "a", dir.path / "a" / "b", fresh_dir, fresh_dir / "v2", fresh_dir / "v2" / "nvrtc"})
    EXPECT_EQ(mode_of(p), 0700u) << p;
  auto files = entries(fresh_dir);
  ASSERT_EQ(files.size(), 1u);  // no temporary files left
  EXPECT_EQ(files[0], entry_path(fresh_dir, kNvrtc, key));
  EXPECT_EQ(mode_of(files[0]), 0600u);
}

// Every way an entry can be damaged or replaced: each is a miss, deleted with a warning, and a
// new store then works.
TEST(CompileCache, TamperedTruncatedAndForeignEntriesAreDeletedAndRebuilt) {
  const std::string payload(1000, 'x');
  using Tamper = std::function<void(const fs::path& entry, const fs::path& dir)>;
  const std::vector<std::pair<const char*, Tamper>> cases = {
      {"payload byte flipped",
       [](const fs::path& p, const fs::path&) {
         std::string b = read_bytes(p);
         b[b.size() - 10] ^= 1;
         write_bytes(p, b);
       }},
      {"truncated", [](const fs::path& p, const fs::path&) { fs::resize_file(p, fs::file_size(p) / 2); }},
      {"header only", [](const fs::path& p, const fs::path&) { fs::resize_file(p, 20); }},
      {"empty", [](const fs::path& p, const fs::path&) { fs::resize_file(p, 0); }},
      {"bytes appended", [](const fs::path& p, const fs::path&) { write_bytes(p, read_bytes(p) + "tail"); }},
      {"payload replaced, hash kept",
       [](const fs::path& p, const fs::path&) {
         std::string b = read_bytes(p);
         write_bytes(p, b.substr(0, b.size() - 1000) + std::string(1000, 'y'));
       }},
      {"another key's entry copied in",
       [](const fs::path& p, const fs::path& dir) {
         CompileCache other(dir.string(), 1 << 20, 1 << 20);
         const std::string k2 = CompileCache::make_key({"other"});
         other.put(kNvrtc, k2, std::string(1000, 'z'));
         fs::copy_file(entry_path(dir, kNvrtc, k2), p, fs::copy_options::overwrite_existing);
       }},
      {"another kind's entry copied in",
       [](const fs::path& p, const fs::path& dir) {
         CompileCache other(dir.string(), 1 << 20, 1 << 20);
         const std::string key = p.stem().string();
         other.put(ArtifactKind::shared_object, key, std::string(1000, 'z'));
         fs::copy_file(entry_path(dir, ArtifactKind::shared_object, key), p, fs::copy_options::overwrite_existing);
       }},
      {"symbolic link to a valid entry",
       [](const fs::path& p, const fs::path&) {
         fs::rename(p, p.string() + ".real");
         fs::create_symlink(p.string() + ".real", p);
       }},
      {"FIFO", [](const fs::path& p, const fs::path&) { fs::remove(p), ::mkfifo(p.c_str(), 0600); }},
      {"writable by others", [](const fs::path& p, const fs::path&) { ::chmod(p.c_str(), 0666); }},
      {"writable by its group", [](const fs::path& p, const fs::path&) { ::chmod(p.c_str(), 0620); }},
  };
  for (const auto& [name, tamper] : cases) {
    TempDir dir;
    const std::string key = CompileCache::make_key({"entry"});
    CompileCache(dir.path.string(), 1 << 20, 1 << 20).put(kNvrtc, key, payload);
    const fs::path path = entry_path(dir.path, kNvrtc, key);
    tamper(path, dir.path);
    Warnings warnings;
    CompileCache reader(dir.path.string(), 1 << 20, 1 << 20);
    EXPECT_EQ(reader.get(kNvrtc, key), nullptr) << name;
    EXPECT_EQ(reader.stats().disk_errors, 1u) << name;
    EXPECT_FALSE(fs::exists(fs::symlink_status(path))) << name;  // deleted
    ASSERT_EQ(warnings.messages.size(), 1u) << name;
    EXPECT_TRUE(warnings.any_contains("deleted the compile cache entry " + path.string())) << warnings.messages[0];
    reader.put(kNvrtc, key, payload);  // rebuilt
    CompileCache again(dir.path.string(), 1 << 20, 1 << 20);
    ASSERT_NE(again.get(kNvrtc, key), nullptr) << name;
    EXPECT_EQ(*again.get(kNvrtc, key), payload) << name;
  }
}

TEST(CompileCache, EntriesOfAnotherUserAreRejected) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a file of another user needs root";
  TempDir dir;
  const std::string key = CompileCache::make_key({"entry"});
  CompileCache(dir.path.string(), 1 << 20, 1 << 20).put(kNvrtc, key, "code");
  ASSERT_EQ(::chown(entry_path(dir.path, kNvrtc, key).c_str(), 65534, 65534), 0);
  Warnings warnings;
  CompileCache reader(dir.path.string(), 1 << 20, 1 << 20);
  EXPECT_EQ(reader.get(kNvrtc, key), nullptr);
  EXPECT_TRUE(warnings.any_contains("belongs to uid 65534"));
}

// A folder others may write, or that is not the user's: nothing is read from or written to it;
// the cache uses a private temporary folder instead, with a warning that names the problem.
TEST(CompileCache, UnsafeFoldersAreReplacedByAPrivateTemporaryOne) {
  std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> cases = {
      {"can be written by its group", [](const fs::path& p) { ::chmod(p.c_str(), 0770); }},
      {"can be written by anyone", [](const fs::path& p) { ::chmod(p.c_str(), 0777); }},
      {"holds a v2 folder that can be written by anyone",
       [](const fs::path& p) { fs::create_directory(p / "v2"), ::chmod((p / "v2").c_str(), 0777); }},
  };
  if (::geteuid() == 0)
    cases.push_back({"belongs to uid 65534", [](const fs::path& p) { ::chown(p.c_str(), 65534, 65534); }});
  for (const auto& [problem, make_unsafe] : cases) {
    TempDir dir;
    const fs::path unsafe = dir.path / "cache";
    fs::create_directory(unsafe);
    const std::string key = CompileCache::make_key({"k"});
    CompileCache(unsafe.string(), 1 << 20, 1 << 20).put(kNvrtc, key, "planted");  // as if written earlier
    make_unsafe(unsafe);
    Warnings warnings;
    CompileCache cache(unsafe.string(), 1 << 20, 1 << 20);
    const std::string used = cache.directory();
    EXPECT_NE(used, unsafe.string()) << problem;
    EXPECT_EQ(mode_of(used), 0700u);
    ASSERT_EQ(warnings.messages.size(), 1u) << problem;
    EXPECT_TRUE(warnings.any_contains(problem)) << warnings.messages[0];
    EXPECT_TRUE(warnings.any_contains(used)) << warnings.messages[0];
    EXPECT_NE(cache.info().note.find(problem), std::string::npos);
    EXPECT_EQ(cache.get(kNvrtc, key), nullptr) << problem;  // the planted entry is not read
    cache.put(kNvrtc, key, "new");
    EXPECT_EQ(read_bytes(entry_path(unsafe, kNvrtc, key)).find("new"), std::string::npos);  // nor written
    EXPECT_TRUE(fs::exists(entry_path(used, kNvrtc, key)));
  }
}

TEST(CompileCache, UnwritableFoldersLeaveTheCacheInMemory) {
  TempDir dir;
  write_bytes(dir.path / "file", "not a folder");
  std::vector<fs::path> unwritable = {dir.path / "file" / "cache"};  // cannot be created, even by root
  if (::geteuid() != 0) {
    fs::create_directory(dir.path / "readonly");
    ::chmod((dir.path / "readonly").c_str(), 0500);
    unwritable.push_back(dir.path / "readonly");
  }
  for (const auto& path : unwritable) {
    Warnings warnings;
    CompileCache cache(path.string(), 1 << 20, 1 << 20);
    EXPECT_EQ(cache.directory(), "") << path;
    ASSERT_EQ(warnings.messages.size(), 1u) << path;
    EXPECT_TRUE(warnings.any_contains("cannot be written")) << warnings.messages[0];
    EXPECT_TRUE(warnings.any_contains("kept in memory")) << warnings.messages[0];
    cache.put(kNvrtc, "k", "value");
    ASSERT_NE(cache.get(kNvrtc, "k"), nullptr);
    EXPECT_EQ(*cache.get(kNvrtc, "k"), "value");
  }
}

TEST(CompileCache, TrimsLeastRecentlyUsedFirstAcrossKinds) {
  TempDir dir;
  CompileCache cache(dir.path.string(), 1 << 30, 1 << 20);
  std::vector<std::string> keys;
  const ArtifactKind kinds[] = {kNvrtc, ArtifactKind::shared_object, ArtifactKind::index, kNvrtc};
  for (int i = 0; i < 4; ++i) {
    keys.push_back(CompileCache::make_key({std::to_string(i)}));
    cache.put(kinds[i], keys.back(), std::string(1000, 'a' + i));
  }
  // Make entry 0 the most recently used and 1 the least.
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 4; ++i)
    fs::last_write_time(entry_path(dir.path, kinds[i], keys[i]), now - std::chrono::hours(i == 0 ? 0 : 10 - i));
  const auto entry_bytes = fs::file_size(entry_path(dir.path, kinds[0], keys[0]));
  EXPECT_EQ(cache.trim_disk(2 * entry_bytes + 100), 2u);
  CompileCache fresh(dir.path.string(), 1 << 30, 1 << 20);
  EXPECT_NE(fresh.get(kinds[0], keys[0]), nullptr);
  EXPECT_EQ(fresh.get(kinds[1], keys[1]), nullptr);
  EXPECT_EQ(fresh.get(kinds[2], keys[2]), nullptr);
  EXPECT_NE(fresh.get(kinds[3], keys[3]), nullptr);
}

TEST(CompileCache, SizeBoundEvictsOnStore) {
  TempDir dir;
  CompileCache cache(dir.path.string(), 5000, 1 << 20);
  for (int i = 0; i < 20; ++i)
    cache.put(i % 2 ? kNvrtc : ArtifactKind::cubin, CompileCache::make_key({std::to_string(i)}),
              std::string(1000, 'z'));
  EXPECT_LE(cache.disk_usage(), 5000u);
  EXPECT_GT(cache.stats().disk_evictions, 0u);
}

TEST(CompileCache, ClearRemovesEveryKindAndOlderLayouts) {
  TempDir dir;
  CompileCache cache(dir.path.string(), 1 << 20, 1 << 20);
  for (const auto& k : cupric::runtime::artifact_kinds()) cache.put(k.kind, CompileCache::make_key({k.name}), k.name);
  fs::create_directories(dir.path / "tile" / "index");
  write_bytes(dir.path / "tile" / "index" / "old.json", "{\"path\": \"/elsewhere.so\"}");
  fs::create_directories(dir.path / "v1" / "ab");
  write_bytes(dir.path / "v1" / "ab" / "old.bin", "old");
  auto info = cache.info();
  for (const auto& usage : info.kinds) EXPECT_EQ(usage.entries, 1u);
  EXPECT_EQ(info.legacy.entries, 2u);
  cache.clear();
  info = cache.info();
  for (const auto& usage : info.kinds) EXPECT_EQ(usage.entries, 0u);
  EXPECT_EQ(info.legacy.entries, 0u);
  EXPECT_EQ(cache.get(kNvrtc, CompileCache::make_key({"nvrtc"})), nullptr);
}

TEST(CompileCache, MemoryTierIsBounded) {
  CompileCache cache("", 1 << 20, 3000);
  for (int i = 0; i < 10; ++i) cache.put(kNvrtc, std::to_string(i), std::string(1000, 'm'));
  EXPECT_LE(cache.stats().memory_bytes, 3000u);
  EXPECT_NE(cache.get(kNvrtc, "9"), nullptr);
  EXPECT_EQ(cache.get(kNvrtc, "0"), nullptr);
}

TEST(CompileCache, ConcurrentWritersOfTheSameKeys) {
  TempDir dir;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      CompileCache cache(dir.path.string(), 1 << 30, 1 << 20);
      for (int i = 0; i < 50; ++i) {
        std::string key = CompileCache::make_key({std::to_string(i % 5)});
        cache.put(kNvrtc, key, std::string(2000 + (i % 5), static_cast<char>('a' + i % 5)));
        cache.clear(true, false);
        auto v = cache.get(kNvrtc, key);
        if (v) EXPECT_EQ(*v, std::string(2000 + (i % 5), static_cast<char>('a' + i % 5))) << t;
      }
    });
  for (auto& th : threads) th.join();
  auto files = entries(dir.path);
  EXPECT_EQ(files.size(), 5u);
  for (const auto& p : files) EXPECT_EQ(p.extension(), ".bin") << p;
}
