// cupric/profiler.hpp — what the profiler and the debug modes see of cupric: one relaxed flag
// checked on every op's dispatch path (OpScope), and the events recorded while a profile runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "cupric/array.hpp"

namespace cupric::profiler {

/// What is on, as bits of one word: an op with all of them off costs one relaxed load.
enum Mode : std::uint32_t { kRecord = 1, kSync = 2, kCheckFinite = 4, kNvtx = 8 };
extern std::atomic<std::uint32_t> g_modes;
inline std::uint32_t modes() { return g_modes.load(std::memory_order_relaxed); }
inline bool recording() { return (modes() & kRecord) != 0; }
void set_mode(Mode mode, bool on);

enum class EventKind : std::uint8_t { op, kernel, compile, transfer, alloc, range, library, tile_launch };
/// How an op's bytes and flops are counted: the op's own model, from its operands.
/// elementwise: inputs + output bytes, one flop per output element; reduction and scan: input +
/// output bytes, one flop per input element; matmul: 2*m*n*k flops; sort, copy: bytes only.
enum class OpModel : std::uint8_t { elementwise, reduction, scan, matmul, sort, copy, other };

struct OperandInfo {
  Shape shape;
  DType dtype = DType::float64;
  bool weak = false;  ///< a Python scalar (NEP 50): not read from memory
};

/// One recorded event. Times are host nanoseconds of the steady clock (now_ns); a kernel's
/// device times are filled when CUPTI or CUDA events measured them (-1 otherwise).
struct Event {
  EventKind kind = EventKind::op;
  OpModel model = OpModel::other;
  std::string name;
  std::string detail;        ///< compile: "hit memory|hit disk|miss"; transfer: "HtoD|DtoH|DtoD"; op: "raised"
  std::int32_t depth = 0;    ///< ops inside ops (composites) are deeper
  std::int32_t device = -1;  ///< -1 the CPU, else the CUDA ordinal
  std::uint64_t stream = 0;  ///< the stream's serial (0 on the CPU)
  std::uint64_t thread = 0;
  std::int64_t t0_ns = 0, t1_ns = 0;
  std::int64_t gpu_t0_ns = -1, gpu_t1_ns = -1;
  double bytes = 0, flops = 0;
  std::int64_t value = 0;  ///< alloc: bytes held by the pool after it; compile: bytes of code
  SmallVector<OperandInfo, 4> inputs;
  SmallVector<OperandInfo, 1> outputs;
};

std::int64_t now_ns();
/// A small number naming the calling thread in events (1, 2, ... in order of first use).
std::uint64_t thread_number();
/// Appends an event when recording (thread-safe); drops it otherwise.
void record(Event&& event);
/// Records an event of `kind` from t0 to t1 at nesting `depth` (Python's ranges and tile launches
/// come this way; a tile launch brings its bytes and flops from its IR).
void record_between(EventKind kind, std::string name, std::int64_t t0_ns, std::int64_t t1_ns, std::string detail,
                    double bytes, int device, std::uint64_t stream, std::int64_t value, int depth, double flops = 0);
/// Records an event of `kind` from t0 to now (transfers, compiles, allocations, library calls).
void record_span(EventKind kind, std::string name, std::int64_t t0_ns, std::string detail = {}, double bytes = 0,
                 int device = -1, std::uint64_t stream = 0, std::int64_t value = 0);
/// Moves the recorded events out (the buffer is empty afterwards), after the flush hooks added
/// theirs (device times are known only once the device has run: runtime/device_timer.cpp).
std::vector<Event> take_events();
using FlushHook = void (*)(std::vector<Event>& out);
void add_flush_hook(FlushHook hook);

/// Where the user's code called the current op ("file.py:12"); the bindings install Python's.
using LocationProvider = std::string (*)();
void set_location_provider(LocationProvider provider);
std::string caller_location();

/// NVTX markers: nvtx_load dlopens libnvToolsExt (the path the Python side found: the
/// nvidia-nvtx wheel or a toolkit) and says whether its range entry points were there.
bool nvtx_load(const std::string& path);
void nvtx_push(const char* name);
void nvtx_pop();

/// Placed at the entry of an op: with every mode off it is one relaxed load and a branch. When
/// recording, it times the op and keeps its operands' shapes and dtypes; result() gives it the
/// output, and there the debug modes run (sync: wait for the op's kernels; check_finite: raise
/// FloatingPointError naming the op, its inputs' shapes and the Python line).
class OpScope {
 public:
  OpScope(OpModel model, const char* name, std::span<const Array* const> inputs) {
    if (modes() != 0) [[unlikely]]
      begin(model, name, inputs);
  }
  OpScope(OpModel model, const char* name, std::initializer_list<const Array*> inputs)
      : OpScope(model, name, std::span<const Array* const>(inputs.begin(), inputs.size())) {}
  ~OpScope() {
    if (state_) [[unlikely]]
      end();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  /// The op's output: recorded, then synchronised or checked as the modes say. (It takes a
  /// reference and returns nothing so that the op's own `return out;` keeps its copy elision.)
  void output(const Array& out) {
    if (state_) [[unlikely]]
      finish(out);
  }

 private:
  struct State;
  void begin(OpModel model, const char* name, std::span<const Array* const> inputs);
  void finish(const Array& out);
  void end() noexcept;
  State* state_ = nullptr;
};

}  // namespace cupric::profiler
