// cupric/cuda/loader.hpp — finds and dlopens the CUDA libraries at first use: the driver
// (libcuda.so.1), NVRTC and nvJitLink (pip wheels, CUDA_HOME, CUDA_PATH, /usr/local/cuda, then
// the plain soname). Nothing here runs at import; a missing piece throws LibraryNotFoundError.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cupric/cuda/driver_api.hpp"
#include "cupric/cuda/math_api.hpp"
#include "cupric/cuda/nccl_api.hpp"
#include "cupric/cuda/nvrtc_api.hpp"

namespace cupric::cuda {

/// The driver, loaded and initialised (cuInit) on first call. Throws LibraryNotFoundError when
/// libcuda.so.1 is missing and CudaError when cuInit fails (no device, driver too old, ...).
const DriverApi& driver();
const NvrtcApi& nvrtc();
const NvJitLinkApi& nvjitlink();
/// cuBLAS and cuSOLVER (pip wheels nvidia-cublas, nvidia-cusolver, or a toolkit), loaded at the
/// first GPU product / factorisation; LibraryNotFoundError names the pip package when missing.
const CublasApi& cublas();
/// cuBLASLt (libcublasLt, shipped with cuBLAS): loaded at the first planned product.
const CublasLtApi& cublaslt();
const CusolverApi& cusolver();
/// cuFFT (pip wheel nvidia-cufft, or a toolkit), loaded at the first GPU transform.
const CufftApi& cufft();

/// NCCL (pip wheel nvidia-nccl-cu13, or a toolkit), loaded at the first collective or unique id;
/// NCCL_NVLS_ENABLE is set to 0 first unless the environment sets it (NVLink multicast stays off).
const NcclApi& nccl_api();

/// True when the driver loads, initialises and sees at least one GPU. Never throws.
bool is_available();
/// The driver table when it loads and initialises, else null (never throws).
const DriverApi* loaded_driver();

struct LibraryInfo {
  std::string name;  ///< "libcuda.so.1", "libnvrtc.so.13", ...
  bool found = false;
  std::string path;  ///< where it was loaded from
  int major = 0, minor = 0;
  std::string error;  ///< why it is missing (when !found)
};
/// Driver, NVRTC and nvJitLink: loads each (never throws) and reports versions and paths.
std::vector<LibraryInfo> library_versions();

/// Extra folders that hold pip-installed CUDA libraries (each `site-packages` on sys.path). The
/// Python binding installs a provider; it is called once, at the first library load.
void set_site_packages_provider(std::function<std::vector<std::string>()> provider);
/// The provider's folders (empty without one): other pip-wheel libraries (OpenBLAS) look there too.
std::vector<std::string> site_packages_dirs();

/// The candidate paths, in search order, for a library (exposed for tests and error messages).
/// `wheel_subdirs` are the folders under site-packages/nvidia that may hold it.
std::vector<std::string> library_candidates(const std::string& soname, const std::vector<std::string>& wheel_subdirs);

}  // namespace cupric::cuda
