// bind_tile_launch.cpp — launching cupric.tile kernels: the CPU launcher (HostLauncher) and launch
// plans, the fast path of cached launches (one C++ call checks, packs and launches; misses go to Python).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <vector>

#include "bind_cuda.hpp"
#include "convert.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/kernel.hpp"
#include "tile/builder.hpp"
#include "tile/host_compiler.hpp"
#include "tile_launch_args.hpp"

namespace cupric::py {

namespace {

using tile::Function;

/// A compiled CPU kernel plus how to turn Python arguments into its ABI (the launch of the
/// Python path; plans launch the same kernel with arguments they read themselves).
class HostLauncher {
 public:
  /// From saved parameter facts (is_array, dtype, ndim, written), as the kernel index stores them.
  HostLauncher(std::shared_ptr<tile::HostKernel> k, const std::vector<std::tuple<bool, std::string, int, bool>>& params)
      : kernel_(std::move(k)) {
    for (const auto& [array, dtype, ndim, written] : params)
      params_.push_back({array, dtype_from_name(dtype), ndim, written});
  }

  HostLauncher(std::shared_ptr<tile::HostKernel> k, const Function& f) : kernel_(std::move(k)) {
    std::vector<bool> written(f.values.size(), false);
    tile::walk(f.body, [&](const tile::Op& op) {
      using K = tile::OpKind;
      if (op.kind == K::store || op.kind == K::store_offset || op.kind == K::scatter || op.kind == K::atomic)
        written[static_cast<std::size_t>(op.operands.at(0))] = true;
    });
    for (int v : f.params) {
      const tile::Type& t = f.type(v);
      params_.push_back({t.is_array(), t.dtype, t.ndim, written[static_cast<std::size_t>(v)]});
    }
  }

  std::vector<std::tuple<bool, std::string, int, bool>> params() const {
    std::vector<std::tuple<bool, std::string, int, bool>> out;
    for (const Param& p : params_) out.emplace_back(p.array, name(p.dtype), p.ndim, p.written);
    return out;
  }

  const std::shared_ptr<tile::HostKernel>& kernel() const { return kernel_; }

  void launch(nb::handle grid, nb::args args) const {
    if (args.size() != params_.size())
      throw TypeError(cat("kernel takes ", params_.size(), " run-time arguments, got ", args.size()));
    std::int64_t g[3] = {1, 1, 1};
    std::size_t gi = 0;
    for (nb::handle d : grid) {
      if (gi == 3) throw ValueError("a grid has at most 3 dimensions");
      g[gi++] = nb::cast<std::int64_t>(d);
    }
    std::vector<cupric_tile_array> arrays(params_.size());
    std::vector<std::uint64_t> scalars(params_.size(), 0);
    std::vector<void*> ptrs(params_.size());
    std::vector<Array> keep;  // arrays alive during the launch
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const Param& p = params_[i];
      if (p.array) {
        const Array& a = nb::cast<const Array&>(args[i]);
        if (!a.device().is_cpu()) throw ValueError(cat("argument ", i, " is on ", a.device().str(), ", not the CPU"));
        if (a.dtype() != p.dtype || a.ndim() != p.ndim)
          throw TypeError(cat("argument ", i, ": expected a ", name(p.dtype), " array of ", p.ndim,
                              " dimension(s), got ", a.str()));
        if (p.written) a.check_writeable();
        cupric_tile_array& d = arrays[i];
        d.data = a.data();
        for (int k = 0; k < a.ndim(); ++k) {
          d.shape[k] = a.shape()[static_cast<std::size_t>(k)];
          d.strides[k] = a.strides()[static_cast<std::size_t>(k)];
        }
        ptrs[i] = &d;
        keep.push_back(a);
      } else {
        scalar_from_py(args[i]).store(p.dtype, &scalars[i]);
        ptrs[i] = &scalars[i];
      }
    }
    run_host_kernel(*kernel_, g, ptrs);
  }

 private:
  struct Param {
    bool array;
    DType dtype;
    int ndim;
    bool written;
  };
  std::shared_ptr<tile::HostKernel> kernel_;
  std::vector<Param> params_;
};

/// Where a plan launches: a CPU kernel, or a CUDA kernel with its block size and shared memory.
struct Target {
  std::shared_ptr<tile::HostKernel> host;
  std::unique_ptr<runtime::Kernel> cuda;
  int device = -1;  // -1: the CPU, else the CUDA ordinal
  unsigned threads = 0, smem = 0;
};

/// One specialisation as it was called. match() checks that arguments still fit it, reading
/// their arrays as it goes; launch() then packs and launches them.
class LaunchPlan {
 public:
  LaunchPlan(std::vector<PlanParam> params, Target target, nb::dict constants, nb::object grid3)
      : params_(std::move(params)), target_(std::move(target)), constants_(std::move(constants)),
        grid3_(std::move(grid3)) {}

