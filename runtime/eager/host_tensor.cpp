// HostTensor element access. Conversions follow interpreter_ops.h: get decodes to double (f16 via
// half_to_float, bool as 0/1); set encodes from double (f16 rounds double -> float -> half;
// integers truncate toward zero like static_cast, clamped to the type's range with NaN -> 0
// instead of undefined behaviour; bool stores v != 0).
#include "eager/host_tensor.h"

#include <cassert>

#include "eager/interpreter_ops.h"

namespace kiln {

double HostTensor::get(int64_t i) const {
  assert(i >= 0 && i < meta.numel());
  return eager::visit_storage(meta.dtype, [&](auto tag) {
    return eager::load_as<double, typename decltype(tag)::type>(data.data(), i);
  });
}

void HostTensor::set(int64_t i, double v) {
  assert(i >= 0 && i < meta.numel());
  eager::visit_storage(meta.dtype, [&](auto tag) {
    eager::store_as<double, typename decltype(tag)::type>(data.data(), i, v);
  });
}

}  // namespace kiln
