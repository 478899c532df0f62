// random_uniform on Vulkan against the interpreter: the same bits for every seed, stream and
// shape (odd sizes, sizes 0 and 1, symbolic sizes), eagerly and compiled; the ops built on it
// (a Bernoulli draw, a dropout mask) too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

using test::Tol;

Tensor uniform(const Tensor& like, int64_t seed, int64_t stream) {
  Attrs a;
  a.scalar_int = seed;
  a.index = stream;
  return apply_op(OpKind::RandomUniform, {like}, std::move(a), Loc::current());
}

class DeviceRandom : public test::DeviceOpTest {};

TEST_F(DeviceRandom, SameBitsAsTheInterpreter) {
  const std::vector<Shape> shapes = {{1}, {0}, {7}, {3, 5}, {2, 0, 4}, {1, 1, 1}, {33, 65}, {4097}};
  const std::vector<std::pair<int64_t, int64_t>> keys = {
      {0, 0}, {1, 0}, {42, 1}, {-1, 7}, {int64_t{0x123456789abcdef}, 0xFFFFFFFFll}};
  for (const Shape& s : shapes)
    for (auto [seed, stream] : keys) {
      Tensor like = rnd(DType::kF32, s);
      check(
          "random_uniform " + shape_str(s) + " seed " + std::to_string(seed) + " stream " +
              std::to_string(stream),
          Tol::exact(), [=](const Tensor& x) { return uniform(x, seed, stream); }, like);
    }
}

TEST_F(DeviceRandom, BernoulliAndDropoutMasks) {
  Tensor p = rnd(DType::kF32, {13, 17}, test::Dist::uniform(0, 1));
  check(
      "bernoulli", Tol::exact(),
      [](const Tensor& q) { return cast(lt(uniform(q, 5, 0), q), DType::kF32); }, p);
  Tensor x = rnd(DType::kF16, {9, 31});
  check(
      "dropout", Tol::exact(),
      [](const Tensor& a) {
        Tensor mask = ge(uniform(a, 9, 0), scalar(0.3, DType::kF32));
        return mul(mul(cast(mask, a.dtype()), a), scalar(1 / 0.7, a.dtype()));
      },
      x);
}

// One compile serves every size; the element index, not the shape, keys the values.
TEST_F(DeviceRandom, SymbolicSizes) {
  auto fn = [](const Tensor& x) { return uniform(x, 77, 3); };
  auto compiled = compile(fn, {.name = "sym_random", .dynamic = Dynamic::kTrue});
  for (Shape s : {Shape{5, 6}, Shape{9, 13}, Shape{3, 2}}) {
    Tensor x = rnd(DType::kF32, s);
    Tensor want = fn(x);
    test::poison_device_memory(1 << 20);
    test::expect_close(compiled(x.to(Device::vulkan())), want, Tol::exact(),
                       "symbolic " + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  ASSERT_EQ(compiled.entries().size(), 1u);
  EXPECT_TRUE(compiled.entries()[0].on_device);
}

}  // namespace
}  // namespace kiln
