// kiln::non_max_suppression (topk_indices, the nms_select kernel op, nonzero) on Vulkan
// against the interpreter, on fresh random boxes into poisoned memory, eagerly and compiled
// (every graph on the device): crowded boxes that overlap often, several batches and classes,
// rows longer than a workgroup (several ranks per invocation), per-class limits of 0, 1, some
// and all, IoU thresholds 0 (any overlap suppresses), 0.5 and 1 (nothing does), a score
// threshold, center boxes, flipped corners, scores with many ties (by position), NaN scores,
// infinite corners, more rows than a dispatch has workgroups, a data-dependent box count, and
// no boxes at all. The selection is exact: both compute the same f32 operations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Tol;

class DeviceNms : public test::DeviceOpTest {
 protected:
  /// [B, N, 4] boxes in a 20 x 20 field, 1 to 6 on a side (many overlaps); corners in either
  /// order unless `center`.
  Tensor boxes(int64_t b, int64_t n, bool center) {
    std::uniform_real_distribution<float> at(0, 20), side(1, 6);
    std::bernoulli_distribution flip(0.3);
    std::vector<float> v;
    for (int64_t i = 0; i < b * n; ++i) {
      const float y = at(rng_), x = at(rng_), h = side(rng_), w = side(rng_);
      if (center)
        v.insert(v.end(), {x, y, w, h});
      else if (flip(rng_))
        v.insert(v.end(), {y + h, x + w, y, x});
      else
        v.insert(v.end(), {y, x, y + h, x + w});
    }
    return Tensor::from_vector(v, {b, n, 4});
  }
  /// [B, C, N] scores: uniform in [0, 1), or small integers (ties), with some NaN.
  Tensor scores(int64_t b, int64_t c, int64_t n, bool ties, bool nans) {
    std::uniform_real_distribution<float> u(0, 1);
    std::uniform_int_distribution<int> small(0, 4);
    std::bernoulli_distribution nan(0.05);
    std::vector<float> v;
    for (int64_t i = 0; i < b * c * n; ++i) {
      float s = ties ? static_cast<float>(small(rng_)) / 4 : u(rng_);
      if (nans && nan(rng_)) s = std::numeric_limits<float>::quiet_NaN();
      v.push_back(s);
    }
    return Tensor::from_vector(v, {b, c, n});
  }

  void check_nms(const std::string& label, const Tensor& bx, const Tensor& sc,
                 const NmsOptions& o) {
    auto fn = [o](const Tensor& a, const Tensor& s) { return non_max_suppression(a, s, o); };
    CheckOptions opt;
    opt.compiled = false;  // below, with every graph checked
    check_with(label, Tol::exact(), opt, fn, bx, sc);
    Tensor want = fn(bx, sc);
    test::poison_device_memory(1 << 20);
    auto compiled = compile(fn, {.name = "nms"});
    Tensor got = compiled(bx.to(Device::vulkan()), sc.to(Device::vulkan()));
    test::expect_close(got, want, Tol::exact(), label + " [compiled]");
    for (const EntryInfo& e : compiled.entries())
      EXPECT_TRUE(e.on_device) << label << " [compiled] ran a graph on the interpreter\n"
                               << e.graph;
  }
};

TEST_F(DeviceNms, MatchesTheInterpreter) {
  struct Case {
    int64_t b, c, n, max;
    double iou;
  };
  const std::vector<Case> cases = {{1, 1, 6, 3, 0.5},    {2, 3, 50, 10, 0.5}, {1, 2, 300, 300, 0.3},
                                   {1, 1, 700, 40, 0.5}, {3, 1, 1, 1, 0.5},   {2, 2, 33, 0, 0.5},
                                   {1, 4, 97, 97, 0.0},  {1, 1, 64, 64, 1.0}, {2, 1, 257, 1, 0.7}};
  for (const Case& k : cases) {
    const std::string label = "B " + std::to_string(k.b) + " C " + std::to_string(k.c) + " N " +
                              std::to_string(k.n) + " max " + std::to_string(k.max) + " iou " +
                              std::to_string(k.iou);
    check_nms(label, boxes(k.b, k.n, false), scores(k.b, k.c, k.n, false, false),
              {.max_per_class = k.max, .iou_threshold = k.iou});
  }
}

