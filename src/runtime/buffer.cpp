// buffer.cpp — Buffer: owning device / pinned / managed memory with copies and fills ordered on
// a stream; the block goes back to its pool (device, pinned) or to the driver (managed).
#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/memory.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

Buffer::Buffer(CUdeviceptr ptr, std::size_t size, std::size_t block, Stream stream, MemoryKind kind, bool graph)
    : ptr_(ptr), size_(size), block_(block), stream_(std::move(stream)), kind_(kind), graph_owned_(graph) {}

std::shared_ptr<Buffer> Buffer::allocate(std::size_t nbytes, const Stream& stream, MemoryKind kind) {
  std::size_t block = 0;
  bool graph = false;
  CUdeviceptr p = 0;
  if (kind == MemoryKind::device) {
    p = MemoryPool::for_device(stream.device()).allocate(nbytes, stream, &block, &graph);
  } else if (kind == MemoryKind::pinned) {
    Device(stream.device()).activate();
    p = reinterpret_cast<CUdeviceptr>(PinnedPool::global().allocate(nbytes, &block));
  } else {
    Device(stream.device()).activate();
    block = std::max<std::size_t>(nbytes, 1);
    CUresult rc = driver().MemAllocManaged(&p, block, kMemAttachGlobal);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
      MemoryPool::for_device(stream.device()).free_all_blocks();
      rc = driver().MemAllocManaged(&p, block, kMemAttachGlobal);
    }
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
      std::size_t free = 0, total = 0;
      driver().MemGetInfo(&free, &total);
      throw OutOfMemoryError(cat("out of memory: could not allocate ", nbytes, " bytes of managed memory (", free,
                                 " bytes free on device ", stream.device(), ")"),
                             "cuMemAllocManaged", nbytes, free);
    }
    check(rc, "cuMemAllocManaged");
  }
  return std::shared_ptr<Buffer>(new Buffer(p, nbytes, block, stream, kind, graph));
}

Buffer::~Buffer() {
  try {
    close(nullptr);
  } catch (...) {  // a destructor cannot report; a sticky error already surfaced elsewhere
  }
}

void Buffer::close(const Stream* stream) {
  if (closed_) return;
  CUdeviceptr p = ptr_;
  ptr_ = 0;
  closed_ = true;
  if (!loaded_driver()) return;
  const Stream& s = stream ? *stream : stream_;
  switch (kind_) {
    case MemoryKind::device: MemoryPool::for_device(stream_.device()).deallocate(p, block_, s, graph_owned_); break;
    case MemoryKind::pinned: PinnedPool::global().deallocate(reinterpret_cast<void*>(p), block_, s); break;
    case MemoryKind::managed:
      Device(stream_.device()).activate();
      driver().StreamSynchronize(s.handle());
      driver().MemFree(p);
      break;
  }
}

void Buffer::check_open(const char* what, std::size_t offset, std::size_t nbytes) const {
  if (closed_) throw ValueError(cat("Buffer.", what, ": the buffer was closed"));
  if (offset > size_ || nbytes > size_ - offset)
    throw ValueError(
        cat("Buffer.", what, ": ", nbytes, " bytes at offset ", offset, " do not fit a buffer of ", size_, " bytes"));
}

void Buffer::copy_from_host(const void* src, std::size_t nbytes, const Stream& stream, std::size_t offset) {
  check_open("copy_from", offset, nbytes);
  if (nbytes == 0) return;
  Device(device()).activate();
  // Pinned and managed memory are host-visible: the unified-addressing copy infers both sides.
  if (kind_ != MemoryKind::device)
    check(driver().MemcpyAsync(ptr_ + offset, reinterpret_cast<CUdeviceptr>(src), nbytes, stream.handle()),
          "cuMemcpyAsync");
  else check(driver().MemcpyHtoDAsync(ptr_ + offset, src, nbytes, stream.handle()), "cuMemcpyHtoDAsync");
}

void Buffer::copy_to_host(void* dst, std::size_t nbytes, const Stream& stream, std::size_t offset) const {
  check_open("copy_to", offset, nbytes);
  if (nbytes == 0) return;
  Device(device()).activate();
  if (kind_ != MemoryKind::device)
    check(driver().MemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), ptr_ + offset, nbytes, stream.handle()),
          "cuMemcpyAsync");
  else check(driver().MemcpyDtoHAsync(dst, ptr_ + offset, nbytes, stream.handle()), "cuMemcpyDtoHAsync");
}

void Buffer::copy_from_device(CUdeviceptr src, std::size_t nbytes, const Stream& stream, std::size_t offset) {
  check_open("copy_from", offset, nbytes);
  if (nbytes == 0) return;
  Device(device()).activate();
  check(driver().MemcpyAsync(ptr_ + offset, src, nbytes, stream.handle()), "cuMemcpyAsync");
}

void Buffer::fill(std::uint32_t pattern, int width, const Stream& stream) {
  check_open("fill", 0, 0);
  if (width != 1 && width != 2 && width != 4)
    throw ValueError(cat("Buffer.fill: the pattern must be 1, 2 or 4 bytes wide, got ", width));
  if (size_ % static_cast<std::size_t>(width) != 0)
    throw ValueError(cat("Buffer.fill: a ", width, "-byte pattern does not divide the buffer size ", size_));
  if (size_ == 0) return;
  Device(device()).activate();
  const DriverApi& d = driver();
  std::size_t n = size_ / static_cast<std::size_t>(width);
  if (width == 1)
    check(d.MemsetD8Async(ptr_, static_cast<unsigned char>(pattern), n, stream.handle()), "cuMemsetD8Async");
  else if (width == 2)
    check(d.MemsetD16Async(ptr_, static_cast<unsigned short>(pattern), n, stream.handle()), "cuMemsetD16Async");
  else check(d.MemsetD32Async(ptr_, pattern, n, stream.handle()), "cuMemsetD32Async");
}

}  // namespace cupric::runtime
