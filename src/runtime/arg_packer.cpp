// arg_packer.cpp — kernel argument packing: aligned slots in one buffer (inline for the usual
// few arguments, so a launch allocates nothing), widths taken from the kernel's parameter sizes.
#include <cstring>
#include <limits>

#include "cupric/errors.hpp"
#include "cupric/runtime/kernel.hpp"

namespace cupric::runtime {

namespace {
std::size_t natural_alignment(std::size_t size) {
  std::size_t a = 1;
  while (a < 16 && size % (a * 2) == 0) a *= 2;
  return a;
}
}  // namespace

ArgPacker::ArgPacker(const std::vector<std::uint32_t>* param_sizes, const char* kernel_name)
    : param_sizes_(param_sizes), kernel_name_(kernel_name) {}

std::uint32_t ArgPacker::expected_size() const {
  if (!param_sizes_) return 0;
  if (count_ >= param_sizes_->size())
    throw TypeError(cat("kernel '", kernel_name_, "' takes ", param_sizes_->size(), " argument",
                        param_sizes_->size() == 1 ? "" : "s", ", got more"));
  return (*param_sizes_)[count_];
}

void ArgPacker::reserve_more() {
  std::size_t n = max_args_ * 2;
  auto offsets = std::make_unique<std::uint32_t[]>(n);
  std::memcpy(offsets.get(), offsets_, count_ * sizeof(std::uint32_t));
  heap_offsets_ = std::move(offsets);
  offsets_ = heap_offsets_.get();
  heap_pointers_ = std::make_unique<void*[]>(n);
  pointers_ = heap_pointers_.get();
  max_args_ = n;
}

std::byte* ArgPacker::slot(std::size_t size, std::size_t alignment) {
  std::size_t offset = (used_ + alignment - 1) / alignment * alignment;
  if (offset + size > capacity_) {
    std::size_t n = std::max(capacity_ * 2, offset + size);
    auto data = std::make_unique<std::byte[]>(n);  // operator new aligns to 16
    std::memcpy(data.get(), data_, used_);
    heap_data_ = std::move(data);
    data_ = heap_data_.get();
    capacity_ = n;
  }
  if (count_ == max_args_) reserve_more();
  offsets_[count_++] = static_cast<std::uint32_t>(offset);
  used_ = offset + size;
  return data_ + offset;
}

void ArgPacker::fail_size(std::size_t got, const std::string& what) const {
  throw TypeError(cat("argument ", count_, " of kernel '", kernel_name_, "': the parameter is ",
                      (*param_sizes_)[count_], " bytes but ", what, " is ", got, " bytes"));
}

void ArgPacker::add_int(std::int64_t v) {
  std::uint32_t e = expected_size();
  auto fits = [&](std::int64_t lo, std::int64_t hi) {
    if (v < lo || v > hi)
      throw OverflowError(
          cat("argument ", count_, " of kernel '", kernel_name_, "': ", v, " does not fit the ", e, "-byte parameter"));
  };
  switch (e) {
    case 0:
    case 8: std::memcpy(slot(8, 8), &v, 8); return;
    case 4: {
      fits(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::uint32_t>::max());
      auto u = static_cast<std::uint32_t>(v);  // two's complement: int32 and uint32 share the bits
      std::memcpy(slot(4, 4), &u, 4);
      return;
    }
    case 2: {
      fits(std::numeric_limits<std::int16_t>::min(), std::numeric_limits<std::uint16_t>::max());
      auto u = static_cast<std::uint16_t>(v);
      std::memcpy(slot(2, 2), &u, 2);
      return;
    }
    case 1: {
      fits(std::numeric_limits<std::int8_t>::min(), std::numeric_limits<std::uint8_t>::max());
      auto u = static_cast<std::uint8_t>(v);
      std::memcpy(slot(1, 1), &u, 1);
      return;
    }
    default: fail_size(8, "a Python int");
  }
}

void ArgPacker::add_uint(std::uint64_t v) {
  if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return add_int(static_cast<std::int64_t>(v));
  std::uint32_t e = expected_size();
  if (e != 0 && e != 8)
    throw OverflowError(
        cat("argument ", count_, " of kernel '", kernel_name_, "': ", v, " does not fit the ", e, "-byte parameter"));
  std::memcpy(slot(8, 8), &v, 8);
}

void ArgPacker::add_float(double v) {
  std::uint32_t e = expected_size();
  if (e == 0 || e == 8) {
    std::memcpy(slot(8, 8), &v, 8);
  } else if (e == 4) {
    auto f = static_cast<float>(v);
    std::memcpy(slot(4, 4), &f, 4);
  } else if (e == 2) {
    throw TypeError(cat("argument ", count_, " of kernel '", kernel_name_,
                        "': a Python float for a 2-byte parameter is ambiguous (float16 or bfloat16?): pass "
                        "numpy.float16(x) or ml_dtypes.bfloat16(x)"));
  } else {
    fail_size(8, "a Python float");
  }
}

void ArgPacker::add_bool(bool v) {
  if (expected_size() > 1) return add_int(v ? 1 : 0);
  auto b = static_cast<std::uint8_t>(v);
  std::memcpy(slot(1, 1), &b, 1);
}

void ArgPacker::add_pointer(std::uint64_t address, const char* what) {
  std::uint32_t e = expected_size();
  if (e != 0 && e != 8) fail_size(8, what);
  std::memcpy(slot(8, 8), &address, 8);
}

void ArgPacker::add_bytes(const void* data, std::size_t size, std::size_t alignment, const std::string& type_name) {
  std::uint32_t e = expected_size();
  if (e != 0 && e != size) fail_size(size, type_name);
  if (alignment == 0) alignment = natural_alignment(size);
  std::memcpy(slot(size, alignment), data, size);
}

void ArgPacker::finish() const {
  if (param_sizes_ && count_ != param_sizes_->size()) {
    std::string sizes;
    for (auto s : *param_sizes_) sizes += cat(sizes.empty() ? "" : ", ", s);
    throw TypeError(cat("kernel '", kernel_name_, "' takes ", param_sizes_->size(), " argument",
                        param_sizes_->size() == 1 ? "" : "s", " (of ", sizes.empty() ? "no" : sizes, " bytes), got ",
                        count_));
  }
}

void** ArgPacker::params() {
  for (std::size_t i = 0; i < count_; ++i) pointers_[i] = data_ + offsets_[i];
  return pointers_;
}

std::size_t ArgPacker::offset(std::size_t index) const {
  if (index >= count_) throw IndexError(cat("argument index ", index, " out of range for ", count_, " arguments"));
  return offsets_[index];
}

}  // namespace cupric::runtime
