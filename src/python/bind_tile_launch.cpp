// bind_tile_launch.cpp — launching cupric.tile kernels: the CPU launcher (HostLauncher) and launch
// plans, the fast path of cached launches (one C++ call checks, packs and launches; misses go to Python).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "bind_cuda.hpp"
#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/creation.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/kernel.hpp"
#include "cupric/tile_compiler/builder.hpp"
#include "cupric/tile_compiler/emit.hpp"
#include "cupric/tile_compiler/host_compiler.hpp"
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

  void launch(Dims3Like grid, nb::args args) const {
    if (args.size() != params_.size())
      throw TypeError(cat("kernel takes ", params_.size(), " run-time arguments, got ", args.size()));
    long long grid3[3];
    grid_from_py(grid, grid3);
    const std::int64_t g[3] = {grid3[0], grid3[1], grid3[2]};
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

/// How one launch of a CUDA tile kernel runs; the Python path and plans both launch through this.
/// A persistent kernel (sms > 0) runs at most one block per SM over its work units: its output
/// tiles, or with split_bytes (EmitResult) split K's units (tile::split_plan), whose scratch is
/// partial_bytes of partial accumulators and a zeroed counter per split tile (0: none, and the
/// kernel reads neither pointer). Its blocks pair in clusters of 2 where the kernel is written for
/// them and the launch allows (tile::launch_cluster).
struct LaunchShape {
  std::array<long long, 3> blocks{};
  tile::SplitPlan plan;
  long long partial_bytes = 0, counters = 0;
  bool cluster = false;
};

LaunchShape launch_shape(const long long g[3], long long sms, long long split_bytes, int cluster) {
  LaunchShape l;
  l.blocks = {g[0], g[1], g[2]};
  const long long tiles = g[0] * g[1] * g[2];
  l.plan = {tiles, 1};
  if (sms > 0) {
    if (split_bytes > 0) l.plan = tile::split_plan(tiles, sms);
    const long long units = l.plan.units(tiles);
    if (l.plan.splits > 1) {
      l.partial_bytes = (units - l.plan.whole) * split_bytes;
      l.counters = tiles - l.plan.whole;
    }
    l.blocks = {std::min(units, sms), 1, 1};
  }
  l.cluster = cluster > 1 && tile::launch_cluster(cluster, g[0], l.blocks[0], l.plan.splits) > 1;
  return l;
}

/// Split K's scratch for one launch (LaunchShape) from the stream-ordered pool: cupric arrays, so
/// the launch orders itself after the counters' zeroing and their memory is reused only after it.
std::pair<Array, Array> split_arrays(long long partial_bytes, long long counters, int device) {
  const Device on = Device::cuda(device);
  return {Array::empty(Shape{partial_bytes}, DType::uint8, on), zeros(Shape{counters}, DType::uint32, on)};
}

/// Where a plan launches: a CPU kernel, or a CUDA kernel with its block size and shared memory.
struct Target {
  std::shared_ptr<tile::HostKernel> host;
  std::unique_ptr<runtime::Kernel> cuda;
  int device = -1;  // -1: the CPU, else the CUDA ordinal
  unsigned threads = 0, smem = 0;
  /// CUDA: a TMA tensor map per (parameter's slot in the plan, box rows, box columns), after the parameters
  std::vector<std::array<int, 3>> maps;
  /// CUDA: a persistent kernel's SMs (the grid goes as three more arguments, at most one block per SM)
  long long sms = 0;
  /// CUDA: a persistent kernel's partial accumulator (split K: EmitResult::split_bytes), or 0
  long long split_bytes = 0;
  /// CUDA: blocks per cluster the kernel is written for (EmitResult::cluster; 1 where the device has none)
  int cluster = 1;
};

/// One specialisation as it was called. match() checks that arguments still fit it, reading
/// them as it goes; launch() then packs and launches them. `tag` is what a launch through the
/// plan returns (True, or @ct.autotune's config).
class LaunchPlan {
 public:
  LaunchPlan(std::vector<PlanParam> params, Target target, nb::dict constants, nb::object grid3, nb::object tag)
      : params_(std::move(params)),
        target_(std::move(target)),
        constants_(std::move(constants)),
        grid3_(std::move(grid3)),
        tag_(std::move(tag)) {
    for (const PlanParam& p : params_) nargs_ += p.kind == ArgKind::fixed ? 0 : 1;
  }

  /// The number of arguments a launch passes (the parameters less those the plan fixes).
  std::size_t size() const { return nargs_; }
  std::size_t params() const { return params_.size(); }
  const nb::object& tag() const { return tag_; }
  /// True when every argument fits (`args`: a tuple of size() values); `read` gets one slot per
  /// parameter.
  bool match(PyObject* args, ReadArg* read) const {
    Py_ssize_t j = 0;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      if (params_[i].kind == ArgKind::fixed) continue;
      if (!match_param(params_[i], PyTuple_GET_ITEM(args, j++), target_.device, read[i])) return false;
    }
    return true;
  }
  /// Launches arguments that match() accepted, with what it read.
  void launch(nb::handle grid, nb::handle stream, ReadArg* read) const {
    long long g[3];
    grid_of(grid, g);
    if (target_.host) {
      launch_host(g, read);
    } else {
      launch_cuda(g, stream, read);
    }
  }

 private:
  void grid_of(nb::handle grid, long long g[3]) const;
  void launch_host(const long long g[3], ReadArg* read) const;
  void launch_cuda(const long long g[3], nb::handle stream, ReadArg* read) const;

  std::vector<PlanParam> params_;
  Target target_;
  nb::dict constants_;  // the ct.Constant values, for a grid given as a function
  nb::object grid3_;    // the Python path's grid normalisation, for grids other than ints
  nb::object tag_;
  std::size_t nargs_ = 0;
};

