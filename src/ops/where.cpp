// where.cpp — where(cond, x, y) (cupric/manipulation.hpp): the ufunc row `_where`, whose inputs
// this file prepares (cond as bool, x and y promoted together with NEP 50).
#include "cupric/backend.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

Array where(const Array& cond_in, const Array& x, const Array& y) {
  // the device: the first strong operand's (weak Python scalars follow it)
  Device device = Device::cpu();
  for (const Array* a : {&x, &y, &cond_in})
    if (a->weak() == WeakKind::none) {
      device = a->device();
      break;
    }
  Array cond = cond_in;
  if (cond.weak() != WeakKind::none) {
    cond = scalar_array(scalar_of_weak(cond), DType::bool_, device);
  } else if (cond.dtype() != DType::bool_) {
    cond = Array::empty(cond_in.shape(), DType::bool_, cond_in.device());
    if (cond.size()) backend_for(cond.device()).cast(elementwise_plan({&cond_in, &cond}, cond.shape()));
  }
  UfuncOptions options;
  options.dtype = result_type({{x.dtype(), x.weak()}, {y.dtype(), y.weak()}});
  options.casting = Casting::unsafe;  // cond (bool) and x, y (promoted above) convert to the loop's type
  return apply_ufunc("_where", {cond, x, y}, options);
}

}  // namespace cupric
