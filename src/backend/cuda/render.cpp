// render.cpp — CUDA C++ source text for the array kernels. Every kernel reads its operands in
// their stored dtypes and converts with cu::convert (convert.h), so no host-side buffering or
// casting pass is needed; expressions come verbatim from the ufunc table (ops are data).
#include "render.hpp"

#include <algorithm>

#include "cupric/errors.hpp"

namespace cupric::cuda_backend {

const char* device_type(DType t) {
  switch (t) {
    case DType::bool_:
      return "bool";
    case DType::int8:
      return "std::int8_t";
    case DType::uint8:
      return "std::uint8_t";
    case DType::int16:
      return "std::int16_t";
    case DType::uint16:
      return "std::uint16_t";
    case DType::int32:
      return "std::int32_t";
    case DType::uint32:
      return "std::uint32_t";
    case DType::int64:
      return "std::int64_t";
    case DType::uint64:
      return "std::uint64_t";
    case DType::float16:
      return "cupric::float16";
    case DType::bfloat16:
      return "cupric::bfloat16";
    case DType::float32:
      return "float";
    case DType::float64:
      return "double";
    case DType::complex64:
      return "std::complex<float>";
    case DType::complex128:
      return "std::complex<double>";
  }
  return "void";
}

std::string short_name(DType t) {
  // kind + size names every dtype but one: bfloat16 shares float16's ("f2")
  return t == DType::bfloat16 ? std::string("bf2") : cat(static_cast<char>(kind(t)), itemsize(t));
}

namespace {

const char* kPrelude = R"(#include "cupric/convert.h"
typedef long long i64;
template <class T, int V> struct alignas(sizeof(T) * V) Vec { T v[V]; };
template <int N> struct Geo { i64 nd; i64 shape[16]; i64 st[N][16]; };
// Byte offsets of element i (C order over g.shape) for each of the N operands.
template <int N> __device__ __forceinline__ void offsets_of(const Geo<N>& g, i64 i, i64* o) {
#pragma unroll
  for (int k = 0; k < N; ++k) o[k] = 0;
  for (int d = (int)g.nd - 1; d >= 0; --d) {
    const i64 s = g.shape[d];
    const i64 q = i / s;
    const i64 idx = i - q * s;
    i = q;
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] += idx * g.st[k][d];
  }
}
template <class T> __device__ __forceinline__ const T& at(const void* p, i64 off) {
  return *reinterpret_cast<const T*>(static_cast<const char*>(p) + off);
}
template <class T> __device__ __forceinline__ T& at_mut(void* p, i64 off) {
  return *reinterpret_cast<T*>(static_cast<char*>(p) + off);
}
#define CUPRIC_GRID_LOOP(i, start, n) \
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x + (start); i < (n); i += (i64)gridDim.x * blockDim.x)
)";

std::string typedefs(const MapSpec& s) {
  std::string out;
  for (std::size_t k = 0; k < s.in_store.size(); ++k)
    out += cat("typedef ", device_type(s.in_store[k]), " S", k, "; typedef ", device_type(s.in_compute[k]), " C", k,
               ";\n");
  out += cat("typedef ", device_type(s.out_store), " SO; typedef ", device_type(s.out_compute), " CO;\n");
  return out;
}

std::string apply_function(const MapSpec& s) {
  const std::size_t nin = s.in_store.size();
  std::string params, extra;
  for (std::size_t k = 0; k < nin; ++k) params += cat(k ? ", " : "", "C", k, " ", static_cast<char>('a' + k));
  if (nin == 0) params = "";
  if (nin == 1) extra = "  [[maybe_unused]] C0 b = a; [[maybe_unused]] C0 c = a;\n";
  if (nin == 2) extra = "  [[maybe_unused]] C1 c = b;\n";
  return cat("__device__ __forceinline__ SO apply_op(", params, ") {\n", extra,
             "  return cu::convert<SO>(static_cast<CO>(", s.expression, "));\n}\n");
}

std::string kernel_params(const MapSpec& s) {
  std::string p;
  for (std::size_t k = 0; k < s.in_store.size(); ++k) {
    if (s.in_mode[k] == InputMode::value)
      p += cat("C", k, " s", k, ", ");
    else
      p += cat("const S", k, "* __restrict__ p", k, ", ");
  }
  p += "SO* __restrict__ po, ";
  if (s.where) p += "const bool* __restrict__ pw, ";
  p += "i64 n";
  return p;
}

/// Values read once per thread (broadcast pointers).
std::string broadcast_loads(const MapSpec& s) {
  std::string out;
  for (std::size_t k = 0; k < s.in_store.size(); ++k)
    if (s.in_mode[k] == InputMode::broadcast)
      out += cat("  const C", k, " s", k, " = cu::convert<C", k, ">(*p", k, ");\n");
  return out;
}

