// sort.cpp — sorting and searching on the GPU: the renderer of kernels/sort.cuh (one program per
// dtype: the digit histograms, the onesweep passes, complex keys, binary search) and the
// launchers: a onesweep LSD radix sort over the rows of a C-contiguous copy, 8 bits a pass, in
// batches of rows, with the temporary keys, payloads and status words from the stream-ordered pool.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "cupric/runtime/stream.hpp"
#include "launch_args.hpp"
#include "render.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

namespace {
constexpr int kThreads = 256;  // kSortMaxThreads

/// Bytes of a sort key: the element's, or a complex part's.
int key_bytes(DType t) { return static_cast<int>(is_complex(t) ? itemsize(t) / 2 : itemsize(t)); }
const char* key_type(int bytes) {
  return bytes == 1   ? "unsigned char"
         : bytes == 2 ? "unsigned short"
         : bytes == 4 ? "unsigned int"
                      : "unsigned long long";
}
DType key_dtype(int bytes) {
  return bytes == 1 ? DType::uint8 : bytes == 2 ? DType::uint16 : bytes == 4 ? DType::uint32 : DType::uint64;
}

/// The tile of the sweep pass (kernels/sort_pass.cuh) for keys of `key_bytes`: threads of a block,
/// keys per thread (held in registers; the staged tile stays within 48 KiB of shared memory) and
/// the blocks an SM that the register cap aims at.
struct SweepShape {
  int threads, items, blocks;
};

/// CUPRIC_SORT_SWEEP="threads,items,blocks" replaces the shape of 4-byte keys' passes: the tuning
/// experiments of benchmarks/sort.py --sweep time other shapes in one process each.
SweepShape sweep_override(SweepShape shape) {
  const char* v = std::getenv("CUPRIC_SORT_SWEEP");
  if (!v || !*v) return shape;
  SweepShape s{};
  char tail = 0;
  const bool parsed = std::sscanf(v, "%d,%d,%d%c", &s.threads, &s.items, &s.blocks, &tail) == 3;
  const long shared = 4L * s.threads * s.items + 1024L * (s.threads / 32) + 1L * s.threads * s.items + 4096;
  if (!parsed || s.threads % 32 || s.threads < 64 || s.threads > 1024 || s.items < 1 || s.items > 32 || s.blocks < 1 ||
      s.blocks > 8 || shared > 48 * 1024)
    throw ValueError(
        cat("CUPRIC_SORT_SWEEP must be 'threads,items,blocks' (threads a multiple of 32 in [64, 1024], "
            "items in [1, 32], blocks in [1, 8], a tile whose shared memory fits 48 KiB), got '",
            v, "'"));
  return s;
}

/// 4-byte keys in tiles of 384 x 12 at three blocks an SM: on the H200 (2026-12-02, 2^27 float32,
/// atomic-OR peers) sort 4.55 ms and argsort 5.69, against 4.76 and 6.38 for 384 x 16 at two.
SweepShape sweep_shape(int key_bytes) {
  return key_bytes == 8 ? SweepShape{256, 12, 3} : sweep_override(SweepShape{384, 12, 3});
}

/// CUPRIC_SORT_PEERS=atomic_or|ballots|match: how the sweep pass finds a key's warp peers
/// (kernels/sort_pass.cuh, sweep_peers), for timing each on the H200; the kind's number. The
/// atomic OR is the default: 2^27 float32 on the H200 sorted in 4.55 ms against 5.39 with
/// ballots and 5.91 with match.any (argsort 5.69 against 6.43).
int sweep_peers_kind() {
  const char* v = std::getenv("CUPRIC_SORT_PEERS");
  const std::string kind = v ? v : "";
  if (kind.empty() || kind == "atomic_or") return 2;
  if (kind == "ballots") return 0;
  if (kind == "match") return 1;
  throw ValueError(cat("CUPRIC_SORT_PEERS must be 'ballots', 'match' or 'atomic_or', got '", kind, "'"));
}

/// CUPRIC_SORT_FULL_TILES=0: every tile of the sweep pass takes the bound-checked path.
bool full_tiles() {
  const char* v = std::getenv("CUPRIC_SORT_FULL_TILES");
  return !(v && std::string(v) == "0");
}

/// CUPRIC_SORT_KERNEL=old picks the first onesweep pass (kernels/sort.cuh), read at every sort so
/// that one process can time both.
bool old_pass_kernel() {
  const char* v = std::getenv("CUPRIC_SORT_KERNEL");
  return v && std::string(v) == "old";
}
}  // namespace

