// bind_linalg.cpp — Python bindings of cupric/linalg.hpp: matmul and the @ operators, and the
// factorisations as private functions (_linalg_*) that python/cupric/linalg composes.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "convert.hpp"
#include "cupric/blas_info.hpp"
#include "cupric/errors.hpp"
#include "cupric/linalg.hpp"
#include "py_types.hpp"

namespace cupric::py {

namespace {
Array out_operand(nb::handle out) {
  if (out.is_none()) return {};
  if (nb::isinstance<nb::tuple>(out)) {  // NumPy's ufunc machinery passes out=(array,)
    nb::tuple t = nb::borrow<nb::tuple>(out);
    if (t.size() != 1) throw ValueError(cat("matmul: out= takes one array, got a tuple of ", t.size()));
    return out_operand(t[0]);
  }
  if (!nb::isinstance<Array>(out))
    throw TypeError(
        cat("out= must be a cupric array, got ", nb::cast<std::string>(nb::str(nb::type_name(out.type())))));
  return nb::cast<Array>(out);
}

NdarrayResult matmul_py(const ArrayLike& a, const ArrayLike& b, const OutArray& out, const DTypeLike& dtype,
                        const std::string& casting) {
  if (casting != "same_kind")
    throw NotImplementedError(cat("matmul: casting='", casting, "' is not supported (cupric casts with 'same_kind')"));
  const Array r = matmul(operand_from_py(a), operand_from_py(b), out_operand(out), optional_dtype(dtype));
  return result_to_py(r, out);
}

/// a @ b and b @ a: operands that cannot be arrays give Python's NotImplemented (then TypeError).
nb::object matmul_operator(nb::handle self, nb::handle other, bool reflected) {
  Array x;
  try {
    x = operand_from_py(other);
  } catch (const TypeError&) {
    return nb::borrow(Py_NotImplemented);
  }
  const Array& s = nb::cast<const Array&>(self);
  return nb::cast(reflected ? matmul(x, s) : matmul(s, x));
}

nb::object optional(const Array& a) { return a.defined() ? nb::cast(a) : nb::none(); }

/// numpy.linalg.LinAlgError (cupric raises NumPy's own class, so that code catching it works).
PyObject* linalg_error_class() {
  static PyObject* cls = [] {
    try {
      nb::object c = nb::module_::import_("numpy.linalg").attr("LinAlgError");
      return c.release().ptr();
    } catch (const std::exception&) {
      PyErr_Clear();
      return PyExc_ValueError;
    }
  }();
  return cls;
}
}  // namespace

namespace {
constexpr std::pair<std::string_view, MatmulEpilogue> kEpilogues[] = {
    {"default", MatmulEpilogue::none},        {"relu", MatmulEpilogue::relu},
    {"gelu", MatmulEpilogue::gelu},           {"bias", MatmulEpilogue::bias},
    {"relu_bias", MatmulEpilogue::relu_bias}, {"gelu_bias", MatmulEpilogue::gelu_bias},
    {"gelu_aux", MatmulEpilogue::gelu_aux},   {"gelu_aux_bias", MatmulEpilogue::gelu_aux_bias},
    {"dgelu", MatmulEpilogue::dgelu},         {"dgelu_bgrad", MatmulEpilogue::dgelu_bgrad},
    {"bgrada", MatmulEpilogue::bgrada},       {"bgradb", MatmulEpilogue::bgradb},
};

/// The operands of a planned product from Python's (a, b, d, bias or None, aux or None, alpha,
/// beta, epilogue name).
PlannedMatmul planned(const Array& a, const Array& b, const Array& d, nb::handle bias, nb::handle aux, double alpha,
                      double beta, std::string_view epilogue) {
  PlannedMatmul p;
  p.a = a, p.b = b, p.d = d;
  if (!bias.is_none()) p.bias = nb::cast<Array>(bias);
  if (!aux.is_none()) p.aux = nb::cast<Array>(aux);
  p.alpha = alpha;
  p.beta = beta;
  bool known = false;
  for (const auto& [name, e] : kEpilogues)
    if (name == epilogue) p.epilogue = e, known = true;
  if (!known) throw ValueError(cat("plan_matmul: no fused epilogue named '", epilogue, "'"));
  return p;
}

void bind_matmul_plans(nb::module_& m) {
  nb::class_<MatmulPlan>(m, "_MatmulPlan")
      .def("algorithms", &MatmulPlan::algorithms)
      .def("choose", &MatmulPlan::choose)
      .def_prop_ro("chosen", &MatmulPlan::chosen)
      .def_prop_ro("library", &MatmulPlan::library)
      .def(
          "time",
          [](MatmulPlan& plan, const Array& a, const Array& b, const Array& d, nb::handle bias, nb::handle aux,
             double alpha, double beta, std::string_view epilogue, int index, int iterations) {
            return plan.time(planned(a, b, d, bias, aux, alpha, beta, epilogue), index, iterations);
          },
          nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("bias").none(), nb::arg("aux").none(), nb::arg("alpha"),
          nb::arg("beta"), nb::arg("epilogue"), nb::arg("index"), nb::arg("iterations"))
      .def(
          "execute",
          [](MatmulPlan& plan, const Array& a, const Array& b, const Array& d, nb::handle bias, nb::handle aux,
             double alpha, double beta,
             std::string_view epilogue) { plan.execute(planned(a, b, d, bias, aux, alpha, beta, epilogue)); },
          nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("bias").none(), nb::arg("aux").none(), nb::arg("alpha"),
          nb::arg("beta"), nb::arg("epilogue"));
  m.def(
      "_plan_matmul",
      [](const Array& a, const Array& b, const Array& d, nb::handle bias, nb::handle aux, double alpha, double beta,
         std::string_view epilogue) { return plan_matmul(planned(a, b, d, bias, aux, alpha, beta, epilogue)); },
      nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("bias").none(), nb::arg("aux").none(), nb::arg("alpha"),
      nb::arg("beta"), nb::arg("epilogue"));
  m.def("_set_gemm_library", [](std::string_view library) {
    if (library != "cublas" && library != "cublaslt")
      throw ValueError(cat("the gemm library must be 'cublas' or 'cublaslt', got '", library, "'"));
    set_gemm_library(library == "cublaslt" ? GemmLibrary::cublaslt : GemmLibrary::cublas);
  });
  m.def("_get_gemm_library", [] { return gemm_library() == GemmLibrary::cublaslt ? "cublaslt" : "cublas"; });
}
}  // namespace

void raise_linalg_error(const char* message) { PyErr_SetString(linalg_error_class(), message); }

void bind_linalg(nb::module_& m) {
  m.def("matmul", &matmul_py, nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("out") = nb::none(),
        nb::arg("dtype") = nb::none(), nb::arg("casting") = "same_kind",
        "Matrix product of two arrays (NumPy's matmul: 1-D operands promoted, batch dimensions broadcast).");
  nb::handle nd = m.attr("ndarray");
  nb::setattr(nd, "__matmul__",
              nb::cpp_function([](nb::handle s, ArrayLike o) { return matmul_operator(s, o, false); }, nb::is_method(),
                               nb::scope(nd), nb::name("__matmul__")));
  nb::setattr(nd, "__rmatmul__",
              nb::cpp_function([](nb::handle s, ArrayLike o) { return matmul_operator(s, o, true); }, nb::is_method(),
                               nb::scope(nd), nb::name("__rmatmul__")));
  nb::setattr(nd, "__imatmul__",
              nb::cpp_function(
                  [](nb::handle s, ArrayLike o) {
                    const Array& x = nb::cast<const Array&>(s);
                    matmul(x, operand_from_py(o), x);
                    return nb::borrow(s);
                  },
                  nb::is_method(), nb::scope(nd), nb::name("__imatmul__")));
  m.def(
      "diagonal",
      [](const ArrayLike& a, std::int64_t offset, std::int64_t axis1, std::int64_t axis2) {
        return diagonal(array_from_py(a), offset, axis1, axis2);
      },
      nb::arg("a"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1,
      "The diagonals of the (axis1, axis2) planes as the last axis (a read-only view).");
  m.def("_matmul_by_ufuncs", [](const Array& a, const Array& b, const DTypeLike& dtype) {
    return matmul_by_ufuncs(a, b, dtype_from_py(dtype));
  });
  m.def("_set_matmul_precision", [](const std::string& p) {
    if (p != "highest" && p != "tf32")
      throw ValueError(cat("matmul precision must be 'highest' or 'tf32', got '", p, "'"));
    set_matmul_precision(p == "tf32" ? MatmulPrecision::tf32 : MatmulPrecision::highest);
  });
  m.def("_get_matmul_precision", [] { return matmul_precision() == MatmulPrecision::tf32 ? "tf32" : "highest"; });
  bind_matmul_plans(m);
  m.def("_linalg_cholesky", &cholesky);
  m.def("_linalg_lu_factor", &lu_factor);
  m.def("_linalg_solve", &solve);
  m.def("_linalg_eigh", [](const Array& a, bool vectors) {
    auto [w, v] = eigh(a, vectors);
    return nb::make_tuple(w, optional(v));
  });
  m.def("_linalg_svd", [](const Array& a, bool full, bool uv) {
    auto [u, s, vh] = svd(a, full, uv);
    return nb::make_tuple(optional(u), s, optional(vh));
  });
  m.def("_linalg_qr_factor", &qr_factor);
  m.def("_linalg_qr_q", &qr_q);
  m.def("_linalg_eig", [](const Array& a, bool vectors) {
    auto [w, v] = eig(a, vectors);
    return nb::make_tuple(w, optional(v));
  });
  m.def("_linalg_lstsq", &lstsq);
  m.def("_blas_info", [] {
    nb::dict d;
    d["library"] = cpu::blas_description();
    d["threads"] = cpu::blas_threads();
    return d;
  });
}

}  // namespace cupric::py
