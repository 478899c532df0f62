// The interpreter's direct loops (eager/elementwise_loops.h, the row kernels of softmax, sum and
// mean, slices with step 1) and what they run on (eager/parallel.h, the host block cache) against
// references written out here element by element. Each reference computes the value the way
// the interpreter's contract states (float arithmetic for f32 elementwise ops, double sums,
// exp(x - max) in double for softmax), so every result must match bit for bit. Shapes cover
// the broadcast patterns of exported models (a scalar, a row, a column, a middle dim), sizes 0
// and 1, odd sizes, and tensors large enough to be split over threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/host_memory.h"
#include "eager/float_math.h"
#include "eager/interpreter.h"
#include "eager/parallel.h"
#include "graph/op.h"

namespace kiln {
namespace {

HostTensor random_f32(Shape shape, std::mt19937& rng) {
  HostTensor t(TensorMeta{DType::kF32, std::move(shape)});
  std::uniform_real_distribution<float> real(-3.0f, 3.0f);
  auto* p = reinterpret_cast<float*>(t.data.data());
  for (int64_t i = 0; i < t.meta.numel(); ++i) p[i] = real(rng);
  if (t.meta.numel() > 3) {  // special values travel through unchanged
    p[0] = std::numeric_limits<float>::quiet_NaN();
    p[1] = -std::numeric_limits<float>::infinity();
    p[2] = -0.0f;
  }
  return t;
}

const float* f32(const HostTensor& t) {
  return reinterpret_cast<const float*>(t.data.data());
}

HostTensor run(OpKind op, std::vector<const HostTensor*> ins, const Attrs& attrs = {}) {
  auto r = interpret_op(op, ins, attrs);
  EXPECT_TRUE(r.ok()) << op_name(op) << ": " << r.status().to_string();
  return r.ok() ? std::move(r).value() : HostTensor();
}

/// Flat offset into a tensor of `in` broadcast to `out`, for the output's flat index `i`.
int64_t broadcast_offset(const Shape& in, const Shape& out, int64_t i) {
  int64_t off = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const int64_t idx = i % out[d];
    i /= out[d];
    if (k < in.size()) {
      const size_t di = in.size() - 1 - k;
      if (in[di] != 1) off += idx * stride;
      stride *= in[di];
    }
  }
  return off;
}

void expect_same_bits(const HostTensor& got, const std::vector<float>& want,
                      const std::string& what) {
  ASSERT_EQ(got.meta.dtype, DType::kF32) << what;
  ASSERT_EQ(got.meta.numel(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const float g = f32(got)[i], w = want[i];
    if (std::memcmp(&g, &w, 4) != 0 && !(std::isnan(g) && std::isnan(w))) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", want " << w;
    }
  }
}

std::string shape_text(const Shape& a, const Shape& b) {
  return shape_str(a) + " with " + shape_str(b);
}

TEST(InterpreterLoops, BinaryOpsMatchTheElementFormulaForEveryBroadcastPattern) {
  std::mt19937 rng(7);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4, 128, 512}, {512}},          // bias row
      {{4, 128, 512}, {4, 128, 1}},    // a column (layer norm)
      {{4, 128, 512}, {4, 128, 512}},  // same shape
      {{1}, {3, 5, 7}},                // a scalar first
      {{3, 1, 7}, {1, 5, 1}},          // both broadcast
      {{2, 3, 1, 5}, {3, 4, 1}},       // middle dims
      {{0, 5}, {5}},                   // empty
      {{1, 1}, {1}},                   // one element
      {{301, 700}, {700}},             // odd sizes, split over threads
      {{600, 301}, {600, 1}},
  };
  for (const auto& [sa, sb] : cases) {
    const HostTensor a = random_f32(sa, rng), b = random_f32(sb, rng);
    const Shape out = broadcast_shapes(sa, sb).value();
    const int64_t n = numel(out);
    struct Op {
      OpKind op;
      float (*fn)(float, float);
    };
    const Op ops[] = {
        {OpKind::Add, [](float x, float y) { return x + y; }},
        {OpKind::Mul, [](float x, float y) { return x * y; }},
        {OpKind::Sub, [](float x, float y) { return x - y; }},
        {OpKind::Div, [](float x, float y) { return x / y; }},
        {OpKind::Pow, [](float x, float y) { return std::pow(x, y); }},
        {OpKind::Maximum, [](float x, float y) { return (std::isnan(x) || x > y) ? x : y; }},
        {OpKind::Minimum, [](float x, float y) { return (std::isnan(x) || x < y) ? x : y; }},
    };
    for (const Op& op : ops) {
      std::vector<float> want(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        want[static_cast<size_t>(i)] =
            op.fn(f32(a)[broadcast_offset(sa, out, i)], f32(b)[broadcast_offset(sb, out, i)]);
      expect_same_bits(run(op.op, {&a, &b}), want,
                       std::string(op_name(op.op)) + " " + shape_text(sa, sb));
    }
  }
}

