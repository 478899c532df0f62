// The CPU interpreter against hand-computed values: every op, the dtypes each op accepts,
// broadcasting, reductions, movement, casts, a multi-node graph and input validation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "eager/interpreter.h"

namespace kiln {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr DType kF32 = DType::kF32, kF16 = DType::kF16, kI32 = DType::kI32, kI64 = DType::kI64,
                kBool = DType::kBool;

HostTensor tensor(DType dt, Shape shape, const std::vector<double>& values) {
  HostTensor t(TensorMeta{dt, std::move(shape)});
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.meta.numel());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.meta.numel(); ++i)
    t.set(static_cast<int64_t>(i), values[i]);
  return t;
}

// 0, 1, 2, ... in `shape`.
HostTensor iota(DType dt, Shape shape) {
  HostTensor t(TensorMeta{dt, std::move(shape)});
  for (int64_t i = 0; i < t.meta.numel(); ++i) t.set(i, static_cast<double>(i));
  return t;
}

Attrs dims(std::vector<int64_t> d, bool keepdim = false) {
  Attrs a;
  a.dims = std::move(d);
  a.keepdim = keepdim;
  return a;
}
Attrs to(DType dt) {
  Attrs a;
  a.dtype = dt;
  return a;
}

HostTensor run(OpKind op, std::vector<const HostTensor*> ins, const Attrs& attrs = {}) {
  auto r = interpret_op(op, ins, attrs);
  EXPECT_TRUE(r.ok()) << op_name(op) << ": " << r.status().to_string();
  return r.ok() ? std::move(r).value() : HostTensor();
}
HostTensor run(OpKind op, const HostTensor& a, const Attrs& attrs = {}) {
  return run(op, std::vector<const HostTensor*>{&a}, attrs);
}
HostTensor run(OpKind op, const HostTensor& a, const HostTensor& b) {
  return run(op, {&a, &b});
}

// Checks meta and values; NaN matches NaN, infinities match exactly, others within rtol.
void expect_tensor(const HostTensor& t, DType dt, const Shape& shape,
                   const std::vector<double>& want, double rtol = 0) {
  ASSERT_EQ(t.meta.str(), (TensorMeta{dt, shape}.str()));
  ASSERT_EQ(t.data.size(), t.meta.nbytes());
  ASSERT_EQ(t.meta.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = t.get(static_cast<int64_t>(i)), w = want[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want NaN";
    } else if (rtol == 0 || std::isinf(w)) {
      EXPECT_EQ(got, w) << "element " << i;
    } else {
      EXPECT_NEAR(got, w, rtol * std::max(1.0, std::abs(w))) << "element " << i;
    }
  }
}

// The value `v` rounded to f16.
double h(double v) {
  return half_to_float(float_to_half(static_cast<float>(v)));
}

// ---- HostTensor ---------------------------------------------------------------------------------

TEST(HostTensor, GetSetConversions) {
  HostTensor i = tensor(kI32, {4}, {2.9, -2.9, 3e10, -3e10});
  EXPECT_EQ(i.ptr<int32_t>()[0], 2);
  EXPECT_EQ(i.ptr<int32_t>()[1], -2);
  EXPECT_EQ(i.ptr<int32_t>()[2], INT32_MAX);  // clamped
  EXPECT_EQ(i.ptr<int32_t>()[3], INT32_MIN);
  HostTensor b = tensor(kBool, {3}, {0.5, 0, -1});
  EXPECT_EQ(b.ptr<uint8_t>()[0], 1);
  EXPECT_EQ(b.ptr<uint8_t>()[1], 0);
  EXPECT_EQ(b.get(2), 1.0);
  HostTensor f = tensor(kF16, {2}, {0.1, -65504});
  EXPECT_EQ(f.ptr<uint16_t>()[0], 0x2e66);
  EXPECT_EQ(f.get(0), 0.0999755859375);
  EXPECT_EQ(f.get(1), -65504.0);
  HostTensor l = tensor(kI64, {1}, {-7.99});
  EXPECT_EQ(l.ptr<int64_t>()[0], -7);
  HostTensor x = tensor(kF32, {1}, {0.1});
  EXPECT_EQ(x.get(0), static_cast<double>(0.1f));
}

