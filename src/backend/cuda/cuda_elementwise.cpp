// cuda_elementwise.cpp — maps on the GPU: ufunc loops, casts and fills (one renderer, three
// kernels per source: vector-contiguous, scalar-contiguous, strided), plus arange and random.
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "../cpu/cpu_backend.hpp"
#include "cuda_backend.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

namespace {
/// Argument alignment of a dtype's device type.
std::size_t device_alignment(DType t) {
  const int isz = itemsize(t);
  return kind(t) == DTypeKind::complex ? static_cast<std::size_t>(isz / 2) : static_cast<std::size_t>(isz);
}

bool all_zero(const Strides& strides) {
  for (auto s : strides)
    if (s != 0) return false;
  return true;
}
}  // namespace

void MapKey::too_long() { throw std::logic_error("cupric: a CUDA map key longer than 16 bytes"); }

namespace {
/// Each thread's recently used map kernels: a hit takes no lock. Backends are never destroyed,
/// and `serial` tells them apart.
struct CachedKernel {
  std::uint64_t serial = 0;  // 0: empty
  MapKey key;
  const runtime::Kernel* kernel = nullptr;
};
constexpr std::size_t kThreadCacheSlots = 64;
thread_local CachedKernel thread_kernels[kThreadCacheSlots];
}  // namespace

const runtime::Kernel* CudaBackend::cached(const MapKey& key) {
  CachedKernel& slot = thread_kernels[MapKeyHash{}(key) % kThreadCacheSlots];
  if (slot.serial == serial_ && slot.key == key) return slot.kernel;
  const runtime::Kernel* k = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (auto it = fast_.find(key); it != fast_.end()) k = it->second;
  }
  if (k) slot = {serial_, key, k};
  return k;
}

const runtime::Kernel* CudaBackend::remember(const MapKey& key, const runtime::Kernel* k) {
  std::lock_guard lock(mutex_);
  return fast_.emplace(key, k).first->second;
}

/// Launches the map for `plan` (operands: inputs, output, [mask]). `key` identifies the map apart
/// from the operand modes and the path, which are appended here: a cached launch looks a 16-byte
/// key up and packs the arguments, building no source, spec, string or geometry vector.
/// `make_spec` runs on a miss; `what` names the op in messages.
template <class MakeSpec>
void CudaBackend::run_map(MapKey key, const char* what, const ElementwisePlan& plan, int nin, const DType* in_compute,
                          MakeSpec&& make_spec) {
  const std::int64_t n = plan.size();
  if (n == 0) return;
  const int nop = plan.noperands();
  const bool host_flags = plan.on_host.size() == static_cast<std::size_t>(nop);
  InputMode modes[kMaxUfuncArgs];
  for (int k = 0; k < nin; ++k) {
    modes[k] = host_flags && plan.on_host[k]    ? InputMode::value
               : all_zero(plan.byte_strides[k]) ? InputMode::broadcast
                                                : InputMode::array;
  }
  for (int op = nin; op < nop; ++op)
    if (host_flags && plan.on_host[op])
      throw ValueError(cat(what, ": an output or mask in host memory cannot be written by a CUDA kernel"));
  // contiguous when one dimension and every array operand is dense
  auto is_array = [&](int op) { return op >= nin || modes[op] == InputMode::array; };
  bool contiguous = plan.ndim() == 1;
  int widest = 1;
  for (int op = 0; op < nop; ++op) {
    if (!is_array(op)) continue;
    const int isz = itemsize(plan.dtypes[op]);
    if (op != nin + 1) widest = std::max(widest, isz);  // the mask does not set the width
    contiguous = contiguous && plan.byte_strides[op][0] == isz;
  }
  const int width = std::max(1, 16 / widest);
  bool vec = contiguous && width > 1 && n >= width;
  for (int op = 0; vec && op < nop; ++op)
    if (is_array(op))
      vec = reinterpret_cast<std::uintptr_t>(plan.data[op]) %
                (static_cast<std::uintptr_t>(width) * itemsize(plan.dtypes[op])) ==
            0;
  const char path = vec ? 'v' : contiguous ? 'o' : 'n';

  for (int k = 0; k < nin; ++k) key.add('0' + static_cast<unsigned>(modes[k]));
  key.add(static_cast<unsigned char>(path));
  const runtime::Kernel* kp = cached(key);
  if (!kp) {
    MapSpec spec = make_spec();
    spec.in_mode.assign(modes, modes + nin);
    spec.path = path;
    const char* suffix = vec ? "_vec" : contiguous ? "_one" : "_nd";
    kp = remember(key, &kernel(spec.key(), cat(spec.name, suffix), [&] { return render_map(spec); }));
  }
  const runtime::Kernel& k = *kp;

  ArgPacker args(k.param_sizes_known() ? &k.param_sizes() : nullptr, k.interned_name());
  alignas(16) unsigned char value[16];
  for (int i = 0; i < nin; ++i) {
    if (modes[i] == InputMode::value) {  // converted to the compute type here, passed by value
      cpu::cast_kernel(plan.dtypes[i], in_compute[i])(plan.data[i], 0, reinterpret_cast<char*>(value), 0, 1);
      args.add_bytes(value, static_cast<std::size_t>(itemsize(in_compute[i])), device_alignment(in_compute[i]),
                     name(in_compute[i]));
    } else {
      args.add_pointer(reinterpret_cast<std::uint64_t>(plan.data[i]), "an input");
    }
  }
  for (int op = nin; op < nop; ++op) args.add_pointer(reinterpret_cast<std::uint64_t>(plan.data[op]), "an output");
  args.add_int(n);
  if (!contiguous) {
    Geometry geo{plan.shape, plan.byte_strides};
    std::int64_t packed[1 + kMaxDims + kInlineOperands * kMaxDims];
    if (geo.packed_size() > std::size(packed))
      throw NotImplementedError(cat(what, ": ", nop, " operands (at most ", kInlineOperands, " on CUDA)"));
    const std::size_t words = geo.pack_into(packed, "elementwise");
    args.add_bytes(packed, words * sizeof(std::int64_t), 8, "geometry");
    launch_grid(k, n, args);
    return;
  }
  launch_grid(k, vec ? n / width : n, args);
}

