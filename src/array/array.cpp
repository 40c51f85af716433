// array.cpp — Device, Storage, Array views and Python-like scalars.
#include "cupric/array.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"

namespace cupric {

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda" || text == "gpu") return cuda(0);
  for (std::string_view prefix : {"cuda:", "gpu:"}) {
    if (text.substr(0, prefix.size()) == prefix) {
      std::string_view num = text.substr(prefix.size());
      bool ok = !num.empty() && num.size() < 6;
      int index = 0;
      for (char ch : num) {
        if (ch < '0' || ch > '9') ok = false;
        index = index * 10 + (ch - '0');
      }
      if (ok) return cuda(index);
    }
  }
  throw ValueError(cat("unknown device '", text, "': expected 'cpu', 'cuda' or 'cuda:N'"));
}

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }

namespace {
/// A Storage and its (small, host) bytes in one block; the data starts on a 64-byte boundary.
template <std::size_t N>
struct InlineHostBlock {
  static constexpr std::size_t kAlign = 64;
  explicit InlineHostBlock(std::size_t nbytes)
      : storage(Device::cpu(), aligned(), nbytes, std::function<void(void*)>()) {}
  void* aligned() {
    const auto p = reinterpret_cast<std::uintptr_t>(bytes);
    return bytes + ((kAlign - p % kAlign) % kAlign);
  }
  Storage storage;
  unsigned char bytes[N + kAlign - 1];  // room to start on a 64-byte boundary wherever the block lands
};

template <std::size_t N>
std::shared_ptr<Storage> inline_host(std::size_t nbytes) {
  auto block = std::make_shared<InlineHostBlock<N>>(nbytes);
  return std::shared_ptr<Storage>(block, &block->storage);
}
}  // namespace

std::shared_ptr<Storage> Storage::allocate(Device device, std::size_t nbytes) {
  static_assert(kInlineHostBytes == 8192);
  if (device.is_cpu() && nbytes <= kInlineHostBytes) {  // size classes: at most 4x (tiny) or 2x the request
    if (nbytes <= 64) return inline_host<64>(nbytes);
    if (nbytes <= 256) return inline_host<256>(nbytes);
    if (nbytes <= 1024) return inline_host<1024>(nbytes);
    if (nbytes <= 2048) return inline_host<2048>(nbytes);
    if (nbytes <= 4096) return inline_host<4096>(nbytes);
    return inline_host<8192>(nbytes);
  }
  Backend& be = backend_for(device);
  void* p = be.allocate(nbytes);
  auto storage = std::make_shared<Storage>(device, p, nbytes, &be);
  storage->set_last_writer(be.current_queue());  // what writes a new storage runs on the queue it came from
  return storage;
}

Storage::~Storage() {
  if (owner_) owner_->deallocate(data_, nbytes_, last_writer());
  else if (release_) release_(data_);
}

std::int64_t shape_size(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Strides c_strides(const Shape& shape) {
  Strides s(shape.size());
  std::int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<std::int64_t>(shape[i], 1);
  }
  return s;
}

Array::Array(std::shared_ptr<Storage> storage, Shape shape, Strides strides, std::int64_t offset, DType dtype)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {
  check_layout(shape_, strides_, offset_, cupric::itemsize(dtype_));
}

Array Array::empty(const Shape& shape, DType dtype, Device device) {
  return Array(Storage::allocate_for(shape, dtype, device), shape, c_strides(shape), 0, dtype);
}

std::int64_t Array::size() const { return shape_size(shape_); }

void* Array::data() const {
  if (!storage_) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_ * itemsize();
}