/// The argument list of apply_op, `elem(k)` giving input k's stored value.
template <class F>
std::string call_args(const MapSpec& s, F elem) {
  std::string out;
  for (std::size_t k = 0; k < s.in_store.size(); ++k) {
    if (k) out += ", ";
    if (s.in_mode[k] == InputMode::array)
      out += cat("cu::convert<C", k, ">(", elem(k), ")");
    else
      out += cat("s", k);
  }
  return out;
}

/// The contiguous path: 16-byte vectors, grid-stride, each thread's next vectors requested one
/// iteration ahead (two loads in flight per input without a second inlined copy of the op).
std::string vec_kernel(const MapSpec& s) {
  std::string decl, first, next, shift;
  for (std::size_t k = 0; k < s.in_store.size(); ++k)
    if (s.in_mode[k] == InputMode::array) {
      decl += cat("  Vec<S", k, ", V> x", k, ", y", k, ";\n");
      first += cat("    x", k, " = reinterpret_cast<const Vec<S", k, ", V>*>(p", k, ")[j];\n");
      next += cat("      y", k, " = reinterpret_cast<const Vec<S", k, ", V>*>(p", k, ")[j + step];\n");
      shift += cat("    x", k, " = y", k, ";\n");
    }
  if (s.where) {
    decl += "  Vec<bool, V> w, yw;\n";
    first += "    w = reinterpret_cast<const Vec<bool, V>*>(pw)[j];\n";
    next += "      yw = reinterpret_cast<const Vec<bool, V>*>(pw)[j + step];\n";
    shift += "    w = yw;\n";
  }
  const std::string r =
      s.where ? "    Vec<SO, V> r = reinterpret_cast<const Vec<SO, V>*>(po)[j];\n" : "    Vec<SO, V> r;\n";
  const std::string guard = s.where ? "if (w.v[e]) " : "";
  return cat("extern \"C\" __global__ void __launch_bounds__(256) ", s.name, "_vec(", kernel_params(s), ") {\n",
             "  constexpr int V = ", s.vector_width(), ";\n", broadcast_loads(s), "  const i64 nv = n / V;\n",
             "  const i64 step = (i64)gridDim.x * blockDim.x;\n", decl,
             "  i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;\n", "  if (j < nv) {\n", first, "  }\n",
             "  for (; j < nv; j += step) {\n", "    if (j + step < nv) {\n", next, "    }\n", r,
             "#pragma unroll\n    for (int e = 0; e < V; ++e) ", guard, "r.v[e] = apply_op(",
             call_args(s, [](std::size_t k) { return cat("x", k, ".v[e]"); }), ");\n",
             "    reinterpret_cast<Vec<SO, V>*>(po)[j] = r;\n", shift, "  }\n", "  CUPRIC_GRID_LOOP(i, nv * V, n) {\n",
             s.where ? "    if (!pw[i]) continue;\n" : "", "    po[i] = apply_op(",
             call_args(s, [](std::size_t k) { return cat("p", k, "[i]"); }), ");\n  }\n}\n");
}

std::string one_kernel(const MapSpec& s) {
  return cat("extern \"C\" __global__ void __launch_bounds__(256) ", s.name, "_one(", kernel_params(s), ") {\n",
             broadcast_loads(s), "  CUPRIC_GRID_LOOP(i, 0, n) {\n", s.where ? "    if (!pw[i]) continue;\n" : "",
             "    po[i] = apply_op(", call_args(s, [](std::size_t k) { return cat("p", k, "[i]"); }), ");\n  }\n}\n");
}

std::string nd_kernel(const MapSpec& s) {
  const std::size_t nin = s.in_store.size();
  const std::size_t nop = nin + 1 + (s.where ? 1 : 0);
  return cat("extern \"C\" __global__ void __launch_bounds__(256) ", s.name, "_nd(", kernel_params(s), ", const Geo<",
             nop, "> g) {\n", broadcast_loads(s), "  CUPRIC_GRID_LOOP(i, 0, n) {\n    i64 o[", nop,
             "];\n    offsets_of(g, i, o);\n",
             s.where ? cat("    if (!at<bool>(pw, o[", nin + 1, "])) continue;\n") : "", "    at_mut<SO>(po, o[", nin,
             "]) = apply_op(", call_args(s, [](std::size_t k) { return cat("at<S", k, ">(p", k, ", o[", k, "])"); }),
             ");\n  }\n}\n");
}

/// A 2-d copy whose input is contiguous along one dimension (x, extent nx) and whose output is
/// contiguous along the other (y, extent ny): 32x32 tiles staged in shared memory, so that both
/// the reads and the writes are coalesced. Block (32, 8); grid (ceil(nx/32), ceil(ny/32)).
std::string transpose_kernel(const MapSpec& s) {
  return cat("extern \"C\" __global__ void __launch_bounds__(256) ", s.name,
             R"(_t2(const S0* __restrict__ p0, SO* __restrict__ po, i64 nx, i64 ny, i64 in_sy, i64 out_sx) {
  __shared__ alignas(16) unsigned char raw[32 * 33 * sizeof(SO)];
  SO* tile = reinterpret_cast<SO*>(raw);
  const i64 x0 = (i64)blockIdx.x * 32, y0 = (i64)blockIdx.y * 32;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int k = 0; k < 32; k += 8) {
    const i64 x = x0 + tx, y = y0 + ty + k;
    if (x < nx && y < ny) tile[(ty + k) * 33 + tx] = apply_op(cu::convert<C0>(p0[x + y * in_sy]));
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < 32; k += 8) {
    const i64 x = x0 + ty + k, y = y0 + tx;
    if (x < nx && y < ny) po[y + x * out_sx] = tile[tx * 33 + ty + k];
  }
}
)");
}

}  // namespace