void CudaBackend::elementwise(const Ufunc& uf, const UfuncLoop& loop, const ElementwisePlan& plan_in, bool has_where) {
  if (plan_in.storages.size() > static_cast<std::size_t>(uf.nin)) note_write(plan_in.storages[uf.nin]);
  const ElementwisePlan* plan = &plan_in;
  ElementwisePlan trimmed;
  const int w = uf.nin + 1;
  if (has_where && plan_in.on_host.size() > static_cast<std::size_t>(w) && plan_in.on_host[w]) {
    bool mask = false;  // where=True / False given as a Python bool
    std::memcpy(&mask, plan_in.data[w], 1);
    if (!mask) return;
    trimmed = plan_in;
    trimmed.data.pop_back();
    trimmed.byte_strides.pop_back();
    trimmed.dtypes.pop_back();
    trimmed.on_host.pop_back();
    plan = &trimmed;
    has_where = false;
  }
  // the ufunc, the mask, the compute types and the stored dtypes
  MapKey key;
  key.add('U')
      .add(static_cast<unsigned>(uf.id) & 0xffu)
      .add((static_cast<unsigned>(uf.id) >> 8) + (has_where ? 0x40u : 0u));
  for (int k = 0; k <= uf.nin; ++k)
    key.add(static_cast<unsigned>(loop.compute[k])).add(static_cast<unsigned>(plan->dtypes[k]));
  run_map(key, uf.name.c_str(), *plan, uf.nin, loop.compute.data(), [&] {
    MapSpec s;
    s.name = uf.name;
    s.expression = uf.expression;
    for (int k = 0; k < uf.nin; ++k) {
      s.in_store.push_back(plan->dtypes[k]);
      s.in_compute.push_back(loop.compute[k]);
    }
    s.out_store = plan->dtypes[uf.nin];
    s.out_compute = loop.compute[uf.nin];
    s.where = has_where;
    return s;
  });
}

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
  if (transpose_cast(plan, make_spec)) return;
  MapKey key;
  key.add('C').add(static_cast<unsigned>(from)).add(static_cast<unsigned>(to));
  run_map(key, "cast", plan, 1, &to, make_spec);
}

