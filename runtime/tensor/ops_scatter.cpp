// scatter_elements and scatter_nd: the axis is normalised here (negative counts from the end)
// and the reduction becomes Attrs::index, so a graph's attributes stay canonical.
#include "capture/trace.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

int64_t reduction_attr(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kAdd:
      return kScatterAdd;
    case ScatterReduction::kMul:
      return kScatterMul;
    case ScatterReduction::kNone:
      break;
  }
  return kScatterNone;
}

}  // namespace

Tensor scatter_elements(const Tensor& data, int64_t axis, const Tensor& indices,
                        const Tensor& updates, ScatterReduction reduction, Loc loc) {
  Attrs attrs;
  const int64_t rank = data.defined() ? data.dim() : 0;
  attrs.axis = axis < 0 && axis >= -rank ? axis + rank : axis;
  attrs.index = reduction_attr(reduction);
  return apply_op(OpKind::ScatterElements, {data, indices, updates}, std::move(attrs), loc);
}

Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates,
                  ScatterReduction reduction, Loc loc) {
  Attrs attrs;
  attrs.index = reduction_attr(reduction);
  return apply_op(OpKind::ScatterND, {data, indices, updates}, std::move(attrs), loc);
}

}  // namespace kiln