int MapSpec::vector_width() const {
  int widest = itemsize(out_store);
  for (std::size_t k = 0; k < in_store.size(); ++k)
    if (in_mode[k] == InputMode::array) widest = std::max(widest, itemsize(in_store[k]));
  return std::max(1, 16 / widest);
}

std::string MapSpec::key() const {
  std::string k = cat(name, "|", expression, "|", short_name(out_store), short_name(out_compute), where ? "w" : "",
                      transpose ? "t" : "", path ? std::string("|") + path : std::string());
  for (std::size_t i = 0; i < in_store.size(); ++i)
    k += cat("|", short_name(in_store[i]), short_name(in_compute[i]), static_cast<int>(in_mode[i]));
  return k;
}

std::string render_map(const MapSpec& s) {
  if (s.in_store.size() != s.in_compute.size() || s.in_store.size() != s.in_mode.size())
    throw ValueError(cat("render_map: inconsistent input lists for ", s.name));
  auto on = [&](char p) { return s.path == 0 || s.path == p; };
  return cat(kPrelude, typedefs(s), apply_function(s), on('v') ? vec_kernel(s) : "", on('o') ? one_kernel(s) : "",
             on('n') ? nd_kernel(s) : "", s.transpose && on('t') ? transpose_kernel(s) : "");
}

std::string render_arange(DType t) {
  const bool integer = kind(t) == DTypeKind::signed_int || kind(t) == DTypeKind::unsigned_int;
  const char* params = integer ? "unsigned long long start, unsigned long long step" : "double start, double step";
  const char* value = integer ? "(T)(start + (unsigned long long)i * step)"
                              : "cu::convert<T>(__dadd_rn(start, __dmul_rn((double)i, step)))";
  return cat(kPrelude, "typedef ", device_type(t), " T;\n",
             "extern \"C\" __global__ void __launch_bounds__(256) arange_", short_name(t), "(T* __restrict__ out, ",
             params, ", i64 n) {\n", "  CUPRIC_GRID_LOOP(i, 0, n) out[i] = ", value, ";\n}\n");
}

std::string render_random(DType t) {
  const bool integer = kind(t) == DTypeKind::signed_int || kind(t) == DTypeKind::unsigned_int;
  std::string body;
  if (integer) {
    // two values per block, from words (0, 1) and (2, 3): as src/backend/cpu/random.cpp
    body = R"(  CUPRIC_GRID_LOOP(b, 0, (n + 1) / 2) {
    const cu::Philox4 w = cu::philox4x32_10(counter + (unsigned long long)b, 0, key);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      if (2 * b + k >= n) break;
      const unsigned long long x = ((unsigned long long)w.v[2 * k] << 32) | w.v[2 * k + 1];
      const unsigned long long off = range == 0 ? x : cu::bounded(w.v[2 * k], w.v[2 * k + 1], range);
      out[2 * b + k] = (T)((unsigned long long)low + off);
    }
  }
)";
  } else {
    const bool f32 = t == DType::float32;
    body = cat("  constexpr int per = ", f32 ? 4 : 2, ";\n",
               "  const bool aligned = reinterpret_cast<unsigned long long>(out) % sizeof(Vec<T, per>) == 0;\n",
               "  const bool unit = dist == 0 && a == 0.0 && b_ == 1.0;\n",
               R"(  CUPRIC_GRID_LOOP(b, 0, (n + per - 1) / per) {
    const cu::Philox4 w = cu::philox4x32_10(counter + (unsigned long long)b, 0, key);
    T u[per], v[per];
)",
               f32 ? "    for (int k = 0; k < 4; ++k) u[k] = cu::uniform_float(w.v[k]);\n"
                   : "    u[0] = cu::uniform_double(w.v[0], w.v[1]);\n    u[1] = cu::uniform_double(w.v[2], w.v[3]);\n",
               R"(    if (unit) {  // [0, 1): a + (b - a) * u is u itself, exactly
      for (int k = 0; k < per; ++k) v[k] = u[k];
    } else if (dist == 0) {
      for (int k = 0; k < per; ++k) v[k] = (T)__dadd_rn(a, __dmul_rn(b_ - a, (double)u[k]));
    } else if (dist == 2) {
      for (int k = 0; k < per; ++k) v[k] = (T)__dmul_rn(-a, log1p(-(double)u[k]));
    } else {
      for (int k = 0; k < per; k += 2) {
        const T radius = sqrt(T(-2) * log(T(1) - u[k]));
        const T theta = (T)6.283185307179586 * u[k + 1];
        v[k] = (T)__dadd_rn(a, __dmul_rn(b_, (double)(radius * cos(theta))));
        v[k + 1] = (T)__dadd_rn(a, __dmul_rn(b_, (double)(radius * sin(theta))));
      }
    }
    const i64 first = b * per;
    if (aligned && first + per <= n) {  // one 8- or 16-byte store
      Vec<T, per> w;
      for (int k = 0; k < per; ++k) w.v[k] = v[k];
      *reinterpret_cast<Vec<T, per>*>(out + first) = w;
    } else {
      for (int k = 0; k < per; ++k)
        if (first + k < n) out[first + k] = v[k];
    }
  }
)");
  }
  return cat(kPrelude, "#include \"cupric/philox.h\"\ntypedef ", device_type(t), " T;\n",
             "extern \"C\" __global__ void __launch_bounds__(256) random_", short_name(t),
             "(T* __restrict__ out, i64 n, unsigned long long key, unsigned long long counter, int dist, double a, "
             "double b_, long long low, unsigned long long range) {\n",
             integer ? "  (void)dist; (void)a; (void)b_;\n" : "  (void)low; (void)range;\n", body, "}\n");
}

