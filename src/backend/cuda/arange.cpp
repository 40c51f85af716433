// arange.cpp — arange on the GPU: its renderer (kernels/arange.cuh: double arithmetic for
// floating and bool outputs, exact unsigned 64-bit arithmetic for integers) and launcher.
#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "launch_args.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

std::string render_arange(DType t) {
  const bool integer = kind(t) == DTypeKind::signed_int || kind(t) == DTypeKind::unsigned_int;
  const std::string name = cat("arange_", short_name(t));
  const char* params = integer ? "unsigned long long start, unsigned long long step" : "double start, double step";
  return cat(include_family("arange"), "typedef ", device_type(t), " T;\n",
             "extern \"C\" __global__ void __launch_bounds__(256) ", name, "(T* __restrict__ out, ", params,
             ", i64 n) {\n  cupric::kernels::arange_", integer ? "integer" : "floating",
             "<T>(out, start, step, n);\n}\n");
}

namespace {
/// arange_<t> (render_arange) with its start and step added by `add_start_step`.
template <class AddStartStep>
void launch_arange(CudaBackend& backend, const Array& out, AddStartStep add_start_step) {
  const std::int64_t n = out.size();
  if (n == 0) return;
  backend.note_write(out);
  const DType t = out.dtype();
  const runtime::Kernel& k =
      backend.kernel(cat("arange|", short_name(t)), cat("arange_", short_name(t)), [&] { return render_arange(t); });
  ArgPacker args = packer(k);
  args.add_pointer(reinterpret_cast<std::uint64_t>(out.data()));
  add_start_step(args);
  args.add_int(n);
  backend.launch_grid(k, n, args);
}
}  // namespace

void CudaBackend::arange(const Array& out, double start, double step) {
  launch_arange(*this, out, [&](ArgPacker& args) {
    args.add_float(start);
    args.add_float(step);
  });
}

void CudaBackend::arange_integer(const Array& out, std::uint64_t start, std::uint64_t step) {
  launch_arange(*this, out, [&](ArgPacker& args) {
    args.add_uint(start);
    args.add_uint(step);
  });
}

}  // namespace cupric::cuda_backend
