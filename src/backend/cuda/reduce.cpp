// reduce.cpp — reductions on the GPU: the renderer (an operator struct from the row of the
// reduction table: types, load, the combining ufunc's expression, identity; the kernel bodies
// are kernels/reduce.cuh) and reduce_pass, the launcher that picks the row, column or vector-
// column kernel and splits long reductions over blocks, with a further pass over the partials.
#include <algorithm>

#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "launch_args.hpp"
#include "cupric/reduction_table.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

const char* reduce_name(ReduceOp op) { return reduction_row(op).name; }

DType reduce_acc(ReduceOp op, DType out) { return gpu_accumulator(reduction_row(op), out); }

std::string render_reduce(ReduceOp op, DType in, DType out, bool partials) {
  const ReductionRow& row = reduction_row(op);
  const DType acc = reduce_acc(op, out);
  // Partials (second pass) arrive in the acc type and are read as they are.
  const char* load = partials                      ? "x"
                     : row.acc == AccRule::boolean ? "cu::convert<bool>(x)"
                                                   : "cu::convert<A>(cu::convert<O>(x))";
  // seeded from data: partial results start from their segment's first element (the identity
  // is then only a placeholder for the threads past the outputs)
  const bool seeded = row.seed == ReductionSeed::data;
  const std::string name =
      cat("reduce_", reduce_name(op), "_", short_name(in), "_", short_name(out), partials ? "_partials" : "");
  std::string entries;
  for (const char* kernel : {"rows", "cols", "colsv"})
    entries += cat("extern \"C\" __global__ void __launch_bounds__(256) ", name, "_", kernel,
                   "(CUPRIC_REDUCE_PARAMS(Reduce)) {\n  cupric::kernels::reduce_", kernel,
                   "<Reduce>(CUPRIC_REDUCE_ARGS);\n}\n");
  return cat(include_family("reduce"), "struct Reduce {  // reduction_table.def's ", row.name, "\n  typedef ",
             device_type(in), " S;\n  typedef ", device_type(out), " O;\n  typedef ", device_type(acc), " A;\n",
             "  static constexpr bool kSeedFromData = ", seeded ? "true" : "false", ";\n",
             "  static __device__ __forceinline__ A load(const S& x) { return ", load, "; }\n",
             "  static __device__ __forceinline__ A combine(A a, A b) { return static_cast<A>(",
             combine_expression(row), "); }\n", "  static __device__ __forceinline__ A identity() { return ",
             start_expression(row, "A"), "; }\n};\n", entries);
}