TEST(InterpreterLoops, BinaryOpsOnSpecialValuesInEveryLaneAndStridePattern) {
  // Every pair of special values (NaN, infinities, signed zeros, a denormal, ties), at every
  // position of the vector rows (37 elements: two 16-lane vectors and a tail) and with either
  // operand a broadcast scalar: the vector rows give the element formula's bits.
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity(),
              tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> special = {nan, -inf, -1.5f, -0.0f, 0.0f, tiny, 1.5f, inf};
  struct Op {
    OpKind op;
    float (*fn)(float, float);
  };
  const Op ops[] = {
      {OpKind::Add, [](float x, float y) { return x + y; }},
      {OpKind::Sub, [](float x, float y) { return x - y; }},
      {OpKind::Mul, [](float x, float y) { return x * y; }},
      {OpKind::Div, [](float x, float y) { return x / y; }},
      {OpKind::Maximum, [](float x, float y) { return (std::isnan(x) || x > y) ? x : y; }},
      {OpKind::Minimum, [](float x, float y) { return (std::isnan(x) || x < y) ? x : y; }},
  };
  constexpr int64_t kRow = 37;
  for (size_t shift = 0; shift < special.size(); ++shift) {
    HostTensor a(TensorMeta{DType::kF32, {kRow}}), b(TensorMeta{DType::kF32, {kRow}}),
        scalar(TensorMeta{DType::kF32, {1}});
    auto* pa = reinterpret_cast<float*>(a.data.data());
    auto* pb = reinterpret_cast<float*>(b.data.data());
    for (int64_t i = 0; i < kRow; ++i) {
      pa[i] = special[static_cast<size_t>(i) % special.size()];
      pb[i] = special[(static_cast<size_t>(i) / special.size() + shift) % special.size()];
    }
    *reinterpret_cast<float*>(scalar.data.data()) = special[shift];
    for (const Op& op : ops) {
      std::vector<float> same(kRow), a_scalar(kRow), b_scalar(kRow);
      for (int64_t i = 0; i < kRow; ++i) {
        same[static_cast<size_t>(i)] = op.fn(pa[i], pb[i]);
        a_scalar[static_cast<size_t>(i)] = op.fn(special[shift], pb[i]);
        b_scalar[static_cast<size_t>(i)] = op.fn(pa[i], special[shift]);
      }
      const std::string what = std::string(op_name(op.op)) + " shift " + std::to_string(shift);
      expect_same_bits(run(op.op, {&a, &b}), same, what);
      expect_same_bits(run(op.op, {&scalar, &b}), a_scalar, what + ", a scalar");
      expect_same_bits(run(op.op, {&a, &scalar}), b_scalar, what + ", b scalar");
    }
  }
}