TEST(HostTensor, LargeBuffersAreZeroedHugePageAlignedAndCopyable) {
  // 3 MiB + 4 bytes: past the huge-page threshold and not a multiple of 2 MiB.
  HostTensor big(TensorMeta{DType::kF32, {(3 << 18) + 1}});
  ASSERT_EQ(big.data.size(), (size_t{3} << 20) + 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data.data()) % (uintptr_t{2} << 20), 0u);
  for (size_t i = 0; i < big.data.size(); i += 4093) EXPECT_EQ(big.data[i], std::byte{0});
  big.ptr<float>()[(3 << 18)] = 7.5f;
  HostTensor copy = big;  // a second large buffer
  EXPECT_NE(copy.data.data(), big.data.data());
  EXPECT_EQ(copy.ptr<float>()[(3 << 18)], 7.5f);
  copy.data.resize(16);  // shrinks into the same buffer; the small path frees it later
  copy.data.shrink_to_fit();
  EXPECT_EQ(copy.ptr<float>()[0], 0.0f);
  HostTensor small = tensor(kF32, {3}, {1, 2, 3});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data.data()) % 16, 0u);
  EXPECT_EQ(small.get(2), 3.0);
}

// ---- unary --------------------------------------------------------------------------------------

TEST(Unary, FloatOps) {
  const double e = 2.718281828459045;
  struct Case {
    OpKind op;
    std::vector<double> in, want;
  };
  const std::vector<Case> cases = {
      {OpKind::Neg, {-2, -0.5, 0, 1, 4}, {2, 0.5, 0, -1, -4}},
      {OpKind::Exp, {0, 1, -1, -200}, {1, e, 1 / e, 0}},
      {OpKind::Log, {1, e, 0.5, 0, -1}, {0, 1, -0.6931471805599453, -kInf, kNaN}},
      {OpKind::Sqrt, {0, 1, 4, 2.25, -1}, {0, 1, 2, 1.5, kNaN}},
      {OpKind::Rsqrt, {1, 4, 0.25, 0}, {1, 0.5, 2, kInf}},
      {OpKind::Tanh, {0, 1, -1, 30}, {0, 0.7615941559557649, -0.7615941559557649, 1}},
      {OpKind::Sigmoid, {0, 2, -2, -200}, {0.5, 0.8807970779778823, 0.11920292202211755, 0}},
      {OpKind::Relu, {-2, -0.5, 0, 1, 4}, {0, 0, 0, 1, 4}},
      {OpKind::Gelu,
       {0, 1, -1, 2, -6},
       {0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(op_name(c.op));
    const Shape shape{static_cast<Dim>(c.in.size())};
    expect_tensor(run(c.op, tensor(kF32, shape, c.in)), kF32, shape, c.want, 1e-6);
    std::vector<double> want16;  // f16: compute in float, round the result
    for (double w : c.want) want16.push_back(h(w));
    std::vector<double> in16;
    for (double v : c.in) in16.push_back(h(v));
    expect_tensor(run(c.op, tensor(kF16, shape, in16)), kF16, shape, want16, 2e-3);
  }
  // exp(1) in f16 is exactly the nearest half of e.
  expect_tensor(run(OpKind::Exp, tensor(kF16, {1}, {1})), kF16, {1}, {2.71875});
}

TEST(Unary, IntegerInputs) {
  expect_tensor(run(OpKind::Neg, tensor(kI32, {3}, {-3, 0, 5})), kI32, {3}, {3, 0, -5});
  expect_tensor(run(OpKind::Relu, tensor(kI32, {3}, {-3, 0, 5})), kI32, {3}, {0, 0, 5});
  expect_tensor(run(OpKind::Relu, tensor(kI64, {2}, {-1e12, 1e12})), kI64, {2}, {0, 1e12});
  HostTensor n = run(OpKind::Neg, tensor(kI32, {1}, {INT32_MIN}));
  EXPECT_EQ(n.ptr<int32_t>()[0], INT32_MIN);  // wraps
  HostTensor big(TensorMeta{kI64, {1}});
  big.ptr<int64_t>()[0] = INT64_MIN;
  EXPECT_EQ(run(OpKind::Neg, big).ptr<int64_t>()[0], INT64_MIN);
  // Float-only unary ops on integers compute in f32.
  expect_tensor(run(OpKind::Exp, tensor(kI32, {2}, {0, 1})), kF32, {2}, {1, 2.718281828}, 1e-6);
  expect_tensor(run(OpKind::Sqrt, tensor(kI64, {2}, {16, 2})), kF32, {2}, {4, 1.41421356}, 1e-6);
  EXPECT_FALSE(interpret_op(OpKind::Exp, {}, {}).ok());
}

// ---- binary -------------------------------------------------------------------------------------

TEST(Binary, KnownValuesAllDtypes) {
  for (DType dt : {kF32, kF16, kI32, kI64}) {
    SCOPED_TRACE(dtype_name(dt));
    HostTensor a = tensor(dt, {4}, {6, -3, 0, 7});
    HostTensor b = tensor(dt, {4}, {2, 4, -5, 7});
    expect_tensor(run(OpKind::Add, a, b), dt, {4}, {8, 1, -5, 14});
    expect_tensor(run(OpKind::Sub, a, b), dt, {4}, {4, -7, 5, 0});
    expect_tensor(run(OpKind::Mul, a, b), dt, {4}, {12, -12, 0, 49});
    expect_tensor(run(OpKind::Maximum, a, b), dt, {4}, {6, 4, 0, 7});
    expect_tensor(run(OpKind::Minimum, a, b), dt, {4}, {2, -3, -5, 7});
    const DType div_dt = is_floating(dt) ? dt : kF32;
    expect_tensor(run(OpKind::Div, a, b), div_dt, {4}, {3, -0.75, 0, 1});
  }
}

TEST(Binary, FloatSpecials) {
  HostTensor a = tensor(kF32, {4}, {1, kNaN, -1, 1});
  HostTensor b = tensor(kF32, {4}, {2, 0, kNaN, 3});
  expect_tensor(run(OpKind::Maximum, a, b), kF32, {4}, {2, kNaN, kNaN, 3});
  expect_tensor(run(OpKind::Minimum, a, b), kF32, {4}, {1, kNaN, kNaN, 1});
  expect_tensor(run(OpKind::Div, a, b), kF32, {4}, {0.5, kNaN, kNaN, 1.0 / 3}, 1e-7);
  // Integer true division, including by zero.
  expect_tensor(run(OpKind::Div, tensor(kI32, {4}, {7, -7, 1, 0}), tensor(kI32, {4}, {2, 2, 0, 0})),
                kF32, {4}, {3.5, -3.5, kInf, kNaN});
  // f16 results round back to half: 2048 + 1 = 2049 -> 2048 (ties to even).
  expect_tensor(run(OpKind::Add, tensor(kF16, {2}, {2048, 0.1}), tensor(kF16, {2}, {1, 0.2})), kF16,
                {2}, {2048, h(static_cast<float>(h(0.1)) + static_cast<float>(h(0.2)))});
  expect_tensor(run(OpKind::Mul, tensor(kF16, {1}, {300}), tensor(kF16, {1}, {300})), kF16, {1},
                {kInf});
}

TEST(Binary, IntegerWraparound) {
  expect_tensor(run(OpKind::Add, tensor(kI32, {1}, {INT32_MAX}), tensor(kI32, {1}, {1})), kI32, {1},
                {INT32_MIN});
  expect_tensor(run(OpKind::Sub, tensor(kI32, {1}, {INT32_MIN}), tensor(kI32, {1}, {1})), kI32, {1},
                {INT32_MAX});
  expect_tensor(
      run(OpKind::Mul, tensor(kI32, {2}, {65536, 100000}), tensor(kI32, {2}, {65536, 100000})),
      kI32, {2}, {0, 1410065408});  // 1e10 mod 2^32
  HostTensor a(TensorMeta{kI64, {1}}), b(TensorMeta{kI64, {1}});
  a.ptr<int64_t>()[0] = INT64_MAX;
  b.ptr<int64_t>()[0] = 1;
  EXPECT_EQ(run(OpKind::Add, a, b).ptr<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(run(OpKind::Mul, a, a).ptr<int64_t>()[0], 1);  // (2^63-1)^2 mod 2^64
}

TEST(Binary, MixedDtypes) {
  expect_tensor(run(OpKind::Add, tensor(kI32, {2}, {1, 2}), tensor(kF16, {2}, {0.5, 0.25})), kF16,
                {2}, {1.5, 2.25});
  expect_tensor(run(OpKind::Add, tensor(kBool, {2}, {1, 0}), tensor(kI32, {2}, {5, 5})), kI32, {2},
                {6, 5});
  expect_tensor(run(OpKind::Mul, tensor(kI32, {1}, {3}), tensor(kI64, {1}, {5e9})), kI64, {1},
                {1.5e10});
  expect_tensor(run(OpKind::Sub, tensor(kF16, {1}, {0.5}), tensor(kF32, {1}, {0.25})), kF32, {1},
                {0.25});
  expect_tensor(run(OpKind::Div, tensor(kBool, {2}, {1, 1}), tensor(kI64, {2}, {4, -2})), kF32, {2},
                {0.25, -0.5});
}

TEST(Binary, Broadcasting) {
  HostTensor m23 = tensor(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor(run(OpKind::Add, m23, tensor(kF32, {3}, {10, 20, 30})), kF32, {2, 3},
                {11, 22, 33, 14, 25, 36});
  expect_tensor(run(OpKind::Add, tensor(kF32, {3}, {10, 20, 30}), m23), kF32, {2, 3},
                {11, 22, 33, 14, 25, 36});
  expect_tensor(run(OpKind::Sub, tensor(kF32, {2, 1}, {1, 2}), tensor(kF32, {1, 3}, {10, 20, 30})),
                kF32, {2, 3}, {-9, -19, -29, -8, -18, -28});
  HostTensor scalar = tensor(kI32, {}, {3});
  expect_tensor(run(OpKind::Mul, m23, scalar), kF32, {2, 3}, {3, 6, 9, 12, 15, 18});
  expect_tensor(run(OpKind::Mul, scalar, scalar), kI32, {}, {9});
  expect_tensor(
      run(OpKind::Maximum, tensor(kI64, {2, 1, 2}, {1, 8, 5, 2}), tensor(kI64, {3, 1}, {0, 4, 6})),
      kI64, {2, 3, 2}, {1, 8, 4, 8, 6, 8, 5, 2, 5, 4, 6, 6});
  // Size-0 dims: empty results, broadcast against size 1 and rank 0.
  expect_tensor(run(OpKind::Add, tensor(kF32, {0, 3}, {}), tensor(kF32, {3}, {1, 2, 3})), kF32,
                {0, 3}, {});
  expect_tensor(run(OpKind::Add, tensor(kF32, {2, 0}, {}), tensor(kF32, {2, 1}, {1, 2})), kF32,
                {2, 0}, {});
  expect_tensor(run(OpKind::Lt, tensor(kI32, {0}, {}), scalar), kBool, {0}, {});
}

// ---- compare and where --------------------------------------------------------------------------

TEST(Compare, AllOpsAndDtypes) {
  for (DType dt : {kF32, kF16, kI32, kI64, kBool}) {
    SCOPED_TRACE(dtype_name(dt));
    const bool b = dt == kBool;
    HostTensor x = tensor(dt, {3}, b ? std::vector<double>{0, 1, 1} : std::vector<double>{1, 2, 3});
    HostTensor y = tensor(dt, {3}, b ? std::vector<double>{1, 1, 0} : std::vector<double>{2, 2, 2});
    expect_tensor(run(OpKind::Eq, x, y), kBool, {3}, {0, 1, 0});
    expect_tensor(run(OpKind::Ne, x, y), kBool, {3}, {1, 0, 1});
    expect_tensor(run(OpKind::Lt, x, y), kBool, {3}, {1, 0, 0});
    expect_tensor(run(OpKind::Le, x, y), kBool, {3}, {1, 1, 0});
    expect_tensor(run(OpKind::Gt, x, y), kBool, {3}, {0, 0, 1});
    expect_tensor(run(OpKind::Ge, x, y), kBool, {3}, {0, 1, 1});
  }
}

TEST(Compare, PromotionNaNAndBroadcast) {
  HostTensor n = tensor(kF32, {2}, {kNaN, 1});
  expect_tensor(run(OpKind::Eq, n, n), kBool, {2}, {0, 1});
  expect_tensor(run(OpKind::Ne, n, n), kBool, {2}, {1, 0});
  expect_tensor(run(OpKind::Ge, n, n), kBool, {2}, {0, 1});
  // Mixed: compared in the promoted type.
  expect_tensor(run(OpKind::Lt, tensor(kI32, {2}, {1, 2}), tensor(kF32, {2}, {1.5, 2})), kBool, {2},
                {1, 0});
  expect_tensor(run(OpKind::Eq, tensor(kBool, {2}, {1, 0}), tensor(kI32, {2}, {1, 1})), kBool, {2},
                {1, 0});
  // i64 compares exactly (2^53 + 1 > 2^53 although both round to the same float).
  HostTensor a(TensorMeta{kI64, {1}}), b(TensorMeta{kI64, {1}});
  a.ptr<int64_t>()[0] = (int64_t{1} << 53) + 1;
  b.ptr<int64_t>()[0] = int64_t{1} << 53;
  expect_tensor(run(OpKind::Gt, a, b), kBool, {1}, {1});
  expect_tensor(run(OpKind::Gt, tensor(kF32, {2, 1}, {1, 5}), tensor(kI32, {3}, {0, 3, 6})), kBool,
                {2, 3}, {1, 0, 0, 1, 1, 0});
}

TEST(Where, SelectsPromotedAndBroadcasts) {
  HostTensor c = tensor(kBool, {2, 3}, {1, 0, 1, 0, 0, 1});
  HostTensor x3 = tensor(kF32, {3}, {1, 2, 3}), minus1 = tensor(kF32, {}, {-1});
  expect_tensor(run(OpKind::Where, {&c, &x3, &minus1}), kF32, {2, 3}, {1, -1, 3, -1, -1, 3});
  HostTensor c21 = tensor(kBool, {2, 1}, {1, 0});
  HostTensor xi = tensor(kI32, {3}, {1, 2, 3});
  HostTensor yf = tensor(kF16, {2, 3}, {0.5, 0.5, 0.5, 0.25, 0.25, 0.25});
  expect_tensor(run(OpKind::Where, {&c21, &xi, &yf}), kF16, {2, 3}, {1, 2, 3, 0.25, 0.25, 0.25});
  HostTensor xb = tensor(kBool, {}, {1}), yb = tensor(kBool, {2}, {0, 1});
  expect_tensor(run(OpKind::Where, {&c21, &xb, &yb}), kBool, {2, 2}, {1, 1, 0, 1});
  HostTensor xl = tensor(kI64, {1}, {-5e12}), yi = tensor(kI32, {1}, {7});
  expect_tensor(run(OpKind::Where, {&c21, &xl, &yi}), kI64, {2, 1}, {-5e12, 7});
  HostTensor e0 = tensor(kBool, {0, 1}, {});
  expect_tensor(run(OpKind::Where, {&e0, &xi, &xi}), kI32, {0, 3}, {});
}

// ---- cast and full ------------------------------------------------------------------------------

TEST(Cast, Conversions) {
  HostTensor f = tensor(kF32, {7}, {1.9, -1.9, 0.5, -0.5, 3e9, -3e9, kNaN});
  expect_tensor(run(OpKind::Cast, f, to(kI32)), kI32, {7}, {1, -1, 0, 0, INT32_MAX, INT32_MIN, 0});
  expect_tensor(run(OpKind::Cast, f, to(kI64)), kI64, {7}, {1, -1, 0, 0, 3e9, -3e9, 0});
  expect_tensor(run(OpKind::Cast, tensor(kF32, {4}, {0, -0.0, 0.5, kNaN}), to(kBool)), kBool, {4},
                {0, 0, 1, 1});
  expect_tensor(run(OpKind::Cast, tensor(kBool, {2}, {1, 0}), to(kF32)), kF32, {2}, {1, 0});
  expect_tensor(run(OpKind::Cast, tensor(kBool, {2}, {1, 0}), to(kF16)), kF16, {2}, {1, 0});
  expect_tensor(run(OpKind::Cast, tensor(kBool, {2}, {1, 0}), to(kI64)), kI64, {2}, {1, 0});
  expect_tensor(run(OpKind::Cast, tensor(kI32, {3}, {-2, 0, 7}), to(kBool)), kBool, {3}, {1, 0, 1});
  // i64 -> i32 wraps.
  expect_tensor(run(OpKind::Cast, tensor(kI64, {3}, {4294967301.0, 2147483648.0, -1}), to(kI32)),
                kI32, {3}, {5, INT32_MIN, -1});
  expect_tensor(run(OpKind::Cast, tensor(kF32, {2}, {1.0 / 3, 1e5}), to(kF16)), kF16, {2},
                {0.333251953125, kInf});
  expect_tensor(run(OpKind::Cast, tensor(kI32, {2}, {2049, -70000}), to(kF16)), kF16, {2},
                {2048, -kInf});
  expect_tensor(run(OpKind::Cast, tensor(kF16, {3}, {0.1, -2.5, 65504}), to(kF32)), kF32, {3},
                {0.0999755859375, -2.5, 65504});
  expect_tensor(run(OpKind::Cast, tensor(kF16, {2}, {-2.5, 7.75}), to(kI64)), kI64, {2}, {-2, 7});
  expect_tensor(run(OpKind::Cast, tensor(kI64, {1}, {16777217}), to(kF32)), kF32, {1}, {16777216});
  expect_tensor(run(OpKind::Cast, tensor(kI32, {2}, {-3, 9}), to(kI64)), kI64, {2}, {-3, 9});
  expect_tensor(run(OpKind::Cast, tensor(kF32, {1}, {2.5}), to(kF32)), kF32, {1}, {2.5});
}

TEST(Full, FillsEveryDtype) {
  auto full = [](double v, DType dt, std::vector<int64_t> shape) {
    Attrs a;
    a.scalar = v;
    a.dtype = dt;
    a.dims = std::move(shape);
    return run(OpKind::Full, std::vector<const HostTensor*>{}, a);
  };
  expect_tensor(full(1.5, kF32, {2, 2}), kF32, {2, 2}, {1.5, 1.5, 1.5, 1.5});
  expect_tensor(full(0.1, kF16, {2}), kF16, {2}, {0.0999755859375, 0.0999755859375});
  expect_tensor(full(-2.7, kI32, {3}), kI32, {3}, {-2, -2, -2});
  expect_tensor(full(1e12, kI64, {1}), kI64, {1}, {1e12});
  expect_tensor(full(0.3, kBool, {2}), kBool, {2}, {1, 1});
  expect_tensor(full(0, kBool, {1}), kBool, {1}, {0});
  expect_tensor(full(7, kF32, {}), kF32, {}, {7});
  expect_tensor(full(7, kF32, {3, 0}), kF32, {3, 0}, {});
}

// ---- reductions ---------------------------------------------------------------------------------

TEST(Reduce, SumMeanMaxOneAxis) {
  for (DType dt : {kF32, kF16, kI32, kI64}) {
    SCOPED_TRACE(dtype_name(dt));
    HostTensor x = tensor(dt, {2, 3}, {1, 5, -3, 4, 2, -7});
    expect_tensor(run(OpKind::Sum, x, dims({1})), dt, {2}, {3, -1});
    expect_tensor(run(OpKind::Sum, x, dims({0})), dt, {3}, {5, 7, -10});
    expect_tensor(run(OpKind::Sum, x, dims({-1}, true)), dt, {2, 1}, {3, -1});
    expect_tensor(run(OpKind::Max, x, dims({0})), dt, {3}, {4, 5, -3});
    expect_tensor(run(OpKind::Max, x, dims({1}, true)), dt, {2, 1}, {5, 4});
    if (is_floating(dt))
      expect_tensor(run(OpKind::Mean, x, dims({1})), dt, {2}, {h(1.0), h(-1.0 / 3)}, 1e-3);
  }
  expect_tensor(run(OpKind::Mean, tensor(kF32, {2, 2}, {1, 2, 3, 5}), dims({0})), kF32, {2},
                {2, 3.5});
}

TEST(Reduce, SeveralAxesAndKeepdim) {
  HostTensor x = iota(kF32, {2, 3, 4});  // x[i][j][k] = 12i + 4j + k
  expect_tensor(run(OpKind::Sum, x, dims({0, 2})), kF32, {3}, {60, 92, 124});
  expect_tensor(run(OpKind::Sum, x, dims({-1, 0}, true)), kF32, {1, 3, 1}, {60, 92, 124});
  expect_tensor(run(OpKind::Sum, x, dims({0, 1, 2})), kF32, {}, {276});
  expect_tensor(run(OpKind::Mean, x, dims({0, 1, 2}, true)), kF32, {1, 1, 1}, {11.5});
  expect_tensor(run(OpKind::Mean, x, dims({1})), kF32, {2, 4}, {4, 5, 6, 7, 16, 17, 18, 19});
  expect_tensor(run(OpKind::Max, x, dims({1, 2})), kF32, {2}, {11, 23});
  expect_tensor(run(OpKind::Max, iota(kI64, {2, 3, 4}), dims({0, 1})), kI64, {4}, {20, 21, 22, 23});
}

TEST(Reduce, EmptyAxesAndSizeZero) {
  expect_tensor(run(OpKind::Sum, tensor(kF32, {2, 0}, {}), dims({1})), kF32, {2}, {0, 0});
  expect_tensor(run(OpKind::Sum, tensor(kI32, {0, 3}, {}), dims({0}, true)), kI32, {1, 3},
                {0, 0, 0});
  expect_tensor(run(OpKind::Sum, tensor(kBool, {0}, {}), dims({0})), kI64, {}, {0});
  expect_tensor(run(OpKind::Mean, tensor(kF32, {2, 0}, {}), dims({1})), kF32, {2}, {kNaN, kNaN});
  expect_tensor(run(OpKind::Mean, tensor(kF16, {0}, {}), dims({0})), kF16, {}, {kNaN});
  expect_tensor(run(OpKind::Sum, tensor(kF32, {0, 2}, {}), dims({1})), kF32, {0}, {});
  expect_tensor(run(OpKind::Max, tensor(kF32, {0, 2}, {}), dims({1})), kF32, {0}, {});
}

TEST(Reduce, PrecisionTypesAndSpecials) {
  // Float sums accumulate in double: (1e8 + 1) - 1e8 is 1, and f16 2048 + 1 + 1 is 2050.
  expect_tensor(run(OpKind::Sum, tensor(kF32, {3}, {1e8, 1, -1e8}), dims({0})), kF32, {}, {1});
  expect_tensor(run(OpKind::Sum, tensor(kF16, {3}, {2048, 1, 1}), dims({0})), kF16, {}, {2050});
  expect_tensor(run(OpKind::Sum, tensor(kF16, {2}, {65504, 65504}), dims({0})), kF16, {}, {kInf});
  expect_tensor(run(OpKind::Mean, tensor(kF16, {2}, {65504, 65504}), dims({0})), kF16, {}, {65504});
  // Integer sums wrap; bool sums count into i64.
  expect_tensor(run(OpKind::Sum, tensor(kI32, {2}, {INT32_MAX, 1}), dims({0})), kI32, {},
                {INT32_MIN});
  expect_tensor(run(OpKind::Sum, tensor(kBool, {2, 3}, {1, 0, 1, 1, 1, 1}), dims({1})), kI64, {2},
                {2, 3});
  // Max of bool is "any"; max propagates NaN; -inf and int extremes work.
  expect_tensor(run(OpKind::Max, tensor(kBool, {2, 2}, {0, 0, 0, 1}), dims({1})), kBool, {2},
                {0, 1});
  expect_tensor(
      run(OpKind::Max, tensor(kF32, {2, 3}, {1, kNaN, 2, -kInf, -kInf, -kInf}), dims({1})), kF32,
      {2}, {kNaN, -kInf});
  expect_tensor(run(OpKind::Max, tensor(kI32, {2}, {INT32_MIN, INT32_MIN}), dims({0})), kI32, {},
                {INT32_MIN});
  expect_tensor(run(OpKind::Sum, tensor(kF32, {2}, {kInf, 1}), dims({0})), kF32, {}, {kInf});
}

// ---- movement -----------------------------------------------------------------------------------

TEST(Movement, Reshape) {
  HostTensor x = iota(kI32, {2, 3});
  expect_tensor(run(OpKind::Reshape, x, dims({3, 2})), kI32, {3, 2}, {0, 1, 2, 3, 4, 5});
  expect_tensor(run(OpKind::Reshape, x, dims({6})), kI32, {6}, {0, 1, 2, 3, 4, 5});
  expect_tensor(run(OpKind::Reshape, tensor(kF16, {1, 1}, {0.5}), dims({})), kF16, {}, {0.5});
  expect_tensor(run(OpKind::Reshape, tensor(kBool, {0, 2}, {}), dims({2, 0, 3})), kBool, {2, 0, 3},
                {});
}

TEST(Movement, Permute) {
  expect_tensor(run(OpKind::Permute, iota(kF32, {2, 3}), dims({1, 0})), kF32, {3, 2},
                {0, 3, 1, 4, 2, 5});
  // out[k][i][j] = in[i][j][k] = 12i + 4j + k.
  for (DType dt : {kF32, kF16, kI32, kI64}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<double> want;
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) want.push_back(12 * i + 4 * j + k);
    expect_tensor(run(OpKind::Permute, iota(dt, {2, 3, 4}), dims({2, 0, 1})), dt, {4, 2, 3}, want);
  }
  expect_tensor(run(OpKind::Permute, tensor(kBool, {1, 3}, {1, 0, 1}), dims({1, 0})), kBool, {3, 1},
                {1, 0, 1});
  expect_tensor(run(OpKind::Permute, tensor(kF32, {}, {4}), dims({})), kF32, {}, {4});
  expect_tensor(run(OpKind::Permute, tensor(kF32, {0, 2}, {}), dims({1, 0})), kF32, {2, 0}, {});
}

TEST(Movement, Expand) {
  expect_tensor(run(OpKind::Expand, tensor(kF32, {3}, {1, 2, 3}), dims({2, 3})), kF32, {2, 3},
                {1, 2, 3, 1, 2, 3});
  expect_tensor(run(OpKind::Expand, tensor(kI64, {2, 1}, {7, 8}), dims({2, 3})), kI64, {2, 3},
                {7, 7, 7, 8, 8, 8});
  expect_tensor(run(OpKind::Expand, tensor(kF16, {}, {0.5}), dims({2, 2})), kF16, {2, 2},
                {0.5, 0.5, 0.5, 0.5});
  expect_tensor(run(OpKind::Expand, tensor(kBool, {1, 2}, {1, 0}), dims({2, 2, 2})), kBool,
                {2, 2, 2}, {1, 0, 1, 0, 1, 0, 1, 0});
  expect_tensor(run(OpKind::Expand, tensor(kI32, {1}, {5}), dims({0})), kI32, {0}, {});
}

// ---- graphs -------------------------------------------------------------------------------------

TEST(Graph, MultiNodeMatchesHandLoop) {
  const int rows = 17, cols = 33;
  Graph g;
  const TensorMeta vec{kF32, {cols}};
  NodeId x = g.add_input(TensorMeta{kF32, {rows, cols}});
  NodeId a = g.add_input(vec), b = g.add_input(vec), c = g.add_constant(vec, 0),
         d = g.add_constant(vec, 1);
  NodeId xa = *g.add(OpKind::Mul, {x, a});
  NodeId xab = *g.add(OpKind::Add, {xa, b});
  NodeId t = *g.add(OpKind::Mul, {xab, c});
  NodeId u = *g.add(OpKind::Sub, {t, d});
  NodeId r = *g.add(OpKind::Relu, {u});
  NodeId s = *g.add(OpKind::Sum, {r}, dims({0}));
  g.set_outputs({r, s, xa, x});
  ASSERT_TRUE(g.verify().ok());

  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  auto random = [&](const TensorMeta& meta) {
    HostTensor v(meta);
    for (int64_t i = 0; i < meta.numel(); ++i) v.ptr<float>()[i] = dist(rng);
    return v;
  };
  HostTensor xv = random(TensorMeta{kF32, {rows, cols}}), av = random(vec), bv = random(vec),
             cv = random(vec), dv = random(vec);
  std::vector<const HostTensor*> inputs = {&xv, &av, &bv}, constants = {&cv, &dv};
  auto out = interpret(g, inputs, constants);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 4u);
  const HostTensor &rv = (*out)[0], &sv = (*out)[1], &xav = (*out)[2];
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const float* p = xv.ptr<float>();
      float want =
          (p[i * cols + j] * av.ptr<float>()[j] + bv.ptr<float>()[j]) * cv.ptr<float>()[j] -
          dv.ptr<float>()[j];
      want = want < 0 ? 0 : want;
      EXPECT_EQ(rv.ptr<float>()[i * cols + j], want) << i << "," << j;
      EXPECT_EQ(xav.ptr<float>()[i * cols + j], p[i * cols + j] * av.ptr<float>()[j]);
    }
  }
  for (int j = 0; j < cols; ++j) {
    double sum = 0;
    for (int i = 0; i < rows; ++i) sum += rv.ptr<float>()[i * cols + j];
    EXPECT_EQ(sv.ptr<float>()[j], static_cast<float>(sum)) << j;
  }
  EXPECT_EQ((*out)[3].data, xv.data);  // an input returned as an output is copied out
}

