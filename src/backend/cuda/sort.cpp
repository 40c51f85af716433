// sort.cpp — sorting and searching on the GPU: the renderer of kernels/sort.cuh (one program per
// dtype holding its key making, digit passes, finishing and binary search) and the launchers:
// an LSD radix sort over the rows of a C-contiguous copy, 8 bits a pass, with the temporary
// keys, payloads and counts from the stream-ordered pool.
#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "launch_args.hpp"
#include "render.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

namespace {
constexpr int kThreads = 256;
constexpr std::int64_t kTile = std::int64_t{kThreads} * 8;  // kSortItems
constexpr std::int64_t kChunk = 4096;                       // kSortChunk

/// Bytes of a sort key: the element's, or a complex part's.
int key_bytes(DType t) { return static_cast<int>(is_complex(t) ? itemsize(t) / 2 : itemsize(t)); }
const char* key_type(int bytes) {
  return bytes == 1 ? "unsigned char" : bytes == 2 ? "unsigned short" : bytes == 4 ? "unsigned int" : "unsigned long long";
}
DType key_dtype(int bytes) {
  return bytes == 1 ? DType::uint8 : bytes == 2 ? DType::uint16 : bytes == 4 ? DType::uint32 : DType::uint64;
}
}  // namespace

std::string render_sort(DType t) {
  const std::string s = short_name(t);
  const std::string T = device_type(t);
  const bool cplx = is_complex(t);
  std::string src = cat(include_family("sort"), "using namespace cupric::kernels;\ntypedef ", T, " T;\ntypedef ",
                        key_type(key_bytes(t)), " U;\n");
  auto entry = [&](const std::string& name, const std::string& params, const std::string& body) {
    src += cat("extern \"C\" __global__ void __launch_bounds__(256) ", name, "_", s, "(", params, ") {\n  ", body,
               ";\n}\n");
  };
  if (cplx) {
    entry("sort_ckeys", "const T* in, U* keys, const u32* perm, u32* idx, i64 total, i64 n, int part, int desc",
          "sort_complex_keys<T>(in, keys, perm, idx, total, n, part, desc)");
    entry("sort_gather", "const T* in, const u32* perm, T* values, i64* indices, i64 total, i64 n",
          "sort_gather<T>(in, perm, values, indices, total, n)");
  } else {
    entry("sort_keys", "const T* in, U* keys, u32* idx, i64 total, i64 n, int desc",
          "sort_make_keys<T>(in, keys, idx, total, n, desc)");
    entry("sort_finish", "const U* keys, const u32* idx, T* values, i64* indices, i64 total, int desc",
          "sort_finish<T>(keys, idx, values, indices, total, desc)");
  }
  entry("sort_hist", "const U* keys, u32* counts, i64 n, i64 tiles, i64 ntiles, int shift",
        "sort_histogram<U>(keys, counts, n, tiles, ntiles, shift)");
  entry("sort_sums", "const u32* counts, u32* sums, i64 length, i64 chunks, i64 nchunks",
        "sort_chunk_sums(counts, sums, length, chunks, nchunks)");
  entry("sort_scan", "u32* sums, i64 chunks, i64 rows", "sort_scan_sums(sums, chunks, rows)");
  entry("sort_offsets", "u32* counts, const u32* sums, i64 length, i64 chunks, i64 nchunks",
        "sort_chunk_offsets(counts, sums, length, chunks, nchunks)");
  const std::string scatter_params =
      "const U* kin, U* kout, const u32* iin, u32* iout, const u32* offsets, i64 n, i64 tiles, i64 ntiles, int shift";
  entry("sort_scatter", scatter_params, "sort_scatter<U, false>(kin, kout, iin, iout, offsets, n, tiles, ntiles, shift)");
  entry("sort_scatter_idx", scatter_params,
        "sort_scatter<U, true>(kin, kout, iin, iout, offsets, n, tiles, ntiles, shift)");
  entry("search", "const T* hay, i64 n, const T* needles, i64* out, i64 m, int right",
        "search_sorted<T>(hay, n, needles, out, m, right)");
  return src;
}

