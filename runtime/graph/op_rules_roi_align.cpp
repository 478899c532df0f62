// RoiAlign's shape rule, written once over symbolic sizes (graph/shape_rule.h): x [N, C, H, W]
// (f32 or f16), rois [R, 4] of a float dtype, integer batch indices [R]. Attrs::dims holds the
// output height and width and the sampling ratio (0: adaptive); the output is [R, C, oh, ow]
// in x's dtype.
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> roi_align_shape(ShapeRule& r) {
  const std::vector<int64_t>& dims = r.attrs().dims;
  if (dims.size() != 3) return r.error("needs the output height, width and sampling ratio");
  constexpr int64_t kMaxBins = int64_t{1} << 20;
  if (dims[0] < 1 || dims[1] < 1 || dims[0] > kMaxBins || dims[1] > kMaxBins)
    return r.error("output height and width must lie in [1, 2^20]");
  if (dims[2] < 0 || dims[2] > kMaxBins) return r.error("sampling_ratio must lie in [0, 2^20]");
  if (r.attrs().index != 0 && r.attrs().index != 1) return r.error("mode must be avg or max");
  if (r.attrs().axis != 0 && r.attrs().axis != 1)
    return r.error("coordinate_transformation_mode must be half_pixel or output_half_pixel");
  if (!std::isfinite(r.attrs().scalar)) return r.error("spatial_scale must be finite");
  if (r.dtype(0) != DType::kF32 && r.dtype(0) != DType::kF16)
    return r.error("x must be f32 or f16");
  if (r.dtype(1) != DType::kF32 && r.dtype(1) != DType::kF16)
    return r.error("rois must be f32 or f16");
  if (r.dtype(2) != DType::kI64 && r.dtype(2) != DType::kI32)
    return r.error("batch_indices must be i64 or i32");
  if (r.rank(0) != 4) return r.error("needs x of rank 4 ([N, C, H, W])");
  if (r.rank(1) != 2) return r.error("needs rois of rank 2 ([R, 4])");
  if (r.rank(2) != 1) return r.error("needs batch_indices of rank 1 ([R])");
  KILN_RETURN_IF_ERROR(r.expect_equal(r.shape(1)[1], SymInt(4), "rois must be [R, 4]"));
  KILN_ASSIGN_OR_RETURN(SymInt rois,
                        r.equal(r.shape(1)[0], r.shape(2)[0], "rois and batch_indices counts"));
  return SymMeta{r.dtype(0), {rois, r.shape(0)[1], SymInt(dims[0]), SymInt(dims[1])}};
}

}  // namespace kiln::detail
