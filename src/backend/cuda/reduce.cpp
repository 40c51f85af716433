// cuda_reduce.cpp — reductions (one or two passes: per-split partials in the accumulation type,
// then a pass over them), arg-reductions, scans, and gather/scatter on the GPU.
#include <algorithm>

#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "ops/reduction_table.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

ArgPacker packer(const runtime::Kernel& k) {
  return ArgPacker(k.param_sizes_known() ? &k.param_sizes() : nullptr, k.interned_name());
}
void add_geo(ArgPacker& args, const std::vector<std::int64_t>& g) {
  args.add_bytes(g.data(), g.size() * sizeof(std::int64_t), 8, "geometry");
}
void add_i32(ArgPacker& args, std::int32_t v) { args.add_bytes(&v, 4, 4, "int"); }

/// Dimensions of `a` other than `skip` (sorted), with a's byte strides and b's.
Geometry other_dims(const Array& a, const Array& b, const std::vector<int>& skip) {
  Geometry g;
  g.strides.resize(2);
  for (int d = 0; d < a.ndim(); ++d) {
    if (std::find(skip.begin(), skip.end(), d) != skip.end()) continue;
    g.shape.push_back(a.shape()[d]);
    g.strides[0].push_back(a.strides()[d] * a.itemsize());
    g.strides[1].push_back(b.strides()[d] * b.itemsize());
  }
  g.simplify();
  return g;
}

void launch_2d(CudaBackend& be, const runtime::Kernel& k, std::int64_t gx, std::int64_t gy, unsigned bx, unsigned by,
               ArgPacker& args) {
  runtime::LaunchConfig c;
  c.grid = {static_cast<unsigned>(std::clamp<std::int64_t>(gx, 1, 1 << 30)), static_cast<unsigned>(gy), 1};
  c.block = {bx, by, 1};
  be.launch(k, c, args);
}
}  // namespace

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
    nsplit = std::clamp<std::int64_t>(std::min(std::max<std::int64_t>(4 * wave / gx, 1), ceil_div(nred, cols ? 64 : 4096)),
                                      1, 65535);
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
    kp = be.remember(key, &be.kernel(base, cat(base, colsv ? "_colsv" : cols ? "_cols" : "_rows"),
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
    if (cols)
      launch_2d(be, k, gx, nsplit, 32, 8, args);
    else
      launch_2d(be, k, gx, nsplit, 256, 1, args);
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

void CudaBackend::arg_reduce(ArgReduceOp op, const Array& in, const Array& out, int axis) {
  const std::int64_t nout = out.size();
  if (nout == 0) return;
  note_write(out);
  const Geometry keep = other_dims(in, out, {axis});
  const std::string name = cat(op == ArgReduceOp::argmax ? "argmax_" : "argmin_", short_name(in.dtype()));
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

void CudaBackend::scan(ScanOp op, const Array& in, const Array& out, int axis) {
  const std::int64_t nlines = in.size() / std::max<std::int64_t>(in.shape()[axis], 1);
  if (in.size() == 0) return;
  note_write(out);
  const Geometry lines = other_dims(in, out, {axis});
  const std::string name = cat(scan_row(op).name, "_", short_name(in.dtype()), "_", short_name(out.dtype()));
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
