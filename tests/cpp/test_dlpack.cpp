// test_dlpack.cpp — cupric arrays as DLPack tensors and back, without Python: zero-copy,
// ownership (the deleter runs exactly once, when the last view goes), flags and refusals.
#include <gtest/gtest.h>

#include "cupric/cupric.hpp"

using namespace cupric;
using namespace cupric::dlpack;

namespace {
Array iota(const Shape& shape, DType t = DType::float32) {
  Array a = Array::empty(shape, t);
  auto* p = static_cast<float*>(a.data());
  for (std::int64_t i = 0; i < a.size(); ++i) p[i] = static_cast<float>(i);
  return a;
}
}  // namespace

TEST(DLPack, ExportDescribesTheView) {
  Array a = iota({3, 4});
  Array v = a.view({4, 3}, {1, 4}, 0);  // a transposed view
  DLManagedTensorVersioned* m = export_versioned(v);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->flags, 0u);
  EXPECT_EQ(m->dl_tensor.data, v.data());
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.shape[0], 4);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 4);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 32);
  m->deleter(m);
}

TEST(DLPack, ExportKeepsStorageAliveUntilDeleter) {
  std::weak_ptr<Storage> weak;
  DLManagedTensor* m;
  {
    Array a = iota({5});
    weak = a.storage();
    m = export_legacy(a);
  }
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(static_cast<float*>(m->dl_tensor.data)[4], 4.0f);
  m->deleter(m);
  EXPECT_TRUE(weak.expired());
}

TEST(DLPack, RoundTripSharesMemoryAndDeletesOnce) {
  Array a = iota({2, 3});
  DLManagedTensorVersioned* m = export_versioned(a);
  static int deleted = 0;
  deleted = 0;
  auto* original = m->deleter;
  static void (*chained)(DLManagedTensorVersioned*) = nullptr;
  chained = original;
  m->deleter = [](DLManagedTensorVersioned* self) {
    ++deleted;
    chained(self);
  };
  {
    Array b = import_versioned(m);
    EXPECT_EQ(b.data(), a.data());
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(b.dtype(), DType::float32);
    Array view = b.view({3}, {1}, 3);
    b = Array();
    EXPECT_EQ(deleted, 0);  // a view still holds it
  }
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, ReadOnlyAndCopiedFlags) {
  Array a = iota({4});
  a.set_writeable(false);
  EXPECT_THROW(export_legacy(a), BufferError);
  DLManagedTensorVersioned* m = export_versioned(a, kFlagIsCopied);
  EXPECT_EQ(m->flags, kFlagReadOnly | kFlagIsCopied);
  Array b = import_versioned(m);
  EXPECT_FALSE(b.writeable());
}

TEST(DLPack, RefusalsTakeNothing) {
  Array a = iota({4});
  DLManagedTensorVersioned* m = export_versioned(a);
  m->dl_tensor.dtype.lanes = 4;
  EXPECT_THROW(import_versioned(m), BufferError);
  m->dl_tensor.dtype.lanes = 1;
  m->version.major = 2;
  EXPECT_THROW(import_versioned(m), BufferError);
  m->version.major = 1;
  m->dl_tensor.device.device_type = 4;  // OpenCL
  EXPECT_THROW(import_versioned(m), BufferError);
  m->deleter(m);  // still ours to free
}

TEST(DLPack, DtypesAndDevicesMap) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_dlpack(to_dlpack(t)), t);
  }
  EXPECT_EQ(to_dlpack(DType::bfloat16).code, kDLBfloat);
  EXPECT_EQ(to_dlpack(DType::bool_).code, kDLBool);
  EXPECT_EQ(to_dlpack(DType::complex64).bits, 64);
  EXPECT_EQ(device_from_dlpack({kDLCUDA, 3}), Device::cuda(3));
  EXPECT_EQ(device_from_dlpack({kDLCUDAHost, 0}), Device::cpu());
  EXPECT_EQ(to_dlpack(Device::cuda(1)).device_type, kDLCUDA);
}

TEST(DLPack, NullStridesMeanCOrder) {
  Array a = iota({2, 3});
  DLManagedTensor* m = export_legacy(a);
  m->dl_tensor.strides = nullptr;
  Array b = import_legacy(m);
  EXPECT_EQ(b.strides(), (Strides{3, 1}));
}
