// cumsum on the interpreter against hand-computed values: the four exclusive / reverse
// combinations, a middle axis, bools counted as i64, integer wraparound, an empty axis, and
// symbolic sizes through kiln::compile.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

TEST(Scan, CumSumFlags) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  EXPECT_EQ(cumsum(x, 0).to_vector<float>(), (std::vector<float>{1, 3, 6, 10}));
  EXPECT_EQ(cumsum(x, 0, true).to_vector<float>(), (std::vector<float>{0, 1, 3, 6}));
  EXPECT_EQ(cumsum(x, 0, false, true).to_vector<float>(), (std::vector<float>{10, 9, 7, 4}));
  EXPECT_EQ(cumsum(x, -1, true, true).to_vector<float>(), (std::vector<float>{9, 7, 4, 0}));
}

TEST(Scan, CumSumAxesAndDtypes) {
  Tensor x = Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {1, 2, 3});
  EXPECT_EQ(cumsum(x, 1).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(cumsum(x, 1).dtype(), DType::kI32);
  Tensor b = Tensor::from_vector<int32_t>({1, 0, 1}, {3});
  Tensor bs = cumsum(cast(b, DType::kBool), 0);
  EXPECT_EQ(bs.dtype(), DType::kI64);
  EXPECT_EQ(bs.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2}));
  const int32_t big = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(cumsum(Tensor::from_vector<int32_t>({big, 1}, {2}), 0).to_vector<int32_t>(),
            (std::vector<int32_t>{big, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(cumsum(Tensor::from_vector<float>({}, {2, 0}), 1).numel(), 0);
  EXPECT_THROW(cumsum(x, 3), Error);
}

TEST(Scan, CumSumCompiledDynamic) {
  auto f = compile([](const Tensor& t) { return cumsum(t * 2.0, 0, false, true); },
                   {.name = "cumsum_dynamic"});
  for (int64_t n : {3, 5}) {
    std::vector<float> v(static_cast<size_t>(n), 1.0f);
    Tensor x = Tensor::from_vector(v, {n});
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) want.push_back(2.0f * static_cast<float>(n - i));
    EXPECT_EQ(f(x).to_vector<float>(), want);
  }
}

}  // namespace
}  // namespace kiln