const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::prod:
      return "prod";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
    case ReduceOp::fmin:
      return "fmin";
    case ReduceOp::fmax:
      return "fmax";
    case ReduceOp::any:
      return "any";
    case ReduceOp::all:
      return "all";
  }
  return "?";
}

DType reduce_acc(ReduceOp op, DType out) {
  const bool half = out == DType::float16 || out == DType::bfloat16;
  if (op == ReduceOp::any || op == ReduceOp::all) return DType::bool_;
  if (op == ReduceOp::sum || op == ReduceOp::prod) {
    if (half || out == DType::float32) return DType::float64;  // better than pairwise float32
    if (out == DType::complex64) return DType::complex128;
    return out;
  }
  return half ? DType::float32 : out;
}

namespace {
// Shared by the reduction kernels. Every thread's accumulator starts valid: from the identity, or
// (min/max: no identity) from the first element of its block's segment, which the idempotent
// combine may see twice. VW elements make one 16-byte vector.
const char* kReduceCommon = R"(
constexpr int VW = sizeof(S) >= 16 ? 1 : 16 / (int)sizeof(S);
typedef Vec<S, VW> SV;
template <class T> __device__ __forceinline__ T shfl_down(T v, int d) {
  constexpr int W = (sizeof(T) + 3) / 4;
  alignas(alignof(T) > 4 ? alignof(T) : 4) unsigned w[W] = {};
  *reinterpret_cast<T*>(w) = v;
#pragma unroll
  for (int k = 0; k < W; ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], d);
  return *reinterpret_cast<const T*>(w);
}
// the combination of the 256 threads' values, valid in thread 0 (sw: 8 values of shared memory)
__device__ __forceinline__ A block_reduce(A v, A* sw, int t) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = combine(v, shfl_down(v, d));
  __syncthreads();
  if ((t & 31) == 0) sw[t >> 5] = v;
  __syncthreads();
  if (t == 0)
    for (int w = 1; w < 8; ++w) v = combine(v, sw[w]);
  return v;
}
// partial 1: [output][split] (row kernel), 2: [split][output] (column kernels), 0: the result
__device__ __forceinline__ void finish(void* out, i64 o, i64 out_off, A v, int partial, i64 nout) {
  if (partial == 1) reinterpret_cast<A*>(out)[o * gridDim.y + blockIdx.y] = v;
  else if (partial == 2) reinterpret_cast<A*>(out)[blockIdx.y * nout + o] = v;
  else at_mut<O>(out, out_off) = cu::convert<O>(v);
}
__device__ __forceinline__ i64 red_offset(const Geo<1>& red, i64 j) {
  if (red.nd == 1) return j * red.st[0][0];
  i64 o[1];
  offsets_of(red, j, o);
  return o[0];
}
// acc combined with p[t], p[t + nt], ... below len: 16-byte vector loads between a scalar head
// (to the first aligned element) and a scalar tail
__device__ __forceinline__ void acc_contiguous(A& acc, const S* p, i64 len, int t, int nt) {
  const i64 mis = (i64)((reinterpret_cast<unsigned long long>(p) / sizeof(S)) % VW);
  const i64 head = mis ? min(len, (i64)(VW - mis)) : 0;
  if (t < head) acc = combine(acc, load(p[t]));
  const SV* pv = reinterpret_cast<const SV*>(p + head);
  const i64 nv = (len - head) / VW;
#pragma unroll 4
  for (i64 j = t; j < nv; j += nt) {
    const SV w = pv[j];
#pragma unroll
    for (int k = 0; k < VW; ++k) acc = combine(acc, load(w.v[k]));
  }
  for (i64 j = head + nv * VW + t; j < len; j += nt) acc = combine(acc, load(p[j]));
}
)";
}  // namespace

