// cpu_backend.cpp — host memory, fill and arange, and registration of the CPU backend.
#include "cpu_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cupric/errors.hpp"
#include "cupric/thread_pool.hpp"
#include "host_allocator.hpp"

namespace cupric {
namespace cpu {

void* CpuBackend::allocate(std::size_t nbytes) { return host_allocate(nbytes); }

void CpuBackend::deallocate(void* ptr, std::size_t nbytes, std::uint64_t) { host_deallocate(ptr, nbytes); }

void* CpuBackend::allocate_zeroed(std::size_t nbytes) { return host_allocate_zeroed(nbytes); }

void CpuBackend::copy_from_host(void* dst, const void* src, std::size_t nbytes) { std::memcpy(dst, src, nbytes); }
void CpuBackend::copy_to_host(void* dst, const void* src, std::size_t nbytes) { std::memcpy(dst, src, nbytes); }

void CpuBackend::fill(const Array& dst, const void* value) {
  const ElementwisePlan plan = elementwise_plan({&dst}, dst.shape());
  const int nd = plan.ndim();
  const std::int64_t stride = plan.byte_strides[0][nd - 1];
  visit_dtype(dst.dtype(), [&]<class T>() {
    T v;
    std::memcpy(&v, value, sizeof(T));
    // a value of equal bytes (zeros above all) is libc's memset, tuned for each CPU
    const auto* bytes = static_cast<const unsigned char*>(value);
    const bool same_bytes = std::all_of(bytes, bytes + sizeof(T), [&](unsigned char c) { return c == bytes[0]; });
    parallel_for(plan.size(), kGrain * 4, [&](std::int64_t b, std::int64_t e) {
      for_each_run(plan, b, e, [&](char** p, std::int64_t n) {
        if (stride == sizeof(T) && same_bytes) {
          std::memset(p[0], bytes[0], static_cast<std::size_t>(n) * sizeof(T));
        } else if (stride == sizeof(T)) {
          T* d = reinterpret_cast<T*>(p[0]);
          for (std::int64_t i = 0; i < n; ++i) d[i] = v;
        } else {
          for (std::int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * stride, &v, sizeof(T));
        }
      });
    });
  });
}

void CpuBackend::arange(const Array& out, double start, double step) {
  const CastFn to_out = cast_kernel(DType::float64, out.dtype());
  const std::int64_t isz = out.itemsize();
  char* base = static_cast<char*>(out.data());
  parallel_for(out.size(), kGrain, [&](std::int64_t b, std::int64_t e) {
    double buf[1024];
    for (std::int64_t i = b; i < e; i += 1024) {
      const std::int64_t m = std::min<std::int64_t>(1024, e - i);
      for (std::int64_t j = 0; j < m; ++j) buf[j] = start + static_cast<double>(i + j) * step;
      to_out(reinterpret_cast<const char*>(buf), 8, base + i * isz, isz, m);
    }
  });
}

void CpuBackend::arange_integer(const Array& out, std::uint64_t start, std::uint64_t step) {
  visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* d = static_cast<T*>(out.data());
      parallel_for(out.size(), kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) d[i] = static_cast<T>(start + static_cast<std::uint64_t>(i) * step);
      });
    } else {
      throw TypeError(cat("arange_integer: ", name(out.dtype()), " is not an integer dtype"));
    }
  });
}

}  // namespace cpu

namespace detail {
/// Called by backend_for() the first time: registers the backends built into the library.
Backend& builtin_cpu_backend() {
  static cpu::CpuBackend backend;
  return backend;
}
}  // namespace detail

}  // namespace cupric