std::string render_sort(DType t) {
  const std::string s = short_name(t);
  const bool cplx = is_complex(t);
  // complex sorts run key sorts of the parts' keys (never from values): T is the part's type there
  const std::string R = device_type(cplx ? real_dtype(t) : t);
  std::string src = cat("#define CUPRIC_SORT_PEERS_KIND ", sweep_peers_kind(), "\n",
                        full_tiles() ? "" : "#define CUPRIC_SORT_NO_FULL_TILES 1\n", include_family("sort_pass"),
                        "using namespace cupric::kernels;\ntypedef ", device_type(t), " V;\ntypedef ", R,
                        " T;\ntypedef ", key_type(key_bytes(t)), " U;\ntypedef unsigned long long u64;\n");
  auto entry = [&](const std::string& name, const std::string& params, const std::string& body,
                   const char* bounds = "256") {
    src += cat("extern \"C\" __global__ void __launch_bounds__(", bounds, ") ", name, "_", s, "(", params, ") {\n  ",
               body, ";\n}\n");
  };
  if (cplx) {
    entry("sort_ckeys", "const V* in, U* keys, const u32* perm, u32* idx, i64 total, i64 n, int part, int desc",
          "sort_complex_keys<V>(in, keys, perm, idx, total, n, part, desc)");
    entry("sort_gather", "const V* in, const u32* perm, V* values, i64* indices, i64 total, i64 n",
          "sort_gather<V>(in, perm, values, indices, total, n)");
  }
  // 8 blocks an SM: the launch's sm_count * 8 blocks run in one wave
  entry("sort_hist", "const void* in, u32* hist, i64 n, i64 tiles, i64 ntiles, i64 tile_size, int mode",
        "sort_histograms<T, U>(in, hist, n, tiles, ntiles, tile_size, mode)", "256, 8");
  entry("sort_starts", "u32* hist, i64 groups", "sort_digit_starts(hist, groups)");
  for (const bool wide : {false, true}) {
    for (const bool with_idx : {false, true}) {
      const std::string D = wide ? "u64" : "u32";
      entry(cat("sort_pass", with_idx ? "_idx" : "", wide ? "_wide" : ""),
            cat("const void* in, void* out, const u32* iin, void* iout, const u32* starts, ", D, "* desc, ", D,
                "* desc_next, u32* counter, i64 n, i64 tiles, i64 ntiles, int shift, int mode"),
            cat("sort_onesweep<T, U, ", D, ", ", with_idx ? "true" : "false",
                ">(in, out, iin, iout, starts, desc, desc_next, counter, n, tiles, ntiles, shift, mode)"),
            "256, 3");  // three blocks an SM: registers capped at 85 (ptxas: no spills)
      const SweepShape shape = sweep_shape(key_bytes(t));
      entry(cat("sort_sweep", with_idx ? "_idx" : "", wide ? "_wide" : ""),
            cat("const void* in, void* out, const u32* iin, void* iout, const u32* starts, ", D, "* desc, ", D,
                "* desc_next, u32* counter, i64 n, i64 tiles, i64 ntiles, int shift, int mode"),
            cat("sort_sweep<T, U, ", D, ", ", with_idx ? "true" : "false", ", ", shape.threads, ", ", shape.items,
                ">(in, out, iin, iout, starts, desc, desc_next, counter, n, tiles, ntiles, shift, mode)"),
            cat(shape.threads, ", ", shape.blocks).c_str());  // registers capped at 65536 / (threads * blocks)
    }
  }
  if (!cplx) {
    const char* params =
        "const V* s, const i64* perm, V* values, i64* index, i64* ends, i64* inverse, u64* status, u32* counter, "
        "i64* runs, i64 n, int equal_nan";
    entry("unique", params,
          "unique_runs<V>(s, perm, values, index, ends, inverse, status, counter, runs, n, equal_nan)");
    entry("select_hist", "const V* in, i64 n, const cu::SortKey<V>::Key* prefix, u32* hist, int targets, int shift",
          "select_histograms<V>(in, n, prefix, hist, targets, shift)");
    entry("select_step", "const u32* hist, cu::SortKey<V>::Key* prefix, i64* rank, V* out, int targets, int shift",
          "select_step<V>(hist, prefix, rank, out, targets, shift)");
    entry("unique_tiles", params,
          cat("unique_tiles<V, ", kThreads,
              ">(s, perm, values, index, ends, inverse, status, counter, runs, n, equal_nan)"));
  }
  entry("search", "const V* hay, i64 n, const V* needles, i64* out, i64 m, int right",
        "search_sorted<V>(hay, n, needles, out, m, right)");
  return src;
}

