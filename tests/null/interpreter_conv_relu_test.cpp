// The interpreter's fusions of an f32 Conv with what alone reads it: a Relu (eval_conv_relu),
// or a chain of elementwise ops such as HardSwish written out (eval_conv_then, applied to each
// run of outputs as the conv writes it). The graph's results are bit for bit those of the ops
// evaluated one after the other, on every conv path, with NaN inputs. By default the unit-stride and strided convs take the direct
// AVX-512 kernels where the CPU has them; the test's second run, KILN_CONV_DIRECT=0
// (null_interpreter_conv_relu_im2col_test), takes im2col + sgemm (images together, row
// chunks, 1x1 products read in place) and the planar depthwise loops. Where the fusion must not
// happen (the conv read again, a graph output, not f32, a Relu inside a fused chain) the
// conv's own value stays what it was, negative elements included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eager/interpreter.h"
#include "graph/op.h"
#include "kiln/logging.h"

namespace kiln {
namespace {

HostTensor random_f32(Shape shape, std::mt19937& rng) {
  HostTensor t(TensorMeta{DType::kF32, std::move(shape)});
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  auto* p = reinterpret_cast<float*>(t.data.data());
  for (int64_t i = 0; i < t.meta.numel(); ++i) p[i] = real(rng);
  return t;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

/// Same dtype, shape and bytes (NaN payloads and the sign of zero included); reports the
/// first few differing elements of an f32 tensor.
void expect_same(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.meta, want.meta) << what;
  ASSERT_EQ(got.data.size(), want.data.size()) << what;
  if (got.data.size() == 0 ||  // (an empty tensor's data may be null: no memcmp)
      std::memcmp(got.data.data(), want.data.data(), got.data.size()) == 0)
    return;
  int bad = 0;
  if (got.meta.dtype == DType::kF32) {
    const auto* g = reinterpret_cast<const float*>(got.data.data());
    const auto* w = reinterpret_cast<const float*>(want.data.data());
    for (int64_t i = 0; i < got.meta.numel() && bad < 3; ++i)
      if (std::memcmp(&g[i], &w[i], 4) != 0)
        ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", expected " << w[i]
                      << " (" << ++bad << ")";
  }
  ADD_FAILURE() << what << ": bytes differ";
}

struct Case {
  std::string what;
  Shape x;
  int64_t c_out, groups;
  std::vector<int64_t> kernel, strides, pads;
};

Attrs conv_attrs(const Case& c) {
  Attrs at;
  at.window.strides = c.strides;
  at.window.dilations.assign(c.kernel.size(), 1);
  at.window.pads = c.pads;
  at.window.groups = c.groups;
  return at;
}

/// relu(conv(x, w, b)) evaluated as two separate ops: the reference.
HostTensor conv_then_relu(const Case& c, const HostTensor& x, const HostTensor& w,
                          const HostTensor& b) {
  auto y = interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w, &b}, conv_attrs(c));
  EXPECT_TRUE(y.ok()) << y.status().to_string();
  if (!y.ok()) return {};
  auto r = interpret_op(OpKind::Relu, std::vector<const HostTensor*>{&*y}, {});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(r).value() : HostTensor();
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"3x3, unit strides (the direct conv on AVX-512)",
       {2, 16, 20, 21},
       24,
       1,
       {3, 3},
       {1, 1},
       {1, 1, 1, 1}},
      {"3x3, stride 2 (im2col, images together)",
       {2, 8, 33, 33},
       12,
       1,
       {3, 3},
       {2, 2},
       {1, 1, 1, 1}},
      {"1x1 on 32x32 planes (a product over the input as it is)",
       {1, 16, 32, 32},
       20,
       1,
       {1, 1},
       {1, 1},
       {0, 0, 0, 0}},
      {"grouped 3x3", {2, 12, 9, 10}, 6, 3, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"depthwise, 15-wide rows", {2, 8, 15, 15}, 8, 8, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"depthwise, channels-last", {2, 32, 8, 8}, 32, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"1-D", {3, 5, 40}, 7, 1, {3}, {1}, {0, 2}},
      {"im2col in row chunks (one image wider than a product)",
       {1, 64, 200, 200},
       8,
       1,
       {3, 3},
       {2, 2},
       {1, 1, 1, 1}},
      {"3x1, no column padding (the direct conv writes its outputs in place)",
       {2, 8, 12, 16},
       16,
       1,
       {3, 1},
       {1, 1},
       {1, 0, 1, 0}},
      {"3x1 on 96x96 planes (in place, the planes split in tile ranges)",
       {1, 32, 96, 96},
       32,
       1,
       {3, 1},
       {1, 1},
       {1, 0, 1, 0}},
      {"an empty batch", {0, 4, 6, 6}, 4, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}},
  };
  return c;
}

