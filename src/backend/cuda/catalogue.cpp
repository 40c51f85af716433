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
  static const DType all[] = {DType::bool_,    DType::int8,    DType::uint8,   DType::int16,     DType::uint16,
                              DType::int32,    DType::uint32,  DType::int64,   DType::uint64,    DType::float16,
                              DType::bfloat16, DType::float32, DType::float64, DType::complex64, DType::complex128};
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
      MapSpec s;
      s.name = uf.name;
      s.expression = uf.expression;
      for (int k = 0; k < uf.nin; ++k) {
        s.in_store.push_back(loop.types[k]);
        s.in_compute.push_back(loop.compute[k]);
        s.in_mode.push_back(k == 1 ? InputMode::value : InputMode::array);
      }
      s.out_store = loop.types[uf.nin];
      s.out_compute = loop.compute[uf.nin];
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

}  // namespace cupric::cuda_backend
