// arg_reduce.cpp — argmin / argmax on the GPU: the renderer (stored and compared types; the
// kernel body is kernels/arg_reduce.cuh: a block per output, NaN first, then the extreme, then
// the smaller index) and the launcher.
#include <algorithm>

#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "launch_args.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

namespace {
std::string arg_reduce_name(ArgReduceOp op, DType in) {
  return cat(op == ArgReduceOp::argmax ? "argmax_" : "argmin_", short_name(in));
}
}  // namespace

std::string render_arg_reduce(ArgReduceOp op, DType in) {
  const bool half = is_narrow_float(in);
  return cat(include_family("arg_reduce"), "typedef ", device_type(in), " S; typedef ",
             half ? "float" : device_type(in), " C;\n", "extern \"C\" __global__ void __launch_bounds__(256) ",
             arg_reduce_name(op, in), "(CUPRIC_ARG_REDUCE_PARAMS(S)) {\n  cupric::kernels::arg_reduce<",
             op == ArgReduceOp::argmax ? "true" : "false", ", S, C>(CUPRIC_ARG_REDUCE_ARGS);\n}\n");
}

void CudaBackend::arg_reduce(ArgReduceOp op, const Array& in, const Array& out, int axis) {
  const std::int64_t nout = out.size();
  if (nout == 0) return;
  note_write(out);
  const Geometry keep = other_dims(in, out, {axis});
  const std::string name = arg_reduce_name(op, in.dtype());
  const runtime::Kernel& k = kernel(name, name, [&] { return render_arg_reduce(op, in.dtype()); });
  ArgPacker args = packer(k);
  args.add_pointer(reinterpret_cast<std::uint64_t>(in.data()));
  args.add_pointer(reinterpret_cast<std::uint64_t>(out.data()));
  args.add_int(nout);
  args.add_int(in.shape()[axis]);
  args.add_int(in.strides()[axis] * in.itemsize());
  add_geo(args, keep.pack("arg_reduce"));
  launch_2d(*this, k, std::min<std::int64_t>(nout, 1 << 30), 1, 256, 1, args);
}

}  // namespace cupric::cuda_backend