namespace {

/// The temporary buffers of a batched sort and the kernels of its dtype.
class RadixSort {
 public:
  RadixSort(CudaBackend& be, DType t, std::int64_t rows, std::int64_t n, bool with_idx)
      : be_(be), t_(t), rows_(rows), n_(n), total_(rows * n), with_idx_(with_idx) {
    const DType kd = key_dtype(key_bytes(t));
    keys_[0] = Array::empty({total_}, kd, be.device());
    keys_[1] = Array::empty({total_}, kd, be.device());
    if (with_idx) {
      idx_[0] = Array::empty({total_}, DType::uint32, be.device());
      idx_[1] = Array::empty({total_}, DType::uint32, be.device());
    }
    tiles_ = ceil_div(n, kTile);
    length_ = tiles_ * 256;
    chunks_ = ceil_div(length_, kChunk);
    counts_ = Array::empty({rows * length_}, DType::uint32, be.device());
    sums_ = Array::empty({rows * chunks_}, DType::uint32, be.device());
  }

  const runtime::Kernel& kernel(const char* name) {
    const std::string s = short_name(t_);
    return be_.kernel(cat("sort|", s), cat(name, "_", s), [&] { return render_sort(t_); });
  }
  static std::uint64_t ptr(const Array& a) { return a.defined() ? reinterpret_cast<std::uint64_t>(a.data()) : 0; }
  const Array& keys() const { return keys_[cur_]; }
  const Array& idx() const { return idx_[cur_]; }
  std::int64_t total() const { return total_; }

  /// One stable pass per key byte over keys() and idx(), which end where the last pass put them.
  void passes() {
    const std::int64_t ntiles = rows_ * tiles_, nchunks = rows_ * chunks_;
    const std::int64_t grid_cap = std::int64_t{be_.sm_count()} * 16;
    for (int byte = 0; byte < key_bytes(t_); ++byte) {
      const Array &kin = keys_[cur_], &kout = keys_[1 - cur_];
      {
        const runtime::Kernel& k = kernel("sort_hist");
        ArgPacker a = packer(k);
        a.add_pointer(ptr(kin)), a.add_pointer(ptr(counts_)), a.add_int(n_), a.add_int(tiles_), a.add_int(ntiles);
        add_i32(a, 8 * byte);
        launch_2d(be_, k, std::min(ntiles, grid_cap), 1, kThreads, 1, a);
      }
      {
        const runtime::Kernel& k = kernel("sort_sums");
        ArgPacker a = packer(k);
        a.add_pointer(ptr(counts_)), a.add_pointer(ptr(sums_)), a.add_int(length_), a.add_int(chunks_);
        a.add_int(nchunks);
        launch_2d(be_, k, std::min(nchunks, grid_cap), 1, kThreads, 1, a);
      }
      {
        const runtime::Kernel& k = kernel("sort_scan");
        ArgPacker a = packer(k);
        a.add_pointer(ptr(sums_)), a.add_int(chunks_), a.add_int(rows_);
        launch_2d(be_, k, std::min(rows_, grid_cap), 1, kThreads, 1, a);
      }
      {
        const runtime::Kernel& k = kernel("sort_offsets");
        ArgPacker a = packer(k);
        a.add_pointer(ptr(counts_)), a.add_pointer(ptr(sums_)), a.add_int(length_), a.add_int(chunks_);
        a.add_int(nchunks);
        launch_2d(be_, k, std::min(nchunks, grid_cap), 1, kThreads, 1, a);
      }
      {
        const runtime::Kernel& k = kernel(with_idx_ ? "sort_scatter_idx" : "sort_scatter");
        ArgPacker a = packer(k);
        a.add_pointer(ptr(kin)), a.add_pointer(ptr(kout)), a.add_pointer(ptr(idx_[cur_])),
            a.add_pointer(ptr(idx_[1 - cur_])), a.add_pointer(ptr(counts_));
        a.add_int(n_), a.add_int(tiles_), a.add_int(ntiles);
        add_i32(a, 8 * byte);
        launch_2d(be_, k, std::min(ntiles, grid_cap), 1, kThreads, 1, a);
      }
      cur_ = 1 - cur_;
    }
  }

