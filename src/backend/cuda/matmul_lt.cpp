// matmul_lt.cpp — the CUDA backend's planned products (Backend::plan_matmul) through cuBLASLt:
// one matmul descriptor and four layouts per problem, the heuristic's candidate algorithms, the
// fused epilogues (bias, relu, gelu, their backward forms), and plain products when routed here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda_backend.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/linalg.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/stream.hpp"
#include "gemm_layout.hpp"
#include "library_call.hpp"

namespace cupric::cuda_backend {
namespace {

constexpr int kStatusNotSupported = 15;  // CUBLAS_STATUS_NOT_SUPPORTED: no algorithm for the problem
constexpr int kCandidates = 8;

void check_lt(int status, const char* what) {
  if (status != cuda::CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cat(what, " failed with cuBLAS status ", status));
}

using E = MatmulEpilogue;

bool bias_along_rows(E e) {
  return e == E::bias || e == E::relu_bias || e == E::gelu_bias || e == E::gelu_aux_bias || e == E::dgelu_bgrad;
}
bool uses_bias(E e) { return bias_along_rows(e) || e == E::bgrada || e == E::bgradb; }
bool uses_aux(E e) { return e == E::gelu_aux || e == E::gelu_aux_bias || e == E::dgelu || e == E::dgelu_bgrad; }
bool writes_bias(E e) { return e == E::dgelu_bgrad || e == E::bgrada || e == E::bgradb; }

/// cuBLASLt's epilogue. In the transposed problem (d^T = b^T a^T) cuBLASLt's A is our b, so the
/// gradients of A and B trade names.
int lt_epilogue(E e, bool transposed) {
  using namespace cuda;
  switch (e) {
    case E::none: return CUBLASLT_EPILOGUE_DEFAULT;
    case E::relu: return CUBLASLT_EPILOGUE_RELU;
    case E::gelu: return CUBLASLT_EPILOGUE_GELU;
    case E::bias: return CUBLASLT_EPILOGUE_BIAS;
    case E::relu_bias: return CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS;
    case E::gelu_bias: return CUBLASLT_EPILOGUE_GELU | CUBLASLT_EPILOGUE_BIAS;
    case E::gelu_aux: return CUBLASLT_EPILOGUE_GELU | CUBLASLT_EPILOGUE_AUX;
    case E::gelu_aux_bias: return CUBLASLT_EPILOGUE_GELU | CUBLASLT_EPILOGUE_AUX | CUBLASLT_EPILOGUE_BIAS;
    case E::dgelu: return CUBLASLT_EPILOGUE_DGELU;
    case E::dgelu_bgrad: return CUBLASLT_EPILOGUE_DGELU | CUBLASLT_EPILOGUE_BGRAD;
    case E::bgrada: return transposed ? CUBLASLT_EPILOGUE_BGRADB : CUBLASLT_EPILOGUE_BGRADA;
    case E::bgradb: return transposed ? CUBLASLT_EPILOGUE_BGRADA : CUBLASLT_EPILOGUE_BGRADB;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

std::int64_t dim(const Array& a, int from_end) { return a.shape()[a.ndim() - from_end]; }
std::int64_t stride(const Array& a, int from_end) { return a.strides()[a.ndim() - from_end]; }

/// The largest power of two (up to 16 bytes) dividing the address: cuBLASLt's heuristic picks
/// kernels for the alignment it sees, so execute() must not be handed less.
int alignment(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  int a = 16;
  while (a > 1 && v % static_cast<std::uintptr_t>(a) != 0) a /= 2;
  return a;
}

/// Descriptors owned by a plan (destroyed with it).
struct Descriptors {
  cuda::cublasLtMatmulDesc_t desc = nullptr;
  cuda::cublasLtMatrixLayout_t layout[3] = {};  // cuBLASLt's A, B and C = D
  cuda::cublasLtMatmulPreference_t preference = nullptr;
  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    const auto& lt = cuda::cublaslt();
    if (desc) lt.MatmulDescDestroy(desc);
    for (auto* l : layout)
      if (l) lt.MatrixLayoutDestroy(l);
    if (preference) lt.MatmulPreferenceDestroy(preference);
  }
};

/// What must stay the same between plan and execute: each operand's shape, strides and dtype.
using Signature = std::vector<std::tuple<Shape, Strides, DType>>;
Signature signature(const PlannedMatmul& p) {
  Signature s;
  for (const Array* x : {&p.a, &p.b, &p.d, &p.bias, &p.aux})
    if (x->defined()) s.emplace_back(x->shape(), x->strides(), x->dtype());
    else s.emplace_back();
  return s;
}

class LtPlan final : public MatmulPlan {
 public:
  LtPlan(CudaBackend& backend, const PlannedMatmul& p)
      : backend_(backend), signature_(signature(p)), epilogue_(p.epilogue) {
    const std::int64_t m = dim(p.d, 2), n = dim(p.d, 1), k = dim(p.a, 1);
    transposed_ = stride(p.d, 1) == 1 && (stride(p.d, 2) == n || m == 1) && !bias_along_rows(p.epilogue);
    if (!transposed_ && !(stride(p.d, 2) == 1 && (stride(p.d, 1) == m || n == 1)))
      throw ValueError(cat("matmul plan: the result's matrices must be row-major (strides (", n, ", 1)) or, for ",
                           "epilogues with a bias along rows, column-major (strides (1, ", m, ")); got strides ",
                           shape_str(p.d.strides())));
    const GemmSide A = gemm_side(backend, p.a), B = gemm_side(backend, p.b);
    sides_ = {A.op, A.ld, A.stride, B.op, B.ld, B.stride};
    std::int64_t d_stride = 0;
    if (!uniform_batch_stride(p.d, d_stride))
      throw ValueError("matmul plan: the result's matrices must be equally spaced");
    batch_ = p.d.size() / std::max<std::int64_t>(m * n, 1);
    const DType t = p.d.dtype();
    const bool wide = t == DType::float64;
    type_ = cuda_data_type(t);
    const int compute = wide ? cuda::CUBLAS_COMPUTE_64F
                        : (t == DType::float32 && matmul_precision() == MatmulPrecision::tf32)
                            ? cuda::CUBLAS_COMPUTE_32F_FAST_TF32
                            : cuda::CUBLAS_COMPUTE_32F;
    wide_ = wide;
    const auto& lt = cuda::cublaslt();
    check_lt(lt.MatmulDescCreate(&d_.desc, compute, wide ? cuda::CUDA_R_64F : cuda::CUDA_R_32F),
             "cublasLtMatmulDescCreate");
    // cuBLASLt's A is (transposed ? b : a); an operand whose op'd shape is r x c is stored c x r when transposed
    const auto flip = [](int op) { return op == cuda::CUBLAS_OP_N ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N; };
    const GemmSide& first = transposed_ ? B : A;
    const GemmSide& second = transposed_ ? A : B;
    const int op_a = transposed_ ? first.op : flip(first.op), op_b = transposed_ ? second.op : flip(second.op);
    const std::int64_t rows = transposed_ ? n : m, cols = transposed_ ? m : n;
    set_desc(cuda::CUBLASLT_MATMUL_DESC_TRANSA, op_a);
    set_desc(cuda::CUBLASLT_MATMUL_DESC_TRANSB, op_b);
    set_desc(cuda::CUBLASLT_MATMUL_DESC_EPILOGUE, lt_epilogue(p.epilogue, transposed_));
    make_layout(0, op_a, rows, k, first.ld, first.stride);
    make_layout(1, op_b, k, cols, second.ld, second.stride);
    make_layout(2, cuda::CUBLAS_OP_N, rows, cols, rows, d_stride);
    set_pointers(p);
    check_lt(lt.MatmulPreferenceCreate(&d_.preference), "cublasLtMatmulPreferenceCreate");
    const LtContext ctx = context();
    const std::uint64_t ws = ctx.workspace_bytes;
    check_lt(
        lt.MatmulPreferenceSetAttribute(d_.preference, cuda::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute");
    align_ = std::min({alignment(A.data()), alignment(B.data()), alignment(p.d.data())});
    candidates_.resize(kCandidates);
    int found = 0;
    const int status = lt.MatmulAlgoGetHeuristic(ctx.handle, d_.desc, d_.layout[0], d_.layout[1], d_.layout[2],
                                                 d_.layout[2], d_.preference, kCandidates, candidates_.data(), &found);
    if (status != kStatusNotSupported) check_lt(status, "cublasLtMatmulAlgoGetHeuristic");
    candidates_.resize(status == kStatusNotSupported ? 0 : static_cast<std::size_t>(found));
    std::erase_if(candidates_, [](const auto& c) { return c.state != cuda::CUBLAS_STATUS_SUCCESS; });
  }

  bool empty() const { return candidates_.empty(); }
  std::vector<std::string> algorithms() const override {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < candidates_.size(); ++i)
      out.push_back(cat("cuBLASLt candidate ", i, " (workspace ", candidates_[i].workspaceSize, " bytes, waves ",
                        candidates_[i].wavesCount, ")"));
    return out;
  }
  void choose(int index) override { chosen_ = checked(index); }
  int chosen() const override { return chosen_; }
  std::string library() const override { return cat("cuBLASLt ", cuda::cublaslt().version); }

  double time(const PlannedMatmul& p, int index, int iterations) override {
    const auto& drv = cuda::driver();
    const cuda::CUstream stream = prepare(p);
    cuda::CUevent start = nullptr, stop = nullptr;
    cuda::check(drv.EventCreate(&start, cuda::kEventDefault), "cuEventCreate");
    cuda::check(drv.EventCreate(&stop, cuda::kEventDefault), "cuEventCreate");
    float ms = 0;
    bool ok = run(p, checked(index), stream) == cuda::CUBLAS_STATUS_SUCCESS;  // warm-up
    if (ok) {
      drv.EventRecord(start, stream);
      for (int i = 0; i < std::max(iterations, 1) && ok; ++i) ok = run(p, index, stream) == cuda::CUBLAS_STATUS_SUCCESS;
      drv.EventRecord(stop, stream);
      drv.EventSynchronize(stop);
      if (!drv.EventElapsedTime || drv.EventElapsedTime(&ms, start, stop) != cuda::CUDA_SUCCESS) ok = false;
    }
    drv.EventDestroy(start);
    drv.EventDestroy(stop);
    return ok ? ms / std::max(iterations, 1) : std::numeric_limits<double>::infinity();
  }

  void execute(const PlannedMatmul& p) override {
    const cuda::CUstream stream = prepare(p);
    LibraryCall call("cuBLASLt", "cublasLtMatmul", backend_.index(), runtime::Stream::current(backend_.index()));
    call.describe([&] {
      return cat(dim(p.d, 1), "x", dim(p.d, 2), "x", dim(p.a, 2), " batch ", batch_, " ", name(p.d.dtype()),
                 " epilogue ", static_cast<int>(epilogue_));
    });
    check_lt(run(p, chosen_, stream), "cublasLtMatmul");
  }

 private:
  void set_desc(int attribute, std::int32_t value) {
    check_lt(cuda::cublaslt().MatmulDescSetAttribute(d_.desc, attribute, &value, sizeof value),
             "cublasLtMatmulDescSetAttribute");
  }
  template <class T>
  void set_desc_value(int attribute, const T& value) {
    check_lt(cuda::cublaslt().MatmulDescSetAttribute(d_.desc, attribute, &value, sizeof value),
             "cublasLtMatmulDescSetAttribute");
  }
  /// Layout `i`: the operand's op'd shape is r x c; its memory is r x c (OP_N) or c x r (OP_T).
  void make_layout(int i, int op, std::int64_t r, std::int64_t c, std::int64_t ld, std::int64_t batch_stride) {
    const auto& lt = cuda::cublaslt();
    const bool n = op == cuda::CUBLAS_OP_N;
    check_lt(lt.MatrixLayoutCreate(&d_.layout[i], type_, static_cast<std::uint64_t>(n ? r : c),
                                   static_cast<std::uint64_t>(n ? c : r), ld),
             "cublasLtMatrixLayoutCreate");
    if (batch_ <= 1) return;
    const std::int32_t count = narrow(batch_, "batch");
    check_lt(lt.MatrixLayoutSetAttribute(d_.layout[i], cuda::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
             "cublasLtMatrixLayoutSetAttribute");
    check_lt(lt.MatrixLayoutSetAttribute(d_.layout[i], cuda::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                         sizeof batch_stride),
             "cublasLtMatrixLayoutSetAttribute");
  }
  /// The epilogue's pointers (their values also tell the heuristic their alignment).
  void set_pointers(const PlannedMatmul& p) {
    if (uses_bias(epilogue_)) set_desc_value(cuda::CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias.data());
    if (uses_aux(epilogue_)) {
      const std::int64_t ld = transposed_ ? stride(p.aux, 2) : stride(p.aux, 1);
      std::int64_t batch_stride = 0;
      uniform_batch_stride(p.aux, batch_stride);
      set_desc_value(cuda::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, p.aux.data());
      set_desc_value(cuda::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, ld);
      set_desc_value(cuda::CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, batch_stride);
    }
  }
  int checked(int index) const {
    if (index < 0 || index >= static_cast<int>(candidates_.size()))
      throw IndexError(cat("matmul plan: algorithm ", index, " is not one of the ", candidates_.size(), " candidates"));
    return index;
  }
  LtContext context() const {
    return lt_context(backend_.index(), runtime::Stream::current(backend_.index()).handle());
  }
  /// Checks the operands against the plan, points the descriptor at them; the stream to run on.
  cuda::CUstream prepare(const PlannedMatmul& p) {
    if (signature(p) != signature_ || p.epilogue != epilogue_)
      throw ValueError("matmul plan: the operands' shapes, strides or dtypes are not the planned ones; plan again");
    runtime::activate_device(backend_.index());
    backend_.note_write(p.d);
    if (writes_bias(epilogue_)) backend_.note_write(p.bias);
    if (epilogue_ == E::gelu_aux || epilogue_ == E::gelu_aux_bias) backend_.note_write(p.aux);
    set_pointers(p);
    return runtime::Stream::current(backend_.index()).handle();
  }
  int run(const PlannedMatmul& p, int index, cuda::CUstream stream) {
    const GemmSide A = gemm_side(backend_, p.a), B = gemm_side(backend_, p.b);
    if (std::tuple{A.op, A.ld, A.stride, B.op, B.ld, B.stride} != sides_)
      throw ValueError("matmul plan: the operands' layout is not the planned one; plan again");
    if (std::min({alignment(A.data()), alignment(B.data()), alignment(p.d.data())}) < align_)
      throw ValueError(
          cat("matmul plan: the operands are less aligned than the planned ones (", align_, " bytes); plan again"));
    const LtContext ctx = lt_context(backend_.index(), stream);
    const double alpha_d = p.alpha, beta_d = p.beta;
    const float alpha_f = static_cast<float>(p.alpha), beta_f = static_cast<float>(p.beta);
    const void* alpha = wide_ ? static_cast<const void*>(&alpha_d) : &alpha_f;
    const void* beta = wide_ ? static_cast<const void*>(&beta_d) : &beta_f;
    const GemmSide& first = transposed_ ? B : A;
    const GemmSide& second = transposed_ ? A : B;
    const auto& c = candidates_[static_cast<std::size_t>(index)];
    return cuda::cublaslt().Matmul(ctx.handle, d_.desc, alpha, first.data(), d_.layout[0], second.data(), d_.layout[1],
                                   beta, p.d.data(), d_.layout[2], p.d.data(), d_.layout[2], &c.algo, ctx.workspace,
                                   ctx.workspace_bytes, stream);
  }

  CudaBackend& backend_;
  Signature signature_;
  E epilogue_;
  bool transposed_ = true, wide_ = false;
  int type_ = 0, align_ = 16, chosen_ = 0;
  std::int64_t batch_ = 1;
  std::tuple<int, std::int64_t, std::int64_t, int, std::int64_t, std::int64_t> sides_;
  Descriptors d_;
  std::vector<cuda::cublasLtMatmulHeuristicResult_t> candidates_;
};

bool lt_dtype(DType t) {
  return t == DType::float16 || t == DType::bfloat16 || t == DType::float32 || t == DType::float64;
}

}  // namespace

std::shared_ptr<MatmulPlan> CudaBackend::plan_matmul(const PlannedMatmul& operands) {
  const DType t = operands.d.dtype();
  if (!lt_dtype(t) || operands.a.dtype() != t || operands.b.dtype() != t || operands.d.size() == 0 ||
      dim(operands.a, 1) == 0)
    return nullptr;
  if (writes_bias(operands.epilogue) && operands.d.size() != dim(operands.d, 1) * dim(operands.d, 2))
    return nullptr;  // a bias gradient per matrix of a batch: composed by the caller
  runtime::activate_device(index_);
  auto plan = std::make_shared<LtPlan>(*this, operands);
  if (plan->empty()) return nullptr;
  return plan;
}

/// A plain product through cuBLASLt (the gemm library chosen with set_gemm_library): the plan of
/// each problem is made once (the heuristic's first candidate) and kept.
bool matmul_through_lt(CudaBackend& backend, const Array& a, const Array& b, const Array& out) {
  if (!lt_dtype(out.dtype())) return false;
  PlannedMatmul p;
  p.a = a, p.b = b, p.d = out;
  using Key = std::tuple<int, int, Signature, int, int>;
  static std::mutex mutex;
  // never destroyed: at exit the plans would call into cuBLASLt after its context is gone
  static auto& plans = *new std::map<Key, std::shared_ptr<MatmulPlan>>();
  const GemmSide A = gemm_side(backend, a), B = gemm_side(backend, b);
  const int align = std::min({alignment(A.data()), alignment(B.data()), alignment(out.data())});
  Key key{backend.index(), align, signature(p), static_cast<int>(matmul_precision()), 0};
  std::shared_ptr<MatmulPlan> plan;
  {
    std::lock_guard lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end()) plan = it->second;
  }
  if (!plan) {
    plan = backend.plan_matmul(p);
    if (!plan) return false;
    std::lock_guard lock(mutex);
    if (plans.size() > 512) plans.clear();  // bounded: a long run of distinct shapes replans
    plans[key] = plan;
  }
  plan->execute(p);
  return true;
}

}  // namespace cupric::cuda_backend