std::string render_reduce(ReduceOp op, DType in, DType out, bool partials) {
  const DType acc = reduce_acc(op, out);
  const bool boolean = op == ReduceOp::any || op == ReduceOp::all;
  // Partials (second pass) arrive in the acc type and are read as they are.
  const std::string load = partials ? "x" : boolean ? "cu::convert<bool>(x)" : "cu::convert<A>(cu::convert<O>(x))";
  std::string combine, identity;
  bool idempotent = false;  // no identity: seeded from the segment's first element
  switch (op) {
    case ReduceOp::sum:
      combine = "static_cast<A>(x + y)";
      identity = "cu::convert<A>(0)";
      break;
    case ReduceOp::prod:
      combine = "static_cast<A>(cu::multiply(x, y))";
      identity = "cu::convert<A>(1)";
      break;
    case ReduceOp::min:
      combine = "cu::minimum(x, y)";
      idempotent = true;
      break;
    case ReduceOp::max:
      combine = "cu::maximum(x, y)";
      idempotent = true;
      break;
    case ReduceOp::fmin:
      combine = "cu::fmin(x, y)";
      idempotent = true;
      break;
    case ReduceOp::fmax:
      combine = "cu::fmax(x, y)";
      idempotent = true;
      break;
    case ReduceOp::any:
      combine = "x || y";
      identity = "false";
      break;
    case ReduceOp::all:
      combine = "x && y";
      identity = "true";
      break;
  }
  if (idempotent) identity = "cu::convert<A>(0)";  // written only for an empty reduction, which the caller rejects
  const std::string name =
      cat("reduce_", reduce_name(op), "_", short_name(in), "_", short_name(out), partials ? "_partials" : "");
  const std::string params =
      "(const S* __restrict__ in, void* __restrict__ out, i64 nout, i64 nred, i64 chunk, int partial, const Geo<2> "
      "keep, const Geo<1> red)";
  return cat(kPrelude, "typedef ", device_type(in), " S; typedef ", device_type(out), " O; typedef ", device_type(acc),
             " A;\n", "__device__ __forceinline__ A load(const S& x) { return ", load, "; }\n",
             "__device__ __forceinline__ A combine(A x, A y) { return ", combine, "; }\n",
             "__device__ __forceinline__ A identity() { return ", identity, "; }\n",
             "constexpr bool kSeedFromData = ", idempotent ? "true" : "false", ";\n", kReduceCommon,
             // rows: a block per (output, split) (grid-stride over outputs), 256 threads along the
             // reduced elements; vector loads when they are contiguous
             "extern \"C\" __global__ void __launch_bounds__(256) ", name, "_rows", params, R"( {
  __shared__ alignas(16) unsigned char raw[8 * sizeof(A)];
  A* sw = reinterpret_cast<A*>(raw);
  const int t = threadIdx.x;
  const bool unit = red.nd == 1 && red.st[0][0] == (i64)sizeof(S);
  for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {
    i64 ko[2];
    offsets_of(keep, o, ko);
    const char* base = reinterpret_cast<const char*>(in) + ko[0];
    const i64 j0 = (i64)blockIdx.y * chunk;
    const i64 j1 = min(nred, j0 + chunk);
    if (j0 >= j1) {  // an empty reduction (nred == 0)
      if (t == 0) finish(out, o, ko[1], identity(), partial, nout);
      continue;
    }
    A acc = kSeedFromData ? load(at<S>(base, red_offset(red, j0))) : identity();
    if (unit) {
      acc_contiguous(acc, reinterpret_cast<const S*>(base) + j0, j1 - j0, t, 256);
    } else {
#pragma unroll 4
      for (i64 j = j0 + t; j < j1; j += 256) acc = combine(acc, load(at<S>(base, red_offset(red, j))));
    }
    acc = block_reduce(acc, sw, t);
    if (t == 0) finish(out, o, ko[1], acc, partial, nout);
  }
}
)",
             // cols: 32 contiguous outputs per block (coalesced), 8 rows of threads along the reduced elements
             "extern \"C\" __global__ void __launch_bounds__(256) ", name, "_cols", params, R"( {
  __shared__ alignas(16) unsigned char raw[256 * sizeof(A)];
  A* sv = reinterpret_cast<A*>(raw);
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 32 + tx;
  const i64 o = (i64)blockIdx.x * 32 + tx;
  const i64 j0 = (i64)blockIdx.y * chunk;
  const i64 j1 = min(nred, j0 + chunk);
  i64 ko[2] = {0, 0};
  A acc = identity();
  if (o < nout) {
    offsets_of(keep, o, ko);
    const char* base = reinterpret_cast<const char*>(in) + ko[0];
    if (kSeedFromData && j0 < j1) acc = load(at<S>(base, red_offset(red, j0)));
#pragma unroll 4
    for (i64 j = j0 + ty; j < j1; j += 8) acc = combine(acc, load(at<S>(base, red_offset(red, j))));
  }
  sv[t] = acc;
  __syncthreads();
  if (ty == 0 && o < nout) {
    A r = sv[tx];
    for (int y = 1; y < 8; ++y) r = combine(r, sv[y * 32 + tx]);
    finish(out, o, ko[1], r, partial, nout);
  }
}
)",
             // colsv: as cols, each thread owning VW adjacent outputs read with one vector load per row
             // (the caller checks: one kept and one reduced dimension, 16-byte aligned rows, nout % VW == 0)
             "extern \"C\" __global__ void __launch_bounds__(256) ", name, "_colsv", params, R"( {
  __shared__ alignas(16) unsigned char raw[256 * VW * sizeof(A)];
  A* sv = reinterpret_cast<A*>(raw);
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 32 + tx;
  const i64 o0 = ((i64)blockIdx.x * 32 + tx) * VW;
  const i64 j0 = (i64)blockIdx.y * chunk;
  const i64 j1 = min(nred, j0 + chunk);
  const i64 rs = red.st[0][0];
  A acc[VW];
