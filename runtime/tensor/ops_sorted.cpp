// Ops composed over sorted orders: non_max_suppression (the nms_select kernel op's greedy
// selection over each row's boxes by descending score, topk_indices) and unique (runs of equal
// slices in sort_slices' order).
#include <algorithm>
#include <limits>
#include <string>

#include "capture/trace.h"
#include "kiln/tensor.h"
#include "tensor/apply_op.h"

namespace kiln {

Tensor non_max_suppression(const Tensor& boxes_in, const Tensor& scores_in,
                           const NmsOptions& options, Loc loc) {
  if (!boxes_in.defined() || !scores_in.defined())
    throw Error(invalid_argument("non_max_suppression: undefined tensor at " + loc_str(loc)));
  if (!is_floating(boxes_in.dtype()) || !is_floating(scores_in.dtype()))
    throw Error(invalid_argument("non_max_suppression: boxes and scores must be floating point (" +
                                 boxes_in.meta().str() + ", " + scores_in.meta().str() + ") at " +
                                 loc_str(loc)));
  if (scores_in.dim() != 3)
    throw Error(invalid_argument("non_max_suppression: scores must be [B, C, N], not " +
                                 scores_in.meta().str() + " at " + loc_str(loc)));
  Tensor boxes = boxes_in.dtype() == DType::kF32 ? boxes_in : cast(boxes_in, DType::kF32, loc);
  Tensor scores = scores_in.dtype() == DType::kF32 ? scores_in : cast(scores_in, DType::kF32, loc);
  Attrs by_score;
  by_score.dims = {-1};  // every box (N may be a data-dependent size)
  by_score.index = 1;    // largest first, equal scores by position
  Tensor order = apply_op(OpKind::TopKIndices, {scores}, std::move(by_score), loc);
  Attrs a;
  a.dims = {std::clamp<int64_t>(options.max_per_class, 0, std::numeric_limits<int32_t>::max())};
  a.range = {options.iou_threshold, options.score_threshold.value_or(0.0)};
  a.index = options.center_boxes ? 1 : 0;
  a.axis = options.score_threshold.has_value() ? 1 : 0;
  Tensor kept = apply_op(OpKind::NmsSelect, {boxes, scores, order}, std::move(a), loc);
  Tensor selected = ge(kept, scalar(int64_t{0}, DType::kI64, loc), loc);
  Tensor at = nonzero(selected, loc);        // [K, 3]: batch, class, place in the row
  Tensor box = gather_nd(kept, at, 0, loc);  // [K], of the same length symbol
  return concat({slice(at, 1, 0, 2, 1, loc), unsqueeze(box, 1, loc)}, 1, loc);
}

UniqueResult unique(const Tensor& x, std::optional<int64_t> axis, bool sorted, Loc loc) {
  if (!x.defined()) throw Error(invalid_argument("unique: undefined tensor at " + loc_str(loc)));
  Tensor xs = x;
  int64_t a = 0;
  if (axis) {
    Expected<int64_t> n = normalize_axis(*axis, static_cast<int>(x.dim()));
    if (!n.ok())
      throw Error(n.status().with_context("unique of " + x.meta().str() + " at " + loc_str(loc)));
    a = *n;
  } else {
    xs = reshape(x, {-1}, loc);
  }
  const SymSize n = xs.sizes()[static_cast<size_t>(a)];
  const Device dev = x.device();
  Attrs by_slice;
  by_slice.axis = a;
  Tensor order = apply_op(OpKind::SortSlices, {xs}, std::move(by_slice), loc);  // [n]
  if (!size_relation_holds(n, SizeRelation::kGt, SymSize(0), loc)) {            // nothing is unique
    Tensor none = zeros({0}, DType::kI64, dev);
    return {xs, none, none, none};
  }
  // is_first[r]: the slice of rank r differs from the one before it (NaN equal to NaN).
  Tensor sx = index_select(xs, a, order, loc);
  // Rank r against rank r - 1 for r in [1, n), as gathers by one n - 1 long index so that the
  // two lengths are one expression even where n is a data-dependent size.
  Tensor before = arange(n - 1, DType::kI64, dev);
  Tensor earlier = index_select(sx, a, before, loc);
  Tensor later = index_select(sx, a, before + scalar(1, DType::kI64, loc), loc);
  const Tensor no = scalar(false, DType::kBool, loc);
  Tensor both_nan = where(ne(later, later, loc), ne(earlier, earlier, loc), no, loc);
  Tensor differ = where(both_nan, no, ne(later, earlier, loc), loc);
  if (xs.dim() > 1) {
    std::vector<int64_t> others;
    for (int64_t d = 0; d < xs.dim(); ++d)
      if (d != a) others.push_back(d);
    differ = gt(max(cast(differ, DType::kI32, loc), others, false, loc),
                scalar(0, DType::kI32, loc), loc);
  }
  Tensor is_first = concat({full({1}, true, DType::kBool, dev), differ}, 0, loc);  // [n]
  Tensor id = cumsum(cast(is_first, DType::kI64, loc), 0, false, false, loc) -
              scalar(1, DType::kI64, loc);  // the sorted unique id at each rank
  Tensor inverse =
      scatter_elements(zeros({n}, DType::kI64, dev), 0, order, id, ScatterReduction::kNone, loc);
  Tensor counts = scatter_elements(zeros({n}, DType::kI64, dev), 0, id, ones({n}, DType::kI64, dev),
                                   ScatterReduction::kAdd, loc);  // by sorted id, then zeros
  // The one compaction: the ranks where runs start, K of them. Every K-long output is a gather
  // by a K-long index, so all share K's size symbol (and one graph ends here, not several).
  Tensor first_ranks = masked_select(arange(n, DType::kI64, dev), is_first, loc);
  UniqueResult r;
  if (sorted) {
    r.indices = index_select(order, 0, first_ranks, loc);  // a stable sort: each run's first
    r.counts = index_select(counts, 0, index_select(id, 0, first_ranks, loc), loc);
    r.inverse = inverse;
  } else {
    // Order the runs by where they first occur: the run starts' positions sorted, the other
    // ranks after them (key INT64_MAX), so the first K entries of `by_place` are the run starts.
    const Tensor never = scalar(std::numeric_limits<int64_t>::max(), DType::kI64, loc);
    Tensor first_at = where(is_first, order, never, loc);  // [n]
    Attrs by_position;
    by_position.axis = 0;
    Tensor by_place = apply_op(OpKind::SortSlices, {first_at}, std::move(by_position), loc);
    Tensor starts =
        index_select(by_place, 0, arange(first_ranks.sizes()[0], DType::kI64, dev), loc);  // [K]
    r.indices = index_select(first_at, 0, starts, loc);
    r.counts = index_select(counts, 0, index_select(id, 0, starts, loc), loc);
    // place[rank]: where that rank's run goes; a sorted id's new place is its first rank's.
    Tensor place = scatter_elements(zeros({n}, DType::kI64, dev), 0, by_place,
                                    arange(n, DType::kI64, dev), ScatterReduction::kNone, loc);
    r.inverse = index_select(index_select(place, 0, first_ranks, loc), 0, inverse, loc);
  }
  r.values = index_select(xs, a, r.indices, loc);
  return r;
}

}  // namespace kiln