  std::size_t size() const { return params_.size(); }
  /// True when every argument fits (`args`: a tuple of one value per parameter).
  bool match(PyObject* args, ReadArray* arrays) const {
    for (std::size_t i = 0; i < params_.size(); ++i)
      if (!match_param(params_[i], PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(i)), target_.device, arrays[i]))
        return false;
    return true;
  }
  /// Launches arguments that match() accepted, with the arrays it read.
  void launch(nb::handle grid, nb::handle stream, PyObject* args, ReadArray* arrays) const {
    long long g[3];
    grid_of(grid, g);
    if (target_.host) {
      launch_host(g, args, arrays);
    } else {
      launch_cuda(g, stream, args, arrays);
    }
  }

 private:
  void grid_of(nb::handle grid, long long g[3]) const;
  void launch_host(const long long g[3], PyObject* args, ReadArray* arrays) const;
  void launch_cuda(const long long g[3], nb::handle stream, PyObject* args, ReadArray* arrays) const;

  std::vector<PlanParam> params_;
  Target target_;
  nb::dict constants_;  // the ct.Constant values, for a grid given as a function
  nb::object grid3_;    // the Python path's grid normalisation, for grids other than ints
};

/// The grid as 3 extents: ints and tuples of ints here, anything else (a function of the
/// constants, NumPy ints, a list, bad grids) through the Python path's normalisation.
void LaunchPlan::grid_of(nb::handle grid, long long g[3]) const {
  if (grid_from_ints(grid.ptr(), g)) return;
  nb::object constants = nb::steal(PyDict_Copy(constants_.ptr()));
  if (!constants.is_valid()) throw nb::python_error();
  nb::object t = grid3_(grid, constants);
  for (int i = 0; i < 3; ++i) g[i] = nb::cast<long long>(t[i]);
}

void LaunchPlan::launch_host(const long long g[3], PyObject* args, ReadArray* arrays) const {
  std::vector<std::uint64_t> scalars(params_.size(), 0);
  std::vector<void*> ptrs;
  ptrs.reserve(params_.size());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const PlanParam& p = params_[i];
    if (p.kind == ArgKind::constant) continue;
    if (is_array_kind(p.kind)) {
      ptrs.push_back(&arrays[i].view);
    } else {
      store_scalar(p, PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(i)), &scalars[i]);
      ptrs.push_back(&scalars[i]);
    }
  }
  const std::int64_t grid[3] = {g[0], g[1], g[2]};
  run_host_kernel(*target_.host, grid, ptrs);
}

void LaunchPlan::launch_cuda(const long long g[3], nb::handle stream, PyObject* args, ReadArray* arrays) const {
  if (g[0] == 0 || g[1] == 0 || g[2] == 0) return;  // an empty grid launches nothing
  check_cuda_grid(g);
  const runtime::Kernel& k = *target_.cuda;
  runtime::ArgPacker packer(k.param_sizes_known() ? &k.param_sizes() : nullptr, k.interned_name());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const PlanParam& p = params_[i];
    if (p.kind == ArgKind::constant) continue;
    if (is_array_kind(p.kind)) {
      pack_array(packer, arrays[i]);
    } else {
      std::uint64_t bits = 0;
      store_scalar(p, PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(i)), &bits);
      packer.add_bytes(&bits, static_cast<std::size_t>(itemsize(p.dtype)), 0, name(p.dtype));
    }
  }
  runtime::Stream s = stream.is_none() ? runtime::Stream::current(target_.device) : stream_from_py(stream);
  for (std::size_t i = 0; i < params_.size(); ++i) {  // __cuda_array_interface__ v3: after the producer's work
    const ReadArray& a = arrays[i];
    if (is_array_kind(params_[i].kind) && a.has_stream && a.stream != reinterpret_cast<std::uintptr_t>(s.handle()))
      s.wait(runtime::Stream::wrap(a.stream, target_.device));
  }
  runtime::LaunchConfig config;
  config.grid = {static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2])};
  config.block = {target_.threads, 1, 1};
  config.shared_memory = target_.smem;
  runtime::launch(s.handle(), s.state().get(), config, k, packer);
}

