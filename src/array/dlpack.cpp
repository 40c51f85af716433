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
                        "): supported are bool, int8-64, uint8-64, float16/32/64, bfloat16 "
                        "and complex64/128 with one lane"));
}

DLDevice to_dlpack(Device d) { return d.is_cpu() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, d.index}; }

Device device_from_dlpack(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return Device::cpu();
    case kDLCUDA:
    case kDLCUDAManaged:
      return Device::cuda(d.device_id);
    default:
      break;
  }
  throw BufferError(cat("cupric cannot use DLPack device type ", d.device_type, " (device ", d.device_id,
                        "): supported are kDLCPU (1), kDLCUDA (2), kDLCUDAHost (3) and kDLCUDAManaged (13)"));
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

/// Every check comes before the Storage that takes ownership exists: a tensor refused here is
/// still its producer's (the capsule keeps its name and frees it).
Array wrap(const DLTensor& t, std::function<void(void*)> release) {
  const DType dtype = dtype_from_dlpack(t.dtype);
  const Device device = device_from_dlpack(t.device);
  if (t.ndim < 0 || t.ndim > kMaxDims)
    throw BufferError(cat("DLPack tensor has ndim ", t.ndim, " (0 to ", kMaxDims, ")"));
  if (t.ndim > 0 && !t.shape) throw BufferError("DLPack tensor has no shape");
  Shape shape(t.shape, t.shape + t.ndim);
  for (auto d : shape)
    if (d < 0) throw BufferError(cat("DLPack tensor has a negative dimension: ", shape_str(shape)));
  Strides strides = t.strides ? Strides(t.strides, t.strides + t.ndim) : c_strides(shape);
  const std::int64_t isz = itemsize(dtype);
  Strides bytes(strides.size());
  for (std::size_t d = 0; d < strides.size(); ++d)
    if (__builtin_mul_overflow(strides[d], isz, &bytes[d]))
      throw BufferError(cat("DLPack tensor strides ", shape_str(strides), " are out of range"));
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  const std::string problem =
      foreign_array_problem("DLPack tensor", reinterpret_cast<std::uintptr_t>(data), shape, &bytes, isz);
  if (!problem.empty()) throw BufferError(problem);
  check_layout(shape, strides, 0, isz);  // what the Array constructor checks, so that it cannot throw below
  auto storage = std::make_shared<Storage>(device, data, static_cast<std::size_t>(shape_size(shape) * itemsize(dtype)),
                                           std::move(release));
  return Array(std::move(storage), std::move(shape), std::move(strides), 0, dtype);
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
  return wrap(t->dl_tensor, [t](void*) {
    if (t->deleter) t->deleter(t);
  });
}

Array import_versioned(DLManagedTensorVersioned* t) {
  if (!t) throw BufferError("null DLPack tensor");
  if (t->version.major != kVersion.major)
    throw BufferError(
        cat("cupric reads DLPack 1.x tensors; this one is version ", t->version.major, ".", t->version.minor));
  if (t->flags & kFlagIsSubbytePadded) throw BufferError("cupric cannot import sub-byte padded DLPack tensors");
  const bool read_only = (t->flags & kFlagReadOnly) != 0;
  Array a = wrap(t->dl_tensor, [t](void*) {
    if (t->deleter) t->deleter(t);
  });
  if (read_only) a.set_writeable(false);
  return a;
}

}  // namespace cupric::dlpack