/// The grid as 3 extents: ints and tuples of ints here, anything else (a function of the
/// constants, NumPy ints, a list, bad grids) through the Python path's normalisation.
void LaunchPlan::grid_of(nb::handle grid, long long g[3]) const {
  if (grid_from_ints(grid.ptr(), g)) return;
  nb::object constants = nb::steal(PyDict_Copy(constants_.ptr()));
  if (!constants.is_valid()) throw nb::python_error();
  nb::object given = nb::borrow(grid);
  if (PyCallable_Check(grid.ptr())) {  // lambda meta: ... (a copy of the constants: it may change it)
    given = nb::borrow(grid)(constants);
    if (grid_from_ints(given.ptr(), g)) return;
    if (PyCallable_Check(given.ptr())) given = nb::borrow(grid);  // the Python path's own error
  }
  nb::object t = grid3_(given, constants);
  for (int i = 0; i < 3; ++i) g[i] = nb::cast<long long>(t[i]);
}

void LaunchPlan::launch_host(const long long g[3], ReadArg* read) const {
  std::vector<std::uint64_t> scalars(params_.size(), 0);
  std::vector<void*> ptrs;
  ptrs.reserve(params_.size());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const PlanParam& p = params_[i];
    if (p.kind == ArgKind::constant || p.kind == ArgKind::fixed) continue;
    if (is_array_kind(p.kind)) {
      ptrs.push_back(&read[i].view);
    } else {
      store_scalar(p, read[i].value, &scalars[i]);
      ptrs.push_back(&scalars[i]);
    }
  }
  const std::int64_t grid[3] = {g[0], g[1], g[2]};
  run_host_kernel(*target_.host, grid, ptrs);
}

