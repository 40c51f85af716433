// bind_profiler.cpp — cupric._cupric._profiler: the profiler's modes, its recorded events as
// Python tuples (python/cupric/profiler builds tables and traces from them), NVTX, and the
// Python caller's line for the debug modes' messages.
#include <nanobind/stl/string.h>

#include "convert.hpp"
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/runtime/cupti.hpp"

namespace cupric::py {

namespace {
using namespace cupric::profiler;

constexpr const char* kKindNames[] = {"op",    "kernel", "compile", "transfer",
                                      "alloc", "range",  "library", "tile_launch"};
constexpr const char* kModelNames[] = {"elementwise", "reduction", "scan", "matmul", "sort", "copy", "other"};
constexpr std::pair<const char*, Mode> kModes[] = {
    {"record", kRecord}, {"sync", kSync}, {"check_finite", kCheckFinite}, {"nvtx", kNvtx}};

Mode mode_from_name(const std::string& name) {
  for (const auto& [n, m] : kModes)
    if (name == n) return m;
  throw ValueError(cat("unknown profiler mode '", name, "' (record, sync, check_finite or nvtx)"));
}

EventKind kind_from_name(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kKindNames); ++i)
    if (name == kKindNames[i]) return static_cast<EventKind>(i);
  throw ValueError(cat("unknown event kind '", name, "'"));
}

nb::list operands_py(std::span<const OperandInfo> ops) {
  nb::list out;
  for (const OperandInfo& o : ops) {
    nb::list shape;
    for (std::int64_t d : o.shape) shape.append(d);
    out.append(nb::make_tuple(nb::tuple(shape), name(o.dtype), o.weak));
  }
  return out;
}

/// One event as a tuple, in the field order of cupric.profiler._events.FIELDS.
nb::tuple event_py(const Event& e) {
  return nb::make_tuple(
      kKindNames[static_cast<int>(e.kind)], e.name, e.detail, e.depth, e.device, e.stream, e.thread, e.t0_ns, e.t1_ns,
      e.gpu_t0_ns, e.gpu_t1_ns, e.bytes, e.flops, e.value, operands_py(std::span(e.inputs.data(), e.inputs.size())),
      operands_py(std::span(e.outputs.data(), e.outputs.size())), kModelNames[static_cast<int>(e.model)]);
}

nb::object& location_callback() {
  static nb::object* callback = new nb::object();  // never freed: may be called at exit
  return *callback;
}

/// The Python caller of the current op, from the callback python/cupric/debug.py installs.
std::string python_location() {
  if (!PyGILState_Check() || !location_callback().is_valid()) return "an unknown line";
  try {
    return nb::cast<std::string>(location_callback()());
  } catch (const std::exception&) {
    PyErr_Clear();
    return "an unknown line";
  }
}
}  // namespace

void bind_profiler(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("_profiler", "The profiler's recording core (see cupric.profiler).");
  m.def(
      "set_mode", [](const std::string& mode, bool on) { set_mode(mode_from_name(mode), on); }, nb::arg("mode"),
      nb::arg("on"));
  m.def("mode", [](const std::string& mode) { return (modes() & mode_from_name(mode)) != 0; }, nb::arg("mode"));
  m.def("now_ns", &now_ns, "The profiler's clock: steady nanoseconds.");
  m.def("take_events", [] {
    nb::list out;
    for (const Event& e : take_events()) out.append(event_py(e));
    return out;
  });
  m.def(
      "record",
      [](const std::string& kind, std::string name, std::int64_t t0, std::int64_t t1, std::string detail, double bytes,
         int device, std::uint64_t stream, std::int64_t value, int depth, double flops) {
        record_between(kind_from_name(kind), std::move(name), t0, t1, std::move(detail), bytes, device, stream, value,
                       depth, flops);
      },
      nb::arg("kind"), nb::arg("name"), nb::arg("t0"), nb::arg("t1"), nb::arg("detail") = "", nb::arg("bytes") = 0.0,
      nb::arg("device") = -1, nb::arg("stream") = 0, nb::arg("value") = 0, nb::arg("depth") = 0,
      nb::arg("flops") = 0.0);
  m.def("nvtx_load", &nvtx_load, nb::arg("path"));
  m.def(
      "cupti_start",
      [](const std::string& path) {
        std::string problem;
        const bool ok = runtime::cupti::start(path, problem);
        return nb::make_tuple(ok, problem);
      },
      nb::arg("path"), "Starts CUPTI's activity records from the library at `path`: (ok, problem).");
  m.def("cupti_active", &runtime::cupti::active);
  m.def(
      "cupti_counts",
      [] {
        const auto c = runtime::cupti::take_counts();
        return nb::make_tuple(c.records, c.untimed, c.correlations);
      },
      "CUPTI's records since the last call: (kernel and copy records, of them untimed, correlation records).");
  m.def("nvtx_push", [](const std::string& name) { nvtx_push(name.c_str()); }, nb::arg("name"));
  m.def("nvtx_pop", &nvtx_pop);
  m.def(
      "set_location_callback",
      [](nb::typed<nb::callable, std::string()> callback) {
        location_callback() = std::move(callback);
        set_location_provider(&python_location);
      },
      nb::arg("callback"));
}

}  // namespace cupric::py