 private:
  CudaBackend& be_;
  DType t_;
  std::int64_t rows_, n_, total_;
  bool with_idx_;
  Array keys_[2], idx_[2], counts_, sums_;
  std::int64_t tiles_ = 0, length_ = 0, chunks_ = 0;
  int cur_ = 0;
};

}  // namespace

void CudaBackend::sort(const Array& in, const Array& values, const Array& indices, bool descending) {
  if (in.size() == 0) return;
  const std::int64_t n = in.shape().back(), rows = in.size() / n;
  if (n > std::int64_t{UINT32_MAX})
    throw NotImplementedError(cat("sort on CUDA devices takes rows of at most 2^32 - 1 elements, got ", n));
  const Array src = ascontiguous(in);
  const bool cplx = is_complex(in.dtype());
  RadixSort rs(*this, in.dtype(), rows, n, cplx || indices.defined());
  if (values.defined()) note_write(values);
  if (indices.defined()) note_write(indices);
  if (!cplx) {
    const runtime::Kernel& k = rs.kernel("sort_keys");
    ArgPacker a = packer(k);
    a.add_pointer(RadixSort::ptr(src)), a.add_pointer(RadixSort::ptr(rs.keys())), a.add_pointer(RadixSort::ptr(rs.idx()));
    a.add_int(rs.total()), a.add_int(n);
    add_i32(a, descending);
    launch_grid(k, rs.total(), a);
    rs.passes();
    const runtime::Kernel& f = rs.kernel("sort_finish");
    ArgPacker b = packer(f);
    b.add_pointer(RadixSort::ptr(rs.keys())), b.add_pointer(RadixSort::ptr(rs.idx()));
    b.add_pointer(RadixSort::ptr(values)), b.add_pointer(RadixSort::ptr(indices));
    b.add_int(rs.total());
    add_i32(b, descending);
    launch_grid(f, rs.total(), b);
    return;
  }
  // complex: three sorts (secondary, primary, class keys), each key made through the
  // permutation so far, which rides along as the payload
  for (int part = 0; part < 3; ++part) {
    const runtime::Kernel& k = rs.kernel("sort_ckeys");
    ArgPacker a = packer(k);
    a.add_pointer(RadixSort::ptr(src)), a.add_pointer(RadixSort::ptr(rs.keys()));
    a.add_pointer(part == 0 ? 0 : RadixSort::ptr(rs.idx())), a.add_pointer(RadixSort::ptr(rs.idx()));
    a.add_int(rs.total()), a.add_int(n);
    add_i32(a, part);
    add_i32(a, descending);
    launch_grid(k, rs.total(), a);
    rs.passes();
  }
  const runtime::Kernel& g = rs.kernel("sort_gather");
  ArgPacker b = packer(g);
  b.add_pointer(RadixSort::ptr(src)), b.add_pointer(RadixSort::ptr(rs.idx()));
  b.add_pointer(RadixSort::ptr(values)), b.add_pointer(RadixSort::ptr(indices));
  b.add_int(rs.total()), b.add_int(n);
  launch_grid(g, rs.total(), b);
}

void CudaBackend::search_sorted(const Array& sorted, const Array& needles, const Array& out, bool right) {
  if (needles.size() == 0) return;
  const Array hay = ascontiguous(sorted), want = ascontiguous(needles);
  note_write(out);
  const std::string s = short_name(sorted.dtype());
  const runtime::Kernel& k =
      kernel(cat("sort|", s), cat("search_", s), [&] { return render_sort(sorted.dtype()); });
  ArgPacker a = packer(k);
  a.add_pointer(RadixSort::ptr(hay)), a.add_int(hay.size()), a.add_pointer(RadixSort::ptr(want));
  a.add_pointer(RadixSort::ptr(out)), a.add_int(want.size());
  add_i32(a, right);
  launch_grid(k, want.size(), a);
}

}  // namespace cupric::cuda_backend
