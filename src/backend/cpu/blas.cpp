// blas.cpp — finds and dlopens the scipy-openblas64 wheel's library at the first product or
// factorisation, fills blas::Api, and keeps OpenBLAS's thread count equal to cupric's pool.
#include "blas.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "cupric/blas_info.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/thread_pool.hpp"

namespace cupric::cpu::blas {
namespace {

constexpr const char* kSoname = "libscipy_openblas64_.so";

/// NumPy's wheels carry the same build, renamed (numpy.libs/libscipy_openblas64_-<hash>.so).
void add_numpy_copies(const std::string& site_packages, std::vector<std::string>& out) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(site_packages + "/numpy.libs", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("libscipy_openblas64_") && name.find(".so") != std::string::npos)
      out.push_back(entry.path().string());
  }
}

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* own = std::getenv("CUPRIC_BLAS_LIBRARY"); own && *own) out.push_back(own);
  const std::vector<std::string> dirs = cuda::site_packages_dirs();
  for (const auto& sp : dirs) out.push_back(cat(sp, "/scipy_openblas64/lib/", kSoname));
  out.push_back(kSoname);  // LD_LIBRARY_PATH and the linker's cache
  // last, NumPy's own copy (shared with NumPy then, thread count included)
  for (const auto& sp : dirs) add_numpy_copies(sp, out);
  return out;
}

void* symbol(void* handle, const std::string& name, std::vector<std::string>& missing) {
  void* p = dlsym(handle, name.c_str());
  if (!p) missing.push_back(name);
  return p;
}

template <class T>
void fill(Lapack<T>& t, char letter, void* h, std::vector<std::string>& missing) {
  constexpr bool complex = is_complex_v<T>;
  const auto lapacke = [&](const char* real_name, const char* complex_name) {
    return symbol(h, cat("scipy_LAPACKE_", letter, complex ? complex_name : real_name, "64_"), missing);
  };
#define CUPRIC_LAPACKE_LOAD(member, real_name, complex_name, ret, params) \
  t.member = reinterpret_cast<decltype(t.member)>(lapacke(real_name, complex_name));
  CUPRIC_LAPACKE_FUNCTIONS(CUPRIC_LAPACKE_LOAD)
#undef CUPRIC_LAPACKE_LOAD
  if constexpr (complex) t.geev_complex = reinterpret_cast<decltype(t.geev_complex)>(lapacke("geev", "geev"));
  else t.geev_real = reinterpret_cast<decltype(t.geev_real)>(lapacke("geev", "geev"));
  void* gemm = symbol(h, cat("scipy_cblas_", letter, "gemm64_"), missing);
  if constexpr (complex) {
    t.gemm = reinterpret_cast<decltype(t.gemm)>(gemm);
  } else {
    // real cblas_?gemm takes alpha and beta by value: adapt through a pointer-taking thunk
    static void* real_gemm = nullptr;
    real_gemm = gemm;
    t.gemm = [](int layout, int ta, int tb, Int m, Int n, Int k, const T* alpha, const T* a, Int lda, const T* b,
                Int ldb, const T* beta, T* c, Int ldc) {
      using Fn = void (*)(int, int, int, Int, Int, Int, T, const T*, Int, const T*, Int, T, T*, Int);
      reinterpret_cast<Fn>(real_gemm)(layout, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc);
    };
  }
}

struct Loaded {
  Api api;
  std::exception_ptr error;
};

Loaded load() {
  Loaded out;
  try {
    std::vector<std::string> tried;
    void* h = nullptr;
    for (const auto& c : candidates()) {
      if (c.find('/') != std::string::npos && access(c.c_str(), F_OK) != 0) continue;
      tried.push_back(c);
      if ((h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    }
    if (!h)
      throw std::runtime_error(
          cat(kSoname, " (OpenBLAS) not found: cupric's matrix products and linear algebra on the ",
              "CPU need it; pip install scipy-openblas64 (or set CUPRIC_BLAS_LIBRARY to the library)"));
    link_map* map = nullptr;
    out.api.path = dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name ? map->l_name : kSoname;
    std::vector<std::string> missing;
    fill(out.api.s, 's', h, missing);
    fill(out.api.d, 'd', h, missing);
    fill(out.api.c, 'c', h, missing);
    fill(out.api.z, 'z', h, missing);
    out.api.set_num_threads = reinterpret_cast<void (*)(int)>(symbol(h, "scipy_openblas_set_num_threads64_", missing));
    out.api.get_num_threads = reinterpret_cast<int (*)()>(symbol(h, "scipy_openblas_get_num_threads64_", missing));
    out.api.get_config = reinterpret_cast<char* (*)()>(symbol(h, "scipy_openblas_get_config64_", missing));
    if (!missing.empty())
      throw std::runtime_error(cat("the OpenBLAS at ", out.api.path, " lacks ", missing.front(), " (and ",
                                   missing.size() - 1, " more): pip install --upgrade scipy-openblas64"));
  } catch (...) {
    out.error = std::current_exception();
  }
  return out;
}

const Loaded& state() {
  static const Loaded loaded = load();
  return loaded;
}

std::atomic<int> blas_threads{0};

}  // namespace

const Api& api() {
  const Loaded& s = state();
  if (s.error) std::rethrow_exception(s.error);
  // the pool's count can change at any time (cu.set_num_threads); OpenBLAS follows at the next call
  const int want = std::max(1, num_threads());
  if (blas_threads.exchange(want, std::memory_order_relaxed) != want) s.api.set_num_threads(want);
  return s.api;
}

std::string describe() {
  const Loaded& s = state();
  if (!s.error) return cat(s.api.path, " (", s.api.get_config(), ")");
  try {
    std::rethrow_exception(s.error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace cupric::cpu::blas

namespace cupric::cpu {
std::string blas_description() { return blas::describe(); }
int blas_threads() {
  try {
    return blas::api().get_num_threads();
  } catch (const std::exception&) {
    return 0;
  }
}
}  // namespace cupric::cpu
