// bind_extensions.cpp — calls the binders of areas that add functions to the module and
// methods to ndarray. Each area lives in its own bind_<area>.cpp and is listed here once.
#include "convert.hpp"

namespace cupric::py {

void bind_random(nb::module_& m);
void bind_tile(nb::module_& m);

void bind_extensions(nb::module_& m) {
  bind_random(m);
  bind_tile(m);
}

}  // namespace cupric::py