#pragma unroll
  for (int k = 0; k < VW; ++k) acc[k] = identity();
  if (o0 < nout) {
    const char* base = reinterpret_cast<const char*>(in) + o0 * (i64)sizeof(S);
    if (kSeedFromData) {
      const SV w = at<SV>(base, j0 * rs);
#pragma unroll
      for (int k = 0; k < VW; ++k) acc[k] = load(w.v[k]);
    }
#pragma unroll 4
    for (i64 j = j0 + ty; j < j1; j += 8) {
      const SV w = at<SV>(base, j * rs);
#pragma unroll
      for (int k = 0; k < VW; ++k) acc[k] = combine(acc[k], load(w.v[k]));
    }
  }
#pragma unroll
  for (int k = 0; k < VW; ++k) sv[k * 256 + t] = acc[k];
  __syncthreads();
  if (ty == 0 && o0 < nout) {
#pragma unroll
    for (int k = 0; k < VW; ++k) {
      A r = sv[k * 256 + tx];
      for (int y = 1; y < 8; ++y) r = combine(r, sv[k * 256 + y * 32 + tx]);
      finish(out, o0 + k, (o0 + k) * keep.st[1][0], r, partial, nout);
    }
  }
}
)");
}

std::string render_arg_reduce(ArgReduceOp op, DType in) {
  const bool half = in == DType::float16 || in == DType::bfloat16;
  const bool is_max = op == ArgReduceOp::argmax;
  const std::string name = cat(is_max ? "argmax_" : "argmin_", short_name(in));
  return cat(kPrelude, "typedef ", device_type(in), " S; typedef ", half ? "float" : device_type(in), " C;\n",
             "__device__ __forceinline__ bool better(C x, C y) { return ", is_max ? "cu::less(y, x)" : "cu::less(x, y)",
             "; }\n", R"(
template <class T> __device__ __forceinline__ bool is_nan(T v) { return !(v == v); }
struct Q { C v; i64 i; };
// the winner of two candidates: NaN first, then the extreme, then the smaller index
__device__ __forceinline__ Q pick(Q x, Q y) {
  if (y.i < 0) return x;
  if (x.i < 0) return y;
  const bool xn = is_nan(x.v), yn = is_nan(y.v);
  if (xn || yn) return (xn && yn) ? (x.i < y.i ? x : y) : (xn ? x : y);
  if (better(x.v, y.v)) return x;
  if (better(y.v, x.v)) return y;
  return x.i < y.i ? x : y;
}
extern "C" __global__ void __launch_bounds__(256) )",
             name,
             R"((const S* __restrict__ in, i64* __restrict__ out, i64 nout, i64 len, i64 step, const Geo<2> keep) {
  __shared__ alignas(16) unsigned char raw[256 * sizeof(C)];
  __shared__ i64 idx[256];
  C* sv = reinterpret_cast<C*>(raw);
  const int t = threadIdx.x;
  for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {
    i64 ko[2];
    offsets_of(keep, o, ko);
    const char* base = reinterpret_cast<const char*>(in) + ko[0];
    Q q{C(), -1};
    for (i64 j = t; j < len; j += 256) q = pick(q, Q{cu::convert<C>(at<S>(base, j * step)), j});
    sv[t] = q.v;
    idx[t] = q.i;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
      if (t < s) {
        const Q r = pick(Q{sv[t], idx[t]}, Q{sv[t + s], idx[t + s]});
        sv[t] = r.v;
        idx[t] = r.i;
      }
      __syncthreads();
    }
    if (t == 0) at_mut<i64>(out, ko[1]) = idx[0];
    __syncthreads();
  }
}
)");
}