TEST(Graph, RejectsWrongInputs) {
  Graph g;
  NodeId x = g.add_input(TensorMeta{kF32, {2, 3}});
  NodeId w = g.add_constant(TensorMeta{kI32, {3}}, 1);
  g.set_outputs({*g.add(OpKind::Add, {x, w})});
  HostTensor good = iota(kF32, {2, 3}), wrong_shape = iota(kF32, {3, 2}),
             wrong_dtype = iota(kF16, {2, 3}), c = iota(kI32, {3});
  auto check = [&](std::vector<const HostTensor*> ins, std::vector<const HostTensor*> consts,
                   std::vector<std::string> needles) {
    auto r = interpret(g, ins, consts);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    for (const std::string& n : needles)
      EXPECT_NE(r.status().message().find(n), std::string::npos)
          << "'" << n << "' not in: " << r.status().message();
  };
  check({&wrong_shape}, {&c, &c}, {"input 0", "expected f32[2, 3]", "got f32[3, 2]"});
  check({&wrong_dtype}, {&c, &c}, {"input 0", "f32[2, 3]", "f16[2, 3]"});
  check({}, {&c, &c}, {"input 0", "out of range"});
  check({&good}, {&c}, {"constant 1", "out of range"});
  check({&good}, {&c, &good}, {"constant 1", "expected i32[3]", "got f32[2, 3]"});
  check({nullptr}, {&c, &c}, {"input 0", "null"});
  HostTensor truncated = iota(kF32, {2, 3});
  truncated.data.resize(4);
  check({&truncated}, {&c, &c}, {"input 0", "bytes"});
  auto ok =
      interpret(g, std::vector<const HostTensor*>{&good}, std::vector<const HostTensor*>{&c, &c});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  expect_tensor((*ok)[0], kF32, {2, 3}, {0, 2, 4, 3, 5, 7});
  // interpret_op reports shape-rule failures.
  HostTensor v4 = iota(kF32, {4});
  auto bad = interpret_op(OpKind::Add, std::vector<const HostTensor*>{&good, &v4}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[2, 3]"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(interpret_op(OpKind::Input, std::vector<const HostTensor*>{}, {}).ok());
}

}  // namespace
}  // namespace kiln