TEST(InterpreterLoops, WhereWithABoolMaskSelectsFloats) {
  std::mt19937 rng(21);
  const std::vector<std::tuple<Shape, Shape, Shape>> cases = {
      {{1, 1, 64, 64}, {4, 3, 64, 64}, {}},  // a causal mask over attention scores
      {{5, 7}, {5, 7}, {5, 7}},
      {{7}, {0, 7}, {1}},
      {{}, {3}, {3}},
  };
  for (const auto& [sc, sx, sy] : cases) {
    HostTensor c(TensorMeta{DType::kBool, sc});
    for (int64_t i = 0; i < c.meta.numel(); ++i) c.set(i, (rng() & 1) != 0 ? 1.0 : 0.0);
    const HostTensor x = random_f32(sx, rng), y = random_f32(sy, rng);
    const Shape out = broadcast_shapes(broadcast_shapes(sc, sx).value(), sy).value();
    std::vector<float> want(static_cast<size_t>(numel(out)));
    for (int64_t i = 0; i < numel(out); ++i)
      want[static_cast<size_t>(i)] = c.get(broadcast_offset(sc, out, i)) != 0
                                         ? f32(x)[broadcast_offset(sx, out, i)]
                                         : f32(y)[broadcast_offset(sy, out, i)];
    expect_same_bits(run(OpKind::Where, {&c, &x, &y}), want,
                     "where " + shape_str(sc) + " " + shape_text(sx, sy));
  }
}

TEST(InterpreterLoops, PowerOfTwoIsTheSquare) {
  std::mt19937 rng(3);
  const HostTensor x = random_f32({1000, 37}, rng);
  HostTensor two(TensorMeta{DType::kF32, {}});
  two.set(0, 2.0);
  std::vector<float> want(x.meta.numel());
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::pow(f32(x)[i], 2.0f);
  expect_same_bits(run(OpKind::Pow, {&x, &two}), want, "pow(x, 2)");
}

TEST(InterpreterLoops, UnaryOpsMatchTheElementFormula) {
  std::mt19937 rng(11);
  for (const Shape& s : std::vector<Shape>{{4, 128, 2048}, {7}, {0}, {}, {1, 1, 1}}) {
    const HostTensor x = random_f32(s, rng);
    const int64_t n = x.meta.numel();
    std::vector<float> relu(n), ex(n), neg(n);
    for (int64_t i = 0; i < n; ++i) {
      const float v = f32(x)[i];
      relu[i] = v < 0.0f ? 0.0f : v;
      ex[i] = std::exp(v);
      neg[i] = -v;
    }
    expect_same_bits(run(OpKind::Relu, {&x}), relu, "relu " + shape_str(s));
    expect_same_bits(run(OpKind::Exp, {&x}), ex, "exp " + shape_str(s));
    expect_same_bits(run(OpKind::Neg, {&x}), neg, "neg " + shape_str(s));
  }
}

TEST(InterpreterLoops, PermuteAndExpandCopyEveryDtypeAsBits) {
  std::mt19937 rng(5);
  for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool}) {
    HostTensor x(TensorMeta{dt, {4, 33, 8, 17}});
    for (auto& byte : x.data) byte = static_cast<std::byte>(rng() & (dt == DType::kBool ? 1 : 255));
    Attrs perm;
    perm.dims = {0, 2, 1, 3};
    const HostTensor p = run(OpKind::Permute, {&x}, perm);
    ASSERT_EQ(p.meta.shape, (Shape{4, 8, 33, 17}));
    const size_t es = dtype_size(dt);
    int bad = 0;
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t b = 0; b < 8; ++b)
        for (int64_t c = 0; c < 33; ++c)
          for (int64_t d = 0; d < 17 && bad < 3; ++d) {
            const int64_t src = ((a * 33 + c) * 8 + b) * 17 + d,
                          dst = ((a * 8 + b) * 33 + c) * 17 + d;
            if (std::memcmp(p.data.data() + dst * es, x.data.data() + src * es, es) != 0) {
              ++bad;
              ADD_FAILURE() << dtype_name(dt) << " permute element " << dst;
            }
          }
    HostTensor col(TensorMeta{dt, {5, 1}});
    std::memcpy(col.data.data(), x.data.data(), col.data.size());
    Attrs to;
    to.dims = {3, 5, 7};
    const HostTensor e = run(OpKind::Expand, {&col}, to);
    for (int64_t i = 0; i < e.meta.numel(); ++i)
      ASSERT_EQ(std::memcmp(e.data.data() + i * es, col.data.data() + ((i / 7) % 5) * es, es), 0)
          << dtype_name(dt) << " expand element " << i;
  }
}

