// catalogue.cpp — the list of kernel sources of the CUDA backend (catalogue.hpp): every family
// for every dtype, as the NVRTC tests compile them and cache warming renders them.
#include "cupric/cuda/kernel_catalogue.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"
#include "cupric/reduction_table.hpp"
#include "render.hpp"

namespace cupric::cuda_backend {

std::vector<std::string> batched_sources(bool common_only, std::size_t per_batch) {
  // The family headers hold templates only, so they can open the batch once; the rest of each
  // source (types, expressions, entry points) goes into a namespace of its own, with C++ linkage,
  // so that many sources fit one NVRTC call.
  std::vector<std::string> batches;
  std::set<std::string> includes;
  std::string current;
  std::size_t count = 0;
  auto flush = [&] {
    std::string head;
    for (const std::string& line : includes) head += line + "\n";
    batches.push_back(head + current);
    includes.clear();
    current.clear();
  };
  for (auto& [label, source] : all_sources(common_only)) {
    std::string body;
    for (std::size_t pos = 0; pos < source.size();) {
      std::size_t end = source.find('\n', pos);
      if (end == std::string::npos) end = source.size();
      const std::string line = source.substr(pos, end - pos);
      if (line.rfind("#include ", 0) == 0) includes.insert(line);
      else body += line + "\n";
      pos = end + 1;
    }
    for (std::size_t pos; (pos = body.find("extern \"C\" ")) != std::string::npos;) body.erase(pos, 11);
    current += cat("namespace k", count, " {  // ", label, "\n", body, "}\n");
    if (++count % per_batch == 0) flush();
  }
  if (!current.empty()) flush();
  return batches;
}

std::vector<std::pair<std::string, std::string>> all_sources(bool common_only) {
  std::vector<std::pair<std::string, std::string>> out;
  static const DType all[] = {
      DType::bool_,   DType::int8,      DType::uint8,      DType::int16,         DType::uint16,     DType::int32,
      DType::uint32,  DType::int64,     DType::uint64,     DType::float16,       DType::bfloat16,   DType::float32,
      DType::float64, DType::complex64, DType::complex128, DType::float8_e4m3fn, DType::float8_e5m2};
  static const DType common[] = {DType::bool_, DType::int32, DType::int64, DType::float32, DType::float64};
  const auto& types = common_only ? std::vector<DType>(std::begin(common), std::end(common))
                                  : std::vector<DType>(std::begin(all), std::end(all));
  auto has = [&](DType t) { return std::find(types.begin(), types.end(), t) != types.end(); };
  // warming (common_only) renders the paths launches take most (contiguous; one element for
  // array pairs), each alone as a launch compiles it; the tests take every path in one source
  auto add_map = [&](const std::string& label, MapSpec s, const char* paths) {
    if (!common_only) {
      out.emplace_back(label, render_map(s));
      return;
    }
    for (const char* p = paths; *p; ++p) {
      s.path = *p;
      out.emplace_back(cat(label, " ", *p), render_map(s));
    }
  };
  for (const Ufunc& uf : all_ufuncs())
    for (const UfuncLoop& loop : uf.loops) {
      if (!has(loop.types[0])) continue;
      MapSpec s = ufunc_map_spec(uf, loop, loop.types.data(), false);
      if (uf.nin > 1) s.in_mode[1] = InputMode::value;
      add_map(cat(uf.name, " ", short_name(loop.types[0])), s, "v");
      if (!common_only) {  // the other operand modes and a mask
        s.in_mode.assign(uf.nin, InputMode::array);
        s.in_mode[0] = InputMode::broadcast;
        if (uf.nin > 2) s.in_mode[2] = InputMode::value;
        s.where = true;
        out.emplace_back(cat(uf.name, " ", short_name(loop.types[0]), " where"), render_map(s));
        s.where = false;
      }
      if (common_only && uf.nin == 2) {  // what `x + y` and `2 * x` launch (cache warming)
        s.in_mode = {InputMode::array, InputMode::array};
        add_map(cat(uf.name, " ", short_name(loop.types[0]), " arrays"), s, "vo");  // "o": tiny arrays
        s.in_mode = {InputMode::value, InputMode::array};
        add_map(cat(uf.name, " ", short_name(loop.types[0]), " scalar first"), s, "v");
      }
    }
  for (DType from : types)
    for (DType to : types) {
      MapSpec s;
      s.name = cat("cast_", short_name(from), "_", short_name(to));
      s.expression = "a";
      s.in_store = {from};
      s.in_compute = {to};
      s.in_mode = {InputMode::array};
      s.out_store = s.out_compute = to;
      s.transpose = true;
      add_map(s.name, s, "vt");
    }
  for (DType t : types) {
    out.emplace_back(cat("arange ", short_name(t)), render_arange(t));
    const DTypeKind kind = cupric::kind(t);
    if (t == DType::float32 || t == DType::float64 || kind == DTypeKind::signed_int || kind == DTypeKind::unsigned_int)
      out.emplace_back(cat("random ", short_name(t)), render_random(t));
    for (const ReductionRow& row : kReductionRows) {
      const ReduceOp op = row.op;
      const DType o = row.acc == AccRule::boolean ? DType::bool_ : t;
      out.emplace_back(cat("reduce ", reduce_name(op), " ", short_name(t)), render_reduce(op, t, o, false));
      out.emplace_back(cat("reduce pass 2 ", reduce_name(op), " ", short_name(t)),
                       render_reduce(op, reduce_acc(op, o), o, true));
    }
    for (ArgReduceOp op : {ArgReduceOp::argmin, ArgReduceOp::argmax})
      out.emplace_back(cat(op == ArgReduceOp::argmax ? "argmax " : "argmin ", short_name(t)), render_arg_reduce(op, t));
    for (const ScanRow& scan : kScanRows)
      out.emplace_back(cat(scan.name, " ", short_name(t)), render_scan(scan.op, t, t));
    out.emplace_back(cat("sort ", short_name(t)), render_sort(t));
  }
  for (int isz : {1, 2, 4, 8, 16}) out.emplace_back(cat("gather ", isz), render_gather(isz));
  return out;
}

namespace {
WeakKind weak_kind(DType t) {
  return is_bool(t)      ? WeakKind::boolean
         : is_integer(t) ? WeakKind::integer
         : is_complex(t) ? WeakKind::complex
                         : WeakKind::floating;
}

std::vector<std::pair<std::string, std::string>> ufunc_sources(const Ufunc& uf, const OpSignature& op) {
  if (op.inputs.size() != static_cast<std::size_t>(uf.nin) || op.weak.size() != op.inputs.size())
    throw ValueError(cat(uf.name, " takes ", uf.nin, " inputs, the signature has ", op.inputs.size()));
  std::vector<TypeOperand> types;
  for (std::size_t k = 0; k < op.inputs.size(); ++k)
    types.push_back({op.inputs[k], op.weak[k] ? weak_kind(op.inputs[k]) : WeakKind::none});
  const UfuncLoop& loop = resolve_loop(uf, types);
  std::vector<DType> stored(op.inputs);
  stored.push_back(op.outputs.empty() ? loop.types[uf.nin] : op.outputs[0]);
  for (int k = 0; k < uf.nin; ++k)  // a Python scalar is converted on the host, stored as computed
    if (op.weak[k]) stored[k] = loop.compute[k];
  MapSpec s = ufunc_map_spec(uf, loop, stored.data(), false);
  for (int k = 0; k < uf.nin; ++k)
    if (op.weak[k]) s.in_mode[k] = InputMode::value;
  s.path = op.contiguous ? 'v' : 'n';
  return {{cat(uf.name, " ", op.contiguous ? "contiguous" : "strided"), render_map(s)}};
}
}  // namespace

std::vector<std::pair<std::string, std::string>> op_sources(const OpSignature& op) {
  auto input = [&](std::size_t k) {
    if (op.inputs.size() <= k) throw ValueError(cat(op.name, ": the signature has no input ", k));
    return op.inputs[k];
  };
  auto output = [&](DType fallback) { return op.outputs.empty() ? fallback : op.outputs[0]; };
  for (const ReductionRow& row : kReductionRows)
    if (op.name == row.name) {
      const DType in = input(0), out = output(in);
      return {{cat(row.name, " ", short_name(in)), render_reduce(row.op, in, out, false)},
              {cat(row.name, " partials ", short_name(in)), render_reduce(row.op, reduce_acc(row.op, out), out, true)}};
    }
  for (const ScanRow& scan : kScanRows)
    if (op.name == scan.name) return {{op.name, render_scan(scan.op, input(0), output(input(0)))}};
  if (op.name == "argmin" || op.name == "argmax")
    return {{op.name, render_arg_reduce(op.name == "argmax" ? ArgReduceOp::argmax : ArgReduceOp::argmin, input(0))}};
  if (op.name == "sort" || op.name == "argsort") return {{op.name, render_sort(input(0))}};
  for (const Ufunc& uf : all_ufuncs())
    if (uf.name == op.name) return ufunc_sources(uf, op);
  return {};
}

}  // namespace cupric::cuda_backend
