// random.cpp — cupric.random's draws on the GPU: the renderer (kernels/random.cuh: one Philox
// block per thread, the CPU's streams) and the launcher.
#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "launch_args.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

std::string render_random(DType t) {
  const bool integer = kind(t) == DTypeKind::signed_int || kind(t) == DTypeKind::unsigned_int;
  return cat(include_family("random"), "typedef ", device_type(t), " T;\n",
             "extern \"C\" __global__ void __launch_bounds__(256) random_", short_name(t),
             "(CUPRIC_RANDOM_PARAMS(T)) {\n  cupric::kernels::random_", integer ? "integers" : "floats",
             "<T>(CUPRIC_RANDOM_ARGS);\n}\n");
}

void CudaBackend::random(const RandomRequest& r, const Array& out) {
  const std::int64_t n = out.size();
  if (n == 0) return;
  note_write(out);
  if (!out.is_c_contiguous()) throw ValueError(cat("random: the output must be C-contiguous, got ", out.str()));
  const DType t = out.dtype();
  const runtime::Kernel& k =
      kernel(cat("random|", short_name(t)), cat("random_", short_name(t)), [&] { return render_random(t); });
  ArgPacker args = packer(k);
  args.add_pointer(reinterpret_cast<std::uint64_t>(out.data()));
  args.add_int(n);
  args.add_uint(r.key);
  args.add_uint(r.counter);
  const std::int32_t dist = static_cast<std::int32_t>(r.dist);
  args.add_bytes(&dist, 4, 4, "int");
  args.add_float(r.a);
  args.add_float(r.b);
  args.add_int(r.low);
  args.add_uint(r.range);
  const int per = r.dist == RandomDistribution::integers ? 2 : (t == DType::float32 ? 4 : 2);
  launch_grid(k, (n + per - 1) / per, args);
}

}  // namespace cupric::cuda_backend
