// cupric/array.hpp — Device, Storage and Array: an n-dimensional view over shared storage.
//
// Layout convention: shape and strides are in ELEMENTS (not bytes), and `offset` is the
// element index of a[0, 0, ...] inside the storage. Strides may be zero (broadcast) or
// negative (reversed views). Byte strides appear only at the edges (buffer protocol,
// __array_interface__, iteration plans handed to backends).
#pragma once

#include <atomic>
#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cupric/dtype.hpp"
#include "cupric/small_vector.hpp"

namespace cupric {

/// Up to 8 dimensions inline: copying an Array or a shape of usual rank allocates nothing.
inline constexpr std::size_t kInlineDims = 8;
using Shape = SmallVector<std::int64_t, kInlineDims>;
using Strides = SmallVector<std::int64_t, kInlineDims>;

std::string shape_str(const Shape& s);  ///< "(3, 4)", "(5,)", "()"

// ---- the shape rules every array obeys, checked once here ---------------------------------------
// The Array constructor checks its layout, so no new array or view escapes them; functions that
// do work before they make their result call check_shape on the result's shape first.

/// NumPy's limit on the number of dimensions (NPY_MAXDIMS).
inline constexpr int kMaxDims = 64;

/// ValueError "maximum supported dimension for an ndarray is currently 64, found 65" above kMaxDims.
void check_ndim(std::size_t ndim);
/// NumPy's rules for an array of `shape` and `itemsize`: at most kMaxDims dimensions, none negative,
/// and the product of the nonzero extents times the itemsize fits int64 (ValueError "array is too
/// big; ..." otherwise). Shapes that pass have exact size(), nbytes() and C strides.
void check_shape(const Shape& shape, std::int64_t itemsize);
/// check_shape, plus strides of the shape's length whose reach (offset plus |stride| * (extent - 1)
/// over the dimensions, in bytes) fits int64, so that no element address computation overflows.
void check_layout(const Shape& shape, const Strides& strides, std::int64_t offset, std::int64_t itemsize);
/// An array another library describes (__array_interface__, __cuda_array_interface__, DLPack), checked
/// as NumPy checks it before cupric views its memory: the shape rules, strides (in bytes; nullptr for
/// C-contiguous) of the shape's length and multiples of the itemsize, data not NULL unless the array is
/// empty, and no element address outside [1, 2^64). `protocol` names the source in the message.
/// The problem as a message, empty when there is none (for callers that must not raise) ...
std::string foreign_array_problem(const char* protocol, std::uintptr_t data, const Shape& shape,
                                  const Strides* byte_strides, std::int64_t itemsize);
/// Strides in elements (DLPack, PyTorch) as the byte strides foreign_array_problem takes, in `bytes`;
/// the problem "<protocol>: strides (...) are out of range" when one passes int64 in bytes.
std::string foreign_byte_strides(const char* protocol, const Strides& elements, std::int64_t itemsize, Strides& bytes);
/// ... and as a ValueError.
void check_foreign_array(const char* protocol, std::uintptr_t data, const Shape& shape, const Strides* byte_strides,
                         std::int64_t itemsize);

/// Where an array lives: "cpu" or "cuda:N".
struct Device {
  enum class Type : std::uint8_t { cpu, cuda };
  Type type = Type::cpu;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int i) { return {Type::cuda, i}; }
  /// Parses "cpu", "cuda", "cuda:1", "gpu"; throws ValueError naming the text otherwise.
  static Device parse(std::string_view text);
  std::string str() const;
  bool is_cpu() const { return type == Type::cpu; }
  bool operator==(const Device&) const = default;
};

class Backend;

