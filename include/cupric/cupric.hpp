// cupric/cupric.hpp — the public C++ API in one include: dtypes, arrays, ufuncs, reductions, backends.
#pragma once

#include "cupric/array.hpp"
#include "cupric/backend.hpp"
#include "cupric/dlpack.hpp"
#include "cupric/dtype.hpp"
#include "cupric/elementwise.hpp"
#include "cupric/errors.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"
