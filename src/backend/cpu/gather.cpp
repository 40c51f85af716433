// gather.cpp — the CPU's indexed copies (gather for a[idx], scatter for a[idx] = v): one
// leading index dimension of element offsets, the rest walked as an ordinary strided plan.
#include <complex>
#include <cstring>

#include "cpu_backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/thread_pool.hpp"

namespace cupric::cpu {

namespace {

/// Calls f.template operator()<T>() with an unsigned type of `isz` bytes (1, 2, 4 or 8); false
/// for other sizes, which the caller handles.
template <class F>
bool visit_item_size(std::int64_t isz, F&& f) {
  switch (isz) {
    case 1: f.template operator()<std::uint8_t>(); return true;
    case 2: f.template operator()<std::uint16_t>(); return true;
    case 4: f.template operator()<std::uint32_t>(); return true;
    case 8: f.template operator()<std::uint64_t>(); return true;
    default: return false;
  }
}
/// Copies n elements of `isz` bytes between strided addresses.
void copy_run(const char* src, std::int64_t src_stride, char* dst, std::int64_t dst_stride, std::int64_t n,
              std::int64_t isz) {
  auto typed = [&]<class T>() {
    for (std::int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, src + i * src_stride, sizeof(T));
      std::memcpy(dst + i * dst_stride, &v, sizeof(T));
    }
  };
  if (!visit_item_size(isz, typed))
    for (std::int64_t i = 0; i < n; ++i)
      std::memcpy(dst + i * dst_stride, src + i * src_stride, static_cast<std::size_t>(isz));
}

/// The [i] slice of an array with a leading index dimension, as an array of the other dims.
Array leading_row(const Array& a) {
  Shape shape(a.shape().begin() + 1, a.shape().end());
  Strides strides(a.strides().begin() + 1, a.strides().end());
  return a.view(shape, strides, a.offset());
}

/// One element per index (the rest is 0-d): a tight typed loop.
void indexed_elements(const char* flat, const std::int64_t* offsets, std::int64_t n, char* rows, std::int64_t row_step,
                      std::int64_t isz, bool to_rows, bool parallel) {
  auto typed = [&]<class T>() {
    auto body = [&](std::int64_t b, std::int64_t e) {
      if (to_rows) {
        for (std::int64_t i = b; i < e; ++i)
          std::memcpy(rows + i * row_step, flat + offsets[i] * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
      } else {
        for (std::int64_t i = b; i < e; ++i)
          std::memcpy(const_cast<char*>(flat) + offsets[i] * static_cast<std::int64_t>(sizeof(T)), rows + i * row_step,
                      sizeof(T));
      }
    };
    if (parallel) parallel_for(n, kGrain, body);
    else body(0, n);
  };
  if (!visit_item_size(isz, typed)) typed.template operator()<std::complex<double>>();  // 16 bytes
}

/// Walks one copy per index: `flat` (operand 0 of `plan`, shifted by offsets[i] elements)
/// and `rows` (operand 1, shifted by i rows). `to_rows` says which way the data goes.
void indexed_copy(ElementwisePlan plan, const std::int64_t* offsets, std::int64_t n, std::int64_t row_step,
                  std::int64_t isz, bool to_rows, bool parallel) {
  const std::int64_t per_index = plan.size();
  if (per_index == 0 || n == 0) return;
  if (per_index == 1) return indexed_elements(plan.data[0], offsets, n, plan.data[1], row_step, isz, to_rows, parallel);
  char* flat_base = plan.data[0];
  char* rows_base = plan.data[1];
  const int nd = plan.ndim();
  const std::int64_t flat_stride = plan.byte_strides[0][nd - 1];
  const std::int64_t rows_stride = plan.byte_strides[1][nd - 1];
  auto body = [&](std::int64_t b, std::int64_t e) {
    ElementwisePlan local = plan;
    for (std::int64_t i = b; i < e; ++i) {
      local.data[0] = flat_base + offsets[i] * isz;
      local.data[1] = rows_base + i * row_step;
      for_each_run(local, 0, per_index, [&](char** p, std::int64_t m) {
        if (to_rows) copy_run(p[0], flat_stride, p[1], rows_stride, m, isz);
        else copy_run(p[1], rows_stride, p[0], flat_stride, m, isz);
      });
    }
  };
  if (parallel) parallel_for(n, std::max<std::int64_t>(1, kGrain / per_index), body);
  else body(0, n);
}

const std::int64_t* host_offsets(const Array& offsets) {
  if (offsets.dtype() != DType::int64 || offsets.ndim() != 1 || (offsets.size() > 1 && offsets.strides()[0] != 1))
    throw ValueError(cat("gather/scatter offsets must be a contiguous 1-d int64 array, got ", offsets.str()));
  return static_cast<const std::int64_t*>(offsets.data());
}
}  // namespace

void CpuBackend::gather(const Array& src, const Array& offsets, const Array& out) {
  const std::int64_t* offs = host_offsets(offsets);
  const Array row = leading_row(out);
  const std::int64_t row_step = out.ndim() ? out.strides()[0] * out.itemsize() : 0;
  indexed_copy(elementwise_plan({&src, &row}, src.shape()), offs, offsets.size(), row_step, src.itemsize(), true, true);
}

void CpuBackend::scatter(const Array& dst, const Array& offsets, const Array& values) {
  const std::int64_t* offs = host_offsets(offsets);
  const Array row = leading_row(values);
  const std::int64_t row_step = values.ndim() ? values.strides()[0] * values.itemsize() : 0;
  // in order of i, on one thread: repeated offsets must end with the last value, as NumPy's
  indexed_copy(elementwise_plan({&dst, &row}, dst.shape()), offs, offsets.size(), row_step, dst.itemsize(), false,
               false);
}

}  // namespace cupric::cpu