namespace {

/// Keys of a tile: the sweep's shape, or the old pass's (kSortItems in kernels/sort.cuh: 16 per
/// thread, 8 for 8-byte keys).
std::int64_t tile_keys(int key_bytes, bool old) {
  const SweepShape s = sweep_shape(key_bytes);
  return old ? std::int64_t{kThreads} * (key_bytes == 8 ? 8 : 16) : std::int64_t{s.threads} * s.items;
}
/// Status words of the look-back are u32 (30-bit counts) for rows below 2^30 keys, else u64.
bool wide_status(std::int64_t n) { return n >= (std::int64_t{1} << 30); }
/// Scratch bytes a row needs besides its keys: digit counts and two passes' status words.
std::int64_t scratch_per_row(DType t, std::int64_t n, bool old) {
  const int kb = key_bytes(t);
  const std::int64_t tiles = ceil_div(n, tile_keys(kb, old));
  return std::int64_t{4} * 256 * kb + 2 * tiles * 256 * (wide_status(n) ? 8 : 4);
}

/// A batch of rows sorted by the onesweep passes: the keys and payloads ping-pong between two
/// buffers; `meta` holds the digit counts, the passes' tile counters and the status words.
class RadixSort {
 public:
  RadixSort(CudaBackend& be, DType t, std::int64_t rows, std::int64_t n, bool with_idx, bool old)
      : be_(be), t_(t), kb_(key_bytes(t)), rows_(rows), n_(n), with_idx_(with_idx), old_(old) {
    const std::int64_t total = rows * n;
    keys_[0] = Array::empty({total}, key_dtype(kb_), be.device());
    keys_[1] = Array::empty({total}, key_dtype(kb_), be.device());
    if (with_idx) {
      idx_[0] = Array::empty({total}, DType::uint32, be.device());
      idx_[1] = Array::empty({total}, DType::uint32, be.device());
    }
    tile_ = tile_keys(kb_, old);
    tiles_ = ceil_div(n, tile_);
    ntiles_ = rows * tiles_;
    if (ntiles_ >= std::int64_t{UINT32_MAX})
      throw NotImplementedError(cat("sort on CUDA devices: ", ntiles_, " tiles in one batch"));
    wide_ = wide_status(n);
    const std::int64_t words = ntiles_ * 256 * (wide_ ? 2 : 1);  // u32 words of one pass's status
    hist_words_ = rows * 256 * kb_;
    status_at_ = hist_words_ + 8;  // the tile counters between (8 passes at most)
    meta_ = Array::empty({status_at_ + 2 * words}, DType::uint32, be.device());
    status_words_ = words;
  }

  const runtime::Kernel& kernel(const std::string& name) {
    const std::string s = short_name(t_);
    return be_.kernel(cat("sort|", s), cat(name, "_", s), [&] { return render_sort(t_); });
  }
  static std::uint64_t ptr(const Array& a) { return a.defined() ? reinterpret_cast<std::uint64_t>(a.data()) : 0; }
  const Array& keys() const { return keys_[cur_]; }
  const Array& idx() const { return idx_[cur_]; }
  std::int64_t total() const { return rows_ * n_; }

