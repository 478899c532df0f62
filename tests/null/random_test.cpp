// random_uniform's generator on the interpreter: Philox 4x32-10 against the known-answer
// vectors of its authors' Random123 (kat_vectors), values in [0, 1) with 24 bits, seeds and
// streams that give different sequences, the same bits on every call.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "eager/philox.h"
#include "kiln/kiln.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

using Words = std::array<uint32_t, 4>;

TEST(Philox, KnownAnswers) {
  EXPECT_EQ(eager::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(eager::philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (Words{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(eager::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                 {0xa4093822u, 0x299f31d0u}),
            (Words{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

Tensor uniform(const Shape& shape, int64_t seed, int64_t stream) {
  Attrs a;
  a.scalar_int = seed;
  a.index = stream;
  return apply_op(OpKind::RandomUniform, {zeros(Sizes(shape), DType::kF32)}, std::move(a),
                  Loc::current());
}

TEST(RandomUniform, RangeSeedsAndStreams) {
  const std::vector<double> a = uniform({7, 300}, 42, 0).to_doubles();
  std::set<double> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), a.size() * 99 / 100);
  double mean = 0;
  for (double v : a) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
    EXPECT_EQ(v * 16777216.0, static_cast<double>(static_cast<int64_t>(v * 16777216.0)));
    mean += v / static_cast<double>(a.size());
  }
  EXPECT_NEAR(mean, 0.5, 0.03);  // 2100 values: the standard error is about 0.006
  EXPECT_EQ(uniform({7, 300}, 42, 0).to_doubles(), a);
  EXPECT_NE(uniform({7, 300}, 43, 0).to_doubles(), a);
  EXPECT_NE(uniform({7, 300}, 42, 1).to_doubles(), a);
  // Element i depends on i only: a prefix of a longer run.
  const std::vector<double> b = uniform({2100 + 5}, 42, 0).to_doubles();
  EXPECT_EQ(std::vector<double>(b.begin(), b.begin() + 2100), a);
  EXPECT_EQ(uniform({0, 3}, 1, 0).numel(), 0);
}

}  // namespace
}  // namespace kiln
