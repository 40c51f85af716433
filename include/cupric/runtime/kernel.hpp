// cupric/runtime/kernel.hpp — kernels (attributes, occupancy, parameter sizes), the argument
// packer (C++: sizes, alignment, checks against the kernel's parameters) and launch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cupric/cuda/driver_api.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::runtime {

class Kernel {
 public:
  /// `module_owner` keeps the module loaded while the kernel lives.
  Kernel(cuda::CUfunction function, int device, std::string name, std::shared_ptr<const void> module_owner);

  cuda::CUfunction function() const;
  int device() const;
  const std::string& name() const;
  /// Interned copy of the name (lives for the process; used in error messages after a fault).
  const char* interned_name() const;
  /// Byte size of each parameter, from cuFuncGetParamInfo (CUDA 12.4+ drivers); empty when the
  /// driver cannot tell, and then arguments are not checked.
  const std::vector<std::uint32_t>& param_sizes() const;
  bool param_sizes_known() const;

  int attribute(cuda::CUfunction_attribute attribute) const;
  void set_attribute(cuda::CUfunction_attribute attribute, int value) const;
  int num_registers() const { return attribute(cuda::CU_FUNC_ATTRIBUTE_NUM_REGS); }
  int static_shared_memory() const { return attribute(cuda::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES); }
  int local_memory() const { return attribute(cuda::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES); }
  int max_threads_per_block() const { return attribute(cuda::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK); }
  int max_dynamic_shared_memory() const { return attribute(cuda::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); }
  /// Raises the dynamic shared memory limit (above 48 KiB needs this; checked against the device).
  void set_max_dynamic_shared_memory(int bytes) const;
  /// Maximum active blocks per SM for a block size and dynamic shared memory.
  int occupancy(int block_size, std::size_t dynamic_shared_memory = 0) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

struct LaunchConfig {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared_memory = 0;                ///< dynamic shared memory per block, bytes
  std::array<unsigned, 3> cluster{0, 0, 0};  ///< thread block cluster (0: none; Hopper+)
  bool cooperative = false;
  bool uses_extended_launch() const { return cooperative || cluster[0] != 0; }
};

/// Packs kernel arguments: each value gets its own aligned slot in one buffer and a pointer to
/// it for cuLaunchKernel. When the kernel's parameter sizes are known, Python-style ints and
/// floats take the parameter's width (int32 for a 4-byte parameter, float for a 4-byte float
/// parameter) and every typed value is checked; otherwise ints are int64 and floats double.
class ArgPacker {
 public:
  /// `param_sizes` may be null (unknown); `kernel_name` is for messages.
  ArgPacker(const std::vector<std::uint32_t>* param_sizes, const char* kernel_name);
  ArgPacker(const ArgPacker&) = delete;

  void add_int(std::int64_t value);
  void add_uint(std::uint64_t value);  ///< for ints above INT64_MAX
  void add_float(double value);
  void add_bool(bool value);
  /// A device pointer (8 bytes); `what` describes the object for messages.
  void add_pointer(std::uint64_t address, const char* what = "a device pointer");
  /// A typed scalar (a NumPy scalar, a ctypes value): its bytes must match the parameter size.
  void add_bytes(const void* data, std::size_t size, std::size_t alignment, const std::string& type_name);
  /// Checks the argument count against the kernel's.
  void finish() const;

  std::size_t count() const { return count_; }
  /// One pointer per argument, into data() (valid until the packer changes or dies).
  void** params();
  const std::byte* data() const { return data_; }
  std::size_t size() const { return used_; }
  std::size_t offset(std::size_t index) const;

 private:
  std::byte* slot(std::size_t size, std::size_t alignment);
  std::uint32_t expected_size() const;  // 0 when unknown
  [[noreturn]] void fail_size(std::size_t got, const std::string& what) const;
  void reserve_more();

  static constexpr std::size_t kInlineBytes = 1024, kInlineArgs = 64;
  const std::vector<std::uint32_t>* param_sizes_;
  const char* kernel_name_;
  std::size_t count_ = 0, used_ = 0, capacity_ = kInlineBytes, max_args_ = kInlineArgs;
  alignas(16) std::byte inline_data_[kInlineBytes];
  std::uint32_t inline_offsets_[kInlineArgs];
  void* inline_pointers_[kInlineArgs];
  std::byte* data_ = inline_data_;
  std::uint32_t* offsets_ = inline_offsets_;
  void** pointers_ = inline_pointers_;
  std::unique_ptr<std::byte[]> heap_data_;
  std::unique_ptr<std::uint32_t[]> heap_offsets_;
  std::unique_ptr<void*[]> heap_pointers_;
};

/// Launches `kernel` on `stream` with packed arguments (packer.finish() is called here).
void launch(const Stream& stream, const LaunchConfig& config, const Kernel& kernel, ArgPacker& args);
/// Same, with raw stream handle (the fast path of the binding).
void launch(cuda::CUstream stream, StreamState* state, const LaunchConfig& config, const Kernel& kernel,
            ArgPacker& args);

}  // namespace cupric::runtime