TEST(InterpreterLoops, SliceWithStepOneCopiesContiguousRuns) {
  std::mt19937 rng(9);
  const HostTensor x = random_f32({128, 4, 1536}, rng);
  for (const auto& [axis, start, end] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {2, 512, 1024}, {0, 3, 100}, {1, 1, 2}, {2, 5, 5}}) {
    Attrs a;
    a.axis = axis;
    a.dims = {start, end, 1};
    const HostTensor y = run(OpKind::Slice, {&x}, a);
    Shape s = x.meta.shape;
    s[static_cast<size_t>(axis)] = end - start;
    ASSERT_EQ(y.meta.shape, s);
    std::vector<float> want;
    for (int64_t i = 0; i < 128; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 1536; ++k) {
          const int64_t at[3] = {i, j, k};
          if (at[axis] >= start && at[axis] < end) want.push_back(f32(x)[(i * 4 + j) * 1536 + k]);
        }
    expect_same_bits(y, want, "slice axis " + std::to_string(axis));
  }
}

TEST(InterpreterLoops, SoftmaxRowsMatchTheDoubleFormula) {
  std::mt19937 rng(13);
  for (const Shape& s : std::vector<Shape>{{4, 8, 128, 128}, {3, 1}, {5, 7}, {2, 0}}) {
    HostTensor x = random_f32(s, rng);
    if (x.meta.numel() >= 14) {  // a row of -inf gives NaN; a row holding +inf too
      auto* p = reinterpret_cast<float*>(x.data.data());
      for (int64_t i = 0; i < s.back(); ++i) p[s.back() + i] = -INFINITY;
      p[2 * s.back()] = INFINITY;
    }
    for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
      Attrs a;
      a.axis = -1;
      const int64_t len = s.back(), rows = len == 0 ? 0 : x.meta.numel() / len;
      std::vector<float> want(static_cast<size_t>(x.meta.numel()));
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = f32(x) + r * len;
        float mx = -INFINITY;
        for (int64_t i = 0; i < len; ++i) mx = std::max(mx, row[i]);
        double sum = 0;
        // exp as the contract gives it (softmax_exp, within an ulp of glibc's: checked below).
        for (int64_t i = 0; i < len; ++i) sum += eager::softmax_exp(double(row[i]) - mx);
        for (int64_t i = 0; i < len; ++i) {
          const double shifted = double(row[i]) - mx;
          want[r * len + i] = static_cast<float>(op == OpKind::LogSoftmax
                                                     ? shifted - std::log(sum)
                                                     : eager::softmax_exp(shifted) / sum);
        }
      }
      expect_same_bits(run(op, {&x}, a), want, std::string(op_name(op)) + " " + shape_str(s));
    }
  }
}

/// How many doubles lie between a and b (0 for equal values of the same sign).
int64_t double_ulps_apart(double a, double b) {
  int64_t ia, ib;
  std::memcpy(&ia, &a, 8);
  std::memcpy(&ib, &b, 8);
  if (ia < 0) ia = std::numeric_limits<int64_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int64_t>::min() - ib;
  return ia > ib ? ia - ib : ib - ia;
}

