// scan.cpp — the scans of the reduction table (cumsum, cumprod) on the GPU: the renderer (an
// operator struct from the scan's reduction row; the kernel bodies are kernels/scan.cuh) and the
// launcher (a block per line).
#include <algorithm>

#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "launch_args.hpp"
#include "cupric/reduction_table.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

namespace {
std::string scan_name(ScanOp op, DType in, DType out) {
  return cat(scan_row(op).name, "_", short_name(in), "_", short_name(out));
}
}  // namespace

std::string render_scan(ScanOp op, DType in, DType out) {
  const bool half = is_narrow_float(out);
  const ReductionRow& row = reduction_row(scan_row(op).reduction);
  const std::string raw_step = cat("static_cast<A>(", combine_expression(row), ")");
  // float16/bfloat16: a float32 running value rounded after every step, in order (as NumPy)
  const std::string step = half ? cat("cu::convert<A>(cu::convert<O>(", raw_step, "))") : raw_step;
  return cat(include_family("scan"), "struct Scan {  // reduction_table.def's ", scan_row(op).name, "\n  typedef ",
             device_type(in), " S;\n  typedef ", device_type(out), " O;\n  typedef ", half ? "float" : device_type(out),
             " A;\n",
             "  static __device__ __forceinline__ A load(const S& x) { return cu::convert<A>(cu::convert<O>(x)); }\n",
             "  static __device__ __forceinline__ A step(A a, A b) { return ", step, "; }\n",
             "  static __device__ __forceinline__ A identity() { return ", start_expression(row, "A"), "; }\n};\n",
             "extern \"C\" __global__ void __launch_bounds__(256) ", scan_name(op, in, out),
             "(CUPRIC_SCAN_PARAMS(Scan)) {\n  cupric::kernels::", half ? "scan_in_order" : "scan_lines",
             "<Scan>(CUPRIC_SCAN_ARGS);\n}\n");
}

void CudaBackend::scan(ScanOp op, const Array& in, const Array& out, int axis) {
  const std::int64_t nlines = in.size() / std::max<std::int64_t>(in.shape()[axis], 1);
  if (in.size() == 0) return;
  note_write(out);
  const Geometry lines = other_dims(in, out, {axis});
  const std::string name = scan_name(op, in.dtype(), out.dtype());
  const runtime::Kernel& k = kernel(name, name, [&] { return render_scan(op, in.dtype(), out.dtype()); });
  ArgPacker args = packer(k);
  args.add_pointer(reinterpret_cast<std::uint64_t>(in.data()));
  args.add_pointer(reinterpret_cast<std::uint64_t>(out.data()));
  args.add_int(nlines);
  args.add_int(in.shape()[axis]);
  args.add_int(in.strides()[axis] * in.itemsize());
  args.add_int(out.strides()[axis] * out.itemsize());
  add_geo(args, lines.pack("scan"));
  launch_2d(*this, k, std::min<std::int64_t>(nlines, 1 << 30), 1, 256, 1, args);
}

}  // namespace cupric::cuda_backend