  /// Sorts: from `values_in` (the batch's values, T; null: from keys() and idx(), as complex
  /// sorts do) into `values_out` and `indices_out` (when the last pass writes them: either may
  /// be null), else into keys() and idx().
  void run(std::uint64_t values_in, std::uint64_t values_out, std::uint64_t indices_out, bool descending) {
    const std::uint32_t zero = 0;
    be_.fill(meta_.view({status_at_ + status_words_}, {1}, 0), &zero);  // counts, counters, pass 0's words
    const int dir = descending ? 4 : 0;                                 // kSortDescending
    const std::uint64_t meta = ptr(meta_);
    const std::int64_t grid_cap = std::int64_t{be_.sm_count()} * 8;
    {
      const runtime::Kernel& k = kernel("sort_hist");
      ArgPacker a = packer(k);
      a.add_pointer(values_in ? values_in : ptr(keys())), a.add_pointer(meta), a.add_int(n_), a.add_int(tiles_);
      a.add_int(ntiles_), a.add_int(tile_);
      add_i32(a, values_in ? 1 | dir : 0);
      launch_2d(be_, k, std::min(ntiles_, grid_cap), 1, kThreads, 1, a);
    }
    const bool fused_last = values_out || indices_out;
    const std::vector<int> passes = varying_passes(values_in || fused_last);  // from the counts, before their scan
    {
      const runtime::Kernel& k = kernel("sort_starts");
      ArgPacker a = packer(k);
      a.add_pointer(meta), a.add_int(rows_ * kb_);
      launch_2d(be_, k, std::min(rows_ * kb_, grid_cap), 1, kThreads, 1, a);
    }
    const std::string name = cat(old_ ? "sort_pass" : "sort_sweep", with_idx_ ? "_idx" : "", wide_ ? "_wide" : "");
    const int threads = old_ ? kThreads : sweep_shape(kb_).threads;
    for (std::size_t run = 0; run < passes.size(); ++run) {
      const int pass = passes[run];
      const bool first = run == 0 && values_in, last = run + 1 == passes.size() && fused_last;
      const std::uint64_t status = meta + 4 * static_cast<std::uint64_t>(status_at_ + (run % 2) * status_words_);
      const std::uint64_t status_next =
          meta + 4 * static_cast<std::uint64_t>(status_at_ + (1 - run % 2) * status_words_);
      const runtime::Kernel& k = kernel(name);
      ArgPacker a = packer(k);
      a.add_pointer(first ? values_in : ptr(keys_[cur_])), a.add_pointer(last ? values_out : ptr(keys_[1 - cur_]));
      a.add_pointer(first ? 0 : ptr(idx_[cur_])), a.add_pointer(last ? indices_out : ptr(idx_[1 - cur_]));
      a.add_pointer(meta + 4 * static_cast<std::uint64_t>(pass) * 256);  // row 0's starts; rows step kb * 256
      a.add_pointer(status), a.add_pointer(status_next);
      a.add_pointer(meta + 4 * static_cast<std::uint64_t>(hist_words_ + pass));
      a.add_int(n_), a.add_int(tiles_), a.add_int(ntiles_);
      add_i32(a, 8 * pass);
      add_i32(a, (first ? 1 : 0) | (last ? 2 : 0) | dir);
      launch_2d(be_, k, ntiles_, 1, threads, 1, a);
      cur_ = 1 - cur_;
    }
  }

  /// The passes to run: those whose digit differs between keys (a pass over a digit that every key
  /// shares keeps the order as it is: small integers in wide types skip most of theirs). The counts
  /// are read back only for one long row outside graph capture (a sync, worth it past 2^16 keys);
  /// else every pass runs. need_one: a pass must read the values or write the outputs.
  std::vector<int> varying_passes(bool need_one) {
    std::vector<std::uint32_t> counts;
    if (rows_ == 1 && n_ >= (std::int64_t{1} << 16) && !runtime::Stream::current(be_.index()).is_capturing()) {
      counts.resize(static_cast<std::size_t>(256 * kb_));
      be_.copy_to_host(counts.data(), meta_.data(), counts.size() * sizeof(std::uint32_t));
    }
    std::vector<int> out;
    for (int pass = 0; pass < kb_; ++pass) {
      const auto digit = counts.begin() + 256 * pass;
      if (counts.empty() || std::find(digit, digit + 256, static_cast<std::uint32_t>(n_)) == digit + 256)
        out.push_back(pass);
    }
    if (out.empty() && need_one) out.push_back(kb_ - 1);
    return out;
  }