/// A case's input (with a NaN at element 7), weight and bias, random.
struct ConvArgs {
  HostTensor x, w, b;
};
ConvArgs random_args(const Case& c, std::mt19937& rng) {
  ConvArgs a;
  a.x = random_f32(c.x, rng);
  if (a.x.meta.numel() > 7) reinterpret_cast<float*>(a.x.data.data())[7] = std::nanf("");
  Shape ws{c.c_out, c.x[1] / c.groups};
  for (int64_t k : c.kernel) ws.push_back(k);
  a.w = random_f32(ws, rng);
  a.b = random_f32({c.c_out}, rng);
  return a;
}

/// The case's conv of three graph inputs (x, w, b); returns the conv's node.
NodeId add_conv(Graph& g, const Case& c, const ConvArgs& a) {
  const NodeId xi = g.add_input(a.x.meta), wi = g.add_input(a.w.meta), bi = g.add_input(a.b.meta);
  return g.add(OpKind::Conv, {xi, wi, bi}, conv_attrs(c)).value();
}

TEST(InterpreterConvRelu, AFusedReluGivesTheTwoOpsBits) {
  std::mt19937 rng(41);
  for (const Case& c : cases()) {
    const ConvArgs args = random_args(c, rng);
    const HostTensor &x = args.x, &w = args.w, &b = args.b;
    Graph g;
    const NodeId conv = add_conv(g, c, args);
    const NodeId relu = g.add(OpKind::Relu, {conv}, {}).value();
    g.set_outputs({relu});
    const HostTensor* ins[] = {&x, &w, &b};
    auto r = interpret(g, ins, {});
    ASSERT_TRUE(r.ok()) << c.what << ": " << r.status().to_string();
    const HostTensor want = conv_then_relu(c, x, w, b);
    expect_same((*r)[0], want, c.what + " " + shape_str(c.x));
    // The reference has zeros from negative sums and NaNs from the NaN input, or the case
    // would prove little.
    bool zero = false, nan = false;
    const auto* v = reinterpret_cast<const float*>(want.data.data());
    for (int64_t i = 0; i < want.meta.numel(); ++i) {
      zero = zero || v[i] == 0.0f;
      nan = nan || std::isnan(v[i]);
    }
    if (want.meta.numel() > 0) {
      EXPECT_TRUE(zero && nan) << c.what;
    }
  }
}

TEST(InterpreterConvRelu, AConvReadElsewhereKeepsItsNegativeValues) {
  std::mt19937 rng(43);
  const Case& c = cases()[0];
  const HostTensor x = random_f32(c.x, rng);
  const HostTensor w = random_f32({c.c_out, c.x[1], 3, 3}, rng), b = random_f32({c.c_out}, rng);
  auto plain =
      interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w, &b}, conv_attrs(c));
  ASSERT_TRUE(plain.ok());
  const HostTensor want_relu = conv_then_relu(c, x, w, b);
  auto neg = interpret_op(OpKind::Neg, std::vector<const HostTensor*>{&*plain}, {});
  ASSERT_TRUE(neg.ok());
  // Three graphs: the conv also read by Neg, the conv also a graph output, a Relu that a fused
  // chain takes in (Relu then Neg), and (the next test) an f16 conv.
  for (int shape = 0; shape < 3; ++shape) {
    Graph g;
    const NodeId xi = g.add_input(x.meta), wi = g.add_input(w.meta), bi = g.add_input(b.meta);
    const NodeId conv = g.add(OpKind::Conv, {xi, wi, bi}, conv_attrs(c)).value();
    const NodeId relu = g.add(OpKind::Relu, {conv}, {}).value();
    if (shape == 0) g.set_outputs({relu, g.add(OpKind::Neg, {conv}, {}).value()});
    if (shape == 1) g.set_outputs({conv, relu});
    if (shape == 2) g.set_outputs({g.add(OpKind::Neg, {relu}, {}).value()});
    const HostTensor* ins[] = {&x, &w, &b};
    auto r = interpret(g, ins, {});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const std::string what = "graph " + std::to_string(shape);
    if (shape == 0) {
      expect_same((*r)[0], want_relu, what + ", relu");
      expect_same((*r)[1], *neg, what + ", neg of the conv");
    } else if (shape == 1) {
      expect_same((*r)[0], *plain, what + ", the conv");
      expect_same((*r)[1], want_relu, what + ", relu");
    } else {
      auto want = interpret_op(OpKind::Neg, std::vector<const HostTensor*>{&want_relu}, {});
      ASSERT_TRUE(want.ok());
      expect_same((*r)[0], *want, what + ", neg of relu");
    }
  }
  bool negative = false;
  for (int64_t i = 0; i < plain->meta.numel(); ++i)
    negative = negative || reinterpret_cast<const float*>(plain->data.data())[i] < 0.0f;
  EXPECT_TRUE(negative);
}

