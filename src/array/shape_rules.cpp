// shape_rules.cpp — the rules every array's shape and strides obey (NumPy's: at most 64 dimensions,
// sizes and byte counts that fit int64), the checks of foreign layouts, and MemoryError's message.
#include <cinttypes>
#include <cstdio>
#include <new>

#include "cupric/array.hpp"
#include "cupric/backend.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/errors.hpp"

namespace cupric {

namespace {
std::string too_big(const Shape& shape, std::int64_t itemsize) {
  return cat("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size (shape ",
             shape_str(shape), ", itemsize ", itemsize, ")");
}

/// The first problem of the shape rules, empty when there is none.
std::string shape_problem(const Shape& shape, std::int64_t itemsize) {
  if (shape.size() > static_cast<std::size_t>(kMaxDims))
    return cat("maximum supported dimension for an ndarray is currently ", kMaxDims, ", found ", shape.size());
  for (auto d : shape)
    if (d < 0) return cat("negative dimensions are not allowed: ", shape_str(shape));
  std::int64_t bytes = itemsize;
  for (auto d : shape)  // as NumPy: a zero extent does not hide an overflow of the others
    if (d != 0 && __builtin_mul_overflow(bytes, d, &bytes)) return too_big(shape, itemsize);
  return {};
}

std::uint64_t magnitude(std::int64_t v) {
  return v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
}

/// The bytes below and above element 0 that the array's elements reach (strides in bytes); false
/// when their span does not fit int64.
bool byte_reach(const Shape& shape, const Strides& byte_strides, std::uint64_t& below, std::uint64_t& above) {
  constexpr auto kMax = static_cast<std::uint64_t>(INT64_MAX);
  below = above = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 1) continue;
    std::uint64_t r;
    if (__builtin_mul_overflow(magnitude(byte_strides[d]), static_cast<std::uint64_t>(shape[d] - 1), &r)) return false;
    std::uint64_t& side = byte_strides[d] < 0 ? below : above;
    if (__builtin_add_overflow(side, r, &side) || side > kMax) return false;
  }
  return below + above <= kMax;  // (each is at most 2^63 - 1: the sum cannot wrap)
}

std::string hex(std::uintptr_t p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, p);
  return buf;
}

/// NumPy's way of writing a byte count: "8.00 GiB", "512 bytes".
std::string size_text(std::uint64_t bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return cat(bytes, " bytes");
  int unit = (63 - __builtin_clzll(bytes)) / 10;
  double value = static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << (10 * unit));
  if (value >= 1023.995 && unit < 6) {  // would print as 1024.00 of this unit
    ++unit;
    value /= 1024;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", value, units[unit]);
  return buf;
}
}  // namespace

void check_ndim(std::size_t ndim) {
  if (ndim > static_cast<std::size_t>(kMaxDims))
    throw ValueError(cat("maximum supported dimension for an ndarray is currently ", kMaxDims, ", found ", ndim));
}

void check_shape(const Shape& shape, std::int64_t itemsize) {
  std::string problem = shape_problem(shape, itemsize);
  if (!problem.empty()) throw ValueError(problem);
}

void check_layout(const Shape& shape, const Strides& strides, std::int64_t offset, std::int64_t itemsize) {
  check_shape(shape, itemsize);
  if (strides.size() != shape.size())
    throw ValueError(cat("strides ", shape_str(strides), " do not match shape ", shape_str(shape)));
  std::int64_t offset_bytes;
  if (__builtin_mul_overflow(offset, itemsize, &offset_bytes))
    throw ValueError(cat("an array offset of ", offset, " elements of ", itemsize, " bytes is out of range"));
  if (shape_size(shape) == 0) return;  // no element is addressed
  Strides bytes(strides.size());
  for (std::size_t d = 0; d < strides.size(); ++d)
    if (shape[d] > 1 && __builtin_mul_overflow(strides[d], itemsize, &bytes[d]))
      throw ValueError(cat("strides ", shape_str(strides), " of ", itemsize, "-byte elements are out of range"));
  std::uint64_t below, above, total;
  if (!byte_reach(shape, bytes, below, above) ||
      __builtin_add_overflow(below + magnitude(offset_bytes), above, &total) ||
      total > static_cast<std::uint64_t>(INT64_MAX))
    throw ValueError(cat("strides ", shape_str(strides), " with shape ", shape_str(shape), " and offset ", offset,
                         " reach too far: element addresses would overflow"));
}

