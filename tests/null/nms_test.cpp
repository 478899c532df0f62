// kiln::non_max_suppression on CPU tensors (the interpreter: topk_indices, nms_select, nonzero)
// against ONNX's NonMaxSuppression examples worked by hand: suppression by IoU, center boxes,
// flipped corners, identical boxes, the per-class limit, the score threshold, several batches
// and classes, NaN scores, ties by position, and the errors for bad shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using test::expect_error;

// ONNX's six boxes: 0 and 1 and 2 overlap (IoU 0.82 and 0.82), 3 and 4 overlap, 5 stands alone.
const std::vector<float> kBoxes = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

std::vector<int64_t> nms(const std::vector<float>& boxes, const Shape& bs,
                         const std::vector<float>& scores, const Shape& ss, NmsOptions o) {
  Tensor r =
      non_max_suppression(Tensor::from_vector(boxes, bs), Tensor::from_vector(scores, ss), o);
  EXPECT_EQ(r.dim(), 2);
  EXPECT_EQ(r.sizes()[1].value(), 3);
  return r.to_vector<int64_t>();
}

TEST(Nms, SuppressesByIou) {
  const NmsOptions o{.max_per_class = 3, .iou_threshold = 0.5, .score_threshold = 0.0};
  EXPECT_EQ(nms(kBoxes, {1, 6, 4}, kScores, {1, 1, 6}, o),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // No score threshold: the same; a limit of 2 keeps the two best.
  EXPECT_EQ(nms(kBoxes, {1, 6, 4}, kScores, {1, 1, 6}, {.max_per_class = 3, .iou_threshold = 0.5}),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  EXPECT_EQ(nms(kBoxes, {1, 6, 4}, kScores, {1, 1, 6}, {.max_per_class = 2, .iou_threshold = 0.5}),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // A limit of 0 keeps nothing; a score threshold of 0.4 drops box 5 (0.3).
  EXPECT_TRUE(nms(kBoxes, {1, 6, 4}, kScores, {1, 1, 6}, {.iou_threshold = 0.5}).empty());
  EXPECT_EQ(nms(kBoxes, {1, 6, 4}, kScores, {1, 1, 6},
                {.max_per_class = 3, .iou_threshold = 0.5, .score_threshold = 0.4}),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // IoU threshold 0.9: 0.82 does not suppress, so all six, by descending score.
  EXPECT_EQ(nms(kBoxes, {1, 6, 4}, kScores, {1, 1, 6}, {.max_per_class = 6, .iou_threshold = 0.9}),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5}));
}

TEST(Nms, CenterAndFlippedBoxes) {
  // The same boxes as [x center, y center, width, height].
  const std::vector<float> center = {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                                     0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1};
  EXPECT_EQ(nms(center, {1, 6, 4}, kScores, {1, 1, 6},
                {.max_per_class = 3, .iou_threshold = 0.5, .center_boxes = true}),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  std::vector<float> flipped = kBoxes;
  for (size_t b = 0; b < 6; b += 2) {  // swap the corners of boxes 0, 2 and 4
    std::swap(flipped[b * 4], flipped[b * 4 + 2]);
    std::swap(flipped[b * 4 + 1], flipped[b * 4 + 3]);
  }
  EXPECT_EQ(nms(flipped, {1, 6, 4}, kScores, {1, 1, 6}, {.max_per_class = 3, .iou_threshold = 0.5}),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(Nms, IdenticalBoxesTiesAndNan) {
  std::vector<float> same;
  for (int i = 0; i < 10; ++i) same.insert(same.end(), {0, 0, 1, 1});
  const std::vector<float> ties(10, 0.9f);
  // Equal scores: by position, so box 0 is kept and suppresses the rest.
  EXPECT_EQ(nms(same, {1, 10, 4}, ties, {1, 1, 10}, {.max_per_class = 3, .iou_threshold = 0.5}),
            (std::vector<int64_t>{0, 0, 0}));
  // A NaN score is never kept, even as the "largest".
  std::vector<float> s = kScores;
  s[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(nms(kBoxes, {1, 6, 4}, s, {1, 1, 6}, {.max_per_class = 6, .iou_threshold = 0.5}),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 4, 0, 0, 5}));
}

TEST(Nms, BatchesAndClasses) {
  std::vector<float> boxes = kBoxes;
  boxes.insert(boxes.end(), kBoxes.begin(), kBoxes.end());
  std::vector<float> scores;
  for (int k = 0; k < 4; ++k) scores.insert(scores.end(), kScores.begin(), kScores.end());
  // Batch 1 class 1: box 5 scores best.
  scores[3 * 6 + 5] = 0.99f;
  EXPECT_EQ(nms(boxes, {2, 6, 4}, scores, {2, 2, 6}, {.max_per_class = 2, .iou_threshold = 0.5}),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0,  //
                                  1, 0, 3, 1, 0, 0, 1, 1, 5, 1, 1, 3}));
}

TEST(Nms, BadInputs) {
  Tensor b = zeros({1, 6, 4}), s = zeros({1, 1, 6});
  expect_error([&] { non_max_suppression(zeros({1, 6, 3}), s, {}); }, {"boxes"});
  expect_error([&] { non_max_suppression(b, zeros({1, 1, 5}), {}); }, {"box counts"});
  expect_error([&] { non_max_suppression(b, zeros({1, 6}), {}); }, {"[B, C, N]"});
  expect_error([&] { non_max_suppression(cast(b, DType::kI32), s, {}); }, {"floating"});
}

}  // namespace
}  // namespace kiln
