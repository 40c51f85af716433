// elementwise.cpp — maps on the GPU: ufunc loops and fills (casts, in cast.cpp, are maps too),
// the map renderer and run_map, the launcher every map goes through. A map's source is its types,
// its ufunc expression and one entry point for the path a launch takes; the kernel bodies are
// the templates of device_include/cupric/kernels/map.cuh.
#include <cstring>
#include <iterator>

#include "cuda_backend.hpp"
#include "cupric/convert.h"
#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "launch_args.hpp"

namespace cupric::cuda_backend {
using runtime::ArgPacker;

// ---- rendering -------------------------------------------------------------------------------

namespace {
std::string typedefs(const MapSpec& s) {
  std::string out;
  for (std::size_t k = 0; k < s.in_store.size(); ++k)
    out += cat("typedef ", device_type(s.in_store[k]), " S", k, "; typedef ", device_type(s.in_compute[k]), " C", k,
               ";\n");
  out += cat("typedef ", device_type(s.out_store), " SO; typedef ", device_type(s.out_compute), " CO;\n");
  return out;
}

/// struct Map: apply(a, b, c) is the op's expression in the compute types, stored as SO.
std::string apply_struct(const MapSpec& s) {
  const std::size_t nin = s.in_store.size();
  std::string params, extra;
  for (std::size_t k = 0; k < nin; ++k) params += cat(k ? ", " : "", "C", k, " ", static_cast<char>('a' + k));
  if (nin == 1) extra = "    [[maybe_unused]] C0 b = a; [[maybe_unused]] C0 c = a;\n";
  if (nin == 2) extra = "    [[maybe_unused]] C1 c = b;\n";
  return cat("struct Map {\n  static __device__ __forceinline__ SO apply(", params, ") {\n", extra,
             "    return cu::convert<SO>(static_cast<CO>(", s.expression, "));\n  }\n};\n");
}

std::string kernel_params(const MapSpec& s) {
  std::string p;
  for (std::size_t k = 0; k < s.in_store.size(); ++k) {
    if (s.in_mode[k] == InputMode::value) p += cat("C", k, " s", k, ", ");
    else p += cat("const S", k, "* __restrict__ p", k, ", ");
  }
  p += "SO* __restrict__ po, ";
  if (s.where) p += "const bool* __restrict__ pw, ";
  p += "i64 n";
  return p;
}

/// The mask and inputs handed to a map template; `width`: elements per vector load (1: none).
std::string operands(const MapSpec& s, int width) {
  const std::size_t nin = s.in_store.size();
  std::string out = s.where ? cat("MapMask<", width, ", ", nin + 1, ">(pw)") : std::string("NoMask()");
  for (std::size_t k = 0; k < nin; ++k) {
    if (s.in_mode[k] == InputMode::array) out += cat(", MapArray<S", k, ", C", k, ", ", width, ", ", k, ">(p", k, ")");
    else if (s.in_mode[k] == InputMode::broadcast)  // a 0-d device operand, read once per thread
      out += cat(", MapValue<C", k, ">(cu::convert<C", k, ">(*p", k, "))");
    else out += cat(", MapValue<C", k, ">(s", k, ")");
  }
  return out;
}

std::string entry(const MapSpec& s, const char* suffix, const std::string& params, const std::string& body) {
  return cat("extern \"C\" __global__ void __launch_bounds__(256) ", s.name, suffix, "(", params, ") {\n  ", body,
             ";\n}\n");
}
}  // namespace

std::string render_map(const MapSpec& s) {
  if (s.in_store.size() != s.in_compute.size() || s.in_store.size() != s.in_mode.size())
    throw ValueError(cat("render_map: inconsistent input lists for ", s.name));
  auto on = [&](char p) { return s.path == 0 || s.path == p; };
  const std::string params = kernel_params(s);
  const std::size_t nop = s.in_store.size() + 1 + (s.where ? 1 : 0);
  std::string out = cat(include_family("map"), "using namespace cupric::kernels;\n", typedefs(s), apply_struct(s));
  if (on('v'))
    out += entry(s, "_vec", params,
                 cat("map_vec<Map, ", s.vector_width(), ">(po, n, ", operands(s, s.vector_width()), ")"));
  if (on('o')) out += entry(s, "_one", params, cat("map_one<Map>(po, n, ", operands(s, 1), ")"));
  if (on('n'))
    out += entry(s, "_nd", cat(params, ", const Geo<", nop, "> g"), cat("map_nd<Map>(po, n, g, ", operands(s, 1), ")"));
  if (s.transpose && on('t'))
    out += entry(s, "_t2", "const S0* __restrict__ p0, SO* __restrict__ po, i64 nx, i64 ny, i64 in_sy, i64 out_sx",
                 "map_t2<Map, C0>(p0, po, nx, ny, in_sy, out_sx)");
  return out;
}

// ---- launching -------------------------------------------------------------------------------

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

/// One value of dtype `from` at src, converted to `to` at dst as the kernels convert (convert.h).
void convert_value(DType from, const void* src, DType to, void* dst) {
  visit_dtype(from, [&]<class F>() {
    visit_dtype(to, [&]<class T>() { *static_cast<T*>(dst) = cu::convert<T>(*static_cast<const F*>(src)); });
  });
}
}  // namespace

/// A cached launch looks a 16-byte key up and packs the arguments, building no source, spec,
/// string or geometry vector; `make_spec` runs on a miss; `what` names the op in messages.
void CudaBackend::run_map(MapKey key, const char* what, const ElementwisePlan& plan, int nin, const DType* in_compute,
                          MapSpecFn make_spec) {
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

  ArgPacker args = packer(k);
  alignas(16) unsigned char value[16];
  for (int i = 0; i < nin; ++i) {
    if (modes[i] == InputMode::value) {  // converted to the compute type here, passed by value
      convert_value(plan.dtypes[i], plan.data[i], in_compute[i], value);
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
  run_map(key, uf.name.c_str(), *plan, uf.nin, loop.compute.data(),
          [&] { return ufunc_map_spec(uf, loop, plan->dtypes.data(), has_where); });
}

MapSpec ufunc_map_spec(const Ufunc& uf, const UfuncLoop& loop, const DType* stored, bool where) {
  MapSpec s;
  s.name = uf.name;
  s.expression = uf.expression;
  for (int k = 0; k < uf.nin; ++k) {
    s.in_store.push_back(stored[k]);
    s.in_compute.push_back(loop.compute[k]);
    s.in_mode.push_back(InputMode::array);
  }
  s.out_store = stored[uf.nin];
  s.out_compute = loop.compute[uf.nin];
  s.where = where;
  return s;
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
      if (width == 1) cuda::check(d.MemsetD8Async(p, static_cast<unsigned char>(pattern), count, s), "cuMemsetD8Async");
      else if (width == 2)
        cuda::check(d.MemsetD16Async(p, static_cast<unsigned short>(pattern), count, s), "cuMemsetD16Async");
      else cuda::check(d.MemsetD32Async(p, pattern, count, s), "cuMemsetD32Async");
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

}  // namespace cupric::cuda_backend