bool Array::is_c_contiguous() const {
  std::int64_t expect = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] == 0) return true;
    if (shape_[i] != 1 && strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

bool Array::is_f_contiguous() const {
  std::int64_t expect = 1;
  for (int i = 0; i < ndim(); ++i) {
    if (shape_[i] == 0) return true;
    if (shape_[i] != 1 && strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

void Array::check_writeable() const {
  if (!writeable_) throw ValueError("assignment destination is read-only");
}

Array Array::view(Shape shape, Strides strides, std::int64_t offset) const {
  Array v(storage_, std::move(shape), std::move(strides), offset, dtype_);
  v.writeable_ = writeable_;
  return v;
}

namespace {
/// NumPy's conditions for viewing an array as a dtype of another item size (ndarray.view).
void check_resizing_view(const Array& a, DType dtype) {
  const std::int64_t from = a.itemsize(), to = itemsize(dtype);
  if (a.ndim() == 0)
    throw ValueError(cat("Changing the dtype of a 0d array is only supported if the itemsize is unchanged (",
                         name(a.dtype()), " to ", name(dtype), ")"));
  const int last = a.ndim() - 1;
  if (a.shape()[last] != 1 && a.size() != 0 && a.strides()[last] != 1)
    throw ValueError(cat("To change to a dtype of a different size, the last axis must be contiguous (viewing ",
                         a.str(), " as ", name(dtype), ")"));
  if (to < from && from % to != 0)
    throw ValueError(cat("When changing to a smaller dtype, its size must be a divisor of the size of original dtype (",
                         name(a.dtype()), " to ", name(dtype), ")"));
  if (to > from && (a.shape()[last] * from) % to != 0)
    throw ValueError(
        cat("When changing to a larger dtype, its size must be a divisor of the total size in bytes of "
            "the last axis of the array (",
            a.shape()[last] * from, " bytes, ", name(dtype), " is ", to, ")"));
}
}  // namespace

Array Array::view_as(DType dtype) const {
  const std::int64_t from = itemsize(), to = cupric::itemsize(dtype);
  Array v = *this;
  v.dtype_ = dtype;
  v.weak_ = WeakKind::none;
  if (from == to) return v;
  check_resizing_view(*this, dtype);
  // strides and the offset count elements here, so every one must be a whole number of the new items
  auto in_new_items = [&](std::int64_t elements, const char* what) {
    if ((elements * from) % to != 0)
      throw ValueError(cat("cannot view ", str(), " as ", name(dtype), ": its ", what, " of ", elements * from,
                           " bytes is not a multiple of ", to, " (cupric counts strides in elements); view a copy"));
    return elements * from / to;
  };
  const int last = ndim() - 1;
  for (int i = 0; i < last; ++i) v.strides_[i] = in_new_items(strides_[i], "stride");
  v.offset_ = in_new_items(offset_, "offset");
  v.shape_[last] = shape_[last] * from / to;
  v.strides_[last] = 1;
  check_layout(v.shape_, v.strides_, v.offset_, to);
  return v;
}

std::string Array::str() const { return cat(name(dtype_), " array of shape ", shape_str(shape_)); }

Scalar Scalar::from_uint(std::uint64_t v) {
  Scalar s;
  s.kind = WeakKind::integer;
  if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    s.i = static_cast<std::int64_t>(v);
  } else {
    s.u = v;
    s.big_unsigned = true;
  }
  return s;
}

std::string Scalar::str() const {
  switch (kind) {
    case WeakKind::boolean: return b ? "True" : "False";
    case WeakKind::integer:
      if (beyond) {  // only its nearest double is kept
        if (std::isinf(f)) return beyond > 0 ? "(an integer above 1.8e308)" : "(an integer below -1.8e308)";
        char digits[400];
        std::snprintf(digits, sizeof(digits), "%.0f", f);
        return cat("~", digits);
      }
      return big_unsigned ? std::to_string(u) : std::to_string(i);
    case WeakKind::floating: return cat(f);
    case WeakKind::complex: return cat("(", c.real(), "+", c.imag(), "j)");
    case WeakKind::none: break;
  }
  return "?";
}

void Scalar::store(DType t, void* dst) const {
  visit_dtype(t, [&]<class T>() {
    T v{};
    if constexpr (std::is_same_v<T, bool>) {
      switch (kind) {
        case WeakKind::boolean: v = b; break;
        case WeakKind::integer: v = big_unsigned || beyond || i != 0; break;
        case WeakKind::floating: v = f != 0; break;
        default: v = c != std::complex<double>(0); break;
      }
    } else if constexpr (std::is_integral_v<T>) {
      if (kind == WeakKind::integer) {
        bool fits = beyond         ? false
                    : big_unsigned ? (std::is_unsigned_v<T> && sizeof(T) == 8)
                                   : (i >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
                                      (i < 0 || static_cast<std::uint64_t>(i) <=
                                                    static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
        if (!fits) throw OverflowError(cat("Python integer ", str(), " out of bounds for ", name(t)));
        v = big_unsigned ? static_cast<T>(u) : static_cast<T>(i);
      } else if (kind == WeakKind::boolean) {
        v = static_cast<T>(b);
      } else {
        double x = kind == WeakKind::floating ? f : c.real();
        if (std::isnan(x)) throw ValueError("cannot convert float NaN to integer");
        if (std::isinf(x)) throw OverflowError("cannot convert float infinity to integer");
        if (x < static_cast<double>(std::numeric_limits<T>::min()) ||
            x >= static_cast<double>(std::numeric_limits<T>::max()) + 1.0)
          throw OverflowError(cat("cannot convert ", str(), " to ", name(t)));
        v = static_cast<T>(x);
      }
    } else {
      // floating or complex targets
      std::complex<double> z;
      switch (kind) {
        case WeakKind::boolean: z = b ? 1.0 : 0.0; break;
        case WeakKind::integer:
          if (beyond && std::isinf(f)) throw OverflowError("int too large to convert to float");
          z = beyond ? f : big_unsigned ? static_cast<double>(u) : static_cast<double>(i);
          break;
        case WeakKind::floating: z = f; break;
        default: z = c; break;
      }
      if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
        using R = typename T::value_type;
        v = T(static_cast<R>(z.real()), static_cast<R>(z.imag()));
      } else {
        v = T(static_cast<float>(z.real()));
        if constexpr (std::is_same_v<T, double>) v = z.real();
      }
    }
    std::memcpy(dst, &v, sizeof(T));
  });
}

Scalar scalar_of_weak(const Array& a) {
  const void* p = a.data();
  switch (a.dtype()) {
    case DType::bool_: return Scalar::from_bool(*static_cast<const bool*>(p));
    case DType::int64: return Scalar::from_int(*static_cast<const std::int64_t*>(p));
    case DType::uint64: return Scalar::from_uint(*static_cast<const std::uint64_t*>(p));
    case DType::float64:  // an integer past 64 bits is held as its nearest double (weak_storage_dtype)
      if (a.weak() == WeakKind::integer) return Scalar::from_huge_int(*static_cast<const double*>(p));
      return Scalar::from_float(*static_cast<const double*>(p));
    case DType::complex128: return Scalar::from_complex(*static_cast<const std::complex<double>*>(p));
    default: break;
  }
  throw TypeError(cat("not a Python scalar: ", a.str()));
}

Array scalar_array(const Scalar& s, DType dtype, Device device) {
  Array host = Array::empty({}, dtype, Device::cpu());
  s.store(dtype, host.data());
  if (device.is_cpu()) return host;
  Array out = Array::empty({}, dtype, device);
  backend_for(device).copy_from_host(out.data(), host.data(), static_cast<std::size_t>(host.itemsize()));
  return out;
}

DType weak_storage_dtype(const Scalar& s) {
  return s.beyond ? DType::float64 : s.big_unsigned ? DType::uint64 : default_dtype(s.kind);
}

namespace {
/// Writes a weak scalar in weak_storage_dtype(s) (an integer past 64 bits as its double, even inf).
void store_weak(const Scalar& s, void* dst) {
  if (s.beyond) std::memcpy(dst, &s.f, sizeof(double));
  else s.store(weak_storage_dtype(s), dst);
}
}  // namespace

InlineScalar::InlineScalar(DType dtype)
    : storage_(Device::cpu(), bytes_, sizeof(bytes_), nullptr),
      // aliasing an empty owner: no control block, nothing counted or freed
      array_(std::shared_ptr<Storage>(std::shared_ptr<Storage>(), &storage_), Shape{}, Strides{}, 0, dtype) {}

InlineScalar::InlineScalar(const Scalar& s, DType dtype) : InlineScalar(dtype) { s.store(dtype, bytes_); }

InlineScalar::InlineScalar(const Scalar& s) : InlineScalar(weak_storage_dtype(s)) {
  store_weak(s, bytes_);
  array_.set_weak(s.kind);
}

Array scalar_array(const Scalar& s, Device device) {
  Array host = Array::empty({}, weak_storage_dtype(s), Device::cpu());
  store_weak(s, host.data());
  host.set_weak(s.kind);
  if (device.is_cpu()) return host;
  Array out = Array::empty({}, host.dtype(), device);
  backend_for(device).copy_from_host(out.data(), host.data(), static_cast<std::size_t>(host.itemsize()));
  out.set_weak(s.kind);
  return out;
}

}  // namespace cupric