/// A 2-d plan whose input is dense along one dimension and whose output is dense along the
/// other (x.T.copy(), astype of a transposed view): the tiled kernel. False when it does not apply.
template <class MakeSpec>
bool CudaBackend::transpose_cast(const ElementwisePlan& plan, MakeSpec&& make_spec) {
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
  const runtime::Kernel* kp = cached(key);
  if (!kp) {
    MapSpec spec = make_spec();
    spec.in_mode = {InputMode::array};
    spec.path = 't';
    kp = remember(key, &kernel(spec.key(), cat(spec.name, "_t2"), [&] { return render_map(spec); }));
  }
  ArgPacker args(kp->param_sizes_known() ? &kp->param_sizes() : nullptr, kp->interned_name());
  args.add_pointer(reinterpret_cast<std::uint64_t>(plan.data[0]));
  args.add_pointer(reinterpret_cast<std::uint64_t>(plan.data[1]));
  args.add_int(nx);
  args.add_int(ny);
  args.add_int(in[1 - x] / isz);
  args.add_int(out[x] / osz);
  runtime::LaunchConfig c;
  c.grid = {static_cast<unsigned>((nx + 31) / 32), static_cast<unsigned>((ny + 31) / 32), 1};
  c.block = {32, 8, 1};
  launch(*kp, c, args);
  return true;
}

void CudaBackend::fill(const Array& dst, const void* value) {
  if (dst.size() == 0) return;
  note_write(dst);
  const DType t = dst.dtype();
  const std::size_t isz = static_cast<std::size_t>(itemsize(t));
  if (dst.is_c_contiguous()) {  // memset when the value is one repeated 1-, 2- or 4-byte pattern
    const auto* b = static_cast<const unsigned char*>(value);
    std::size_t width = isz;
    while (width > 1 && std::memcmp(b, b + width / 2, width / 2) == 0) width /= 2;
    if (width <= 4) {
      std::uint32_t pattern = 0;
      std::memcpy(&pattern, b, width);
      runtime::activate_device(index_);
      const auto s = runtime::Stream::current(index_).handle();
      const auto p = reinterpret_cast<cuda::CUdeviceptr>(dst.data());
      const std::size_t count = static_cast<std::size_t>(dst.nbytes()) / width;
      const auto& d = cuda::driver();
      if (width == 1)
        cuda::check(d.MemsetD8Async(p, static_cast<unsigned char>(pattern), count, s), "cuMemsetD8Async");
      else if (width == 2)
        cuda::check(d.MemsetD16Async(p, static_cast<unsigned short>(pattern), count, s), "cuMemsetD16Async");
      else
        cuda::check(d.MemsetD32Async(p, pattern, count, s), "cuMemsetD32Async");
      return;
    }
  }
  ElementwisePlan plan = elementwise_plan({&dst}, dst.shape());
  plan.data.insert(plan.data.begin(), static_cast<char*>(const_cast<void*>(value)));
  plan.byte_strides.insert(plan.byte_strides.begin(), Strides(plan.shape.size(), 0));
  plan.dtypes.insert(plan.dtypes.begin(), t);
  plan.on_host.assign(2, 0);
  plan.on_host[0] = 1;
  MapKey key;
  key.add('F').add(static_cast<unsigned>(t));
  run_map(key, "fill", plan, 1, &t, [&] {
    MapSpec s;
    s.name = cat("fill_", short_name(t));
    s.expression = "a";
    s.in_store = s.in_compute = {t};
    s.out_store = s.out_compute = t;
    return s;
  });
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
  ArgPacker args(k.param_sizes_known() ? &k.param_sizes() : nullptr, k.interned_name());
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

void CudaBackend::random(const RandomRequest& r, const Array& out) {
  const std::int64_t n = out.size();
  if (n == 0) return;
  note_write(out);
  if (!out.is_c_contiguous()) throw ValueError(cat("random: the output must be C-contiguous, got ", out.str()));
  const DType t = out.dtype();
  const runtime::Kernel& k =
      kernel(cat("random|", short_name(t)), cat("random_", short_name(t)), [&] { return render_random(t); });
  ArgPacker args(k.param_sizes_known() ? &k.param_sizes() : nullptr, k.interned_name());
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