namespace {
/// One pass of a reduction: `in` (dtype in_t; `second`: partials already in the acc type) over
/// `red` for each of the outputs of `keep` (byte strides [in, out]), into `out` (out_t). When
/// too few blocks would fill the device, each output is split over several blocks whose partial
/// results (acc type) take a further pass: split-major ([split][output]) after the column
/// kernels so that the next pass is coalesced again, output-major after the row kernel.
void reduce_pass(CudaBackend& be, ReduceOp op, bool second, const void* in, DType in_t, void* out, DType out_t,
                 const Geometry& keep, const Geometry& red) {
  const std::int64_t nout = keep.size(), nred = red.size();
  const std::int64_t isz = itemsize(in_t);
  const DType acc = reduce_acc(op, out_t);
  const std::int64_t wave = std::int64_t{be.sm_count()} * 8;  // resident 256-thread blocks
  // columns: outputs contiguous in the input (coalesced across threads), reduced dims outer
  const bool cols = keep.ndim() >= 1 && keep.strides[0].back() == isz &&
                    (red.ndim() == 0 || std::llabs(red.strides[0].back()) != isz);
  // colsv: each thread reads 16 bytes of adjacent outputs per row (one kept and one reduced dim,
  // rows 16-byte aligned)
  const std::int64_t vw = isz >= 16 ? 1 : 16 / isz;
  const bool colsv = cols && vw > 1 && keep.ndim() == 1 && red.ndim() == 1 && nred > 0 && nout % vw == 0 &&
                     reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && red.strides[0][0] % 16 == 0;
  const std::int64_t gx = cols ? ceil_div(nout, colsv ? 32 * vw : 32) : std::min<std::int64_t>(nout, 1 << 30);
  // splits: about four waves of blocks in all (a whole number of waves where gx divides it), each
  // block keeping at least 64 rows (cols) or 4096 elements (rows); a second pass splits only when long
  std::int64_t nsplit = 1;
  if (gx < 4 * wave && nred > 0 && (!second || nred > (1 << 16)))
    nsplit = std::clamp<std::int64_t>(
        std::min(std::max<std::int64_t>(4 * wave / gx, 1), ceil_div(nred, cols ? 64 : 4096)), 1, 65535);
  const std::int64_t chunk = nred > 0 ? ceil_div(nred, nsplit) : 0;
  if (nred > 0) nsplit = ceil_div(nred, chunk);
  const int partial = nsplit == 1 ? 0 : cols ? 2 : 1;

  const char variant = colsv ? 'v' : cols ? 'c' : 'r';
  MapKey key;
  key.add('R').add(static_cast<unsigned>(op)).add(static_cast<unsigned>(in_t)).add(static_cast<unsigned>(out_t));
  key.add(second ? 1u : 0u).add(static_cast<unsigned char>(variant));
  const runtime::Kernel* kp = be.cached(key);
  if (!kp) {  // names and source only on the first call of this kernel
    const std::string base =
        cat("reduce_", reduce_name(op), "_", short_name(in_t), "_", short_name(out_t), second ? "_partials" : "");
    kp = be.remember(key, &be.kernel(base,
                                     cat(base, colsv  ? "_colsv"
                                               : cols ? "_cols"
                                                      : "_rows"),
                                     [&] { return render_reduce(op, in_t, out_t, second); }));
  }
  const runtime::Kernel& k = *kp;
  Array partials;
  if (partial) partials = Array::empty({nout * nsplit}, acc, Device::cuda(be.index()));
  {
    ArgPacker args = packer(k);
    args.add_pointer(reinterpret_cast<std::uint64_t>(in));
    args.add_pointer(reinterpret_cast<std::uint64_t>(partial ? partials.data() : out));
    args.add_int(nout);
    args.add_int(nred);
    args.add_int(chunk);
    add_i32(args, partial);
    add_geo(args, keep.pack("reduce"));
    add_geo(args, red.pack("reduce"));
    if (cols) launch_2d(be, k, gx, nsplit, 32, 8, args);
    else launch_2d(be, k, gx, nsplit, 256, 1, args);
  }
  if (!partial) return;
  // the next pass: partials (acc type, C order over keep's shape, one row of them per split or
  // one run of splits per output) -> out
  const std::int64_t asz = itemsize(acc);
  const Strides c = c_strides(keep.shape);
  Geometry keep2 = keep;
  for (int d = 0; d < keep2.ndim(); ++d) keep2.strides[0][d] = c[d] * asz * (partial == 1 ? nsplit : 1);
  Geometry red2{{nsplit}, {{partial == 1 ? asz : nout * asz}}};
  keep2.simplify();
  reduce_pass(be, op, true, partials.data(), acc, out, out_t, keep2, red2);
}
}  // namespace

void CudaBackend::reduce(ReduceOp op, const Array& in, const Array& out, const std::vector<int>& axes) {
  if (out.size() == 0) return;
  note_write(out);
  Geometry keep = other_dims(in, out, axes);
  Geometry red;
  red.strides.resize(1);
  for (int a : axes) {
    red.shape.push_back(in.shape()[a]);
    red.strides[0].push_back(in.strides()[a] * in.itemsize());
  }
  red.simplify();
  if (red.size() == 0) {  // an empty reduction: its identity (the kernels start from -0.0 for sums)
    alignas(16) unsigned char value[16];
    empty_value(reduction_row(op)).store(out.dtype(), value);
    fill(out, value);
    return;
  }
  reduce_pass(*this, op, false, in.data(), in.dtype(), out.data(), out.dtype(), keep, red);
}

}  // namespace cupric::cuda_backend
