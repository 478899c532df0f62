// masked_select and nonzero on Vulkan against the interpreter: the seed's good_fn_1 (`x[x >
// mean(x)]`) compiled with no graph break and its compaction kernel on the device; fresh random
// masks into poisoned memory over sizes 0, 1, odd and many chunks, all-true and all-false masks,
// f32 / i32 / i64 data, broadcast masks, fused producers, symbolic batch sizes served by one
// compile, results used by later ops (the next graph reads the length as a size symbol,
// lengths 0 and 1 included), 2- and 1-byte data, and nonzero's coordinates of every dtype. bad_fn_1
// (`x[x > x.mean().item()]`) still breaks at item(), as in PyTorch.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "seed_functions.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

class DeviceSelect : public test::DeviceOpTest {};

using test::all_axes;
using test::good_fn_1;

bool has_kernel(const EntryInfo& e, const std::string& name) {
  for (const std::string& k : e.kernels)
    if (k.find(name) != std::string::npos) return true;
  return false;
}

TEST_F(DeviceSelect, GoodFn1CompilesWithoutBreaks) {
  auto fn = compile([](const Tensor& x) { return good_fn_1(x); }, {.name = "good_fn_1"});
  // New data of one shape: the same entry serves every length.
  for (int call = 0; call < 4; ++call) {
    Tensor x = rnd(DType::kF32, {37, 53}, Dist::uniform(-1, 1));
    test::poison_device_memory(1 << 20);
    Tensor got = fn(x.to(Device::vulkan()));
    Tensor want = good_fn_1(x);
    ASSERT_EQ(got.meta(), want.meta()) << "call " << call;
    test::expect_close(got, want, Tol{0, 0}, "good_fn_1 call " + std::to_string(call));
  }
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
  EXPECT_EQ(fn.stats().compiles, 1u);
  std::vector<EntryInfo> entries = fn.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].on_device);
  EXPECT_TRUE(entries[0].breaks.empty());
  EXPECT_EQ(entries[0].graph_count, 1);
  EXPECT_TRUE(has_kernel(entries[0], "masked_select")) << entries[0].graph;
}

TEST_F(DeviceSelect, SizesMasksAndDtypes) {
  // Sizes 0 and 1, odd, one chunk (1024 elements a chunk) and many.
  const std::vector<Shape> shapes = {{0},      {1},    {5, 0}, {7},       {97},
                                     {3, 341}, {1024}, {1025}, {9, 1000}, {100003}};
  for (const Shape& shape : shapes) {
    for (double p : {0.0, 0.3, 1.0}) {  // all false, some, all true
      const std::string at = shape_str(shape) + " p=" + std::to_string(p);
      Tensor m = rnd(DType::kF32, shape, Dist::uniform(0, 1)) < p;
      check(
          "f32 " + at, Tol{0, 0},
          [](const Tensor& x, const Tensor& k) { return masked_select(x, k); },
          rnd(DType::kF32, shape, Dist::uniform(-5, 5)), m);
    }
  }
  for (DType dt : {DType::kI32, DType::kI64}) {
    Tensor x = rnd(dt, {13, 77}, Dist::uniform(-100, 100));
    check(
        std::string(dtype_name(dt)), Tol{0, 0},
        [](const Tensor& v) { return masked_select(v, v > 0); }, x);
  }
}

TEST_F(DeviceSelect, LongInputWidensTheWorkgroup) {
  // 9M elements: past 8192 chunks of 256 invocations the kernel takes 512 and more.
  const Shape shape = {9000001};
  check(
      "9M", Tol{0, 0}, [](const Tensor& x) { return masked_select(x, x > 0.25); },
      rnd(DType::kF32, shape, Dist::uniform(-1, 1)));
}

TEST_F(DeviceSelect, BroadcastAndProducers) {
  Tensor x = rnd(DType::kF32, {6, 40}, Dist::uniform(-2, 2));
  // A row mask and a column mask broadcast against x; x broadcast against a bigger mask.
  check(
      "row mask", Tol{0, 0}, [](const Tensor& v, const Tensor& k) { return masked_select(v, k); },
      x, rnd(DType::kF32, {40}, Dist::uniform(0, 1)) < 0.5);
  check(
      "column mask", Tol{0, 0},
      [](const Tensor& v, const Tensor& k) { return masked_select(v, k); }, x,
      rnd(DType::kF32, {6, 1}, Dist::uniform(0, 1)) < 0.5);
  check(
      "x broadcast", Tol{0, 0},
      [](const Tensor& v, const Tensor& k) { return masked_select(v, k); },
      rnd(DType::kF32, {40}, Dist::uniform(-2, 2)),
      rnd(DType::kF32, {3, 6, 40}, Dist::uniform(0, 1)) < 0.5);
  // Elementwise producers of the data and of the mask fold into the kernel's loads.
  check(
      "producers", Tol{1e-6, 1e-6},
      [](const Tensor& v) { return masked_select(exp(v) * 2 - 1, abs(sin(v)) > 0.4); }, x);
}

