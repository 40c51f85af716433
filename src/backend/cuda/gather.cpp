// gather.cpp — advanced indexing on the GPU: gather and scatter of rows picked by byte offsets,
// the renderer (elements copied as opaque words of their size; kernels/gather.cuh) and launchers.
#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "launch_args.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

std::string render_gather(int isz) {
  const char* type = isz == 1   ? "unsigned char"
                     : isz == 2 ? "unsigned short"
                     : isz == 4 ? "unsigned int"
                     : isz == 8 ? "unsigned long long"
                                : "cupric::kernels::U16";
  return cat(include_family("gather"), "typedef ", type, " U;\n",
             "extern \"C\" __global__ void __launch_bounds__(256) gather_", isz,
             "(CUPRIC_GATHER_PARAMS) {\n  cupric::kernels::gather_rows<U, ", isz, ">(CUPRIC_GATHER_ARGS);\n}\n",
             "extern \"C\" __global__ void __launch_bounds__(256) scatter_", isz,
             "(CUPRIC_SCATTER_PARAMS) {\n  cupric::kernels::scatter_rows<U, ", isz, ">(CUPRIC_SCATTER_ARGS);\n}\n");
}

namespace {
void check_offsets(const Array& offsets) {
  if (offsets.dtype() != DType::int64 || offsets.ndim() != 1 || (offsets.size() > 1 && offsets.strides()[0] != 1))
    throw ValueError(cat("gather/scatter offsets must be a contiguous 1-d int64 array, got ", offsets.str()));
}

/// Row geometry: `rows` is [n] + shape of `flat`; operand 0 walks flat, operand 1 a row.
Geometry row_geometry(const Array& flat, const Array& rows) {
  Geometry g;
  g.strides.resize(2);
  for (int d = 0; d < flat.ndim(); ++d) {
    g.shape.push_back(flat.shape()[d]);
    g.strides[0].push_back(flat.strides()[d] * flat.itemsize());
    g.strides[1].push_back(rows.strides()[d + 1] * rows.itemsize());
  }
  g.simplify();
  return g;
}
}  // namespace

void CudaBackend::gather(const Array& src, const Array& offsets, const Array& out) {
  check_offsets(offsets);
  const std::int64_t n = offsets.size(), per = src.size();
  if (n == 0 || per == 0) return;
  note_write(out);
  const int isz = static_cast<int>(src.itemsize());
  const std::string name = cat("gather_", isz);
  const runtime::Kernel& k = kernel(cat("gather|", isz), name, [&] { return render_gather(isz); });
  ArgPacker args = packer(k);
  args.add_pointer(reinterpret_cast<std::uint64_t>(src.data()));
  args.add_pointer(reinterpret_cast<std::uint64_t>(out.data()));
  args.add_pointer(reinterpret_cast<std::uint64_t>(offsets.data()));
  args.add_int(n);
  args.add_int(per);
  args.add_int(out.strides()[0] * out.itemsize());
  add_geo(args, row_geometry(src, out).pack("gather"));
  launch_grid(k, n * per, args);
}

void CudaBackend::scatter(const Array& dst, const Array& offsets, const Array& values) {
  check_offsets(offsets);
  const std::int64_t n = offsets.size(), per = dst.size();
  if (n == 0 || per == 0) return;
  note_write(dst);
  const int isz = static_cast<int>(dst.itemsize());
  const runtime::Kernel& k = kernel(cat("gather|", isz), cat("scatter_", isz), [&] { return render_gather(isz); });
  ArgPacker args = packer(k);
  args.add_pointer(reinterpret_cast<std::uint64_t>(dst.data()));
  args.add_pointer(reinterpret_cast<std::uint64_t>(values.data()));
  args.add_pointer(reinterpret_cast<std::uint64_t>(offsets.data()));
  args.add_int(n);
  args.add_int(per);
  args.add_int(values.strides()[0] * values.itemsize());
  add_geo(args, row_geometry(dst, values).pack("scatter"));
  launch_grid(k, per, args);
}

}  // namespace cupric::cuda_backend
