// loader.cpp — dlopen of libcuda.so.1, NVRTC and nvJitLink at first use, symbol tables filled
// from the X-macro lists, versions and paths for cupric.cuda.versions().
#include "cupric/cuda/loader.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <mutex>

#include "cupric/cuda/errors.hpp"
#include "cupric/errors.hpp"

namespace cupric::cuda {
namespace {

std::mutex provider_mutex;
std::function<std::vector<std::string>()> site_packages_provider;

std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return {};
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

struct Opened {
  void* handle = nullptr;
  std::string path;
  std::vector<std::string> tried;
};

/// Tries each candidate (full paths need to exist; a bare soname goes to the dynamic linker).
Opened open_first(const std::vector<std::string>& candidates) {
  Opened out;
  for (const auto& c : candidates) {
    bool bare = c.find('/') == std::string::npos;
    if (!bare && access(c.c_str(), F_OK) != 0) continue;
    out.tried.push_back(c);
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      out.handle = h;
      out.path = loaded_path(h);
      if (out.path.empty()) out.path = c;
      return out;
    }
  }
  return out;
}

void* find_symbol(void* handle, const char* name) {
  if (void* p = dlsym(handle, name)) return p;
  // nvJitLink: __nvJitLinkCreate_13_0 -> __nvJitLinkCreate_12_0 -> nvJitLinkCreate.
  std::string s = name;
  if (s.rfind("__nvJitLink", 0) == 0 && s.size() > 5 && s.compare(s.size() - 5, 5, "_13_0") == 0) {
    std::string v12 = s.substr(0, s.size() - 5) + "_12_0";
    if (void* p = dlsym(handle, v12.c_str())) return p;
    std::string plain = s.substr(2, s.size() - 7);
    return dlsym(handle, plain.c_str());
  }
  if (s == "cuEventElapsedTime_v2") return dlsym(handle, "cuEventElapsedTime");
  return nullptr;
}

/// Fills a table; returns the names of required symbols that are missing.
#define CUPRIC_LOAD_ENTRY(member, symbol, required, ret, params)                     \
  api.member = reinterpret_cast<decltype(api.member)>(find_symbol(handle, #symbol)); \
  if ((required) && !api.member) missing.push_back(#symbol);

std::vector<std::string> fill(DriverApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_CUDA_DRIVER_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
std::vector<std::string> fill(NvrtcApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_NVRTC_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
std::vector<std::string> fill(NvJitLinkApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_NVJITLINK_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
std::vector<std::string> fill(CublasApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_CUBLAS_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
std::vector<std::string> fill(CublasLtApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_CUBLASLT_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
std::vector<std::string> fill(CusolverApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_CUSOLVER_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
std::vector<std::string> fill(NcclApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_NCCL_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
std::vector<std::string> fill(CufftApi& api, void* handle) {
  std::vector<std::string> missing;
  CUPRIC_CUFFT_FUNCTIONS(CUPRIC_LOAD_ENTRY)
  return missing;
}
#undef CUPRIC_LOAD_ENTRY

template <class Api>
struct Loaded {
  Api api;
  std::string path;
  std::exception_ptr error;
};

std::vector<std::string> site_packages() {
  std::function<std::vector<std::string>()> provider;
  {
    std::lock_guard lock(provider_mutex);
    provider = site_packages_provider;
  }
  return provider ? provider() : std::vector<std::string>{};
}

Loaded<DriverApi> load_driver() {
  Loaded<DriverApi> out;
  try {
    Opened lib = open_first({"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"});
    if (!lib.handle) {
      const char* why = dlerror();
      throw LibraryNotFoundError(
          cat("libcuda.so.1 not found: no NVIDIA driver is installed or visible on this machine. ",
              "CUDA needs the NVIDIA driver (version 580 or newer for CUDA 13; install it from your ",
              "OS packages, or run the container with the GPU exposed)",
              why ? cat(" [dlopen: ", why, "]") : std::string()),
          "libcuda.so.1");
    }
    out.path = lib.path;
    auto missing = fill(out.api, lib.handle);
    if (!missing.empty())
      throw LibraryNotFoundError(cat("the CUDA driver at ", lib.path, " is too old: it lacks ", join(missing),
                                     "; cupric needs a driver for CUDA 12.0 or newer"),
                                 "libcuda.so.1");
    out.api.DriverGetVersion(&out.api.version);
    CUresult rc = out.api.Init(0);
    if (rc != CUDA_SUCCESS) {
      const char* name = nullptr;
      const char* text = nullptr;
      out.api.GetErrorName(rc, &name);
      out.api.GetErrorString(rc, &text);
      std::string hint = rc == CUDA_ERROR_NO_DEVICE
                             ? "; no CUDA GPU is visible (check CUDA_VISIBLE_DEVICES and nvidia-smi)"
                         : rc == CUDA_ERROR_STUB_LIBRARY ? "; libcuda.so.1 is the toolkit's stub, not a driver"
                                                         : "";
      throw CudaError(cat("cuInit failed: ", name ? name : "CUDA_ERROR", " (", rc, "): ", text ? text : "", hint), rc,
                      name ? name : "CUDA_ERROR", "cuInit", false);
    }
  } catch (...) {
    out.error = std::current_exception();
  }
  return out;
}

/// `majors`: the sonames' versions to try, newest first; `purpose`: what the library is needed for.
template <class Api>
Loaded<Api> load_library(const char* stem, const std::vector<std::string>& wheel_dirs, const char* pip_name,
                         const char* what, const char* purpose,
                         std::initializer_list<const char*> majors = {"13", "12"}) {
  Loaded<Api> out;
  const std::string first = cat(stem, ".so.", *majors.begin());
  try {
    std::vector<std::string> candidates;
    for (const char* major : majors) {
      auto more = library_candidates(cat(stem, ".so.", major), wheel_dirs);
      candidates.insert(candidates.end(), more.begin(), more.end());
    }
    Opened lib = open_first(candidates);
    if (!lib.handle)
      throw LibraryNotFoundError(
          cat(first, " not found: pip install ", pip_name, " (or pip install 'cupric[cuda]') or set ",
              "CUDA_HOME to a CUDA toolkit; ", what, " is needed to ", purpose, ". Searched: ", join(candidates)),
          first);
    out.path = lib.path;
    auto missing = fill(out.api, lib.handle);
    if (!missing.empty()) throw LibraryNotFoundError(cat(lib.path, " is too old: it lacks ", join(missing)), first);
  } catch (...) {
    out.error = std::current_exception();
  }
  return out;
}

const Loaded<DriverApi>& driver_state() {
  static const Loaded<DriverApi> state = load_driver();
  return state;
}
const Loaded<NvrtcApi>& nvrtc_state() {
  static const Loaded<NvrtcApi> state = [] {
    auto s = load_library<NvrtcApi>("libnvrtc", {"cu13/lib", "cuda_nvrtc/lib"}, "nvidia-cuda-nvrtc", "NVRTC",
                                    "compile CUDA C++ at run time");
    if (!s.error) s.api.Version(&s.api.major, &s.api.minor);
    return s;
  }();
  return state;
}
const Loaded<NvJitLinkApi>& nvjitlink_state() {
  static const Loaded<NvJitLinkApi> state = [] {
    auto s = load_library<NvJitLinkApi>("libnvJitLink", {"cu13/lib", "nvjitlink/lib"}, "nvidia-nvjitlink", "nvJitLink",
                                        "link device code");
    if (!s.error && s.api.Version) s.api.Version(&s.api.major, &s.api.minor);
    return s;
  }();
  return state;
}

const Loaded<CublasApi>& cublas_state() {
  static const Loaded<CublasApi> state = [] {
    auto s = load_library<CublasApi>("libcublas", {"cu13/lib", "cublas/lib"}, "nvidia-cublas", "cuBLAS",
                                     "multiply matrices on the GPU");
    if (!s.error) s.api.GetProperty(0, &s.api.major), s.api.GetProperty(1, &s.api.minor);
    return s;
  }();
  return state;
}
const Loaded<CublasLtApi>& cublaslt_state() {
  static const Loaded<CublasLtApi> state = [] {
    auto s = load_library<CublasLtApi>("libcublasLt", {"cu13/lib", "cublas/lib"}, "nvidia-cublas", "cuBLASLt",
                                       "run planned matrix products with fused epilogues on the GPU");
    if (!s.error) s.api.version = s.api.GetVersion();
    return s;
  }();
  return state;
}
const Loaded<CusolverApi>& cusolver_state() {
  static const Loaded<CusolverApi> state = [] {
    // cuSOLVER of CUDA 13 is libcusolver.so.12, of CUDA 12 libcusolver.so.11
    auto s = load_library<CusolverApi>("libcusolver", {"cu13/lib", "cusolver/lib"}, "nvidia-cusolver", "cuSOLVER",
                                       "factorise matrices on the GPU", {"12", "11"});
    if (!s.error) s.api.GetProperty(0, &s.api.major), s.api.GetProperty(1, &s.api.minor);
    return s;
  }();
  return state;
}

const Loaded<CufftApi>& cufft_state() {
  static const Loaded<CufftApi> state = [] {
    // cuFFT of CUDA 13 is libcufft.so.12, of CUDA 12 libcufft.so.11
    auto s = load_library<CufftApi>("libcufft", {"cu13/lib", "cufft/lib"}, "nvidia-cufft", "cuFFT",
                                    "compute Fourier transforms on the GPU", {"12", "11"});
    if (!s.error) {
      s.api.GetProperty(0, &s.api.major), s.api.GetProperty(1, &s.api.minor);
      // cuFFT 12's plain export and cuFFT 11's versioned one take the callback's symbol name
      s.api.set_jit_callback = s.api.major >= 12 ? s.api.XtSetJITCallback : s.api.XtSetJITCallback12;
    }
    return s;
  }();
  return state;
}

template <class Api>
const Api& get(const Loaded<Api>& state) {
  if (state.error) std::rethrow_exception(state.error);
  return state.api;
}

}  // namespace

std::vector<std::string> library_candidates(const std::string& soname, const std::vector<std::string>& wheel_subdirs) {
  std::vector<std::string> out;
  for (const auto& sp : site_packages())
    for (const auto& sub : wheel_subdirs) out.push_back(cat(sp, "/nvidia/", sub, "/", soname));
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(var);
    if (root && *root) {
      out.push_back(cat(root, "/lib64/", soname));
      out.push_back(cat(root, "/lib/", soname));
    }
  }
  out.push_back("/usr/local/cuda/lib64/" + soname);
  out.push_back(soname);
  return out;
}

void set_site_packages_provider(std::function<std::vector<std::string>()> provider) {
  std::lock_guard lock(provider_mutex);
  site_packages_provider = std::move(provider);
}

std::vector<std::string> site_packages_dirs() { return site_packages(); }

const Loaded<NcclApi>& nccl_state() {
  static const Loaded<NcclApi> state = [] {
    // NVLink multicast (NVLS) can take a host's shared GPUs out of service: off unless asked for
    setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
    auto s = load_library<NcclApi>("libnccl", {"nccl/lib", "cu13/lib"}, "nvidia-nccl-cu13", "NCCL",
                                   "run collectives between GPUs", {"2"});
    if (!s.error) s.api.GetVersion(&s.api.version);
    return s;
  }();
  return state;
}

const DriverApi& driver() { return get(driver_state()); }
const NcclApi& nccl_api() { return get(nccl_state()); }
const NvrtcApi& nvrtc() { return get(nvrtc_state()); }
const NvJitLinkApi& nvjitlink() { return get(nvjitlink_state()); }
const CublasApi& cublas() { return get(cublas_state()); }
const CusolverApi& cusolver() { return get(cusolver_state()); }
const CufftApi& cufft() { return get(cufft_state()); }
const CublasLtApi& cublaslt() { return get(cublaslt_state()); }

const DriverApi* loaded_driver() {
  const auto& s = driver_state();
  return s.error ? nullptr : &s.api;
}

bool is_available() {
  const auto& s = driver_state();
  if (s.error) return false;
  int count = 0;
  return s.api.DeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}

namespace {
template <class Api, class Version>
LibraryInfo describe(const char* name, const Loaded<Api>& state, Version version) {
  LibraryInfo info;
  info.name = name;
  if (state.error) {
    try {
      std::rethrow_exception(state.error);
    } catch (const std::exception& e) {
      info.error = e.what();
    }
    return info;
  }
  info.found = true;
  info.path = state.path;
  version(state.api, info);
  return info;
}
}  // namespace

std::vector<LibraryInfo> library_versions() {
  return {
      describe("libcuda.so.1", driver_state(),
               [](const DriverApi& a, LibraryInfo& i) {
                 i.major = a.version / 1000;
                 i.minor = a.version % 1000 / 10;
               }),
      describe("libnvrtc.so", nvrtc_state(),
               [](const NvrtcApi& a, LibraryInfo& i) {
                 i.major = a.major;
                 i.minor = a.minor;
               }),
      describe("libnvJitLink.so", nvjitlink_state(),
               [](const NvJitLinkApi& a, LibraryInfo& i) {
                 i.major = static_cast<int>(a.major);
                 i.minor = static_cast<int>(a.minor);
               }),
  };
}

}  // namespace cupric::cuda
