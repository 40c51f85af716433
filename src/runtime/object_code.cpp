// object_code.cpp — ObjectCode (compiled code, loaded per device on first use, kernels by name)
// and Linker (nvJitLink).
#include <fstream>
#include <sstream>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/kernel.hpp"
#include "cupric/runtime/program.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

namespace {
struct LoadedModule {
  CUmodule module = nullptr;
  ~LoadedModule() {
    if (module && loaded_driver()) driver().ModuleUnload(module);
  }
};
}  // namespace

struct ObjectCode::State {
  CodeKind kind;
  std::string code, name, log, ptx;
  std::map<std::string, std::string> lowered;
  std::mutex mutex;
  std::map<int, std::shared_ptr<LoadedModule>> modules;

  std::shared_ptr<LoadedModule> load(int device) {
    std::lock_guard lock(mutex);
    auto& m = modules[device];
    if (m) return m;
    if (kind == CodeKind::ltoir)
      throw ValueError("LTO-IR cannot be loaded directly: link it first (cu.cuda.Linker(...).link('cubin'))");
    Device dev(device);
    dev.activate();
    auto loaded = std::make_shared<LoadedModule>();
    std::string image = code;
    if (kind == CodeKind::ptx) image.push_back('\0');  // the driver reads PTX as a C string
    CUresult rc = driver().ModuleLoadData(&loaded->module, image.data());
    if (rc != CUDA_SUCCESS)
      throw_driver_error(rc, "cuModuleLoadData",
                         cat(" (loading ", code_kind_name(kind), " '", name, "' on device ", device, ", ",
                             dev.properties().arch, ")"));
    m = loaded;
    return m;
  }
};

ObjectCode::ObjectCode(CodeKind kind, std::string code, std::string name, std::map<std::string, std::string> lowered,
                       std::string log, std::string ptx)
    : state_(std::make_shared<State>()) {
  state_->kind = kind;
  state_->code = std::move(code);
  state_->name = std::move(name);
  state_->lowered = std::move(lowered);
  state_->log = std::move(log);
  state_->ptx = std::move(ptx);
}

ObjectCode ObjectCode::from_file(const std::string& path, CodeKind kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ValueError(cat("cannot read '", path, "'"));
  std::ostringstream data;
  data << in.rdbuf();
  return ObjectCode(kind, data.str(), path);
}

CodeKind ObjectCode::kind() const { return state_->kind; }
const std::string& ObjectCode::code() const { return state_->code; }
const std::string& ObjectCode::name() const { return state_->name; }
const std::string& ObjectCode::log() const { return state_->log; }
const std::string& ObjectCode::ptx() const { return state_->kind == CodeKind::ptx ? state_->code : state_->ptx; }
const std::map<std::string, std::string>& ObjectCode::lowered_names() const { return state_->lowered; }

CUmodule ObjectCode::module(int device) const {
  if (device < 0) device = Device::current().index();
  return state_->load(device)->module;
}

Kernel ObjectCode::get_kernel(const std::string& name, int device) const {
  if (state_->kind == CodeKind::ltoir)
    throw ValueError("LTO-IR cannot be loaded directly: link it first (cu.cuda.Linker(...).link('cubin'))");
  if (device < 0) device = Device::current().index();
  auto loaded = state_->load(device);
  auto it = state_->lowered.find(name);
  const std::string& symbol = it != state_->lowered.end() ? it->second : name;
  CUfunction f = nullptr;
  CUresult rc = driver().ModuleGetFunction(&f, loaded->module, symbol.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) {
    std::string known;
    for (const auto& [expr, mangled] : state_->lowered) known += cat(known.empty() ? "" : ", ", expr);
    throw ValueError(cat("kernel '", name, "' not found in '", state_->name,
                         "': declare it extern \"C\" __global__, or compile with name_expressions=['", name,
                         "'] for templates and C++ names",
                         known.empty() ? std::string() : cat(" (name expressions compiled: ", known, ")")));
  }
  check(rc, "cuModuleGetFunction");
  return Kernel(f, device, name, loaded);
}

// --- nvJitLink ------------------------------------------------------------------------------

Linker::Linker(std::string arch, std::vector<std::string> options)
    : arch_(std::move(arch)), options_(std::move(options)) {
  parse_arch(arch_);
}

