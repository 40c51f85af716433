// profiler.cpp — the event buffer the profiler fills, and OpScope's slow path: timing an op,
// keeping its operands, its bytes and flops model, and the debug modes (sync, check_finite).
#include "cupric/profiler.hpp"

#include <chrono>
#include <deque>
#include <iterator>
#include <mutex>

#include "cupric/backend.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/errors.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::profiler {

std::atomic<std::uint32_t> g_modes{0};

namespace {
std::mutex g_mutex;
std::deque<Event> g_events;  // grows without moving what it holds
std::atomic<LocationProvider> g_location{nullptr};
std::atomic<std::uint64_t> g_next_thread{1};
std::vector<FlushHook>& flush_hooks() {
  static auto* hooks = new std::vector<FlushHook>();
  return *hooks;
}

thread_local int t_depth = 0;
thread_local bool t_in_check = false;  // the debug checks' own ops are neither recorded nor checked
thread_local std::uint64_t t_thread = 0;

double operand_bytes(const OperandInfo& o) {
  return o.weak ? 0.0 : static_cast<double>(shape_size(o.shape)) * static_cast<double>(itemsize(o.dtype));
}

/// The op's bytes moved and flops, from its model and operands (see OpModel).
void apply_model(Event& e) {
  double in = 0, out = 0, in_elements = 0, out_elements = 0;
  for (const OperandInfo& o : e.inputs) {
    in += operand_bytes(o);
    if (!o.weak) in_elements += static_cast<double>(shape_size(o.shape));
  }
  for (const OperandInfo& o : e.outputs) {
    out += operand_bytes(o);
    out_elements += static_cast<double>(shape_size(o.shape));
  }
  e.bytes = in + out;
  switch (e.model) {
    case OpModel::elementwise: e.flops = out_elements; break;
    case OpModel::reduction:
    case OpModel::scan: e.flops = in_elements; break;
    case OpModel::matmul: {
      const Shape& a = e.inputs.empty() ? Shape{} : e.inputs[0].shape;
      const double k = a.empty() ? 0.0 : static_cast<double>(a.back());
      e.flops = 2.0 * out_elements * k;
      break;
    }
    default: e.flops = 0; break;
  }
}

std::string operands_str(const SmallVector<OperandInfo, 4>& ops) {
  std::string s;
  for (const OperandInfo& o : ops) {
    if (!s.empty()) s += ", ";
    s += o.weak ? cat("scalar ", name(o.dtype)) : cat(shape_str(o.shape), " ", name(o.dtype));
  }
  return s.empty() ? "none" : s;
}

/// False when `out` holds a NaN or an infinity (read on the host; the check's ops are not recorded).
bool all_finite(const Array& out) {
  if (!(is_floating(out.dtype()) || is_complex(out.dtype())) || out.size() == 0) return true;
  t_in_check = true;
  struct Reset {
    ~Reset() { t_in_check = false; }
  } reset;
  const Array ok = all(apply_ufunc(find_ufunc("isfinite"), {out}));
  bool value = true;
  if (ok.device().is_cpu()) value = *static_cast<const bool*>(ok.data());
  else backend_for(ok.device()).copy_to_host(&value, ok.data(), 1);
  return value;
}
}  // namespace

struct OpScope::State {
  Event event;
  Device device;
  bool nvtx = false;
  int exceptions = 0;  // in flight at the start: more at the end means the op raised
};

void set_mode(Mode mode, bool on) {
  if (on) g_modes.fetch_or(mode, std::memory_order_relaxed);
  else g_modes.fetch_and(~static_cast<std::uint32_t>(mode), std::memory_order_relaxed);
}