void LaunchPlan::launch_cuda(const long long g[3], nb::handle stream, ReadArg* read) const {
  if (g[0] == 0 || g[1] == 0 || g[2] == 0) return;  // an empty grid launches nothing
  check_cuda_grid(g);
  const runtime::Kernel& k = *target_.cuda;
  runtime::ArgPacker packer(k.param_sizes_known() ? &k.param_sizes() : nullptr, k.interned_name());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const PlanParam& p = params_[i];
    if (p.kind == ArgKind::constant || p.kind == ArgKind::fixed) continue;
    if (is_array_kind(p.kind)) {
      pack_array(packer, read[i]);
    } else {
      std::uint64_t bits = 0;
      store_scalar(p, read[i].value, &bits);
      packer.add_bytes(&bits, static_cast<std::size_t>(itemsize(p.dtype)), 0, name(p.dtype));
    }
  }
  for (const auto& [slot, rows, cols] : target_.maps) {
    const std::size_t i = static_cast<std::size_t>(slot);
    const cupric_tile_array& v = read[i].view;
    const std::vector<std::int64_t> shape(v.shape, v.shape + read[i].ndim),
        strides(v.strides, v.strides + read[i].ndim);
    const std::array<std::uint64_t, 16> map =
        tile_tensor_map_bytes(reinterpret_cast<std::uint64_t>(v.data), shape, strides, rows, cols);
    packer.add_bytes(map.data(), sizeof(map), 64, "TensorMap");
  }
  const LaunchShape shape = launch_shape(g, target_.sms, target_.split_bytes, target_.cluster);
  std::optional<Array> scratch[2];  // split K's partial accumulators and counters
  if (target_.sms > 0) {            // persistent: the grid as arguments
    for (int d = 0; d < 3; ++d) packer.add_bytes(&g[d], sizeof(long long), 0, "int64");
    if (target_.split_bytes > 0) {
      packer.add_bytes(&shape.plan.whole, sizeof(long long), 0, "int64");
      packer.add_bytes(&shape.plan.splits, sizeof(long long), 0, "int64");
      if (shape.counters > 0) {
        auto [partials, counters] = split_arrays(shape.partial_bytes, shape.counters, target_.device);
        scratch[0] = std::move(partials);
        scratch[1] = std::move(counters);
      }
      packer.add_pointer(scratch[0] ? reinterpret_cast<std::uintptr_t>(scratch[0]->data()) : 0, "split K's partials");
      packer.add_pointer(scratch[1] ? reinterpret_cast<std::uintptr_t>(scratch[1]->data()) : 0, "split K's counters");
    }
  }
  runtime::Stream s = stream.is_none() ? runtime::Stream::current(target_.device) : stream_from_py(stream);
  runtime::StreamState& state = *s.state();
  for (std::size_t i = 0; i < params_.size(); ++i) {  // after the work that produces the arrays
    if (is_array_kind(params_[i].kind)) order_before_use(read[i].array.device_argument(), state);
  }
  for (const auto& a : scratch)
    if (a) order_before_use(DeviceArgument{a->storage().get()}, state);
  runtime::LaunchConfig config;
  config.grid = {static_cast<unsigned>(shape.blocks[0]), static_cast<unsigned>(shape.blocks[1]),
                 static_cast<unsigned>(shape.blocks[2])};
  config.block = {target_.threads, 1, 1};
  config.shared_memory = target_.smem;
  if (shape.cluster) config.cluster = {2, 1, 1};
  runtime::launch(state.handle, &state, config, k, packer);
  for (std::size_t i = 0; i < params_.size(); ++i)  // (which arrays a CUDA kernel writes is not known here)
    if (is_array_kind(params_[i].kind)) note_written(read[i].array.device_argument(), state);
  for (const auto& a : scratch)  // (freed after the kernel: their memory is ordered after its stream's work)
    if (a) note_written(DeviceArgument{a->storage().get()}, state);
}

/// The globals and closure variables a kernel's body read when it was specialised (python/
/// cupric/tile/_globals.py): its plans apply only while each name still holds the object it held
/// then, and only plans of the current generation (a changed value compiles a new kernel).
class GlobalGuards {
 public:
  /// guards: (globals dict, name, value) or (cell, None, value) each; new_generation: the values
  /// changed, so the plans made so far launch stale kernels.
  void set(nb::list guards, bool new_generation) {
    std::vector<Guard> next;
    for (nb::handle g : guards) {
      nb::tuple t = nb::cast<nb::tuple>(g);
      next.push_back({nb::borrow(t[0]), nb::borrow(t[1]), nb::borrow(t[2])});
    }
    guards_ = std::move(next);
    if (new_generation) ++generation_;
  }
  bool hold() const {
    for (const Guard& g : guards_) {
      PyObject* now = g.key.is_none() ? PyCell_GET(g.container.ptr())
                                      : PyDict_GetItemWithError(g.container.ptr(), g.key.ptr());  // borrowed
      if (now != g.value.ptr()) {
        PyErr_Clear();
        return false;
      }
    }
    return true;
  }
  std::uint64_t generation() const { return generation_; }

 private:
  struct Guard {
    nb::object container, key, value;  // holding the value keeps its identity unique
  };
  std::vector<Guard> guards_;
  std::uint64_t generation_ = 0;
};

