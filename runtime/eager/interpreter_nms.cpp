// nms_select: greedy non-maximum suppression per (batch, class) row, visiting the boxes in the
// row's order (descending score, ties by position: topk_indices). A box is skipped when its
// score is NaN or not above the score threshold (when one applies); else it is kept unless a
// box kept before overlaps it by more than the IoU threshold; a row stops at the most boxes per
// class. All in f32 without a division (IoU > t as intersection > t * union) and without fused
// multiply-adds (-ffp-contract=off), the operations codegen/lower_nms.cpp's kernel performs, so
// both keep the same boxes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {
namespace {

/// y1, x1, y2, x2 with y1 <= y2 and x1 <= x2.
using Corners = std::array<float, 4>;

Corners corners(const float* p, bool center) {
  if (center) {
    const float hw = p[2] * 0.5f, hh = p[3] * 0.5f;
    return {p[1] - hh, p[0] - hw, p[1] + hh, p[0] + hw};
  }
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

/// Whether a and b overlap by IoU > t (onnxruntime's rule: no overlap, or an empty box, never
/// suppresses).
bool overlaps(const Corners& a, const Corners& b, float t) {
  const float ih = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  const float iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (!(ih > 0.0f) || !(iw > 0.0f) || !(area_a > 0.0f) || !(area_b > 0.0f)) return false;
  const float inter = ih * iw;
  const float uni = area_a + area_b - inter;
  return inter > t * uni;
}

}  // namespace

Status eval_nms(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor &boxes = *ins[0], &scores = *ins[1], &order = *ins[2];
  const int64_t batches = scores.meta.shape[0], classes = scores.meta.shape[1],
                n = scores.meta.shape[2];
  const int64_t max_out = node.attrs.dims[0];
  const auto iou = static_cast<float>(node.attrs.range[0]);
  const auto threshold = static_cast<float>(node.attrs.range[1]);
  const bool center = node.attrs.index == 1, scored = node.attrs.axis == 1;
  const float* bx = boxes.ptr<float>();
  const float* sc = scores.ptr<float>();
  const int64_t* ord = order.ptr<int64_t>();
  int64_t* y = out.ptr<int64_t>();
  std::vector<Corners> kept;
  for (int64_t row = 0; row < batches * classes; ++row) {
    const int64_t b = row / classes;
    kept.clear();
    int64_t* dst = y + row * n;
    for (int64_t r = 0; r < n && static_cast<int64_t>(kept.size()) < max_out; ++r) {
      const int64_t i = ord[row * n + r];
      if (i < 0 || i >= n)
        return invalid_argument("nms_select: order holds " + std::to_string(i) +
                                ", outside the row's " + std::to_string(n) + " boxes");
      const float s = sc[row * n + i];
      if (std::isnan(s) || (scored && !(s > threshold))) continue;
      const Corners c = corners(bx + (b * n + i) * 4, center);
      if (std::any_of(kept.begin(), kept.end(),
                      [&](const Corners& k) { return overlaps(c, k, iou); }))
        continue;
      dst[kept.size()] = i;
      kept.push_back(c);
    }
    std::fill(dst + kept.size(), dst + n, int64_t{-1});
  }
  return {};
}

}  // namespace kiln::eager
