// cupric/dlpack.hpp — the DLPack ABI (our own declarations, written from the DLPack 1.x spec)
// and the conversions between cupric arrays and DLPack tensors, usable from C++ without Python.
#pragma once

#include <cstdint>

#include "cupric/array.hpp"

namespace cupric::dlpack {

// ---- the ABI: these layouts are fixed by the DLPack standard ------------------------------------

/// DLDeviceType (a C enum, hence int-sized). Only the values cupric maps are named.
enum DLDeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  ///< pinned host memory: readable by the CPU
  kDLROCM = 10,
  kDLCUDAManaged = 13,
};

struct DLDevice {
  std::int32_t device_type;  ///< a DLDeviceType
  std::int32_t device_id;
};

enum DLDataTypeCode : std::uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
  kDLFloat8_e4m3fn = 10,  ///< DLPack 1.1
  kDLFloat8_e5m2 = 12,    ///< DLPack 1.1
};

struct DLDataType {
  std::uint8_t code;    ///< a DLDataTypeCode
  std::uint8_t bits;    ///< bits of one lane (complex64: 64)
  std::uint16_t lanes;  ///< 1 for every type cupric knows
};

/// A strided view: strides are in elements (as cupric's); a null `strides` means C order.
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;
  std::uint64_t byte_offset;
};

/// DLPack 0.x "dltensor": the consumer calls deleter(self) when it no longer needs the data.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

struct DLPackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

/// DLPack 1.x "dltensor_versioned": as DLManagedTensor plus a version and flags.
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  std::uint64_t flags;
  DLTensor dl_tensor;
};

inline constexpr std::uint64_t kFlagReadOnly = 1u << 0;  ///< the consumer must not write
inline constexpr std::uint64_t kFlagIsCopied = 1u << 1;  ///< the producer copied for this export
inline constexpr std::uint64_t kFlagIsSubbytePadded = 1u << 2;

/// The version cupric produces and the highest it reads (any 1.x reads the same).
inline constexpr DLPackVersion kVersion{1, 1};

static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4, "DLPack ABI");
static_assert(sizeof(void*) != 8 ||
                  (sizeof(DLTensor) == 48 && sizeof(DLManagedTensor) == 64 && sizeof(DLManagedTensorVersioned) == 80),
              "DLPack ABI");

// ---- conversions ---------------------------------------------------------------------------

DLDataType to_dlpack(DType t);
/// Throws BufferError naming the code/bits/lanes when cupric has no such dtype.
DType dtype_from_dlpack(DLDataType t);
DLDevice to_dlpack(Device d);
/// kDLCPU and kDLCUDAHost -> cpu, kDLCUDA and kDLCUDAManaged -> cuda:N; others, and negative ids,
/// throw BufferError.
Device device_from_dlpack(DLDevice d);

/// What a DLPack tensor describes, checked: its dtype and device (one lane; the devices above),
/// ndim, shape, and check_foreign_array's rules for its strides and data (byte_offset included).
/// Throws BufferError naming the problem; nothing is taken from the tensor.
struct TensorLayout {
  void* data;  ///< the address of element 0 (data + byte_offset)
  DType dtype;
  Device device;
  Shape shape;
  Strides strides;  ///< in elements (C order where the tensor has none)
};
TensorLayout read_tensor(const DLTensor& t);
/// read_tensor of a DLPack 1.x tensor, after its version (major 1) and flags (no sub-byte
/// padding); *read_only says whether its flags forbid writing.
TensorLayout read_versioned(const DLManagedTensorVersioned& t, bool* read_only);

/// A new DLPack tensor viewing `a` (no copy); `a`'s storage stays alive until the consumer calls
/// the deleter, which may run on any thread. Legacy tensors cannot say "read-only", so exporting
/// a read-only array that way throws BufferError (as NumPy does).
DLManagedTensor* export_legacy(const Array& a);
/// As export_legacy, for DLPack 1.x; read-only arrays set kFlagReadOnly, and `extra_flags`
/// (e.g. kFlagIsCopied) are added.
DLManagedTensorVersioned* export_versioned(const Array& a, std::uint64_t extra_flags = 0);

/// Takes ownership of a DLPack tensor as a cupric array: no copy, and the tensor's deleter runs
/// when the last view of the array goes. Throws BufferError (and takes nothing; the caller still
/// owns `t`) when the dtype, device, lanes or version is not supported.
Array import_legacy(DLManagedTensor* t);
/// As import_legacy; kFlagReadOnly makes the array read-only. Major versions other than 1 throw.
Array import_versioned(DLManagedTensorVersioned* t);

}  // namespace cupric::dlpack