void Linker::add(const ObjectCode& code) { inputs_.push_back(code); }

namespace {
std::string link_log(const NvJitLinkApi& api, nvJitLinkHandle h, bool error) {
  std::size_t n = 0;
  if ((error ? api.GetErrorLogSize : api.GetInfoLogSize)(h, &n) != NVJITLINK_SUCCESS || n <= 1) return {};
  std::string log(n, '\0');
  (error ? api.GetErrorLog : api.GetInfoLog)(h, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}
}  // namespace

ObjectCode Linker::link(CodeKind target) const {
  if (target != CodeKind::cubin && target != CodeKind::ptx)
    throw ValueError("Linker.link: the target must be 'cubin' or 'ptx'");
  if (inputs_.empty()) throw ValueError("Linker.link: nothing to link (add object code first)");
  const NvJitLinkApi& api = nvjitlink();
  auto [number, suffix] = parse_arch(arch_);
  std::vector<std::string> opts{cat("-arch=sm_", number, suffix)};
  bool lto = false;
  for (const auto& in : inputs_) lto |= in.kind() == CodeKind::ltoir;
  if (lto) opts.push_back("-lto");
  if (target == CodeKind::ptx) {
    if (!lto) throw ValueError("Linker.link('ptx') needs LTO-IR inputs (nvJitLink emits PTX only after LTO)");
    opts.push_back("-ptx");
  }
  opts.insert(opts.end(), options_.begin(), options_.end());
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvJitLinkHandle h = nullptr;
  nvJitLinkResult rc = api.Create(&h, static_cast<unsigned>(argv.size()), argv.data());
  if (rc != NVJITLINK_SUCCESS)
    throw CompileError(cat("nvJitLinkCreate failed (", rc, ")"), rc, "NVJITLINK_ERROR", "nvJitLinkCreate", "");
  struct Guard {
    const NvJitLinkApi& api;
    nvJitLinkHandle& h;
    ~Guard() { api.Destroy(&h); }
  } guard{api, h};
  auto fail = [&](nvJitLinkResult code, const char* op) {
    std::string log = link_log(api, h, true);
    throw CompileError(
        cat("nvJitLink could not link for ", opts[0].substr(6), " (", op, " returned ", code, ")\n", log), code,
        cat("NVJITLINK_ERROR_", code), op, log);
  };
  for (const auto& in : inputs_) {
    nvJitLinkInputType type = in.kind() == CodeKind::ptx     ? NVJITLINK_INPUT_PTX
                              : in.kind() == CodeKind::cubin ? NVJITLINK_INPUT_CUBIN
                              : in.kind() == CodeKind::ltoir ? NVJITLINK_INPUT_LTOIR
                                                             : NVJITLINK_INPUT_FATBIN;
    std::string data = in.code();
    if (in.kind() == CodeKind::ptx) data.push_back('\0');
    if ((rc = api.AddData(h, type, data.data(), data.size(), in.name().c_str())) != NVJITLINK_SUCCESS)
      fail(rc, "nvJitLinkAddData");
  }
  if ((rc = api.Complete(h)) != NVJITLINK_SUCCESS) fail(rc, "nvJitLinkComplete");
  std::size_t n = 0;
  std::string code;
  if (target == CodeKind::cubin) {
    if ((rc = api.GetLinkedCubinSize(h, &n)) != NVJITLINK_SUCCESS) fail(rc, "nvJitLinkGetLinkedCubinSize");
    code.resize(n);
    if ((rc = api.GetLinkedCubin(h, code.data())) != NVJITLINK_SUCCESS) fail(rc, "nvJitLinkGetLinkedCubin");
  } else {
    if ((rc = api.GetLinkedPtxSize(h, &n)) != NVJITLINK_SUCCESS) fail(rc, "nvJitLinkGetLinkedPtxSize");
    code.resize(n);
    if ((rc = api.GetLinkedPtx(h, code.data())) != NVJITLINK_SUCCESS) fail(rc, "nvJitLinkGetLinkedPtx");
    while (!code.empty() && code.back() == '\0') code.pop_back();
  }
  return ObjectCode(target, std::move(code), "linked", {}, link_log(api, h, false));
}

}  // namespace cupric::runtime