std::uint64_t thread_number() {
  if (t_thread == 0) t_thread = g_next_thread.fetch_add(1, std::memory_order_relaxed);
  return t_thread;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void record(Event&& event) {
  if (!recording()) return;
  if (event.thread == 0) event.thread = thread_number();
  std::lock_guard lock(g_mutex);
  g_events.push_back(std::move(event));
}

void record_between(EventKind kind, std::string name, std::int64_t t0_ns, std::int64_t t1_ns, std::string detail,
                    double bytes, int device, std::uint64_t stream, std::int64_t value, int depth, double flops) {
  if (!recording()) return;
  Event e;
  e.kind = kind;
  e.name = std::move(name);
  e.detail = std::move(detail);
  e.t0_ns = t0_ns;
  e.t1_ns = t1_ns;
  e.bytes = bytes;
  e.flops = flops;
  e.device = device;
  e.stream = stream;
  e.value = value;
  e.depth = depth;
  record(std::move(e));
}

void record_span(EventKind kind, std::string name, std::int64_t t0_ns, std::string detail, double bytes, int device,
                 std::uint64_t stream, std::int64_t value) {
  if (!recording()) return;
  record_between(kind, std::move(name), t0_ns, now_ns(), std::move(detail), bytes, device, stream, value, t_depth);
}

void add_flush_hook(FlushHook hook) {
  std::lock_guard lock(g_mutex);
  for (FlushHook h : flush_hooks())
    if (h == hook) return;
  flush_hooks().push_back(hook);
}

std::vector<Event> take_events() {
  std::vector<FlushHook> hooks;
  std::vector<Event> out;
  {
    std::lock_guard lock(g_mutex);
    hooks = flush_hooks();
    out.assign(std::make_move_iterator(g_events.begin()), std::make_move_iterator(g_events.end()));
    g_events.clear();
  }
  for (FlushHook hook : hooks) hook(out);
  return out;
}

void set_location_provider(LocationProvider provider) { g_location.store(provider); }

std::string caller_location() {
  const LocationProvider provider = g_location.load();
  return provider ? provider() : std::string("an unknown line");
}

void OpScope::begin(OpModel model, const char* name, std::span<const Array* const> inputs) {
  if (t_in_check) return;
  state_ = new State;
  Event& e = state_->event;
  e.kind = EventKind::op;
  e.model = model;
  e.name = name;
  e.depth = t_depth++;
  bool have_device = false;
  for (const Array* a : inputs) {
    if (!a || !a->defined()) continue;
    const bool weak = a->weak() != WeakKind::none;
    e.inputs.push_back(OperandInfo{a->shape(), a->dtype(), weak});
    if (!weak && !have_device) {
      state_->device = a->device();
      have_device = true;
    }
  }
  if (!state_->device.is_cpu()) {
    e.device = state_->device.index;
    e.stream = backend_for(state_->device).current_queue();
  }
  state_->exceptions = std::uncaught_exceptions();
  state_->nvtx = (modes() & kNvtx) != 0;
  if (state_->nvtx) nvtx_push(name);
  e.t0_ns = now_ns();
}

void OpScope::finish(const Array& out) {
  Event& e = state_->event;
  if (out.defined()) e.outputs.push_back(OperandInfo{out.shape(), out.dtype(), false});
  if (e.device < 0 && out.defined() && !out.device().is_cpu()) {  // an op without array inputs (random)
    e.device = out.device().index;
    e.stream = backend_for(out.device()).current_queue();
  }
  const std::uint32_t m = modes();
  if ((m & kSync) && out.defined() && !out.device().is_cpu()) {
    try {
      backend_for(out.device()).synchronize();
    } catch (const cuda::CudaError& err) {
      throw cuda::CudaError(cat(err.what(), "\n  raised after op '", e.name, "' with inputs ", operands_str(e.inputs),
                                " (cupric.debug.sync), called from ", caller_location()),
                            err.code, err.name, err.operation, err.sticky);
    }
  }
  if ((m & kCheckFinite) && out.defined() && !all_finite(out))
    throw FloatingPointError(cat("op '", e.name, "' produced NaN or Inf (output ", shape_str(out.shape()), " ",
                                 name(out.dtype()), ") from inputs ", operands_str(e.inputs),
                                 " (cupric.debug.check_finite), called from ", caller_location()));
}

void OpScope::end() noexcept {
  Event& e = state_->event;
  e.t1_ns = now_ns();
  --t_depth;
  if (state_->nvtx) nvtx_pop();
  if (std::uncaught_exceptions() > state_->exceptions) e.detail = "raised";
  try {
    apply_model(e);
    record(std::move(e));
  } catch (...) {  // out of memory while recording: the event is lost, the op is not
  }
  delete state_;
  state_ = nullptr;
}

}  // namespace cupric::profiler
