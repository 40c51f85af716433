// sha256.hpp — SHA-256: the compile cache's keys (source, options, compiler version, arch) and the
// content hash every cache entry is verified against.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cupric::runtime {

class Sha256 {
 public:
  /// `portable`: never the CPU's SHA instructions (tests compare the two).
  explicit Sha256(bool portable = false);
  void update(std::string_view data);
  /// Appends a length-prefixed part, so that ("ab", "c") and ("a", "bc") hash differently.
  void update_part(std::string_view part);
  std::array<std::uint8_t, 32> digest();
  std::string hex_digest();

 private:
  void blocks(const std::uint8_t* p, std::size_t n);  // n whole 64-byte blocks
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;
  bool portable_;
};

std::string sha256_hex(std::string_view data);

}  // namespace cupric::runtime