/// The plans of one kernel (or autotuned kernel), most recently added first: launch() tries
/// them in turn and returns the tag of the one that launched, None when none fits (or when the
/// kernel's globals no longer hold what its plans were made for).
class LaunchPlans {
 public:
  explicit LaunchPlans(std::shared_ptr<GlobalGuards> guards = nullptr) : guards_(std::move(guards)) {}
  nb::object launch(TileGridLike grid, StreamLike stream, LaunchArgs args) {
    PyObject* tuple = args.ptr();
    if (plans_.empty() || !PyTuple_Check(tuple) || interpreting()) return nb::none();
    if (guards_) {
      if (guards_->generation() != generation_) {  // made for values the kernel no longer has
        plans_.clear();
        generation_ = guards_->generation();
        return nb::none();
      }
      if (!guards_->hold()) return nb::none();
    }
    const auto n = static_cast<std::size_t>(PyTuple_GET_SIZE(tuple));
    // (matching may run Python code, which may change plans_: each plan is held while it is used)
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      std::shared_ptr<LaunchPlan> plan = plans_[i];
      if (plan->size() != n) continue;
      ReadArgs read(plan->params());
      if (!plan->match(tuple, read.data())) continue;
      if (i > 0 && i < plans_.size() && plans_[i] == plan) std::swap(plans_[i], plans_[i - 1]);  // in use: forward
      plan->launch(grid, stream, read.data());
      return plan->tag();
    }
    return nb::none();
  }
  void add(std::shared_ptr<LaunchPlan> p) {
    if (guards_ && guards_->generation() != generation_) {
      plans_.clear();
      generation_ = guards_->generation();
    }
    if (plans_.size() >= kMaxPlans) plans_.pop_back();
    plans_.insert(plans_.begin(), std::move(p));
  }
  void clear() { plans_.clear(); }
  std::size_t size() const { return plans_.size(); }

 private:
  static constexpr std::size_t kMaxPlans = 64;
  std::vector<std::shared_ptr<LaunchPlan>> plans_;
  std::shared_ptr<GlobalGuards> guards_;
  std::uint64_t generation_ = 0;  // of guards_ when plans_ were made
};

/// A plan for `values` (one per kernel parameter) when every argument is of a kind plans
/// handle, else None. `facts[i]`: None for a ct.Constant the caller passes, "fixed" for one the
/// plan supplies (@ct.autotune's), else (kind, dtype, ndim, written, keyed) with kind "array",
/// "weak" or "typed", dtype the array's or the scalar's stored type, and keyed: a launch must
/// also have the same shape (arrays) or value (scalars) to fit.
nb::object make_plan(nb::tuple values, nb::list facts, nb::dict constants, PlanTarget target, nb::callable grid3,
                     nb::object tag) {
  if (values.size() != facts.size()) throw ValueError("make_launch_plan: one parameter fact per value");
  Target t;
  if (nb::isinstance<HostLauncher>(target)) {
    t.host = nb::cast<const HostLauncher&>(target).kernel();
  } else {
    auto [kernel, device, threads, smem, maps, sms, split_bytes, cluster] = nb::cast<
        std::tuple<nb::handle, int, unsigned, unsigned, std::vector<std::array<int, 3>>, long long, long long, int>>(
        target);
    if (!nb::isinstance<runtime::Kernel>(kernel)) return nb::none();  // a stand-in runtime (tests)
    t.cuda = std::make_unique<runtime::Kernel>(nb::cast<const runtime::Kernel&>(kernel));
    t.device = device;
    t.threads = threads;
    t.smem = smem;
    t.maps = std::move(maps);
    t.sms = sms;
    t.split_bytes = split_bytes;
    t.cluster = cluster;
  }
  std::vector<PlanParam> plan;
  nb::list args;  // the values a launch passes
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::optional<PlanParam> p = classify(values[i], facts[i], t.device);
    if (!p) return nb::none();
    if (p->kind != ArgKind::fixed) args.append(values[i]);
    plan.push_back(std::move(*p));
  }
  for (auto& map : t.maps) {  // the maps name run-time parameters (neither constants nor fixed): to plan slots
    int seen = 0;
    std::size_t i = 0;
    for (; i < plan.size(); ++i)
      if (plan[i].kind != ArgKind::constant && plan[i].kind != ArgKind::fixed && seen++ == map[0]) break;
    if (i == plan.size()) return nb::none();
    map[0] = static_cast<int>(i);
  }
  auto out = std::make_shared<LaunchPlan>(std::move(plan), std::move(t), std::move(constants), std::move(grid3),
                                          std::move(tag));
  ReadArgs read(values.size());
  if (!out->match(nb::tuple(args).ptr(), read.data())) return nb::none();  // would not take them back
  return nb::cast(out);
}

/// The CPU kernel compiled under `key`; KeyError when the compile cache does not have it (evicted,
/// or rejected as corrupt: the caller compiles it again).
std::shared_ptr<tile::HostKernel> cached_host_kernel(const std::string& key) {
  auto k = tile::HostKernel::load(key);
  if (!k) throw nb::key_error(cat("cupric.tile: the compiled kernel ", key, " is not in the compile cache").c_str());
  return k;
}

}  // namespace

void bind_jit_call(nb::module_& t);  // bind_jit_call.cpp: @cu.jit's prepared calls