TEST(InterpreterLoops, SoftmaxExpIsWithinAnUlpOfExp) {
  // Every float in [-750, 0] at a step of 4099 bit patterns (about 260,000 values: normal,
  // subnormal and underflowing results) and the special values, against glibc's exp; the
  // batch form (contiguous softmax rows) must give the scalar function's bits.
  std::vector<float> xs;
  for (uint32_t bits = 0x80000000u; bits <= 0xc43b8000u; bits += 4099) {  // -0.0 .. -750
    float v;
    std::memcpy(&v, &bits, 4);
    xs.push_back(v);
  }
  for (float v : {0.0f, -0.0f, -1e-30f, -708.4f, -745.1f, -745.2f, -746.0f, -746.1f, -1e30f,
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    xs.push_back(v);
  std::vector<double> batch(xs.size());
  eager::softmax_exps(xs.data(), 0.0f, batch.data(), static_cast<int64_t>(xs.size()));
  int bad = 0;
  for (size_t i = 0; i < xs.size() && bad < 5; ++i) {
    const double y = xs[i], got = eager::softmax_exp(y), want = std::exp(y);
    const bool ok = std::isnan(y) ? std::isnan(got) : double_ulps_apart(got, want) <= 1;
    const bool same =
        std::memcmp(&got, &batch[i], 8) == 0 || (std::isnan(got) && std::isnan(batch[i]));
    if (!ok || !same) {
      ++bad;
      ADD_FAILURE() << "exp(" << y << ") is " << got << " (batch " << batch[i] << "), want "
                    << want;
    }
  }
  EXPECT_EQ(eager::softmax_exp(0.0), 1.0);
  EXPECT_EQ(eager::softmax_exp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_GT(eager::softmax_exp(-745.0), 0.0);  // the subnormal range is kept
}

TEST(InterpreterLoops, SoftmaxAlongAnInnerAxisGivesTheLastAxisBits) {
  // Softmax over axis 1 of [2, 37, 5] (strided slices, the scalar exp) against softmax over the
  // last axis of its transpose (contiguous rows, the batch exp): the same values, the same
  // bits, with large negative scores as a causal mask makes them.
  std::mt19937 rng(5);
  HostTensor x = random_f32({2, 37, 5}, rng);
  auto* p = reinterpret_cast<float*>(x.data.data());
  for (int64_t i = 0; i < x.meta.numel(); i += 3) p[i] *= 200.0f;
  p[7] = -std::numeric_limits<float>::max();
  HostTensor xt(TensorMeta{DType::kF32, {2, 5, 37}});
  auto* q = reinterpret_cast<float*>(xt.data.data());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 37; ++c)
      for (int64_t w = 0; w < 5; ++w) q[(n * 5 + w) * 37 + c] = p[(n * 37 + c) * 5 + w];
  for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
    Attrs inner, last;
    inner.axis = 1;
    last.axis = -1;
    const HostTensor a = run(op, {&x}, inner), b = run(op, {&xt}, last);
    std::vector<float> want(static_cast<size_t>(a.meta.numel()));
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 37; ++c)
        for (int64_t w = 0; w < 5; ++w)
          want[static_cast<size_t>((n * 37 + c) * 5 + w)] = f32(b)[(n * 5 + w) * 37 + c];
    expect_same_bits(a, want, op_name(op));
  }
}

TEST(InterpreterLoops, SumAndMeanOverTrailingAxesAreDoubleSums) {
  std::mt19937 rng(17);
  const HostTensor x = random_f32({4, 128, 512}, rng);
  for (const std::vector<int64_t>& axes :
       std::vector<std::vector<int64_t>>{{2}, {1, 2}, {0, 1, 2}, {1}, {0}}) {
    for (OpKind op : {OpKind::Sum, OpKind::Mean}) {
      Attrs a;
      a.dims = axes;
      a.keepdim = true;
      const HostTensor y = run(op, {&x}, a);
      std::vector<double> acc(static_cast<size_t>(y.meta.numel()), 0.0);
      std::vector<int64_t> count(acc.size(), 0);
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 128; ++j)
          for (int64_t k = 0; k < 512; ++k) {
            const int64_t at[3] = {i, j, k};
            int64_t o = 0;
            for (int d = 0; d < 3; ++d) {
              const bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
              o = o * (red ? 1 : x.meta.shape[d]) + (red ? 0 : at[d]);
            }
            acc[o] += double(f32(x)[(i * 128 + j) * 512 + k]);  // row-major order
            ++count[o];
          }
      std::vector<float> want(acc.size());
      for (size_t o = 0; o < acc.size(); ++o)
        want[o] = static_cast<float>(op == OpKind::Mean ? acc[o] / double(count[o]) : acc[o]);
      expect_same_bits(y, want, std::string(op_name(op)) + " axes " + std::to_string(axes.size()));
    }
  }
}

