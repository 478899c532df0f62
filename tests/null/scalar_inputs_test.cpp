// Scalars in compiled functions: integers exact end to end (also above 2^53), kiln::Scalar
// parameters and item() results as graph inputs (one compile for every value), and guards
// exactly where a value steers C++ control flow. Built twice: CPU tensors (label null) and
// Vulkan (KILN_TEST_ON_DEVICE).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "null/capture_fixture.h"

namespace kiln {
namespace {

constexpr int64_t kBig = (int64_t{1} << 53) + 1;  // not a double

class ScalarInputs : public test::CaptureTest {
 protected:
  ScalarInputs() : CaptureTest("recompiles,graph_breaks") {}
  static Tensor ints(std::vector<int64_t> v) {
    Shape s{static_cast<Dim>(v.size())};
    return Tensor::from_vector(v, s, dev());
  }
  static std::vector<float> values(uint32_t seed, size_t n = 7) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(n);
    for (float& f : v) f = d(rng);
    return v;
  }
  static Tensor floats(const std::vector<float>& v) {
    return Tensor::from_vector(v, {static_cast<Dim>(v.size())}, dev());
  }
};

TEST_F(ScalarInputs, EagerIntegerConstantsStayExactAndDistinct) {
  Tensor x = ints({0, 1, -1});
  EXPECT_EQ((x + 1234567891).to_vector<int64_t>(),
            (std::vector<int64_t>{1234567891, 1234567892, 1234567890}));
  EXPECT_EQ((x + 1234567892).to_vector<int64_t>(),
            (std::vector<int64_t>{1234567892, 1234567893, 1234567891}));
  EXPECT_EQ((x + kBig).to_vector<int64_t>(), (std::vector<int64_t>{kBig, kBig + 1, kBig - 1}));
  EXPECT_EQ((x * INT64_MIN).to_vector<int64_t>()[1], INT64_MIN);
  EXPECT_EQ(full({2}, kBig, DType::kI64, dev()).to_vector<int64_t>(),
            (std::vector<int64_t>{kBig, kBig}));
  EXPECT_EQ(ints({kBig}).item<int64_t>(), kBig);
  EXPECT_EQ(ints({kBig}).item().to_int(), kBig);
}

TEST_F(ScalarInputs, IntegerArgumentsAboveTwoTo53AreExact) {
  // As a C++ integer parameter (value-guarded) and as a kiln::Scalar (a graph input).
  auto guarded = compile([](const Tensor& x, int64_t k) { return x + k; }, {.name = "add_k"});
  auto input = compile([](const Tensor& x, Scalar k) { return x + k; }, {.name = "add_s"});
  Tensor x = ints({0, 1, 2});
  for (int64_t k : {kBig, kBig + 1, int64_t{1} << 62}) {
    const std::vector<int64_t> want{k, k + 1, k + 2};
    EXPECT_EQ(guarded(x, k).to_vector<int64_t>(), want) << k;
    EXPECT_EQ(input(x, k).to_vector<int64_t>(), want) << k;
  }
  EXPECT_EQ(guarded.stats().compiles, 3u);  // 2^53 + 1 and 2^53 + 2 are different values
  EXPECT_EQ(input.stats().compiles, 1u);
}

TEST_F(ScalarInputs, FloatScalarParameterIsAGraphInput) {
  auto step = compile([](const Tensor& w, Scalar lr) { return w - lr * w; }, {.name = "sgd"});
  const std::vector<float> w0 = values(1);
  for (int i = 1; i <= 12; ++i) {
    const double lr = 0.01 * i;
    std::vector<float> got = step(floats(w0), lr).to_vector<float>();
    for (size_t j = 0; j < w0.size(); ++j)
      EXPECT_FLOAT_EQ(got[j], w0[j] - static_cast<float>(lr) * w0[j]) << i;
  }
  EXPECT_EQ(step.stats().compiles, 1u);
  EXPECT_EQ(step.stats().recompiles, 0u);
  EXPECT_EQ(step.stats().cache_hits, 11u);
  // torch's specialize_float: every value is its own entry.
  auto special = compile([](const Tensor& w, Scalar lr) { return w - lr * w; },
                         {.name = "sgd_special", .specialize_float = true});
  for (double lr : {0.1, 0.2, 0.1}) special(floats(w0), lr);
  EXPECT_EQ(special.stats().compiles, 2u);
  // A C++ double parameter cannot be traced: it is value-guarded.
  auto dbl = compile([](const Tensor& w, double lr) { return w - lr * w; }, {.name = "sgd_dbl"});
  for (double lr : {0.1, 0.2, 0.1}) dbl(floats(w0), lr);
  EXPECT_EQ(dbl.stats().compiles, 2u);
}

TEST_F(ScalarInputs, ScalarSteeringControlFlowIsGuarded) {
  auto f = compile(
      [](const Tensor& x, Scalar s) {
        if (s.to_double() > 0) return x * 2.0;  // C++ control flow: specialises s
        return x * 3.0;
      },
      {.name = "steer"});
  Tensor x = floats({1.f, 2.f});
  EXPECT_EQ(f(x, 0.5).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(f(x, -0.5).to_vector<float>(), (std::vector<float>{3.f, 6.f}));
  EXPECT_EQ(f(x, 0.5).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(f.stats().compiles, 2u);
  EXPECT_EQ(f.stats().cache_hits, 1u);
  EXPECT_NE(f.explain().guards.find("scalar_value(scalar 0) == -0.5"), std::string::npos)
      << f.explain().guards;
}

TEST_F(ScalarInputs, TracedScalarInsideAHostFunctionIsAnError) {
  // A host function runs again on every replay, where a traced value cannot be guarded.
  auto f = compile(
      [](const Tensor& x, Scalar k) {
        HostFunction scale = [k](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{in[0] * k.to_double()};
        };
        return call_host("scale", scale, {x})[0];
      },
      {.name = "host_scalar"});
  EXPECT_THROW(f(floats({1.f}), 2.0), Error);
}

TEST_F(ScalarInputs, NumberKindDecidesTheDtypeNotItsValue) {
  Tensor i = ints({1, 2});
  EXPECT_EQ((i * 2).dtype(), DType::kI64);
  EXPECT_EQ((i * 2.0).dtype(), DType::kF32);  // PyTorch: int tensor * Python float is float
  auto f = compile([](const Tensor& x, Scalar s) { return x * s; }, {.name = "kind"});
  EXPECT_EQ(f(i, 2.0).dtype(), DType::kF32);
  EXPECT_EQ(f(i, 2).dtype(), DType::kI64);
  EXPECT_EQ(f(i, 3).to_vector<int64_t>(), (std::vector<int64_t>{3, 6}));
}

TEST_F(ScalarInputs, ItemFeedingTensorOpsBreaksOnceAndNeverRecompiles) {
  // The seed's bad_fn_1 without the boolean-mask selection: t = mean(x).item(); x where x > t.
  auto fn = [](const Tensor& x) {
    Scalar t = mean(x, {0}).item();
    return where(x > t, x, x * 0.0);
  };
  auto f = compile(fn, {.name = "threshold"});
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const std::vector<float> v = values(seed);
    const Tensor cpu = Tensor::from_vector(v, {static_cast<Dim>(v.size())});
    EXPECT_EQ(f(floats(v)).to_vector<float>(), fn(cpu).to_vector<float>()) << seed;
  }
  EXPECT_EQ(f.stats().compiles, 1u);
  ExplainReport r = f.explain();
  ASSERT_EQ(r.graph_break_count, 1u) << r.to_string();
  EXPECT_NE(r.break_reasons[0].find("item()"), std::string::npos) << r.break_reasons[0];
}

TEST_F(ScalarInputs, ItemSteeringControlFlowIsGuarded) {
  auto f = compile(
      [](const Tensor& x) {
        Scalar t = sum(x, {0}).item();
        if (t.to_double() > 0) return x * 2.0;
        return x * 3.0;
      },
      {.name = "item_steer"});
  EXPECT_EQ(f(floats({1.f, 2.f})).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(f(floats({-1.f, -2.f})).to_vector<float>(), (std::vector<float>{-3.f, -6.f}));
  EXPECT_EQ(f(floats({1.f, 2.f})).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(f.stats().compiles, 2u);
  EXPECT_EQ(f.explain().graph_break_count, 1u);  // the guard adds no second break
}

TEST_F(ScalarInputs, IntegerItemStaysExactThroughTheGraph) {
  auto f = compile(
      [](const Tensor& x) {
        Scalar top = sum(x, {0}).item();  // i64
        return x + top;
      },
      {.name = "int_item"});
  Tensor x = ints({kBig, 0});
  EXPECT_EQ(f(x).to_vector<int64_t>(), (std::vector<int64_t>{2 * kBig, kBig}));
  Tensor y = ints({kBig + 2, 1});
  EXPECT_EQ(f(y).to_vector<int64_t>(), (std::vector<int64_t>{2 * kBig + 5, kBig + 4}));
  EXPECT_EQ(f.stats().compiles, 1u);
}

}  // namespace
}  // namespace kiln