std::string render_scan(ScanOp op, DType in, DType out) {
  const bool half = out == DType::float16 || out == DType::bfloat16;
  const bool sum = op == ScanOp::cumsum;
  const std::string raw_step = sum ? "x + y" : "cu::multiply(x, y)";
  // float16/bfloat16: float32 running value rounded after every step, sequentially (as NumPy)
  const std::string step = half ? cat("cu::convert<A>(cu::convert<O>(static_cast<A>(", raw_step, ")))")
                                : cat("static_cast<A>(", raw_step, ")");
  const std::string name = cat(sum ? "cumsum_" : "cumprod_", short_name(in), "_", short_name(out));
  return cat(kPrelude, "typedef ", device_type(in), " S; typedef ", device_type(out), " O; typedef ",
             half ? "float" : device_type(out), " A;\n",
             "__device__ __forceinline__ A load(const S& x) { return cu::convert<A>(cu::convert<O>(x)); }\n",
             "__device__ __forceinline__ A step(A x, A y) { return ", step, "; }\n",
             "__device__ __forceinline__ A identity() { return cu::convert<A>(", sum ? 0 : 1, "); }\n",
             "extern \"C\" __global__ void __launch_bounds__(256) ", name,
             R"((const S* in, O* out, i64 nlines, i64 len, i64 in_step, i64 out_step, const Geo<2> lines) {
  __shared__ alignas(16) unsigned char raw[256 * sizeof(A)];
  A* sv = reinterpret_cast<A*>(raw);
  const int t = threadIdx.x;
  for (i64 line = blockIdx.x; line < nlines; line += gridDim.x) {
    i64 lo[2];
    offsets_of(lines, line, lo);
    const char* src = reinterpret_cast<const char*>(in) + lo[0];
    char* dst = reinterpret_cast<char*>(out) + lo[1];
)",
             half ? R"(    if (t == 0) {
      A run = identity();
      for (i64 j = 0; j < len; ++j) {
        run = j == 0 ? cu::convert<A>(cu::convert<O>(load(at<S>(src, j * in_step)))) : step(run, load(at<S>(src, j * in_step)));
        at_mut<O>(dst, j * out_step) = cu::convert<O>(run);
      }
    }
    __syncthreads();
  }
}
)"
                  : R"(    A carry = identity();
    for (i64 base = 0; base < len; base += 256) {
      const i64 j = base + t;
      sv[t] = j < len ? load(at<S>(src, j * in_step)) : identity();
      __syncthreads();
      for (int off = 1; off < 256; off <<= 1) {
        const A u = t >= off ? step(sv[t - off], sv[t]) : sv[t];
        __syncthreads();
        sv[t] = u;
        __syncthreads();
      }
      if (j < len) at_mut<O>(dst, j * out_step) = cu::convert<O>(base == 0 ? sv[t] : step(carry, sv[t]));
      carry = base == 0 ? sv[255] : step(carry, sv[255]);
      __syncthreads();
    }
  }
}
)");
}

std::string render_gather(int isz) {
  const char* type = isz == 1   ? "unsigned char"
                     : isz == 2 ? "unsigned short"
                     : isz == 4 ? "unsigned int"
                     : isz == 8 ? "unsigned long long"
                                : "U16";
  return cat(
      kPrelude, "struct alignas(8) U16 { unsigned long long lo, hi; };\ntypedef ", type, " U;\n",
      "extern \"C\" __global__ void __launch_bounds__(256) gather_", isz,
      R"((const char* src, char* out, const i64* __restrict__ offs, i64 n, i64 per, i64 out_step, const Geo<2> g) {
  CUPRIC_GRID_LOOP(e, 0, n * per) {
    const i64 i = e / per;
    i64 o[2];
    offsets_of(g, e - i * per, o);
    at_mut<U>(out, i * out_step + o[1]) = at<U>(src, offs[i] * )",
      isz, R"( + o[0]);
  }
}
// scatter: one thread per element of a row, rows in index order, so the last write wins
extern "C" __global__ void __launch_bounds__(256) scatter_)",
      isz,
      R"((char* dst, const char* values, const i64* __restrict__ offs, i64 n, i64 per, i64 values_step, const Geo<2> g) {
  CUPRIC_GRID_LOOP(r, 0, per) {
    i64 o[2];
    offsets_of(g, r, o);
    for (i64 i = 0; i < n; ++i) at_mut<U>(dst, offs[i] * )",
      isz, R"( + o[0]) = at<U>(values, i * values_step + o[1]);
  }
}
)");
}

const std::string& prelude() {
  static const std::string text = kPrelude;
  return text;
}

std::vector<std::string> batched_sources(bool common_only, std::size_t per_batch) {
  // every source starts with the prelude; the rest goes into a namespace of its own, with C++
  // linkage, so that many fit one NVRTC call (a test of the renderers, not what launches use)
  std::vector<std::string> batches;
  std::string current;
  std::size_t count = 0;
  const std::string philox = "#include \"cupric/philox.h\"\n";
  for (auto& [label, source] : all_sources(common_only)) {
    std::string body = source.substr(prelude().size());
    if (body.rfind(philox, 0) == 0) body = body.substr(philox.size());
    for (std::size_t pos; (pos = body.find("extern \"C\" ")) != std::string::npos;) body.erase(pos, 11);
    current += cat("namespace k", count, " {  // ", label, "\n", body, "}\n");
    if (++count % per_batch == 0) {
      batches.push_back(cat(prelude(), philox, current));
      current.clear();
    }
  }
  if (!current.empty()) batches.push_back(cat(prelude(), philox, current));
  return batches;
}

