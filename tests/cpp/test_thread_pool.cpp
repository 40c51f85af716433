// test_thread_pool.cpp — parallel_for covers every index exactly once, under many threads and
// many short jobs (a lost wake-up here once hung the whole suite on a 16-core machine).
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "cupric/thread_pool.hpp"

using namespace cupric;

TEST(ThreadPool, EveryIndexOnceUnderManyThreadsAndShortJobs) {
  const int old = cpu::num_threads();
  cpu::set_num_threads(16);
  std::vector<std::atomic<int>> hits(1000);
  for (int job = 0; job < 20000; ++job) {
    const std::int64_t n = 1 + job % 997;
    cpu::parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
    });
  }
  std::int64_t total = 0;
  for (auto& h : hits) total += h.load();
  std::int64_t expect = 0;
  for (int job = 0; job < 20000; ++job) expect += 1 + job % 997;
  EXPECT_EQ(total, expect);
  cpu::set_num_threads(old);
}

TEST(ThreadPool, ExceptionsReachTheCaller) {
  EXPECT_THROW(cpu::parallel_for(100000, 10,
                                 [](std::int64_t b, std::int64_t) {
                                   if (b > 50000) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  int ran = 0;
  cpu::parallel_for(10, 1, [&](std::int64_t b, std::int64_t e) { ran += static_cast<int>(e - b); });
  EXPECT_GT(ran, 0);
}