TEST(InterpreterLoops, RowSumsInBlocksOfRowsKeepEachRowsOrder) {
  // 111 rows: blocks of eight rows summed side by side, then the last seven one by one. Each
  // row holds 2^60 and then -2^60 at a place of its own: in row order the values before the
  // pair vanish into 2^60 and those after it remain, so any other order gives other sums.
  std::mt19937 rng(19);
  HostTensor x = random_f32({3, 37, 64}, rng);
  for (int64_t r = 0; r < 3 * 37; ++r) {
    float* row = reinterpret_cast<float*>(x.data.data()) + r * 64;
    const int64_t at = (r * 7) % 63;
    row[at] = std::ldexp(1.0f, 60);
    row[at + 1] = -std::ldexp(1.0f, 60);
  }
  for (OpKind op : {OpKind::Sum, OpKind::Mean}) {
    Attrs a;
    a.dims = {2};
    const HostTensor y = run(op, {&x}, a);
    std::vector<float> want(3 * 37);
    for (size_t r = 0; r < want.size(); ++r) {
      double acc = 0.0;
      for (size_t k = 0; k < 64; ++k) acc += double(f32(x)[r * 64 + k]);
      want[r] = static_cast<float>(op == OpKind::Mean ? acc / 64.0 : acc);
    }
    expect_same_bits(y, want, op_name(op));
  }
}

TEST(ParallelFor, CoversEveryIndexOnceFromManyCallersAndNested) {
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      const int64_t n = 100000 + t * 7919;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      eager::parallel_for(n, 1000, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        eager::parallel_for(e - b, 10, [&](int64_t, int64_t) {});  // nested: runs inline
      });
      for (auto& h : hits)
        if (h.load() != 1) failures++;
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
  int calls = 0;
  eager::parallel_for(0, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  eager::parallel_for(5, 1000, [&](int64_t b, int64_t e) { calls += static_cast<int>(e - b); });
  EXPECT_EQ(calls, 5);
  EXPECT_GE(eager::cpu_threads(), 1);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kBlocksKept = false;  // AddressSanitizer builds keep no freed block
#else
constexpr bool kBlocksKept = true;
#endif

TEST(HostMemory, FreedBlocksAreReusedBySize) {
  host_memory::release_cached();
  const size_t bytes = 3 * host_memory::kHugeThreshold + 5;
  void* p = host_memory::allocate_large(bytes);
  std::memset(p, 1, bytes);
  host_memory::free_large(p, bytes);
  if (!kBlocksKept) {
    EXPECT_EQ(host_memory::cached_bytes(), 0u);
    return;
  }
  EXPECT_GE(host_memory::cached_bytes(), bytes);
  void* q = host_memory::allocate_large(bytes);
  EXPECT_EQ(p, q);  // the block kept for this size
  EXPECT_EQ(host_memory::cached_bytes(), 0u);
  void* small = host_memory::allocate_large(host_memory::kCachedThreshold + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  host_memory::free_large(small, host_memory::kCachedThreshold + 1);
  host_memory::free_large(q, bytes);
  host_memory::release_cached();
  EXPECT_EQ(host_memory::cached_bytes(), 0u);
  {  // tensors give their blocks back on destruction and take them again
    HostTensor a(TensorMeta{DType::kF32, {1 << 20}});
    const std::byte* first = a.data.data();
    a = HostTensor();
    HostTensor b(TensorMeta{DType::kF32, {1 << 20}});
    EXPECT_EQ(b.data.data(), first);
    for (std::byte v : b.data) ASSERT_EQ(v, std::byte{0});  // a new tensor is zeroed
  }
  host_memory::release_cached();
}

}  // namespace
}  // namespace kiln