TEST(InterpreterConvRelu, AnF16ConvIsNotFusedAndStillRight) {
  std::mt19937 rng(47);
  const Case& c = cases()[4];
  const HostTensor x32 = random_f32(c.x, rng);
  const HostTensor w32 = random_f32({c.c_out, c.x[1] / c.groups, 3, 3}, rng);
  const HostTensor b32 = random_f32({c.c_out}, rng);
  Attrs to16;
  to16.dtype = DType::kF16;
  const auto cast = [&](const HostTensor& t) {
    return interpret_op(OpKind::Cast, std::vector<const HostTensor*>{&t}, to16).value();
  };
  const HostTensor x = cast(x32), w = cast(w32), b = cast(b32);
  Graph g;
  const NodeId xi = g.add_input(x.meta), wi = g.add_input(w.meta), bi = g.add_input(b.meta);
  const NodeId conv = g.add(OpKind::Conv, {xi, wi, bi}, conv_attrs(c)).value();
  g.set_outputs({g.add(OpKind::Relu, {conv}, {}).value()});
  const HostTensor* ins[] = {&x, &w, &b};
  auto r = interpret(g, ins, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  auto y = interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w, &b}, conv_attrs(c));
  ASSERT_TRUE(y.ok());
  auto want = interpret_op(OpKind::Relu, std::vector<const HostTensor*>{&*y}, {});
  ASSERT_TRUE(want.ok());
  expect_same((*r)[0], *want, "f16 conv then relu");
}

/// HardSwish as the ONNX importer writes it, x * min(max(x * (1/6) + 0.5, 0), 1), its literals
/// one-element fills; with `late_scale`, the 1/6 is instead a one-element value computed from
/// `scale_of` (a graph input) after the conv, which a conv's output pass cannot read yet.
NodeId hard_swish(Graph& g, NodeId x, NodeId scale_of = -1) {
  const auto lit = [&](double v) {
    return g.add(OpKind::Full, {}, Attrs{.scalar = v, .dtype = DType::kF32}).value();
  };
  const NodeId sixth = scale_of >= 0 ? g.add(OpKind::Mul, {scale_of, lit(1.0 / 6)}, {}).value()
                                     : lit(1.0 / 6);
  NodeId t = g.add(OpKind::Mul, {x, sixth}, {}).value();
  t = g.add(OpKind::Add, {t, lit(0.5)}, {}).value();
  t = g.add(OpKind::Maximum, {t, lit(0)}, {}).value();
  t = g.add(OpKind::Minimum, {t, lit(1)}, {}).value();
  return g.add(OpKind::Mul, {x, t}, {}).value();
}

/// HardSwish of `y` node by node (interpret_op per op): the reference.
HostTensor hard_swish_ops(const HostTensor& y) {
  const auto scalar = [](float v) {
    HostTensor t(TensorMeta{DType::kF32, {}});
    std::memcpy(t.data.data(), &v, 4);
    return t;
  };
  const auto op = [](OpKind k, const HostTensor& a, const HostTensor& b) {
    auto r = interpret_op(k, std::vector<const HostTensor*>{&a, &b}, {});
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::move(r).value() : HostTensor();
  };
  const HostTensor sixth = scalar(static_cast<float>(1.0 / 6)), half = scalar(0.5f),
                   zero = scalar(0.0f), one = scalar(1.0f);
  HostTensor t = op(OpKind::Mul, y, sixth);
  t = op(OpKind::Add, t, half);
  t = op(OpKind::Maximum, t, zero);
  t = op(OpKind::Minimum, t, one);
  return op(OpKind::Mul, y, t);
}

