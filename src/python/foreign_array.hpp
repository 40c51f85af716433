// foreign_array.hpp — the one importer of other libraries' arrays: cupric and NumPy arrays, PyTorch
// tensors, __array_interface__, __cuda_array_interface__ and DLPack producers are read and checked
// here into one ForeignArray, for asarray, from_dlpack, Buffer copies, raw and tile launches.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <span>

#include "bind_cuda.hpp"
#include "cupric/array.hpp"

namespace nb = nanobind;

namespace cupric::py {

/// How an object exposes its memory; each kind has one reader.
enum class ForeignKind : std::uint8_t {
  cupric,                ///< a cupric ndarray
  numpy,                 ///< a numpy.ndarray: its buffer (no format string) and its dtype object
  torch,                 ///< a torch.Tensor: data_ptr(), shape, stride(), dtype, is_cuda, get_device()
  array_interface,       ///< __array_interface__ (host memory)
  cuda_array_interface,  ///< __cuda_array_interface__, versions 2 and 3
  dlpack,                ///< __dlpack__ (with __dlpack_device__), or a bare DLPack capsule
};
const char* kind_name(ForeignKind k);

/// An array of another library, as every consumer sees it. Nothing was copied (except where
/// ImportOptions::copy_unaligned asked for it).
struct ForeignArray {
  ForeignKind kind = ForeignKind::cupric;
  std::uintptr_t data = 0;  ///< the address of element 0 (index (0, ..., 0)); 0 only when empty
  DType dtype = DType::float64;
  Shape shape;
  Strides strides;  ///< in elements, as cupric's arrays (C order where the producer gave none)
  Device device;    ///< cpu (host memory, pinned DLPack memory too) or cuda:N
  /// The stream the data is ready on: the consumer's stream waits for it before using the memory.
  /// __cuda_array_interface__ v3: the producer's "stream"; DLPack: the stream handed to the
  /// producer, or the legacy default stream when it took none. nullopt: nothing to wait for
  /// (host memory, CAI without a stream, torch tensors; cupric arrays are ordered by `storage`).
  std::optional<cuda::CUstream> stream;
  bool readonly = false;
  nb::object owner;            ///< the Python object that keeps the memory alive
  Storage* storage = nullptr;  ///< cupric arrays: their storage (last writer), alive through owner

  int ndim() const { return static_cast<int>(shape.size()); }
  /// What a launch orders itself after: the storage's last writer, or `stream`.
  DeviceArgument device_argument() const { return {storage, stream.has_value(), stream.value_or(nullptr)}; }
};

struct ImportOptions {
  /// The stream the consumer uses the memory on: DLPack producers order their work before it.
  /// nullopt: the current stream of the producer's device.
  std::optional<cuda::CUstream> consumer_stream;
  /// Only memory a CUDA kernel can address: host arrays are not imported (DLPack producers on the
  /// CPU are not even asked for a capsule); pinned DLPack memory is (its device says cpu).
  bool device_only = false;
  /// Host strides that are not multiples of the item size: import a C-contiguous NumPy copy
  /// (asarray) instead of refusing them.
  bool copy_unaligned = false;
};

/// The orders consumers try the kinds in. asarray: no torch reader, and DLPack before
/// __cuda_array_interface__ (the producer says the device and read-only flags, and orders its
/// work before the consumer's stream). Kernel arguments (tile and raw launches, Buffer copies):
/// the cheapest readers first.
inline constexpr ForeignKind kAsarrayOrder[] = {ForeignKind::numpy, ForeignKind::array_interface, ForeignKind::dlpack,
                                                ForeignKind::cuda_array_interface};
inline constexpr ForeignKind kArgumentOrder[] = {ForeignKind::cupric,
                                                 ForeignKind::numpy,
                                                 ForeignKind::torch,
                                                 ForeignKind::array_interface,
                                                 ForeignKind::cuda_array_interface,
                                                 ForeignKind::dlpack};

/// The first kind in `order` that `obj` exposes (its type and attribute names only: nothing is read).
std::optional<ForeignKind> foreign_kind(nb::handle obj, std::span<const ForeignKind> order);

/// Reads `obj` as `kind` into `out`: false when it is not of that kind (or, device_only, its memory
/// is on the host). When it is but what it says is malformed: TypeError (types, dtypes), ValueError
/// (check_foreign_array's rules; BufferError for DLPack), messages naming the protocol and values.
bool import_as(nb::handle obj, ForeignKind kind, const ImportOptions& options, ForeignArray& out);

/// The first kind in `order` that `obj` exposes, imported; nullopt when none (or device_only and
/// host memory). A producer whose __cuda_array_interface__ raises but which has __dlpack__
/// (PyTorch's bfloat16 tensors) is imported through DLPack.
std::optional<ForeignArray> import_foreign(nb::handle obj, std::span<const ForeignKind> order,
                                           const ImportOptions& options = {});

/// A cupric view of an import (the array itself for kind cupric). Device memory is ready on the
/// current stream of its device from here on: that stream waits for `stream` first.
Array to_array(const ForeignArray& f);

/// The DType of a NumPy dtype object (`dtype.str` names it in errors when cupric has none).
DType dtype_from_numpy(nb::handle obj, nb::handle dtype);

void bind_foreign_array(nb::module_& m);  // cupric._cupric.ForeignArray, _import_array, _foreign_kind

}  // namespace cupric::py