/// The plans of one kernel, most recently added first; launch() tries them in turn.
class LaunchPlans {
 public:
  bool launch(nb::handle grid, nb::handle stream, nb::handle args) {
    PyObject* tuple = args.ptr();
    if (plans_.empty() || !PyTuple_Check(tuple) || interpreting()) return false;
    const auto n = static_cast<std::size_t>(PyTuple_GET_SIZE(tuple));
    if (n != plans_.front()->size()) return false;
    ArrayBuffer arrays(n);
    // (matching may run Python code, which may change plans_: each plan is held while it is used)
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      std::shared_ptr<LaunchPlan> plan = plans_[i];
      if (plan->size() != n || !plan->match(tuple, arrays.data())) continue;
      if (i > 0 && i < plans_.size() && plans_[i] == plan) std::swap(plans_[i], plans_[i - 1]);  // in use: forward
      plan->launch(grid, stream, tuple, arrays.data());
      return true;
    }
    return false;
  }
  void add(std::shared_ptr<LaunchPlan> p) {
    if (plans_.size() >= kMaxPlans) plans_.pop_back();
    plans_.insert(plans_.begin(), std::move(p));
  }
  void clear() { plans_.clear(); }
  std::size_t size() const { return plans_.size(); }

 private:
  static constexpr std::size_t kMaxPlans = 64;
  std::vector<std::shared_ptr<LaunchPlan>> plans_;
};

/// A plan for `values` (one per kernel parameter) when every argument is of a kind plans
/// handle, else None. `params[i]` is None for a ct.Constant, else (kind, dtype, ndim, written)
/// with kind "array", "weak" or "typed" and dtype the array's or the scalar's stored type.
nb::object make_plan(nb::tuple values, nb::list params, nb::dict constants, nb::handle target, nb::object grid3) {
  if (values.size() != params.size()) throw ValueError("make_launch_plan: one parameter fact per value");
  Target t;
  if (nb::isinstance<HostLauncher>(target)) {
    t.host = nb::cast<const HostLauncher&>(target).kernel();
  } else {
    auto [kernel, device, threads, smem] = nb::cast<std::tuple<nb::handle, int, unsigned, unsigned>>(target);
    if (!nb::isinstance<runtime::Kernel>(kernel)) return nb::none();  // a stand-in runtime (tests)
    t.cuda = std::make_unique<runtime::Kernel>(nb::cast<const runtime::Kernel&>(kernel));
    t.device = device;
    t.threads = threads;
    t.smem = smem;
  }
  std::vector<PlanParam> plan;
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::optional<PlanParam> p = classify(values[i], params[i], t.device);
    if (!p) return nb::none();
    plan.push_back(std::move(*p));
  }
  auto out = std::make_shared<LaunchPlan>(std::move(plan), std::move(t), std::move(constants), std::move(grid3));
  ArrayBuffer arrays(values.size());
  if (!out->match(values.ptr(), arrays.data())) return nb::none();  // would not take these values back
  return nb::cast(out);
}

}  // namespace

void bind_tile_launch(nb::module_& t) {
  nb::class_<HostLauncher>(t, "HostLauncher", "A loaded CPU kernel: launch(grid, *args).")
      .def("__init__", [](HostLauncher* self, const std::string& path,
                          const Function& f) { new (self) HostLauncher(tile::HostKernel::load(path), f); })
      .def("__init__",
           [](HostLauncher* self, const std::string& path,
              const std::vector<std::tuple<bool, std::string, int, bool>>& params) {
             new (self) HostLauncher(tile::HostKernel::load(path), params);
           })
      .def("params", &HostLauncher::params)
      .def("launch", &HostLauncher::launch);
  nb::class_<LaunchPlan>(t, "LaunchPlan", "How one specialisation was called: launch(grid, stream, args) -> bool.")
      .def(
          "launch",
          [](const LaunchPlan& p, nb::handle grid, nb::handle stream, nb::tuple args) {
            if (args.size() != p.size()) return false;
            ArrayBuffer arrays(args.size());
            if (!p.match(args.ptr(), arrays.data())) return false;
            p.launch(grid, stream, args.ptr(), arrays.data());
            return true;
          },
          nb::arg("grid"), nb::arg("stream").none(), nb::arg("args"));
  nb::class_<LaunchPlans>(t, "LaunchPlans", "A kernel's launch plans: launch(grid, stream, args) -> bool.")
      .def(nb::init<>())
      .def("launch", &LaunchPlans::launch, nb::arg("grid"), nb::arg("stream").none(), nb::arg("args"),
           "Launches through the first plan the arguments fit; False (nothing done) when none does.")
      .def("add", &LaunchPlans::add)
      .def("clear", &LaunchPlans::clear)
      .def("__len__", &LaunchPlans::size);
  t.def("make_launch_plan", &make_plan, nb::arg("values"), nb::arg("params"), nb::arg("constants"), nb::arg("target"),
        nb::arg("grid3"));
}

}  // namespace cupric::py