/// The perf log of one interpret() call: whether any elementwise chain ran on its own.
struct PerfLog {
  PerfLog() {
    set_logs("perf");
    set_log_sink([this](LogTopic, std::string_view m) { text += std::string(m) + "\n"; });
  }
  ~PerfLog() {
    set_log_sink(nullptr);
    set_logs("");
  }
  bool chain_ran_alone() const { return text.find("fused elementwise chains") != std::string::npos; }
  std::string text;
};

TEST(InterpreterConvChain, AChainAppliedByItsConvGivesTheNodeByNodeBits) {
  std::mt19937 rng(53);
  for (const Case& c : cases()) {
    const ConvArgs args = random_args(c, rng);
    const HostTensor &x = args.x, &w = args.w, &b = args.b;
    Graph g;
    const NodeId conv = add_conv(g, c, args);
    g.set_outputs({hard_swish(g, conv)});
    const HostTensor* ins[] = {&x, &w, &b};
    PerfLog perf;
    auto r = interpret(g, ins, {});
    ASSERT_TRUE(r.ok()) << c.what << ": " << r.status().to_string();
    auto y = interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w, &b}, conv_attrs(c));
    ASSERT_TRUE(y.ok());
    const HostTensor want = hard_swish_ops(*y);
    expect_same((*r)[0], want, c.what + " " + shape_str(c.x));
    // The chain ran inside the conv's pass, not on its own.
    EXPECT_FALSE(perf.chain_ran_alone()) << c.what << "\n" << perf.text;
    // Both clamps and the NaN reach the reference, or the case would prove little.
    bool low = false, high = false, nan = false;
    const auto* v = reinterpret_cast<const float*>(want.data.data());
    const auto* yv = reinterpret_cast<const float*>(y->data.data());
    for (int64_t i = 0; i < want.meta.numel(); ++i) {
      low = low || (yv[i] < -3.0f && v[i] == 0.0f);
      high = high || (yv[i] > 3.0f && v[i] == yv[i]);
      nan = nan || std::isnan(v[i]);
    }
    if (want.meta.numel() > 0) {
      EXPECT_TRUE(low && high && nan) << c.what;
    }
  }
}

TEST(InterpreterConvChain, WhereTheConvCannotApplyItTheChainRunsAlone) {
  std::mt19937 rng(59);
  const Case& c = cases()[0];
  const HostTensor x = random_f32(c.x, rng);
  const HostTensor w = random_f32({c.c_out, c.x[1], 3, 3}, rng), b = random_f32({c.c_out}, rng);
  HostTensor s(TensorMeta{DType::kF32, {}});
  const float one = 1.0f;
  std::memcpy(s.data.data(), &one, 4);
  auto plain =
      interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w, &b}, conv_attrs(c));
  ASSERT_TRUE(plain.ok());
  const HostTensor want = hard_swish_ops(*plain);
  // Graph 0: the conv is also a graph output; 1: a scalar of the chain is computed after the
  // conv (from input s = 1, so the values are HardSwish's).
  for (int shape = 0; shape < 2; ++shape) {
    Graph g;
    const NodeId xi = g.add_input(x.meta), wi = g.add_input(w.meta), bi = g.add_input(b.meta),
                 si = g.add_input(s.meta);
    const NodeId conv = g.add(OpKind::Conv, {xi, wi, bi}, conv_attrs(c)).value();
    if (shape == 0) g.set_outputs({hard_swish(g, conv), conv});
    if (shape == 1) g.set_outputs({hard_swish(g, conv, si)});
    const HostTensor* ins[] = {&x, &w, &b, &s};
    PerfLog perf;
    auto r = interpret(g, ins, {});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const std::string what = "graph " + std::to_string(shape);
    expect_same((*r)[0], want, what + ", hard-swish");
    if (shape == 0) expect_same((*r)[1], *plain, what + ", the conv");
    EXPECT_TRUE(perf.chain_ran_alone()) << what << "\n" << perf.text;
  }
}

}  // namespace
}  // namespace kiln
