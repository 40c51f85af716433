// cast.cpp — dtype conversions on the GPU (astype, copies between layouts): a map whose
// expression is the conversion itself (rendered by render_map, elementwise.cpp), or, for a 2-d
// copy that transposes, the tiled _t2 kernel of kernels/map.cuh.
#include "cuda_backend.hpp"
#include "cupric/errors.hpp"
#include "launch_args.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

namespace {
/// A 2-d plan whose input is dense along one dimension and whose output is dense along the
/// other (x.T.copy(), astype of a transposed view): the tiled kernel. False when it does not apply.
bool transpose_cast(CudaBackend& be, const ElementwisePlan& plan, MapSpecFn make_spec) {
  if (plan.ndim() != 2 || (plan.on_host.size() == 2 && plan.on_host[0])) return false;
  const std::int64_t isz = itemsize(plan.dtypes[0]), osz = itemsize(plan.dtypes[1]);
  const auto& in = plan.byte_strides[0];
  const auto& out = plan.byte_strides[1];
  int x = -1;  // the dimension along which the input is dense; the output must be dense along the other
  for (int d = 0; d < 2; ++d)
    if (in[d] == isz && out[1 - d] == osz) x = d;
  if (x < 0 || in[1 - x] % isz != 0 || out[x] % osz != 0) return false;
  const std::int64_t nx = plan.shape[x], ny = plan.shape[1 - x];
  if (nx < 32 || ny < 32 || (ny + 31) / 32 > 65535) return false;
  MapKey key;
  key.add('T').add(static_cast<unsigned>(plan.dtypes[0])).add(static_cast<unsigned>(plan.dtypes[1])).add('t');
  const runtime::Kernel* kp = be.cached(key);
  if (!kp) {
    MapSpec spec = make_spec();
    spec.in_mode = {InputMode::array};
    spec.path = 't';
    kp = be.remember(key, &be.kernel(spec.key(), cat(spec.name, "_t2"), [&] { return render_map(spec); }));
  }
  ArgPacker args = packer(*kp);
  args.add_pointer(reinterpret_cast<std::uint64_t>(plan.data[0]));
  args.add_pointer(reinterpret_cast<std::uint64_t>(plan.data[1]));
  args.add_int(nx);
  args.add_int(ny);
  args.add_int(in[1 - x] / isz);
  args.add_int(out[x] / osz);
  runtime::LaunchConfig c;
  c.grid = {static_cast<unsigned>((nx + 31) / 32), static_cast<unsigned>((ny + 31) / 32), 1};
  c.block = {32, 8, 1};
  be.launch(*kp, c, args);
  return true;
}
}  // namespace

void CudaBackend::cast(const ElementwisePlan& plan) {
  if (plan.storages.size() == 2) note_write(plan.storages[1]);
  const DType from = plan.dtypes[0], to = plan.dtypes[1];
  auto make_spec = [&] {
    MapSpec s;
    s.name = cat("cast_", short_name(from), "_", short_name(to));
    s.expression = "a";
    s.in_store = {from};
    s.in_compute = {to};
    s.out_store = s.out_compute = to;
    s.transpose = true;
    return s;
  };
  if (transpose_cast(*this, plan, make_spec)) return;
  MapKey key;
  key.add('C').add(static_cast<unsigned>(from)).add(static_cast<unsigned>(to));
  run_map(key, "cast", plan, 1, &to, make_spec);
}

}  // namespace cupric::cuda_backend
