// cupric/creation.hpp — arrays made from numbers: ranges (arange, linspace, logspace), matrices
// (eye, identity, tri, tril, triu) and coordinate grids (meshgrid). Device work goes through
// the device's Backend (fill, arange) and ufuncs, so every function runs on any device. Those
// made of backend calls are in src/array/creation.cpp; the ufunc compositions in src/ops
// (linspace.cpp, tri.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cupric/array.hpp"

namespace cupric {

/// numpy.arange: [start, stop) by step (stop nullopt: [0, start)). Length ceil((stop - start)
/// / step), exact for integers; dtype int64 for integer arguments, float64 when any is a float.
/// Values follow NumPy: the first two are computed in the result dtype, the rest continue
/// with their difference. ZeroDivisionError for step 0.
Array arange(const Scalar& start, const std::optional<Scalar>& stop = std::nullopt,
             const std::optional<Scalar>& step = std::nullopt, std::optional<DType> dtype = std::nullopt,
             Device device = Device::cpu());

/// numpy.linspace over start/stop (arrays or weak scalars, broadcast together); `axis` says
/// where the samples go in the result. The step (nan when undefined) is stored in *step.
Array linspace(const Array& start, const Array& stop, std::int64_t num = 50, bool endpoint = true,
               std::optional<DType> dtype = std::nullopt, std::int64_t axis = 0, Device device = Device::cpu(),
               Array* step = nullptr);
/// numpy.logspace: base ** linspace(start, stop, ...).
Array logspace(const Array& start, const Array& stop, std::int64_t num = 50, bool endpoint = true,
               const Array& base = Array(), std::optional<DType> dtype = std::nullopt, std::int64_t axis = 0,
               Device device = Device::cpu());

/// An array of zeros (where the backend can, memory the OS zeroes lazily, as NumPy's calloc).
Array zeros(const Shape& shape, DType dtype = DType::float64, Device device = Device::cpu());

/// Ones on the k-th diagonal of an N x M matrix (M nullopt: N), zeros elsewhere.
Array eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, std::int64_t k = 0,
          DType dtype = DType::float64, Device device = Device::cpu());
/// Ones at and below the k-th diagonal of an N x M matrix.
Array tri(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, std::int64_t k = 0,
          DType dtype = DType::float64, Device device = Device::cpu());
/// The lower (tril) or upper (triu) triangle of the last two axes, from the k-th diagonal.
Array tril(const Array& a, std::int64_t k = 0);
Array triu(const Array& a, std::int64_t k = 0);

/// numpy.meshgrid: coordinate arrays from 1-d coordinate vectors (inputs are flattened).
/// indexing "xy" (Cartesian: the first two axes swapped) or "ij" (matrix).
std::vector<Array> meshgrid(const std::vector<Array>& xs, std::string_view indexing = "xy", bool sparse = false,
                            bool copy = true);

}  // namespace cupric