 private:
  CudaBackend& be_;
  DType t_;
  int kb_;
  std::int64_t rows_, n_;
  bool with_idx_, old_;
  Array keys_[2], idx_[2], meta_;
  std::int64_t tile_ = 0, tiles_ = 0, ntiles_ = 0, hist_words_ = 0, status_at_ = 0, status_words_ = 0;
  bool wide_ = false;
  int cur_ = 0;
};

}  // namespace

void CudaBackend::sort(const Array& in, const Array& values, const Array& indices, bool descending) {
  if (in.size() == 0) return;
  const std::int64_t n = in.shape().back(), rows = in.size() / n;
  if (n > std::int64_t{UINT32_MAX})
    throw NotImplementedError(cat("sort on CUDA devices takes rows of at most 2^32 - 1 elements, got ", n));
  const Array src = ascontiguous(in);
  const DType t = in.dtype();
  const bool cplx = is_complex(t);
  if (values.defined()) note_write(values);
  if (indices.defined()) note_write(indices);
  // rows go in batches whose scratch (digit counts, status words) stays under 256 MiB
  const bool old = old_pass_kernel();
  const bool with_idx = cplx || indices.defined();
  const std::int64_t batch = std::clamp<std::int64_t>((std::int64_t{256} << 20) / scratch_per_row(t, n, old), 1, rows);
  const std::int64_t vbytes = itemsize(t) * n;
  for (std::int64_t r0 = 0; r0 < rows; r0 += batch) {
    const std::int64_t nr = std::min(batch, rows - r0);
    const std::uint64_t at = static_cast<std::uint64_t>(r0);
    const std::uint64_t src_p = RadixSort::ptr(src) + at * vbytes;
    const std::uint64_t val_p = values.defined() ? RadixSort::ptr(values) + at * vbytes : 0;
    const std::uint64_t idx_p = indices.defined() ? RadixSort::ptr(indices) + at * 8 * n : 0;
    RadixSort rs(*this, t, nr, n, with_idx, old);
    if (!cplx) {
      rs.run(src_p, val_p, idx_p, descending);
      continue;
    }
    // complex: three key sorts (secondary, primary, class keys), each key made through the
    // permutation so far, which rides along as the payload
    for (int part = 0; part < 3; ++part) {
      const runtime::Kernel& k = rs.kernel("sort_ckeys");
      ArgPacker a = packer(k);
      a.add_pointer(src_p), a.add_pointer(RadixSort::ptr(rs.keys()));
      a.add_pointer(part == 0 ? 0 : RadixSort::ptr(rs.idx())), a.add_pointer(RadixSort::ptr(rs.idx()));
      a.add_int(rs.total()), a.add_int(n);
      add_i32(a, part);
      add_i32(a, descending);
      launch_grid(k, rs.total(), a);
      rs.run(0, 0, 0, false);  // the parts' keys are complemented already when descending
    }
    const runtime::Kernel& g = rs.kernel("sort_gather");
    ArgPacker b = packer(g);
    b.add_pointer(src_p), b.add_pointer(RadixSort::ptr(rs.idx()));
    b.add_pointer(val_p), b.add_pointer(idx_p);
    b.add_int(rs.total()), b.add_int(n);
    launch_grid(g, rs.total(), b);
  }
}