void bind_tile_launch(nb::module_& t) {
  nb::class_<HostLauncher>(t, "HostLauncher", "A loaded CPU kernel (by its compile cache key): launch(grid, *args).")
      .def("__init__", [](HostLauncher* self, const std::string& key,
                          const Function& f) { new (self) HostLauncher(cached_host_kernel(key), f); })
      .def("__init__",
           [](HostLauncher* self, const std::string& key,
              const std::vector<std::tuple<bool, std::string, int, bool>>& params) {
             new (self) HostLauncher(cached_host_kernel(key), params);
           })
      .def("params", &HostLauncher::params)
      .def("launch", &HostLauncher::launch);
  nb::class_<LaunchPlan>(t, "LaunchPlan", "How one specialisation was called: launch(grid, stream, args) -> bool.")
      .def(
          "launch",
          [](const LaunchPlan& p, TileGridLike grid, StreamLike stream, nb::tuple args) {
            if (args.size() != p.size()) return false;
            ReadArgs read(p.params());
            if (!p.match(args.ptr(), read.data())) return false;
            p.launch(grid, stream, read.data());
            return true;
          },
          nb::arg("grid"), nb::arg("stream").none(), nb::arg("args"));
  nb::class_<GlobalGuards>(t, "GlobalGuards", "The globals a kernel read: set(guards, new_generation), hold().")
      .def(nb::init<>())
      .def("set", &GlobalGuards::set, nb::arg("guards"), nb::arg("new_generation"))
      .def("hold", &GlobalGuards::hold)
      .def_prop_ro("generation", &GlobalGuards::generation);
  nb::class_<LaunchPlans>(t, "LaunchPlans", "A kernel's launch plans: launch(grid, stream, args) -> bool.")
      .def(nb::init<>())
      .def(nb::init<std::shared_ptr<GlobalGuards>>(), nb::arg("guards"))
      .def("launch", &LaunchPlans::launch, nb::arg("grid"), nb::arg("stream").none(), nb::arg("args"),
           "Launches through the first plan the arguments fit and returns its tag; None (nothing done) "
           "when none does.")
      .def("add", &LaunchPlans::add)
      .def("clear", &LaunchPlans::clear)
      .def("__len__", &LaunchPlans::size);
  t.def(
      "grid3",
      [](Dims3Like grid) {
        long long g[3];
        grid_from_py(grid, g);
        return nb::make_tuple(g[0], g[1], g[2]);
      },
      nb::arg("grid"), "A launch grid as 3 extents (the checks every launch makes: integers, >= 0, < 2**63 blocks).");
  t.attr("STATUS_BYTES") = sizeof(cupric_tile_status);
  t.def(
      "raise_status",
      [](nb::bytes raw) {
        cupric_tile_status status{};
        if (raw.size() != sizeof(status))
          throw ValueError(cat("a tile status word is ", sizeof(status), " bytes, got ", raw.size()));
        std::memcpy(&status, raw.c_str(), sizeof(status));
        raise_failure(status);
      },
      nb::arg("raw"),
      "Raises the failure a debug launch recorded in its status word (the bytes of a cupric_tile_status, as "
      "the GPU left them): IndexError or AssertionError with the CPU launch's message; nothing when none.");
  bind_jit_call(t);
  t.def(
      "launch_shape",
      [](std::array<long long, 3> grid, long long sms, long long split_bytes, int cluster) {
        const LaunchShape l = launch_shape(grid.data(), sms, split_bytes, cluster);
        return nb::make_tuple(nb::make_tuple(l.blocks[0], l.blocks[1], l.blocks[2]), l.plan.whole, l.plan.splits,
                              l.partial_bytes, l.counters, l.cluster);
      },
      nb::arg("grid"), nb::arg("sms"), nb::arg("split_bytes"), nb::arg("cluster"),
      "How one launch of a CUDA tile kernel runs: (blocks, whole, splits, partial_bytes, counters, cluster) — "
      "a persistent kernel's (sms > 0) blocks, split K's plan and scratch (0 counters: none), clusters of 2.");
  t.def(
      "split_arrays",
      [](long long partial_bytes, long long counters, int device) {
        auto [p, c] = split_arrays(partial_bytes, counters, device);
        return nb::make_tuple(nb::cast(std::move(p)), nb::cast(std::move(c)));
      },
      nb::arg("partial_bytes"), nb::arg("counters"), nb::arg("device"),
      "Split K's scratch for one launch: (partial accumulators, zeroed counters), from the stream-ordered pool.");
  t.def("make_launch_plan", &make_plan, nb::arg("values"), nb::arg("facts"), nb::arg("constants"), nb::arg("target"),
        nb::arg("grid3"), nb::arg("tag") = nb::borrow(Py_True));
}

}  // namespace cupric::py