TEST_F(DeviceNms, ThresholdsCentersTiesAndNan) {
  check_nms("score threshold", boxes(2, 120, false), scores(2, 3, 120, false, false),
            {.max_per_class = 50, .iou_threshold = 0.4, .score_threshold = 0.6});
  check_nms("center boxes", boxes(1, 150, true), scores(1, 2, 150, false, false),
            {.max_per_class = 150, .iou_threshold = 0.5, .center_boxes = true});
  check_nms("tied scores", boxes(2, 90, false), scores(2, 2, 90, true, false),
            {.max_per_class = 90, .iou_threshold = 0.5});
  check_nms("NaN scores", boxes(1, 80, false), scores(1, 3, 80, false, true),
            {.max_per_class = 80, .iou_threshold = 0.5, .score_threshold = 0.1});
  check_nms("NaN scores without a threshold", boxes(1, 80, false), scores(1, 1, 80, false, true),
            {.max_per_class = 80, .iou_threshold = 0.5});
}

// The boxes scoring above 0.3 in class 0 only (a data-dependent N, as in a detector after its
// score filter): one compile serves inputs with different counts, every graph on the device.
TEST_F(DeviceNms, DataDependentBoxCount) {
  auto fn = [](const Tensor& bx, const Tensor& sc) {
    Tensor idx = reshape(nonzero(gt(slice(sc, 1, 0, 1), scalar(0.3))), {-1, 3});
    Tensor at = reshape(slice(idx, 1, 2, 3), {-1});
    return non_max_suppression(index_select(bx, 1, at), index_select(sc, 2, at),
                               {.max_per_class = 20, .iou_threshold = 0.5});
  };
  auto compiled = compile(fn, {.name = "nms_after_filter"});
  for (int k = 0; k < 3; ++k) {
    Tensor bx = boxes(1, 60 + 7 * k, false), sc = scores(1, 2, 60 + 7 * k, false, false);
    Tensor want = fn(bx, sc);
    test::poison_device_memory(1 << 20);
    test::expect_close(compiled(bx.to(Device::vulkan()), sc.to(Device::vulkan())), want,
                       Tol::exact(), "filtered boxes, call " + std::to_string(k));
  }
  for (const EntryInfo& e : compiled.entries())
    EXPECT_TRUE(e.on_device) << "a graph on the interpreter\n" << e.graph;
  EXPECT_EQ(compiled.stats().graph_breaks, 0u);
}

// More (batch, class) rows than a dispatch has workgroups along x (65,535): the kernel's loop
// over rows; and boxes with infinite corners (infinite areas, NaN unions: never suppressing).
// (The 70,000 rows take about 60 s on SwiftShader, whose barriers are slow, against 6 s on
// lavapipe; the row loop is codegen's and the same on every driver, so SwiftShader skips them.)
TEST_F(DeviceNms, ManyRowsAndInfiniteBoxes) {
  if (Device::vulkan().name().find("SwiftShader") == std::string::npos)
    check_nms("70,000 classes", boxes(1, 2, false), scores(1, 70000, 2, false, false),
              {.max_per_class = 2, .iou_threshold = 0.5});
  Tensor bx = boxes(1, 40, false);
  std::vector<float> v = bx.to_vector<float>();
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < v.size(); i += 13) v[i] = (i % 2) ? inf : -inf;
  check_nms("infinite corners", Tensor::from_vector(v, {1, 40, 4}), scores(1, 2, 40, false, false),
            {.max_per_class = 40, .iou_threshold = 0.3});
}

// Two threads at once, each with its own compiled function and inputs, three calls each; the
// shared kernels are compiled by whichever thread reaches them first.
TEST_F(DeviceNms, TwoThreads) {
  auto fn = [](const Tensor& a, const Tensor& s) {
    return non_max_suppression(a, s, {.max_per_class = 30, .iou_threshold = 0.5});
  };
  std::vector<Tensor> bx, sc, want(2), got(2);
  for (int t = 0; t < 2; ++t) {
    bx.push_back(boxes(2, 90 + t, false));
    sc.push_back(scores(2, 3, 90 + t, false, false));
    want[static_cast<size_t>(t)] = fn(bx.back(), sc.back());
  }
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      try {
        auto compiled = compile(fn, {.name = "nms_thread"});
        for (int call = 0; call < 3; ++call)
          got[t] =
              compiled(bx[t].to(Device::vulkan()), sc[t].to(Device::vulkan())).to(Device::cpu());
      } catch (const Error& e) {
        errors[t] = e.what();
      }
    });
  for (std::thread& th : threads) th.join();
  for (size_t t = 0; t < 2; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    if (errors[t].empty())
      test::expect_close(got[t], want[t], Tol::exact(), "thread " + std::to_string(t));
  }
}

TEST_F(DeviceNms, NoBoxes) {
  check_nms("N = 0", boxes(2, 0, false), scores(2, 3, 0, false, false),
            {.max_per_class = 5, .iou_threshold = 0.5});
}

}  // namespace
}  // namespace kiln
