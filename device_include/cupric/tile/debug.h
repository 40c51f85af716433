// cupric/tile/debug.h — ct.print and ct.assert_ in debug builds. CPU: one line per block and
// call, written at once; a failed assert is recorded (first failure wins) and raised by the
// runtime after the launch. GPU: printf from the owning threads; a failed assert traps.
#pragma once

#ifndef CUPRIC_TILE_DEVICE
#include <cstdio>
#include <cstring>
#include <mutex>
#endif

namespace cu::tile {

template <class T>
CUPRIC_TD double print_value(T v) {
  return static_cast<double>(convert<compute_t<T>>(v));
}

#ifndef CUPRIC_TILE_DEVICE
/// Collects one printed line of a block; the destructor writes it.
class PrintLine {
 public:
  PrintLine(const Block& b, const char* prefix) {
    add_text("[block %lld, %lld, %lld] %s", b.bid[0], b.bid[1], b.bid[2], prefix);
  }
  ~PrintLine() {
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    std::fputs(buf_, stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout);
  }
  template <class T>
  void add(T v) {
    if constexpr (same_v<T, bool>) add_text(" %s", v ? "True" : "False");
    else if constexpr (is_half_v<T> || same_v<T, float> || same_v<T, double>) add_text(" %.8g", print_value(v));
    else if constexpr (T(-1) < T(0)) add_text(" %lld", static_cast<long long>(v));
    else add_text(" %llu", static_cast<unsigned long long>(v));
  }
  template <class T, int N>
  void add(const Tile<T, N>& t) {
    add_text(" [");
    for (int i = 0; i < N; ++i) {
      if (i) add_text(",");
      add(t.v[i]);
    }
    add_text(" ]");
  }

 private:
  template <class... Ts>
  void add_text(const char* fmt, Ts... args) {
    const int n = static_cast<int>(std::strlen(buf_));
    if (n < static_cast<int>(sizeof(buf_)) - 1)
      std::snprintf(buf_ + n, sizeof(buf_) - static_cast<std::size_t>(n), fmt, args...);
  }
  char buf_[16384] = {0};
};

inline void fail(const Block& b, const char* message) {
  if (!b.status) return;
  int expected = 0;
  if (__atomic_compare_exchange_n(&b.status->failed, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    for (int i = 0; i < 3; ++i) b.status->block[i] = b.bid[i];
    std::snprintf(b.status->message, sizeof(b.status->message), "%s", message);
  }
}

template <class T>
inline void check(const Block& b, T cond, const char* message) {
  if (!cond) fail(b, message);
}
template <int N>
inline void check(const Block& b, const Tile<bool, N>& cond, const char* message) {
  for (int i = 0; i < N; ++i)
    if (!cond.v[i]) {
      fail(b, message);
      return;
    }
}
#else
/// GPU: prints each element from the thread that owns it (lines of different blocks mix).
class PrintLine {
 public:
  CUPRIC_TD PrintLine(const Block& b, const char* prefix) : b_(b), prefix_(prefix) {}
  template <class T>
  CUPRIC_TD void add(T v) {
    if (b_.tid == 0)
      printf("[block %d, %d, %d] %s %g\n", (int)b_.bid[0], (int)b_.bid[1], (int)b_.bid[2], prefix_, print_value(v));
  }
  template <class T, int N>
  CUPRIC_TD void add(const Tile<T, N>& t) {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < Layout<N>::kSlots; ++s)
      if (Layout<N>::owns(b_.tid, s))
        printf("[block %d, %d, %d] %s [%d] %g\n", (int)b_.bid[0], (int)b_.bid[1], (int)b_.bid[2], prefix_,
               Layout<N>::elem(b_.tid, s), print_value(t.v[s]));
  }

 private:
  const Block& b_;
  const char* prefix_;
};

template <class T>
CUPRIC_TD void check(const Block& b, T cond, const char* message) {
  if (!cond) {
    printf("[block %d, %d, %d] assertion failed: %s\n", (int)b.bid[0], (int)b.bid[1], (int)b.bid[2], message);
    __trap();
  }
}
template <int N>
CUPRIC_TD void check(const Block& b, const Tile<bool, N>& cond, const char* message) {
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<N>::kSlots; ++s)
    if (Layout<N>::valid(b.tid, s)) check(b, cond.v[s], message);
}
#endif

}  // namespace cu::tile
