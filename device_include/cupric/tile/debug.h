// cupric/tile/debug.h — ct.print, ct.assert_ and the bounds checks of debug builds. A failed check
// is recorded in the launch's status word (the first failure wins) and raised by the runtime after
// the launch, on both targets; the kernel runs on (every access is clipped to its array, so a
// failed check corrupts nothing). ct.print: one line per block and call on the CPU, printf on the GPU.
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

#endif

// ---- failures: the launch's status word (cupric_tile_status, abi.h)

/// True for the one caller that moves `word` from 0 to `code`.
CUPRIC_TD bool claim(int* word, int code) {
#ifdef CUPRIC_TILE_DEVICE
  return atomicCAS(word, 0, code) == 0;
#else
  int expected = 0;
  return __atomic_compare_exchange_n(word, &expected, code, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#endif
}

/// Records the block's failure; `code` is one of cupric_tile_status's failure kinds. Device code
/// without a status word (a body compiled into another kernel) prints the message and traps.
CUPRIC_TD void fail(const Block& b, const char* message, int code = CUPRIC_TILE_ASSERT_FAILED) {
  if (!b.status) {
#ifdef CUPRIC_TILE_DEVICE
    printf("[block %d, %d, %d] %s\n", (int)b.bid[0], (int)b.bid[1], (int)b.bid[2], message);
    __trap();
#endif
    return;
  }
  if (!claim(&b.status->failed, code)) return;
  for (int i = 0; i < 3; ++i) b.status->block[i] = b.bid[i];
  int n = 0;
  for (; message[n] && n < static_cast<int>(sizeof(b.status->message)) - 1; ++n) b.status->message[n] = message[n];
  b.status->message[n] = 0;
}

template <class T>
CUPRIC_TD void check(const Block& b, T cond, const char* message) {
  if (!cond) fail(b, message);
}
template <int N>
CUPRIC_TD void check(const Block& b, const Tile<bool, N>& cond, const char* message) {
#ifdef CUPRIC_TILE_DEVICE
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<N>::kSlots; ++s)
    if (Layout<N>::valid(b.tid, s) && !cond.v[s]) {
      fail(b, message);
      return;
    }
#else
  for (int i = 0; i < N; ++i)
    if (!cond.v[i]) {
      fail(b, message);
      return;
    }
#endif
}

// ---- bounds checks (emitted before every load, store, gather, scatter and atomic of debug builds)

/// A message built without snprintf (which device code lacks): text and integers, truncated.
struct Message {
  char text[sizeof(cupric_tile_status::message)];
  int n = 0;
  CUPRIC_TD Message() { text[0] = 0; }
  CUPRIC_TD void add(const char* s) {
    while (*s && n < static_cast<int>(sizeof(text)) - 1) text[n++] = *s++;
    text[n] = 0;
  }
  CUPRIC_TD void add(i64 v) {
    char digits[24];
    int k = 0;
    unsigned long long u = v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do digits[k++] = static_cast<char>('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0) digits[k++] = '-';
    char s[24];
    for (int i = 0; i < k; ++i) s[i] = digits[k - 1 - i];
    s[k] = 0;
    add(s);
  }
  template <int ND>
  CUPRIC_TD void add_tuple(const i64 (&v)[ND]) {
    add("(");
    for (int d = 0; d < ND; ++d) {
      if (d) add(", ");
      add(v[d]);
    }
    add(ND == 1 ? ",)" : ")");
  }
};

/// Fails the launch with IndexError (raised by the runtime after the launch, on both targets).
CUPRIC_TD void bounds_failed(const Block& b, const Message& m) { fail(b, m.text, CUPRIC_TILE_BOUNDS_FAILED); }

/// A load's or store's window (corner `start` from window_start, extents `n`; `given` is the tile
/// index or offset as written) must hold at least one element of the array: ragged edges are
/// what padding is for, a window wholly outside is an index computed wrong.
template <class T, int ND>
CUPRIC_TD void check_window(const Block& b, const ArrayRef<T, ND>& a, const i64 (&start)[ND], const i64 (&n)[ND],
                            const i64 (&given)[ND], const char* where, const char* given_as) {
  bool outside = false;
  for (int d = 0; d < ND; ++d) outside = outside || start[d] >= a.shape[d] || start[d] + n[d] <= 0;
  if (!outside) return;
  Message m;
  m.add(where);
  m.add(": the window at ");
  m.add(given_as);
  m.add(" ");
  m.add_tuple(given);
  m.add(" of shape ");
  m.add_tuple(n);
  m.add(" lies wholly outside the array of shape ");
  m.add_tuple(a.shape);
  bounds_failed(b, m);
}

/// A gathered, scattered or atomically updated element (where its mask is true) must be inside.
template <class T, int ND>
CUPRIC_TD void check_index(const Block& b, const ArrayRef<T, ND>& a, const i64 (&idx)[ND], const char* where) {
  Message m;
  m.add(where);
  m.add(": index ");
  m.add_tuple(idx);
  m.add(" is outside the array of shape ");
  m.add_tuple(a.shape);
  bounds_failed(b, m);
}

}  // namespace cu::tile
