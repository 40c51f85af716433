// bind_compile_cache.cpp — the compile cache every JIT shares (cupric._cupric.compile_cache, also
// cupric.cuda.compile_cache): entries by kind and key, info for `python -m cupric.cache`, and its
// warnings as Python RuntimeWarnings.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdio>
#include <optional>

#include "convert.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/compile_cache.hpp"

namespace cupric::py {
using runtime::artifact_kind_from_name;
using runtime::CompileCache;

namespace {

bool python_is_running() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

/// A cache warning as a RuntimeWarning (raised where warnings are errors), from any thread.
void warn_in_python(const std::string& message) {
  if (!python_is_running()) {
    std::fprintf(stderr, "cupric: warning: %s\n", message.c_str());
    return;
  }
  nb::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_RuntimeWarning, ("cupric: " + message).c_str(), 1) < 0) throw nb::python_error();
}

nb::dict usage_dict(const runtime::CacheUsage& u) {
  nb::dict d;
  d["entries"] = u.entries;
  d["bytes"] = u.bytes;
  return d;
}

nb::dict info_dict(CompileCache& c) {
  runtime::CompileCacheInfo info = c.info();
  nb::dict d, kinds;
  d["directory"] = info.directory;
  d["note"] = info.note;
  d["max_disk_bytes"] = info.max_disk_bytes;
  for (const auto& k : runtime::artifact_kinds()) {
    nb::dict u = usage_dict(info.kinds[static_cast<std::size_t>(k.kind)]);
    u["description"] = k.description;
    kinds[k.name] = u;
  }
  d["kinds"] = kinds;
  d["legacy"] = usage_dict(info.legacy);
  return d;
}

nb::dict stats_dict(const CompileCache& c) {
  runtime::CompileCacheStats s = c.stats();
  nb::dict d;
  d["memory_hits"] = s.memory_hits;
  d["disk_hits"] = s.disk_hits;
  d["misses"] = s.misses;
  d["stores"] = s.stores;
  d["disk_evictions"] = s.disk_evictions;
  d["disk_errors"] = s.disk_errors;
  d["memory_entries"] = s.memory_entries;
  d["memory_bytes"] = s.memory_bytes;
  return d;
}

std::string key_from_parts(nb::args parts) {
  std::string joined;  // length-prefixed, so ("ab", "c") and ("a", "bc") differ
  for (nb::handle p : parts) {
    std::string v = nb::isinstance<nb::bytes>(p) ? std::string(nb::cast<nb::bytes>(p).c_str(), nb::len(p))
                                                 : nb::cast<std::string>(nb::str(p));
    joined += cat(v.size(), ":", v);
  }
  return CompileCache::make_key({joined});
}

}  // namespace

void bind_compile_cache(nb::module_& m) {
  CompileCache::set_warning_handler(warn_in_python);
  using Cache = CompileCache;
  nb::class_<Cache>(m, "CompileCache",
                    "The compile cache shared by every JIT in cupric: (kind, key) -> bytes, in memory and on disk.")
      .def("stats", &stats_dict)
      .def("info", &info_dict, "The folder, why it is not the one asked for, and entries and bytes of each kind.")
      .def_static(
          "kinds",
          [] {
            nb::dict d;
            for (const auto& k : runtime::artifact_kinds()) d[k.name] = k.description;
            return d;
          },
          "Each kind of entry, with what it holds.")
      .def("clear", &Cache::clear, nb::arg("memory") = true, nb::arg("disk") = true)
      .def_prop_rw(
          "directory", &Cache::directory,
          [](Cache& c, std::optional<std::string> d) { c.set_directory(d.value_or("")); },
          "The disk tier's folder, after its checks ('' when the disk tier is off).")
      .def_prop_rw("max_disk_bytes", &Cache::max_disk_bytes, &Cache::set_max_disk_bytes)
      .def("disk_usage", &Cache::disk_usage)
      .def("trim", &Cache::trim_disk, nb::arg("target_bytes"), "Trims the disk tier, least recently used first.")
      .def("reload_environment", &Cache::configure_from_environment,
           "Reads CUPRIC_CACHE_DIR, XDG_CACHE_HOME, HOME, CUPRIC_DISABLE_DISK_CACHE and CUPRIC_CACHE_MAX_BYTES again.")
      .def(
          "get",
          [](Cache& c, const std::string& kind, const std::string& key) -> nb::object {
            auto v = c.get(artifact_kind_from_name(kind), key);
            return v ? nb::object(nb::bytes(v->data(), v->size())) : nb::none();
          },
          nb::arg("kind"), nb::arg("key"), "The verified entry, or None.")
      .def(
          "put",
          [](Cache& c, const std::string& kind, const std::string& key, nb::bytes value) {
            c.put(artifact_kind_from_name(kind), key, std::string_view(value.c_str(), value.size()));
          },
          nb::arg("kind"), nb::arg("key"), nb::arg("value"))
      .def(
          "remove",
          [](Cache& c, const std::string& kind, const std::string& key) {
            c.remove(artifact_kind_from_name(kind), key);
          },
          nb::arg("kind"), nb::arg("key"), "Deletes one entry (its reader found it unusable).")
      .def_static("make_key", &key_from_parts,
                  "A key: SHA-256 (hex) of the parts (str, bytes or anything str() takes).");
  m.attr("compile_cache") = nb::cast(&CompileCache::global(), nb::rv_policy::reference);
}

}  // namespace cupric::py
