// tile_softmax.cpp — the tile model from C++, without Python: a row softmax written with the tile
// IR builder that the Python frontend drives, compiled for the CPU (the host compiler) and run on
// the thread pool, then, where NVRTC is found, compiled for CUDA (sm_90a without a GPU) and, where
// a GPU is found, launched there; every result is checked against a plain loop.
//
//   tile_softmax [device_include]   (default: the source tree's, set by CMake)
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/kernel.hpp"
#include "cupric/runtime/program.hpp"
#include "cupric/runtime/stream.hpp"
#include "cupric/tile_compiler/builder.hpp"
#include "cupric/tile_compiler/emit.hpp"
#include "cupric/tile_compiler/host_compiler.hpp"

#ifndef CUPRIC_EXAMPLE_DEVICE_INCLUDE
#define CUPRIC_EXAMPLE_DEVICE_INCLUDE "device_include"
#endif

namespace {

using cupric::DType;
using cupric::Scalar;
namespace tile = cupric::tile;
namespace rt = cupric::runtime;

constexpr int kRows = 300, kCols = 1000;  // 1000: tile shapes need not be powers of two

/// out[r, :] = softmax(x[r, :]), one block per row: what examples/tile/softmax.py writes in Python.
tile::Function build_softmax(std::int64_t block) {
  tile::Builder b("softmax_kernel");
  const int x = b.param_array("x", DType::float32, 2);
  const int out = b.param_array("out", DType::float32, 2);
  const int row = b.cast(b.bid(0), DType::int64);
  const int col = b.constant(Scalar::from_int(0), DType::int64);
  const int t = b.load(x, {row, col}, {1, block}, Scalar::from_float(-INFINITY), false);
  const int e = b.ufunc("exp", {b.ufunc("subtract", {t, b.reduce("max", t, 1, true)})});
  b.store(out, {row, col}, b.ufunc("divide", {e, b.reduce("sum", e, 1, true)}), false);
  return b.finish();
}

std::vector<float> reference(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  for (int r = 0; r < kRows; ++r) {
    const float* in = &x[static_cast<std::size_t>(r) * kCols];
    double m = in[0], sum = 0;
    for (int c = 1; c < kCols; ++c) m = std::fmax(m, in[c]);
    for (int c = 0; c < kCols; ++c) sum += std::exp(in[c] - m);
    for (int c = 0; c < kCols; ++c)
      out[static_cast<std::size_t>(r) * kCols + c] = static_cast<float>(std::exp(in[c] - m) / sum);
  }
  return out;
}

/// The largest relative difference from the reference; prints it and whether it is within tol.
bool check(const char* where, const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    worst = std::fmax(worst, std::fabs(got[i] - want[i]) / std::fmax(std::fabs(want[i]), 1e-30));
  const bool ok = worst < 1e-5;
  std::printf("%s: %d x %d softmax, largest relative error %.2e (%s)\n", where, kRows, kCols, worst,
              ok ? "ok" : "WRONG");
  return ok;
}

bool run_on_cpu(const tile::Function& f, const std::string& include_dir, const std::vector<float>& x,
                const std::vector<float>& want) {
  tile::EmitOptions options;
  options.target = tile::Target::host;
  const tile::EmitResult emitted = tile::emit(f, options);
  const tile::HostBinary binary = tile::compile_host(emitted.source, include_dir);
  const auto kernel = tile::HostKernel::load(binary.key);
  std::printf("cpu: compiled in %.3f s%s\n", binary.compile_seconds, binary.cache_hit ? " (compile cache)" : "");
  std::vector<float> out(x.size(), -1.0f);
  cupric_tile_array arrays[2] = {{const_cast<float*>(x.data()), {kRows, kCols}, {kCols, 1}},
                                 {out.data(), {kRows, kCols}, {kCols, 1}}};
  const std::vector<void*> args = {&arrays[0], &arrays[1]};
  const std::int64_t grid[3] = {kRows, 1, 1};
  cupric_tile_status status{};
  kernel->launch(grid, args, &status);
  return status.failed == 0 && check("cpu", out, want);
}

/// Compiles the CUDA kernel with NVRTC (for the GPU's arch, else sm_90a) and, with a GPU, runs it.
bool run_on_gpu(const tile::Function& f, const std::string& include_dir, const std::vector<float>& x,
                const std::vector<float>& want) {
  tile::EmitOptions options;
  options.target = tile::Target::cuda;
  const tile::EmitResult emitted = tile::emit(f, options);
  int devices = 0;
  try {
    devices = rt::Device::count();
  } catch (const std::exception&) {  // no driver: compile only
  }
  rt::ProgramOptions po;
  po.arch = devices > 0 ? "" : "sm_90a";
  po.include_paths = {include_dir, include_dir + "/cupric/tile/nvrtc_std"};
  po.extra = {"-default-device", "-minimal"};
  const rt::ObjectCode cubin = rt::Program(emitted.source, "tile_softmax.cu", po).compile(rt::CodeKind::cubin);
  std::printf("cuda: %s compiled by NVRTC for %s (%zu bytes of cubin)\n", emitted.entry.c_str(),
              devices > 0 ? "this GPU" : "sm_90a", cubin.code().size());
  if (devices == 0) return true;
  const auto& d = cupric::cuda::driver();
  const rt::Kernel kernel = cubin.get_kernel(emitted.entry, 0);
  const std::size_t bytes = x.size() * sizeof(float);
  cupric::cuda::CUdeviceptr dx = 0, dout = 0;
  cupric::cuda::check(d.MemAlloc(&dx, bytes), "cuMemAlloc");
  cupric::cuda::check(d.MemAlloc(&dout, bytes), "cuMemAlloc");
  const rt::Stream stream = rt::Stream::current(0);
  cupric::cuda::check(d.MemcpyHtoDAsync(dx, x.data(), bytes, stream.handle()), "cuMemcpyHtoDAsync");
  rt::ArgPacker args(kernel.param_sizes_known() ? &kernel.param_sizes() : nullptr, kernel.interned_name());
  for (cupric::cuda::CUdeviceptr p : {dx, dout}) {  // each array: data, extents, strides (elements)
    args.add_pointer(p);
    for (std::int64_t v : {std::int64_t{kRows}, std::int64_t{kCols}, std::int64_t{kCols}, std::int64_t{1}})
      args.add_int(v);
  }
  rt::LaunchConfig config;
  config.grid = {kRows, 1, 1};
  config.block = {static_cast<unsigned>(emitted.threads), 1, 1};
  config.shared_memory = static_cast<unsigned>(emitted.smem_bytes);
  rt::launch(stream, config, kernel, args);
  std::vector<float> out(x.size());
  cupric::cuda::check(d.MemcpyDtoHAsync(out.data(), dout, bytes, stream.handle()), "cuMemcpyDtoHAsync");
  stream.synchronize();
  d.MemFree(dx);
  d.MemFree(dout);
  return check("cuda", out, want);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string include_dir = argc > 1 ? argv[1] : CUPRIC_EXAMPLE_DEVICE_INCLUDE;
  std::vector<float> x(static_cast<std::size_t>(kRows) * kCols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919 % 1000) / 100.0 - 5.0);
  const std::vector<float> want = reference(x);
  const tile::Function f = build_softmax(kCols);
  bool ok = true;
  if (tile::host_compiler().available) ok = run_on_cpu(f, include_dir, x, want) && ok;
  else std::printf("cpu: no C++ compiler (%s); skipped\n", tile::host_compiler().problem.c_str());
  try {
    cupric::cuda::nvrtc();
  } catch (const std::exception& err) {
    std::printf("cuda: NVRTC not found (%s); skipped\n", err.what());
    return ok ? 0 : 1;
  }
  ok = run_on_gpu(f, include_dir, x, want) && ok;
  return ok ? 0 : 1;
}
