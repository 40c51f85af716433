// dlpack.cpp — cupric arrays as DLPack tensors and back (zero-copy both ways; the owner of the
// memory is kept alive until the other side lets go).
#include "cupric/dlpack.hpp"

#include <type_traits>

#include "cupric/errors.hpp"

namespace cupric::dlpack {

DLDataType to_dlpack(DType t) {
  const auto& i = info(t);
  return {i.dlpack_code, static_cast<std::uint8_t>(i.itemsize * 8), 1};
}

DType dtype_from_dlpack(DLDataType t) {
  if (t.lanes == 1) {
    for (int i = 0; i < kNumDTypes; ++i) {
      const DType d = static_cast<DType>(i);
      const DLDataType c = to_dlpack(d);
      if (c.code == t.code && c.bits == t.bits) return d;
    }
  }
  throw BufferError(cat("cupric cannot import DLPack data type (code ", int(t.code), ", bits ", int(t.bits), ", lanes ",
                        t.lanes,
                        "): supported are bool, int8-64, uint8-64, float16/32/64, bfloat16, "
                        "complex64/128, float8_e4m3fn and float8_e5m2 with one lane"));
}

DLDevice to_dlpack(Device d) { return d.is_cpu() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, d.index}; }

Device device_from_dlpack(DLDevice d) {
  if (d.device_id < 0) throw BufferError(cat("DLPack device id ", d.device_id, " is negative"));
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost: return Device::cpu();
    case kDLCUDA:
    case kDLCUDAManaged: return Device::cuda(d.device_id);
    default: break;
  }
  throw BufferError(cat("cupric cannot use DLPack device type ", d.device_type, " (device ", d.device_id,
                        "): supported are kDLCPU (1), kDLCUDA (2), kDLCUDAHost (3) and kDLCUDAManaged (13)"));
}

TensorLayout read_tensor(const DLTensor& t) {
  const DType dtype = dtype_from_dlpack(t.dtype);
  const Device device = device_from_dlpack(t.device);
  if (t.ndim < 0 || t.ndim > kMaxDims)
    throw BufferError(cat("DLPack tensor has ndim ", t.ndim, " (0 to ", kMaxDims, ")"));
  if (t.ndim > 0 && !t.shape) throw BufferError("DLPack tensor has no shape");
  Shape shape(t.shape, t.shape + t.ndim);
  const std::int64_t isz = itemsize(dtype);
  const bool c_order = !t.strides;  // (negative extents have no C strides: the shared check refuses them first)
  Strides strides = c_order ? Strides() : Strides(t.strides, t.strides + t.ndim);
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  Strides bytes;
  std::string problem = c_order ? "" : foreign_byte_strides("DLPack tensor", strides, isz, bytes);
  if (problem.empty())
    problem = foreign_array_problem("DLPack tensor", reinterpret_cast<std::uintptr_t>(data), shape,
                                    c_order ? nullptr : &bytes, isz);
  if (!problem.empty()) throw BufferError(problem);
  if (c_order) strides = c_strides(shape);
  return {data, dtype, device, std::move(shape), std::move(strides)};
}

TensorLayout read_versioned(const DLManagedTensorVersioned& t, bool* read_only) {
  if (t.version.major != kVersion.major)
    throw BufferError(
        cat("cupric reads DLPack 1.x tensors; this one is version ", t.version.major, ".", t.version.minor));
  if (t.flags & kFlagIsSubbytePadded) throw BufferError("cupric cannot import sub-byte padded DLPack tensors");
  *read_only = (t.flags & kFlagReadOnly) != 0;
  return read_tensor(t.dl_tensor);
}

namespace {
/// What an exported tensor owns: a view of the array (holding its storage) and the shape and
/// strides the DLTensor points at.
template <class Managed>
struct Export {
  Managed managed{};
  Array array;
  Shape shape;
  Strides strides;
};

template <class Managed>
Managed* make_export(const Array& a) {
  auto* e = new Export<Managed>{{}, a, a.shape(), a.strides()};
  DLTensor& t = e->managed.dl_tensor;
  t.data = a.data();
  t.device = to_dlpack(a.device());
  t.ndim = a.ndim();
  t.dtype = to_dlpack(a.dtype());
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  // Runs on whichever thread the consumer frees on: only C++ state is touched here (storages
  // that wrap Python objects take the GIL themselves when they let go).
  e->managed.deleter = [](Managed* self) { delete static_cast<Export<Managed>*>(self->manager_ctx); };
  return &e->managed;
}

/// A tensor read (and checked) by read_tensor, with the Storage that takes ownership made last:
/// a tensor refused before is still its producer's (the capsule keeps its name and frees it).
Array wrap(TensorLayout l, std::function<void(void*)> release) {
  const std::int64_t isz = itemsize(l.dtype);
  check_layout(l.shape, l.strides, 0, isz);  // what the Array constructor checks, so that it cannot throw below
  auto storage = std::make_shared<Storage>(l.device, l.data, static_cast<std::size_t>(shape_size(l.shape) * isz),
                                           std::move(release));
  return Array(std::move(storage), std::move(l.shape), std::move(l.strides), 0, l.dtype);
}
}  // namespace

DLManagedTensor* export_legacy(const Array& a) {
  if (!a.writeable())
    throw BufferError(
        "cannot export a read-only array as a legacy DLPack tensor (it cannot say read-only); "
        "the consumer must ask for DLPack 1.x with max_version=(1, 0) or later");
  return make_export<DLManagedTensor>(a);
}

DLManagedTensorVersioned* export_versioned(const Array& a, std::uint64_t extra_flags) {
  DLManagedTensorVersioned* m = make_export<DLManagedTensorVersioned>(a);
  m->version = kVersion;
  m->flags = extra_flags | (a.writeable() ? 0 : kFlagReadOnly);
  return m;
}

Array import_legacy(DLManagedTensor* t) {
  if (!t) throw BufferError("null DLPack tensor");
  return wrap(read_tensor(t->dl_tensor), [t](void*) {
    if (t->deleter) t->deleter(t);
  });
}

Array import_versioned(DLManagedTensorVersioned* t) {
  if (!t) throw BufferError("null DLPack tensor");
  bool read_only = false;
  Array a = wrap(read_versioned(*t, &read_only), [t](void*) {
    if (t->deleter) t->deleter(t);
  });
  if (read_only) a.set_writeable(false);
  return a;
}

}  // namespace cupric::dlpack
