// cupric/ufunc.hpp — elementwise functions as data (the ufunc table) and how they are called.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cupric/array.hpp"

namespace cupric {

enum class OutRule : std::uint8_t { same, boolean, real };
/// int_to_float64: integer inputs resolve to the float64 loop (true_divide). no_bool: bool inputs
/// are refused instead of upcast (NumPy's positive, sign, gcd, lcm). half_native: float16/bfloat16
/// loops compute in the 16-bit type itself (the expression handles it: nextafter).
enum class UfuncFlags : std::uint8_t { none = 0, int_to_float64 = 1, no_bool = 2, half_native = 4 };
inline bool has_flag(UfuncFlags flags, UfuncFlags f) { return (static_cast<int>(flags) & static_cast<int>(f)) != 0; }

inline constexpr int kMaxUfuncArgs = 4;  ///< inputs + outputs of one loop

/// One typed loop of a ufunc: the dtypes it takes and gives, and the dtypes its kernel
/// computes in (float16/bfloat16 loops compute in float32).
struct UfuncLoop {
  std::array<DType, kMaxUfuncArgs> types{};    ///< nin inputs, then the output
  std::array<DType, kMaxUfuncArgs> compute{};  ///< what the kernel reads and writes
};

/// A row of the ufunc table.
struct Ufunc {
  int id = 0;  ///< index in all_ufuncs()
  std::string name;
  int nin = 1;
  OutRule out_rule = OutRule::same;
  UfuncFlags flags = UfuncFlags::none;
  std::string types;       ///< type codes as in ufunc_table.def
  std::string expression;  ///< scalar C++ expression in a, b, c
  std::string doc;         ///< one line: what it computes (the table's doc column)
  std::vector<UfuncLoop> loops;

  /// NumPy-style loop names, e.g. "ff->f", for messages and introspection.
  std::vector<std::string> type_signatures() const;
};

const std::vector<Ufunc>& all_ufuncs();
/// True for the six comparisons (equal, not_equal, less, less_equal, greater, greater_equal).
bool is_comparison(const Ufunc& uf);
/// Looks a ufunc up by name or alias ("abs" -> absolute); throws ValueError when unknown.
const Ufunc& find_ufunc(std::string_view name);
/// Aliases in the namespace: {"abs", "absolute"}, {"acos", "arccos"}, ...
const std::vector<std::pair<std::string, std::string>>& ufunc_aliases();

char dtype_code(DType t);  ///< '?', 'b', ..., 'E' for bfloat16
DType dtype_from_code(char c);

/// Options of a ufunc call, as NumPy's keywords.
struct UfuncOptions {
  Array out;                   ///< write here (must have the broadcast shape)
  Array where;                 ///< bool mask: elements where it is false are left as they are
  std::optional<DType> dtype;  ///< compute and return in this dtype
  Casting casting = Casting::same_kind;
};

/// Picks the loop for these inputs (NEP 50 for weak scalars). Throws TypeError naming the
/// ufunc and the input dtypes when no loop accepts them.
const UfuncLoop& resolve_loop(const Ufunc& uf, const std::vector<Array>& inputs,
                              std::optional<DType> dtype = std::nullopt);
const UfuncLoop& resolve_loop(const Ufunc& uf, std::span<const Array* const> inputs,
                              std::optional<DType> dtype = std::nullopt);
/// The same resolution from dtypes alone (weak entries are Python scalars), for compilers
/// that type-check before any array exists (the tile language).
const UfuncLoop& resolve_loop(const Ufunc& uf, const std::vector<TypeOperand>& inputs);

/// Applies a ufunc: broadcasting, type resolution, casting checks, output allocation,
/// then the backend's elementwise kernel. Inputs must be on one device.
Array apply_ufunc(const Ufunc& uf, const std::vector<Array>& inputs, const UfuncOptions& options = {});
/// The same over borrowed inputs (the bindings' path: nothing is copied or allocated but the result).
Array apply_ufunc(const Ufunc& uf, std::span<const Array* const> inputs, const UfuncOptions& options = {});
Array apply_ufunc(std::string_view name, const std::vector<Array>& inputs, const UfuncOptions& options = {});

}  // namespace cupric
