// random_uniform's shape rule (graph/shape_rule.h): f32 of its input's shape; the stream is a
// 32-bit counter word.
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> random_shape(ShapeRule& r) {
  if (r.attrs().index < 0 || r.attrs().index > 0xFFFFFFFFll)
    return r.error("the stream must be a 32-bit unsigned number");
  return SymMeta{DType::kF32, r.shape(0)};
}

}  // namespace kiln::detail