/// A block of memory on one device, released by its owner's deleter when the last view goes.
class Storage {
 public:
  Storage(Device device, void* data, std::size_t nbytes, std::function<void(void*)> release)
      : device_(device), data_(data), nbytes_(nbytes), release_(std::move(release)) {}
  /// Memory from `owner`'s allocator: given back with owner->deallocate, which is told the
  /// storage's last writer (so that a stream-ordered free comes after that writer's work).
  Storage(Device device, void* data, std::size_t nbytes, Backend* owner)
      : device_(device), data_(data), nbytes_(nbytes), owner_(owner) {}
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// New uninitialised storage from the device's backend allocator. Small host blocks (up to
  /// kInlineHostBytes) live inside the Storage's own allocation instead: one malloc, 64-byte aligned.
  static std::shared_ptr<Storage> allocate(Device device, std::size_t nbytes);
  /// Storage for a new C-contiguous array: check_shape first, then allocate; MemoryError "Unable to
  /// allocate 8.00 GiB for an array with shape (...) and data type float64" when the host has no memory.
  /// `zeroed`: ask the backend for memory the OS zeroes lazily; *zeroed says whether it gave some.
  static std::shared_ptr<Storage> allocate_for(const Shape& shape, DType dtype, Device device, bool* zeroed = nullptr);

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  /// The device backend's id of the queue that last wrote this memory (CUDA: the serial of the
  /// stream), 0 when none is known. Hand-offs to other libraries order their reads after it.
  /// Relaxed atomics: a plain load or store, and no data race when threads share an array.
  std::uint64_t last_writer() const { return last_writer_.load(std::memory_order_relaxed); }
  void set_last_writer(std::uint64_t queue) {
    if (last_writer_.load(std::memory_order_relaxed) != queue) last_writer_.store(queue, std::memory_order_relaxed);
  }

 private:
  Device device_;
  void* data_;
  std::size_t nbytes_;
  std::function<void(void*)> release_;
  Backend* owner_ = nullptr;
  std::atomic<std::uint64_t> last_writer_{0};
};

/// An n-dimensional array: a typed, strided view of a Storage.
class Array {
 public:
  Array() = default;  ///< a null array (no storage); `defined()` is false
  /// A view of `storage`; its layout is checked (check_layout: ValueError when it breaks the rules).
  Array(std::shared_ptr<Storage> storage, Shape shape, Strides strides, std::int64_t offset, DType dtype);

