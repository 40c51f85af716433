// kernel_analysis.cpp — a kernel's resources from its cubin: the ELF's section headers, symbol
// table and `.nv.info*` attribute records (the format cuobjdump -elf prints), read without a GPU.
#include "cupric/runtime/kernel_analysis.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "cupric/errors.hpp"

namespace cupric::runtime {

namespace {

// EIATTR codes of the `.nv.info` records cupric reads (the values ptxas writes; cuobjdump -elf
// prints their names)
enum : std::uint8_t {
  kMaxThreads = 0x05,
  kRequiredThreads = 0x10,
  kFrameSize = 0x11,
  kParamBankSize = 0x19,
  kMaxRegisterCount = 0x1b,
  kMaxStackSize = 0x23,
  kRegisterCount = 0x2f,
};
constexpr std::uint8_t kSizedValue = 0x04;  // EIFMT_SVAL: a u16 length, then that many bytes

/// Bounds-checked little-endian reads of the image.
struct Image {
  std::string_view bytes;
  template <class T>
  T read(std::uint64_t at) const {
    if (at > bytes.size() || sizeof(T) > bytes.size() - at)
      throw ValueError(cat("cubin: a table at byte ", at, " runs past the image's end (", bytes.size(), " bytes)"));
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    return v;
  }
  std::string string_at(std::uint64_t at) const {
    if (at >= bytes.size()) throw ValueError(cat("cubin: a name at byte ", at, " is outside the image"));
    const std::size_t end = bytes.find('\0', at);
    if (end == std::string_view::npos) throw ValueError("cubin: a name runs past the image's end");
    return std::string(bytes.substr(at, end - at));
  }
};

struct Section {
  std::string name;
  std::uint32_t type = 0, link = 0, info = 0;
  std::uint64_t offset = 0, size = 0;
};

struct Symbol {
  std::string name;
  std::uint8_t info = 0;  ///< binding << 4 | type
  std::uint16_t section = 0;
  std::uint64_t value = 0;
  /// a kernel: a global function (device functions the compiler kept are local)
  bool is_entry() const { return (info & 0xf) == 2 && (info >> 4) == 1; }
};

std::vector<Section> read_sections(const Image& im) {
  const auto shoff = im.read<std::uint64_t>(0x28);
  const auto entsize = im.read<std::uint16_t>(0x3a);
  const auto count = im.read<std::uint16_t>(0x3c);
  const auto names = im.read<std::uint16_t>(0x3e);
  if (entsize < 64 || names >= count) throw ValueError(cat("cubin: bad section table (", count, " entries)"));
  std::vector<Section> out(count);
  std::vector<std::uint32_t> name_at(count);
  for (std::uint16_t i = 0; i < count; ++i) {
    const std::uint64_t at = shoff + std::uint64_t{i} * entsize;
    name_at[i] = im.read<std::uint32_t>(at);
    out[i].type = im.read<std::uint32_t>(at + 4);
    out[i].offset = im.read<std::uint64_t>(at + 24);
    out[i].size = im.read<std::uint64_t>(at + 32);
    out[i].link = im.read<std::uint32_t>(at + 40);
    out[i].info = im.read<std::uint32_t>(at + 44);
  }
  for (std::uint16_t i = 0; i < count; ++i) out[i].name = im.string_at(out[names].offset + name_at[i]);
  return out;
}

std::vector<Symbol> read_symbols(const Image& im, const std::vector<Section>& sections) {
  constexpr std::uint32_t kSymtab = 2;
  std::vector<Symbol> out;
  for (const Section& s : sections) {
    if (s.type != kSymtab) continue;
    if (s.link >= sections.size()) throw ValueError("cubin: the symbol table names no string table");
    const std::uint64_t strings = sections[s.link].offset;
    for (std::uint64_t at = s.offset; at + 24 <= s.offset + s.size; at += 24)
      out.push_back({im.string_at(strings + im.read<std::uint32_t>(at)), im.read<std::uint8_t>(at + 4),
                     im.read<std::uint16_t>(at + 6), im.read<std::uint64_t>(at + 8)});
  }
  return out;
}

std::uint32_t u32_at(const Image& im, std::uint64_t at) { return im.read<std::uint32_t>(at); }

/// Applies one `.nv.info` record to the kernel it is about: the global section's records start
/// with the kernel's symbol index, a `.nv.info.<kernel>` section's are all about its kernel.
void apply_record(const Image& im, std::uint8_t attribute, std::uint16_t value, std::uint64_t payload,
                  std::uint16_t length, KernelResources& k, bool global) {
  const std::uint64_t v = payload + (global ? 4 : 0);  // past the symbol index
  auto triple = [&](std::array<int, 3>& dims) {
    if (length >= 12)
      for (int d = 0; d < 3; ++d) dims[static_cast<std::size_t>(d)] = static_cast<int>(u32_at(im, payload + 4u * d));
  };
  switch (attribute) {
    case kRegisterCount:
      if (length >= 8) k.registers = static_cast<int>(u32_at(im, v));
      break;
    case kFrameSize:
      if (length >= 8) k.frame_bytes = u32_at(im, v);
      break;
    case kMaxStackSize:
      if (length >= 8) k.max_stack_bytes = u32_at(im, v);
      break;
    case kMaxRegisterCount: k.max_registers = value; break;
    case kParamBankSize: k.param_bytes = value; break;
    case kMaxThreads: triple(k.max_threads); break;
    case kRequiredThreads: triple(k.required_threads); break;
    default: break;
  }
}

void read_info(const Image& im, const Section& s, const std::vector<Symbol>& symbols,
               std::map<std::string, KernelResources>& kernels, KernelResources* only) {
  for (std::uint64_t at = s.offset; at + 4 <= s.offset + s.size;) {
    const auto format = im.read<std::uint8_t>(at);
    const auto attribute = im.read<std::uint8_t>(at + 1);
    const auto value = im.read<std::uint16_t>(at + 2);
    const std::uint64_t payload = at + 4;
    const std::uint16_t length = format == kSizedValue ? value : 0;
    at = payload + length;
    KernelResources* k = only;
    if (!k && length >= 4) {  // the global section: the record names its kernel by symbol index
      const std::uint32_t index = u32_at(im, payload);
      if (index >= symbols.size()) continue;
      auto found = kernels.find(symbols[index].name);
      if (found == kernels.end()) continue;
      k = &found->second;
    }
    if (k) apply_record(im, attribute, value, payload, length, *k, only == nullptr);
  }
}

/// Static shared memory of `.nv.shared.<kernel>`. Where the cubin has a `.nv.shared.reserved.*`
/// section (sm_90 and later), each kernel's section begins with the block's reserved kilobyte,
/// which the occupancy rules count separately (ptxas' "bytes smem" leaves it out too).
std::int64_t static_shared(const std::vector<Section>& sections, std::size_t i) {
  constexpr std::int64_t kReservedInSection = 1024;
  bool reserved = false;
  for (const Section& s : sections) reserved = reserved || s.name.rfind(".nv.shared.reserved.", 0) == 0;
  const auto size = static_cast<std::int64_t>(sections[i].size);
  return reserved ? std::max<std::int64_t>(0, size - kReservedInSection) : size;
}

}  // namespace

std::vector<KernelResources> read_cubin(std::string_view image) {
  if (image.size() < 64 ||
      image.substr(0, 4) != std::string_view("\x7f"
                                             "ELF",
                                             4) ||
      image[4] != 2 || image[5] != 1)
    throw ValueError(cat("cubin: not a 64-bit little-endian ELF image (", image.size(), " bytes)"));
  const Image im{image};
  const std::vector<Section> sections = read_sections(im);
  const std::vector<Symbol> symbols = read_symbols(im, sections);
  std::map<std::string, KernelResources> kernels;
  std::vector<std::string> order;
  for (const Section& s : sections)
    if (s.name.rfind(".text.", 0) == 0) {
      KernelResources k;
      k.name = s.name.substr(6);
      k.code_bytes = static_cast<std::int64_t>(s.size);
      order.push_back(k.name);
      kernels.emplace(k.name, std::move(k));
    }
  auto suffix = [](const std::string& name, const char* prefix) {
    return name.rfind(prefix, 0) == 0 ? name.substr(std::strlen(prefix)) : std::string();
  };
  std::vector<std::string> entries;
  for (const Symbol& y : symbols)
    if (y.is_entry()) entries.push_back(y.name);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    if (s.name == ".nv.info") read_info(im, s, symbols, kernels, nullptr);
    if (auto it = kernels.find(suffix(s.name, ".nv.info.")); it != kernels.end())
      read_info(im, s, symbols, kernels, &it->second);
    if (auto it = kernels.find(suffix(s.name, ".nv.shared.")); it != kernels.end())
      it->second.static_shared_bytes = static_shared(sections, i);
    if (auto it = kernels.find(suffix(s.name, ".nv.constant0.")); it != kernels.end())
      it->second.constant_bytes = static_cast<std::int64_t>(s.size);
  }
  std::vector<KernelResources> out;
  for (const std::string& name : order)
    if (std::find(entries.begin(), entries.end(), name) != entries.end()) out.push_back(std::move(kernels.at(name)));
  return out;
}

}  // namespace cupric::runtime