std::vector<std::pair<std::string, std::string>> all_sources(bool common_only) {
  std::vector<std::pair<std::string, std::string>> out;
  static const DType all[] = {DType::bool_,    DType::int8,    DType::uint8,   DType::int16,     DType::uint16,
                              DType::int32,    DType::uint32,  DType::int64,   DType::uint64,    DType::float16,
                              DType::bfloat16, DType::float32, DType::float64, DType::complex64, DType::complex128};
  static const DType common[] = {DType::bool_, DType::int32, DType::int64, DType::float32, DType::float64};
  const auto& types = common_only ? std::vector<DType>(std::begin(common), std::end(common))
                                  : std::vector<DType>(std::begin(all), std::end(all));
  auto has = [&](DType t) { return std::find(types.begin(), types.end(), t) != types.end(); };
  // warming (common_only) renders the paths launches take most (contiguous; one element for
  // array pairs), each alone as a launch compiles it; the tests take every path in one source
  auto add_map = [&](const std::string& label, MapSpec s, const char* paths) {
    if (!common_only) {
      out.emplace_back(label, render_map(s));
      return;
    }
    for (const char* p = paths; *p; ++p) {
      s.path = *p;
      out.emplace_back(cat(label, " ", *p), render_map(s));
    }
  };
  for (const Ufunc& uf : all_ufuncs())
    for (const UfuncLoop& loop : uf.loops) {
      if (!has(loop.types[0])) continue;
      MapSpec s;
      s.name = uf.name;
      s.expression = uf.expression;
      for (int k = 0; k < uf.nin; ++k) {
        s.in_store.push_back(loop.types[k]);
        s.in_compute.push_back(loop.compute[k]);
        s.in_mode.push_back(k == 1 ? InputMode::value : InputMode::array);
      }
      s.out_store = loop.types[uf.nin];
      s.out_compute = loop.compute[uf.nin];
      add_map(cat(uf.name, " ", short_name(loop.types[0])), s, "v");
      if (!common_only) {  // the other operand modes and a mask
        s.in_mode.assign(uf.nin, InputMode::array);
        s.in_mode[0] = InputMode::broadcast;
        if (uf.nin > 2) s.in_mode[2] = InputMode::value;
        s.where = true;
        out.emplace_back(cat(uf.name, " ", short_name(loop.types[0]), " where"), render_map(s));
        s.where = false;
      }
      if (common_only && uf.nin == 2) {  // what `x + y` and `2 * x` launch (cache warming)
        s.in_mode = {InputMode::array, InputMode::array};
        add_map(cat(uf.name, " ", short_name(loop.types[0]), " arrays"), s, "vo");  // "o": tiny arrays
        s.in_mode = {InputMode::value, InputMode::array};
        add_map(cat(uf.name, " ", short_name(loop.types[0]), " scalar first"), s, "v");
      }
    }
  for (DType from : types)
    for (DType to : types) {
      MapSpec s;
      s.name = cat("cast_", short_name(from), "_", short_name(to));
      s.expression = "a";
      s.in_store = {from};
      s.in_compute = {to};
      s.in_mode = {InputMode::array};
      s.out_store = s.out_compute = to;
      s.transpose = true;
      add_map(s.name, s, "vt");
    }
  for (DType t : types) {
    out.emplace_back(cat("arange ", short_name(t)), render_arange(t));
    const DTypeKind kind = cupric::kind(t);
    if (t == DType::float32 || t == DType::float64 || kind == DTypeKind::signed_int || kind == DTypeKind::unsigned_int)
      out.emplace_back(cat("random ", short_name(t)), render_random(t));
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::fmin, ReduceOp::fmax,
                        ReduceOp::any, ReduceOp::all}) {
      const bool boolean = op == ReduceOp::any || op == ReduceOp::all;
      const DType o = boolean ? DType::bool_ : t;
      out.emplace_back(cat("reduce ", reduce_name(op), " ", short_name(t)), render_reduce(op, t, o, false));
      out.emplace_back(cat("reduce pass 2 ", reduce_name(op), " ", short_name(t)),
                       render_reduce(op, reduce_acc(op, o), o, true));
    }
    for (ArgReduceOp op : {ArgReduceOp::argmin, ArgReduceOp::argmax})
      out.emplace_back(cat(op == ArgReduceOp::argmax ? "argmax " : "argmin ", short_name(t)), render_arg_reduce(op, t));
    for (ScanOp op : {ScanOp::cumsum, ScanOp::cumprod})
      out.emplace_back(cat(op == ScanOp::cumsum ? "cumsum " : "cumprod ", short_name(t)), render_scan(op, t, t));
  }
  for (int isz : {1, 2, 4, 8, 16}) out.emplace_back(cat("gather ", isz), render_gather(isz));
  return out;
}

}  // namespace cupric::cuda_backend