  /// A new C-contiguous array with uninitialised contents (Storage::allocate_for's checks and errors).
  static Array empty(const Shape& shape, DType dtype, Device device = Device::cpu());

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }  ///< in elements
  std::int64_t offset() const { return offset_; }      ///< in elements
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::int64_t size() const;
  std::int64_t itemsize() const { return cupric::itemsize(dtype_); }
  std::int64_t nbytes() const { return size() * itemsize(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  /// Address of element [0, 0, ...] (base + offset * itemsize).
  void* data() const;
  bool is_c_contiguous() const;
  bool is_f_contiguous() const;
  bool writeable() const { return writeable_; }
  void set_writeable(bool w) { writeable_ = w; }
  /// Throws ValueError "assignment destination is read-only" when not writeable.
  void check_writeable() const;

  /// A view with new shape, strides (elements) and offset over the same storage.
  Array view(Shape shape, Strides strides, std::int64_t offset) const;
  /// The same bytes as another dtype (ndarray.view): of another item size, the last axis grows or
  /// shrinks as NumPy's does (it must be contiguous; ValueError otherwise).
  Array view_as(DType dtype) const;

  /// The Python-scalar kind this array came from (NEP 50 weak scalar), or none.
  WeakKind weak() const { return weak_; }
  Array& set_weak(WeakKind k) {
    weak_ = k;
    return *this;
  }

  std::string str() const;  ///< short description for messages: "float32 array of shape (3, 4)"

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  std::int64_t offset_ = 0;
  DType dtype_ = DType::float64;
  WeakKind weak_ = WeakKind::none;
  bool writeable_ = true;
};

/// C-order (row-major) strides in elements for a shape.
Strides c_strides(const Shape& shape);
/// The product of the extents (exact for shapes that passed check_shape, as every array's did).
std::int64_t shape_size(const Shape& shape);

/// NumPy broadcasting of shapes; throws ValueError "cannot broadcast shapes (3, 4) and (5,)".
Shape broadcast_shapes(const Shape& a, const Shape& b);
Shape broadcast_shapes(const std::vector<Shape>& shapes);
/// A view of `a` with shape `shape` (stride 0 on broadcast dimensions), read-only as NumPy's.
Array broadcast_to(const Array& a, const Shape& shape);

/// A Python-like scalar value, kept exactly until the dtype it meets is known.
struct Scalar {
  WeakKind kind = WeakKind::integer;
  bool b = false;
  std::int64_t i = 0;   ///< integer value when it fits int64
  std::uint64_t u = 0;  ///< integer value when it does not (big_unsigned)
  bool big_unsigned = false;
  /// +1 / -1: an integer above uint64 / below int64 (a Python int), with f its nearest double
  /// (inf past double's range). Comparisons take one (the answer against an integer array is
  /// exact); storing it in an integer type raises OverflowError, in a float type where f is inf too.
  std::int8_t beyond = 0;
  double f = 0;
  std::complex<double> c{};

  static Scalar from_bool(bool v) {
    Scalar s;
    s.kind = WeakKind::boolean;
    s.b = v;
    return s;
  }
  static Scalar from_int(std::int64_t v) {
    Scalar s;
    s.kind = WeakKind::integer;
    s.i = v;
    return s;
  }
  static Scalar from_uint(std::uint64_t v);
  static Scalar from_float(double v) {
    Scalar s;
    s.kind = WeakKind::floating;
    s.f = v;
    return s;
  }
  static Scalar from_complex(std::complex<double> v) {
    Scalar s;
    s.kind = WeakKind::complex;
    s.c = v;
    return s;
  }
  static Scalar from_huge_int(double rounded) {
    Scalar s;
    s.kind = WeakKind::integer;
    s.beyond = rounded > 0 ? 1 : -1;
    s.f = rounded;
    return s;
  }

  /// Writes the value as dtype `t` at `dst` (host memory). Integers that do not fit raise
  /// OverflowError ("Python integer 300 out of bounds for int8"), as NumPy 2 does.
  void store(DType t, void* dst) const;
  std::string str() const;
};

/// The value of a weak 0-d scalar array (a CPU array made by scalar_array).
Scalar scalar_of_weak(const Array& a);
/// The dtype a weak scalar is held in: its kind's default, uint64 for integers past int64,
/// float64 (its nearest double, marked weak integer) for integers past 64 bits.
DType weak_storage_dtype(const Scalar& s);

/// A 0-d array holding a scalar, marked weak (NEP 50) unless `dtype` is given.
Array scalar_array(const Scalar& s, Device device = Device::cpu());
Array scalar_array(const Scalar& s, DType dtype, Device device = Device::cpu());

/// Host arrays of at most this many bytes share one allocation with their Storage (one malloc
/// instead of a control block and an aligned_alloc, which costs 3x a malloc in glibc).
inline constexpr std::size_t kInlineHostBytes = 8192;

/// A 0-d host array whose element lives inside this object, for the scalar operands of one call
/// (a Python scalar in `x + 1`): nothing is allocated. Its array() must not outlive it, so it is
/// neither copyable nor movable, and it is only handed to calls that do not keep their inputs.
class InlineScalar {
 public:
  /// The scalar stored as `dtype` (OverflowError as Scalar::store when it does not fit).
  InlineScalar(const Scalar& s, DType dtype);
  /// A weak (NEP 50) scalar in the dtype scalar_array(s) would give it.
  explicit InlineScalar(const Scalar& s);
  InlineScalar(const InlineScalar&) = delete;
  InlineScalar& operator=(const InlineScalar&) = delete;
  const Array& array() const { return array_; }

 private:
  explicit InlineScalar(DType dtype);  // uninitialised bytes
  alignas(16) unsigned char bytes_[16];
  Storage storage_;
  Array array_;
};

}  // namespace cupric