TEST_F(DeviceSelect, ResultsUsedByLaterOps) {
  // The sum and an elementwise op of the selection: the next graph reads the length as an
  // unbacked size symbol; no break, and new data of the same shape compiles nothing.
  auto fn = compile(
      [](const Tensor& x, const Tensor& t) {
        Tensor s = masked_select(x, x > t);
        return std::vector<Tensor>{s * 2 + 1, sum(s, {0}), mean(s, {0})};
      },
      {.name = "select_used"});
  auto reference = [](const Tensor& x, const Tensor& t) {
    Tensor s = masked_select(x, x > t);
    return std::vector<Tensor>{s * 2 + 1, sum(s, {0}), mean(s, {0})};
  };
  // Thresholds that select many, one and none of the elements.
  for (double t : {0.0, 0.5, 0.999999, 2.0}) {
    Tensor x = rnd(DType::kF32, {50, 31}, Dist::uniform(-1, 1));
    if (t == 0.999999) x = Tensor::full({50, 31}, 0.5, DType::kF32);  // then set one element
    if (t == 0.999999) {
      std::vector<float> v = x.to_vector<float>();
      v[777] = 1.0f;
      x = Tensor::from_vector(v, {50, 31});
    }
    Tensor th = Tensor::full({}, t, DType::kF32);
    std::vector<Tensor> got = fn(x.to(Device::vulkan()), th.to(Device::vulkan()));
    std::vector<Tensor> want = reference(x, th);
    ASSERT_EQ(got.size(), 3u);
    const std::string at = " t=" + std::to_string(t);
    test::expect_close(got[0], want[0], Tol{1e-6, 1e-6}, "s * 2 + 1" + at);
    test::expect_close(got[1], want[1], Tol{1e-5, 1e-4}, "sum" + at);
    test::expect_close(got[2], want[2], Tol{1e-5, 1e-5}, "mean" + at);
  }
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
  EXPECT_EQ(fn.stats().compiles, 1u);
  std::vector<EntryInfo> entries = fn.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].breaks.empty());
  EXPECT_EQ(entries[0].graph_count, 2) << entries[0].graph;
  EXPECT_TRUE(has_kernel(entries[0], "masked_select"));
}

TEST_F(DeviceSelect, SymbolicBatchOneCompile) {
  auto fn = compile([](const Tensor& x) { return good_fn_1(x); },
                    {.name = "good_fn_1_dynamic", .dynamic = Dynamic::kTrue});
  for (int64_t rows : {3, 17, 64}) {
    Tensor x = rnd(DType::kF32, {rows, 33}, Dist::uniform(-1, 1));
    Tensor got = fn(x.to(Device::vulkan()));
    test::expect_close(got, good_fn_1(x), Tol{0, 0}, "rows=" + std::to_string(rows));
  }
  EXPECT_EQ(fn.stats().compiles, 1u);
  EXPECT_EQ(fn.stats().dynamic_compiles, 1u);
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
}

TEST_F(DeviceSelect, HalfAndBoolData) {
  // 2- and 1-byte elements: the count still lands on a 4-byte boundary after the data.
  for (int64_t n : {1, 3, 9 * 11, 2049}) {
    check(
        "f16 n=" + std::to_string(n), Tol{0, 0},
        [](const Tensor& v) { return masked_select(v, v > 0); },
        rnd(DType::kF16, {n}, Dist::uniform(-1, 1)));
    check(
        "bool n=" + std::to_string(n), Tol{0, 0},
        [](const Tensor& v, const Tensor& k) { return masked_select(v, k); },
        rnd(DType::kF32, {n}, Dist::uniform(-1, 1)) > 0,
        rnd(DType::kF32, {n}, Dist::uniform(0, 1)) < 0.5);
  }
}

TEST_F(DeviceSelect, NonZeroCoordinates) {
  // Sparse data of every dtype over ranks 1-3, sizes 0 and 1, odd and several chunks; NaN
  // counts as non-zero.
  const std::vector<Shape> shapes = {{0}, {1}, {7}, {3, 5, 7}, {1000, 3}, {2, 0, 4}, {4099}};
  for (const Shape& shape : shapes) {
    for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool}) {
      Tensor keep = rnd(DType::kF32, shape, Dist::uniform(0, 1)) < 0.3;
      Tensor x = where(keep, cast(rnd(DType::kF32, shape, Dist::uniform(1, 9)), dt),
                       Tensor::full({}, 0.0, dt));
      check(
          std::string(dtype_name(dt)) + " " + shape_str(shape), Tol{0, 0},
          [](const Tensor& v) { return nonzero(v); }, x);
    }
  }
  Tensor nan = Tensor::from_vector(
      std::vector<float>{0, std::numeric_limits<float>::quiet_NaN(), 0, -0.0f, 2}, {5});
  check(
      "nan", Tol{0, 0}, [](const Tensor& v) { return nonzero(v); }, nan);
  // The ONNX layout: nonzero's transpose, read in the next graph.
  check(
      "transposed", Tol{0, 0},
      [](const Tensor& v) {
        return permute(nonzero(v), {1, 0});
      },
      rnd(DType::kF32, {6, 9}, Dist::uniform(0, 1)) > 0.5);
}

TEST_F(DeviceSelect, BadFn1StillBreaks) {
  // bad_fn_1: threshold = x.mean().item() reads a host value: a break, as in PyTorch.
  auto fn = compile(
      [](const Tensor& x) {
        Scalar t = mean(x, all_axes(x)).item();
        return masked_select(x, x > scalar(t));
      },
      {.name = "bad_fn_1"});
  Tensor x = rnd(DType::kF32, {20, 20}, Dist::uniform(-1, 1));
  Tensor got = fn(x.to(Device::vulkan()));
  test::expect_close(got, good_fn_1(x), Tol{0, 0}, "bad_fn_1");
  EXPECT_EQ(fn.stats().graph_breaks, 1u);
}

}  // namespace
}  // namespace kiln