void CudaBackend::select_ranks(const Array& in, const std::vector<std::int64_t>& ranks, const Array& out) {
  if (ranks.empty()) return;
  note_write(out);
  const DType t = in.dtype();
  const int kb = key_bytes(t);
  const std::int64_t n = in.size(), targets_max = 8;  // kSelectMax
  const std::string s = short_name(t);
  auto k = [&](const char* name) -> const runtime::Kernel& {
    return kernel(cat("sort|", s), cat(name, "_", s), [&] { return render_sort(t); });
  };
  // per launch of up to 8 targets: 8 prefixes, 8 ranks (u64 each), then each digit's counts
  const std::int64_t hist_words = std::int64_t{kb} * targets_max * 256;
  const Array scratch = Array::empty({16 + hist_words / 2}, DType::uint64, device());
  const std::uint64_t base = RadixSort::ptr(scratch), prefix = base, rank = base + 64, hist = base + 128;
  const std::int64_t grid = std::min(ceil_div(n, std::int64_t{kThreads}), std::int64_t{sm_count()} * 4);
  for (std::size_t first = 0; first < ranks.size(); first += targets_max) {
    const int targets = static_cast<int>(std::min<std::size_t>(targets_max, ranks.size() - first));
    const std::uint64_t zero = 0;
    fill(scratch, &zero);
    copy_from_host(reinterpret_cast<void*>(rank), ranks.data() + first, targets * sizeof(std::int64_t));
    for (int pass = 0; pass < kb; ++pass) {
      const int shift = 8 * (kb - 1 - pass);
      const std::uint64_t counts = hist + 4 * static_cast<std::uint64_t>(pass) * targets_max * 256;
      ArgPacker a = packer(k("select_hist"));
      a.add_pointer(RadixSort::ptr(in)), a.add_int(n), a.add_pointer(prefix), a.add_pointer(counts);
      add_i32(a, targets);
      add_i32(a, shift);
      launch_2d(*this, k("select_hist"), grid, 1, kThreads, 1, a);
      ArgPacker b = packer(k("select_step"));
      b.add_pointer(counts), b.add_pointer(prefix), b.add_pointer(rank);
      b.add_pointer(RadixSort::ptr(out) + first * itemsize(t));
      add_i32(b, targets);
      add_i32(b, shift);
      launch_2d(*this, k("select_step"), 1, 1, 32, 1, b);
    }
  }
}

void CudaBackend::search_sorted(const Array& sorted, const Array& needles, const Array& out, bool right) {
  if (needles.size() == 0) return;
  const Array hay = ascontiguous(sorted), want = ascontiguous(needles);
  note_write(out);
  const std::string s = short_name(sorted.dtype());
  const runtime::Kernel& k = kernel(cat("sort|", s), cat("search_", s), [&] { return render_sort(sorted.dtype()); });
  ArgPacker a = packer(k);
  a.add_pointer(RadixSort::ptr(hay)), a.add_int(hay.size()), a.add_pointer(RadixSort::ptr(want));
  a.add_pointer(RadixSort::ptr(out)), a.add_int(want.size());
  add_i32(a, right);
  launch_grid(k, want.size(), a);
}

std::int64_t CudaBackend::unique_runs(const Array& sorted, const Array& perm, const Array& values, const Array& index,
                                      const Array& ends, const Array& inverse, bool equal_nan) {
  const std::int64_t n = sorted.size();
  if (n == 0) return 0;
  for (const Array* out : {&values, &index, &ends, &inverse})
    if (out->defined()) note_write(*out);
  const std::int64_t ntiles = ceil_div(n, std::int64_t{kThreads} * 16);  // kUniqueItems, either kernel
  // status words, then the tile counter and the run count (u64 each)
  const Array meta = Array::empty({ntiles + 2}, DType::uint64, device());
  const std::uint64_t zero = 0;
  fill(meta, &zero);
  const std::uint64_t m = RadixSort::ptr(meta);
  const std::string s = short_name(sorted.dtype());
  const runtime::Kernel& k = kernel(cat("sort|", s), cat(old_pass_kernel() ? "unique_" : "unique_tiles_", s),
                                    [&] { return render_sort(sorted.dtype()); });
  ArgPacker a = packer(k);
  a.add_pointer(RadixSort::ptr(sorted)), a.add_pointer(RadixSort::ptr(perm)), a.add_pointer(RadixSort::ptr(values));
  a.add_pointer(RadixSort::ptr(index)), a.add_pointer(RadixSort::ptr(ends)), a.add_pointer(RadixSort::ptr(inverse));
  a.add_pointer(m), a.add_pointer(m + 8 * static_cast<std::uint64_t>(ntiles));
  a.add_pointer(m + 8 * static_cast<std::uint64_t>(ntiles + 1));
  a.add_int(n);
  add_i32(a, equal_nan);
  launch_2d(*this, k, ntiles, 1, kThreads, 1, a);
  std::int64_t runs = 0;
  copy_to_host(&runs, reinterpret_cast<const char*>(meta.data()) + 8 * (ntiles + 1), sizeof(runs));
  return runs;
}

}  // namespace cupric::cuda_backend
