// test_compile_cache.cpp — the compile cache without a GPU: SHA-256 vectors, keys, memory and
// disk tiers, corruption, LRU trimming, and several threads writing the same keys.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "runtime/compile_cache.hpp"
#include "runtime/sha256.hpp"

using cupric::runtime::CompileCache;
using cupric::runtime::sha256_hex;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/cupric-cache-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}
}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CompileCache, KeysSeparateParts) {
  EXPECT_NE(CompileCache::make_key({"ab", "c"}), CompileCache::make_key({"a", "bc"}));
  EXPECT_EQ(CompileCache::make_key({"src", "-arch=sm_90", "13.0"}),
            CompileCache::make_key({"src", "-arch=sm_90", "13.0"}));
  EXPECT_NE(CompileCache::make_key({"src", "-arch=sm_90", "13.0"}),
            CompileCache::make_key({"src", "-arch=sm_90", "13.1"}));
  EXPECT_EQ(CompileCache::make_key({"x"}).size(), 64u);
}

TEST(CompileCache, MemoryOnlyWhenDirectoryEmpty) {
  CompileCache cache("", 1 << 20, 1 << 20);
  EXPECT_EQ(cache.get("k"), nullptr);
  cache.put("k", "value");
  ASSERT_NE(cache.get("k"), nullptr);
  EXPECT_EQ(*cache.get("k"), "value");
  auto s = cache.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.memory_hits, 2u);
  EXPECT_EQ(s.stores, 1u);
}

TEST(CompileCache, DiskTierSurvivesANewCache) {
  TempDir dir;
  std::string key = CompileCache::make_key({"source"});
  {
    CompileCache writer(dir.path.string(), 1 << 20, 1 << 20);
    writer.put(key, std::string("\0binary\xff", 8));
  }
  CompileCache reader(dir.path.string(), 1 << 20, 1 << 20);
  auto v = reader.get(key);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, std::string("\0binary\xff", 8));
  EXPECT_EQ(reader.stats().disk_hits, 1u);
  reader.get(key);
  EXPECT_EQ(reader.stats().memory_hits, 1u);                                      // promoted to memory
  for (const auto& p : entries(dir.path)) EXPECT_EQ(p.extension(), ".bin") << p;  // no temporary files left
}

TEST(CompileCache, CorruptFilesAreMissesAndRemoved) {
  TempDir dir;
  std::string key = CompileCache::make_key({"corrupt"});
  CompileCache writer(dir.path.string(), 1 << 20, 1 << 20);
  writer.put(key, std::string(1000, 'x'));
  auto files = entries(dir.path);
  ASSERT_EQ(files.size(), 1u);
  fs::resize_file(files[0], 500);  // truncated
  CompileCache reader(dir.path.string(), 1 << 20, 1 << 20);
  EXPECT_EQ(reader.get(key), nullptr);
  EXPECT_EQ(reader.stats().disk_errors, 1u);
  EXPECT_FALSE(fs::exists(files[0]));
}

TEST(CompileCache, TrimsLeastRecentlyUsedFirst) {
  TempDir dir;
  CompileCache cache(dir.path.string(), 1 << 30, 1 << 20);
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) {
    keys.push_back(CompileCache::make_key({std::to_string(i)}));
    cache.put(keys.back(), std::string(1000, 'a' + i));
  }
  // Make entry 0 the most recently used and 1 the least.
  auto files = entries(dir.path);
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 4; ++i) {
    fs::path p = dir.path / "v1" / keys[i].substr(0, 2) / (keys[i] + ".bin");
    fs::last_write_time(p, now - std::chrono::hours(i == 0 ? 0 : 10 - i));
  }
  EXPECT_EQ(cache.trim_disk(2100), 2u);  // each file is 1000 bytes + header
  CompileCache fresh(dir.path.string(), 1 << 30, 1 << 20);
  EXPECT_NE(fresh.get(keys[0]), nullptr);
  EXPECT_EQ(fresh.get(keys[1]), nullptr);
  EXPECT_EQ(fresh.get(keys[2]), nullptr);
  EXPECT_NE(fresh.get(keys[3]), nullptr);
}

TEST(CompileCache, SizeBoundEvictsOnStore) {
  TempDir dir;
  CompileCache cache(dir.path.string(), 5000, 1 << 20);
  for (int i = 0; i < 20; ++i) cache.put(CompileCache::make_key({std::to_string(i)}), std::string(1000, 'z'));
  EXPECT_LE(cache.disk_usage(), 5000u);
  EXPECT_GT(cache.stats().disk_evictions, 0u);
}

TEST(CompileCache, MemoryTierIsBounded) {
  CompileCache cache("", 1 << 20, 3000);
  for (int i = 0; i < 10; ++i) cache.put(std::to_string(i), std::string(1000, 'm'));
  EXPECT_LE(cache.stats().memory_bytes, 3000u);
  EXPECT_NE(cache.get("9"), nullptr);
  EXPECT_EQ(cache.get("0"), nullptr);
}

TEST(CompileCache, ConcurrentWritersOfTheSameKeys) {
  TempDir dir;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      CompileCache cache(dir.path.string(), 1 << 30, 1 << 20);
      for (int i = 0; i < 50; ++i) {
        std::string key = CompileCache::make_key({std::to_string(i % 5)});
        cache.put(key, std::string(2000 + (i % 5), static_cast<char>('a' + i % 5)));
        cache.clear(true, false);
        auto v = cache.get(key);
        if (v) EXPECT_EQ(*v, std::string(2000 + (i % 5), static_cast<char>('a' + i % 5))) << t;
      }
    });
  for (auto& th : threads) th.join();
  auto files = entries(dir.path);
  EXPECT_EQ(files.size(), 5u);
  for (const auto& p : files) EXPECT_EQ(p.extension(), ".bin") << p;
}