std::string foreign_array_problem(const char* protocol, std::uintptr_t data, const Shape& shape,
                                  const Strides* byte_strides, std::int64_t itemsize) {
  if (shape.size() > static_cast<std::size_t>(kMaxDims))
    return cat(protocol, ": number of dimensions must be within [0, ", kMaxDims, "], got ", shape.size());
  std::string problem = shape_problem(shape, itemsize);
  if (!problem.empty()) return cat(protocol, ": ", problem);
  if (byte_strides && byte_strides->size() != shape.size())
    return cat(protocol, ": mismatch in length of strides and shape: strides ", shape_str(*byte_strides), ", shape ",
               shape_str(shape));
  if (byte_strides)
    for (auto s : *byte_strides)
      if (s % itemsize != 0)
        return cat(protocol, ": strides ", shape_str(*byte_strides), " are not multiples of the item size ", itemsize);
  if (shape_size(shape) == 0) return {};
  if (data == 0) return cat(protocol, ": data is NULL but the array of shape ", shape_str(shape), " contains data");
  const Strides strides = byte_strides ? *byte_strides : [&] {
    Strides c = c_strides(shape);
    for (auto& s : c) s *= itemsize;
    return c;
  }();
  std::uint64_t below, above;
  const auto address = static_cast<std::uint64_t>(data);
  if (!byte_reach(shape, strides, below, above) || below > address ||
      above + static_cast<std::uint64_t>(itemsize) - 1 > UINT64_MAX - address)
    return cat(protocol, ": strides ", shape_str(strides), " with shape ", shape_str(shape),
               " reach outside memory from data ", hex(data));
  return {};
}

std::string foreign_byte_strides(const char* protocol, const Strides& elements, std::int64_t itemsize, Strides& bytes) {
  bytes.resize(elements.size());
  for (std::size_t d = 0; d < elements.size(); ++d)
    if (__builtin_mul_overflow(elements[d], itemsize, &bytes[d]))
      return cat(protocol, ": strides ", shape_str(elements), " are out of range");
  return {};
}

void check_foreign_array(const char* protocol, std::uintptr_t data, const Shape& shape, const Strides* byte_strides,
                         std::int64_t itemsize) {
  std::string problem = foreign_array_problem(protocol, data, shape, byte_strides, itemsize);
  if (!problem.empty()) throw ValueError(problem);
}

std::shared_ptr<Storage> Storage::allocate_for(const Shape& shape, DType dtype, Device device, bool* zeroed) {
  const std::int64_t isz = itemsize(dtype);
  check_shape(shape, isz);
  const auto nbytes = static_cast<std::size_t>(shape_size(shape) * isz);
  try {
    if (zeroed) *zeroed = false;
    if (zeroed && nbytes) {
      Backend& be = backend_for(device);
      if (void* p = be.allocate_zeroed(nbytes)) {
        std::shared_ptr<Storage> s;
        try {
          s = std::make_shared<Storage>(device, p, nbytes, &be);
        } catch (...) {
          be.deallocate(p, nbytes, be.current_queue());
          throw;
        }
        s->set_last_writer(be.current_queue());  // as Storage::allocate's
        *zeroed = true;
        return s;
      }
    }
    return allocate(device, nbytes);
  } catch (const std::bad_alloc&) {
    throw MemoryError(cat("Unable to allocate ", size_text(nbytes), " for an array with shape ", shape_str(shape),
                          " and data type ", name(dtype)));
  } catch (const cuda::OutOfMemoryError& e) {  // the same words, then the pool's (free memory, ...)
    throw cuda::OutOfMemoryError(
        cat("Unable to allocate ", size_text(nbytes), " for an array with shape ", shape_str(shape), " and data type ",
            name(dtype), " on ", device.str(), ": ", e.what()),
        e.operation, e.requested, e.free_bytes);
  }
}

}  // namespace cupric
