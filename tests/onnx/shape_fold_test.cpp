// Shape subgraphs stay symbolic (runtime/onnx/shape_fold*.cpp): each graph computes the shape
// argument of a Reshape, Expand, Pad, Slice or ConstantOfShape from `Shape` of an input with
// dynamic dims, in the patterns PyTorch's exporter writes, and must run with 0 graph breaks at
// every size, with the values a direct computation gives. A shape read from input data stays a
// break and says so.
#include <gtest/gtest.h>

#include <random>

#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "onnx/onnx_builder.h"

namespace kiln::test {
namespace {

using ::onnx::TensorProto;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor::from_vector(random_floats(static_cast<size_t>(n), seed), shape);
}

onnx::CompiledModel compiled(OnnxBuilder& b) {
  auto m = onnx::Model::parse(as_bytes(b.bytes()), Device::cpu(), "shape_fold.onnx");
  if (!m.ok()) throw Error(m.status());
  return onnx::CompiledModel(*m);
}

/// `shape` -> Where(shape == -1, 1, shape), PyTorch's form of an Expand target with -1s.
void minus_one_to_one(OnnxBuilder& b, const std::string& shape, const std::string& out) {
  b.node("Shape", {shape}, {out + "_n"});
  auto* ones = b.node("ConstantOfShape", {out + "_n"}, {out + "_ones"});
  OnnxBuilder::attr_i64_tensor(ones, "value", 1);
  b.node("Mul", {out + "_ones", "minus_one"}, {out + "_m1"});
  b.node("Equal", {shape, out + "_m1"}, {out + "_is"});
  b.node("Where", {out + "_is", out + "_ones", shape}, {out});
}

// Shape, Gather, Unsqueeze, Concat, ConstantOfShape, Mul, Equal, Where -> Expand.
TEST(OnnxShapeFold, ExpandTargetWithMinusOnesFromShape) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {"B", 2, 1}).input("y", TensorProto::FLOAT, {"B", "S"});
  b.output("z", TensorProto::FLOAT);
  b.init_i64("zero", {0}, {}).init_i64("one", {1}, {}).init_i64("axes0", {0}, {1});
  b.init_i64("minus_one", {-1}, {}).init_i64("minus_one_v", {-1}, {1});
  b.node("Shape", {"y"}, {"sy"});
  b.node("Gather", {"sy", "zero"}, {"b"});
  b.node("Gather", {"sy", "one"}, {"s"});
  b.node("Unsqueeze", {"b", "axes0"}, {"bu"});
  b.node("Unsqueeze", {"s", "axes0"}, {"su"});
  OnnxBuilder::attr_i(b.node("Concat", {"bu", "minus_one_v", "su"}, {"target"}), "axis", 0);
  minus_one_to_one(b, "target", "fixed");
  b.node("Expand", {"x", "fixed"}, {"z"});
  onnx::CompiledModel c = compiled(b);
  for (auto [batch, len] : {std::pair<int64_t, int64_t>{2, 3}, {3, 5}, {4, 7}}) {
    const Tensor x = random_tensor({batch, 2, 1}, 1);
    const std::vector<Tensor> out = c({x, random_tensor({batch, len}, 2)});
    ASSERT_EQ(out[0].shape(), (Shape{batch, 2, len}));
    const std::vector<float> xs = x.to_vector<float>(), zs = out[0].to_vector<float>();
    for (int64_t i = 0; i < batch * 2 * len; ++i)
      ASSERT_EQ(zs[static_cast<size_t>(i)], xs[static_cast<size_t>(i / len)]) << i;
  }
  EXPECT_EQ(c.stats().graph_breaks, 0u) << c.explain().break_reasons.at(0);
  EXPECT_EQ(c.stats().compiles, 1u);  // B and S stay symbols through the whole subgraph
}

// F.pad(x, (0, (4 - W % 4) % 4)) as exported: Mod, Sub, ConstantOfShape of a computed length,
// Concat, Reshape to [-1, 2], a reversing Slice, Transpose, Reshape, Cast -> Pad.
TEST(OnnxShapeFold, PadToAMultipleOfTheWindow) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {"B", "W"}).output("z", TensorProto::FLOAT);
  b.init_i64("one", {1}, {}).init_i64("four", {4}, {}).init_i64("axes0", {0}, {1});
  b.init_i64("zero_v", {0}, {1}).init_i64("rank2", {4}, {}).init_i64("zero", {0}, {});
  b.init_i64("pairs", {-1, 2}, {2}).init_i64("flat", {-1}, {1});
  b.init_i64("st", {-1}, {1}).init_i64("en", {-9223372036854775807LL}, {1});
  b.init_i64("ax", {0}, {1}).init_i64("sp", {-1}, {1});
  b.node("Shape", {"x"}, {"sx"});
  b.node("Gather", {"sx", "one"}, {"w"});
  b.node("Mod", {"w", "four"}, {"wm"});
  b.node("Sub", {"four", "wm"}, {"pre"});
  b.node("Mod", {"pre", "four"}, {"pad"});
  b.node("Unsqueeze", {"pad", "axes0"}, {"padv"});
  OnnxBuilder::attr_i(b.node("Concat", {"zero_v", "padv"}, {"torch_pads"}), "axis", 0);
  b.node("Shape", {"torch_pads"}, {"np"});
  b.node("Gather", {"np", "zero"}, {"npn"});
  b.node("Sub", {"rank2", "npn"}, {"rest"});
  b.node("Unsqueeze", {"rest", "axes0"}, {"restv"});
  auto* zeros = b.node("ConstantOfShape", {"restv"}, {"fill"});
  OnnxBuilder::attr_i64_tensor(zeros, "value", 0);
  OnnxBuilder::attr_i(b.node("Concat", {"torch_pads", "fill"}, {"all"}), "axis", 0);
  b.node("Reshape", {"all", "pairs"}, {"p2"});
  b.node("Slice", {"p2", "st", "en", "ax", "sp"}, {"rev"});
  auto* tr = b.node("Transpose", {"rev"}, {"cols"});
  OnnxBuilder::attr_ints(tr, "perm", {1, 0});
  b.node("Reshape", {"cols", "flat"}, {"pads64"});
  auto* cast = b.node("Cast", {"pads64"}, {"pads"});
  OnnxBuilder::attr_i(cast, "to", TensorProto::INT64);
  b.node("Pad", {"x", "pads"}, {"z"});
  onnx::CompiledModel c = compiled(b);
  for (auto [batch, w] : {std::pair<int64_t, int64_t>{2, 5}, {3, 6}, {2, 8}, {3, 13}}) {
    const Tensor x = random_tensor({batch, w}, 3);
    const std::vector<Tensor> out = c({x});
    const int64_t padded = (w + 3) / 4 * 4;
    ASSERT_EQ(out[0].shape(), (Shape{batch, padded}));
    const std::vector<float> xs = x.to_vector<float>(), zs = out[0].to_vector<float>();
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < padded; ++j)
        ASSERT_EQ(zs[static_cast<size_t>(i * padded + j)],
                  j < w ? xs[static_cast<size_t>(i * w + j)] : 0.f);
  }
  // The pad amount is a value the Pad needs: it is guarded, never a host read.
  EXPECT_EQ(c.stats().graph_breaks, 0u) << c.explain().break_reasons.at(0);
}

// ScatterND into a shape, ReduceProd of a shape -> ConstantOfShape (int, folded) and Expand.
TEST(OnnxShapeFold, ScatterNDAndReduceProdOfAShape) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {1, 1}).input("y", TensorProto::FLOAT, {"B", "S"});
  b.output("z", TensorProto::FLOAT);
  b.init_i64("idx", {0}, {1, 1});
  b.node("Shape", {"y"}, {"sy"});
  auto* prod = b.node("ReduceProd", {"sy"}, {"n"});
  OnnxBuilder::attr_i(prod, "keepdims", 1);
  b.node("ScatterND", {"sy", "idx", "n"}, {"target"});  // [B * S, S]
  b.node("Expand", {"x", "target"}, {"z"});
  onnx::CompiledModel c = compiled(b);
  for (auto [batch, len] : {std::pair<int64_t, int64_t>{2, 3}, {3, 4}}) {
    const Tensor x = random_tensor({1, 1}, 4);
    const std::vector<Tensor> out = c({x, random_tensor({batch, len}, 5)});
    ASSERT_EQ(out[0].shape(), (Shape{batch * len, len}));
    for (float v : out[0].to_vector<float>()) ASSERT_EQ(v, x.to_vector<float>()[0]);
  }
  EXPECT_EQ(c.stats().graph_breaks, 0u) << c.explain().break_reasons.at(0);
  EXPECT_EQ(c.stats().compiles, 1u);
}

// Less on a symbolic size, the logic ops and Where -> Slice's end: y[:, :min(S, 4)]. The
// comparison is a guard (a second compile when S crosses 4), not a host read.
TEST(OnnxShapeFold, ComparisonsAndLogicGuardInsteadOfBreaking) {
  OnnxBuilder b;
  b.input("y", TensorProto::FLOAT, {"B", "S"}).output("z", TensorProto::FLOAT);
  b.init_i64("one", {1}, {}).init_i64("four", {4}, {}).init_i64("axes0", {0}, {1});
  b.init_i64("start", {0}, {1}).init_i64("axis1", {1}, {1});
  b.node("Shape", {"y"}, {"sy"});
  b.node("Gather", {"sy", "one"}, {"s"});
  b.node("Less", {"s", "four"}, {"lt"});
  b.node("Greater", {"s", "four"}, {"gt"});
  b.node("Not", {"lt"}, {"nlt"});
  b.node("And", {"lt", "nlt"}, {"never"});
  b.node("Or", {"never", "lt"}, {"lt2"});
  b.node("Xor", {"lt2", "never"}, {"lt3"});  // == lt
  b.node("Or", {"lt3", "gt"}, {"ne"});       // S != 4
  b.node("Where", {"lt3", "s", "four"}, {"m"});
  b.node("Where", {"ne", "m", "four"}, {"end"});
  b.node("Unsqueeze", {"end", "axes0"}, {"endv"});
  b.node("Slice", {"y", "start", "endv", "axis1"}, {"z"});
  onnx::CompiledModel c = compiled(b);
  for (auto [batch, len] : {std::pair<int64_t, int64_t>{2, 3}, {3, 6}, {2, 2}, {2, 9}, {3, 4}}) {
    const Tensor y = random_tensor({batch, len}, 6);
    const std::vector<Tensor> out = c({y});
    const int64_t keep = std::min<int64_t>(len, 4);
    ASSERT_EQ(out[0].shape(), (Shape{batch, keep}));
    const std::vector<float> ys = y.to_vector<float>(), zs = out[0].to_vector<float>();
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < keep; ++j)
        ASSERT_EQ(zs[static_cast<size_t>(i * keep + j)], ys[static_cast<size_t>(i * len + j)]);
  }
  EXPECT_EQ(c.stats().graph_breaks, 0u) << c.explain().break_reasons.at(0);
  EXPECT_LE(c.stats().compiles, 3u);  // S < 4, S > 4, S == 4: one compile for each outcome
}

// Tile, Reshape to 2-D, ReduceMax / ReduceMin / ReduceSum over an axis, Div, Neg, Abs, Sign,
// Min, Max, Squeeze, Unsqueeze, Cast to bool, Range, Sum: a roundabout [B, S] for Reshape.
TEST(OnnxShapeFold, ArithmeticAndReductionsOfShapes) {
  OnnxBuilder b;
  b.input("y", TensorProto::FLOAT, {"B", "S"}).output("z", TensorProto::FLOAT);
  b.init_i64("reps", {2}, {1}).init_i64("two_by_two", {2, 2}, {2}).init_i64("axes0", {0}, {1});
  b.init_i64("two", {2}, {}).init_i64("r0", {0}, {}).init_i64("r3", {3}, {});
  b.init_i64("r1", {1}, {});
  b.node("Shape", {"y"}, {"sy"});
  b.node("Tile", {"sy", "reps"}, {"t"});          // [B, S, B, S]
  b.node("Reshape", {"t", "two_by_two"}, {"m"});  // [[B, S], [B, S]]
  auto* mx = b.node("ReduceMax", {"m"}, {"mx"});
  OnnxBuilder::attr_ints(mx, "axes", {0});
  OnnxBuilder::attr_i(mx, "keepdims", 0);
  auto* mn = b.node("ReduceMin", {"m"}, {"mn"});
  OnnxBuilder::attr_ints(mn, "axes", {0});
  OnnxBuilder::attr_i(mn, "keepdims", 0);
  auto* sm = b.node("ReduceSum", {"m", "axes0"}, {"sm"});  // [2B, 2S]
  OnnxBuilder::attr_i(sm, "keepdims", 0);
  b.node("Div", {"sm", "two"}, {"half"});
  b.node("Neg", {"half"}, {"neg"});
  b.node("Abs", {"neg"}, {"abs"});
  b.node("Sign", {"abs"}, {"sign"});  // [1, 1]
  b.node("Min", {"mx", "mn"}, {"lo"});
  b.node("Max", {"lo", "abs"}, {"hi"});
  b.node("Mul", {"hi", "sign"}, {"shape2"});
  b.node("Unsqueeze", {"shape2", "axes0"}, {"u"});
  b.node("Squeeze", {"u", "axes0"}, {"shape3"});
  b.node("Range", {"r0", "r3", "r1"}, {"rng"});  // [0, 1, 2]
  b.node("ReduceSum", {"rng"}, {"three"});       // keepdims: [3]
  b.node("Sub", {"three", "three"}, {"zero"});
  auto* tobool = b.node("Cast", {"zero"}, {"is_nonzero"});
  OnnxBuilder::attr_i(tobool, "to", TensorProto::BOOL);
  b.node("Where", {"is_nonzero", "sy", "shape3"}, {"shape4"});
  b.node("Sum", {"shape4", "zero"}, {"final"});
  b.node("Reshape", {"y", "final"}, {"z"});
  onnx::CompiledModel c = compiled(b);
  for (auto [batch, len] : {std::pair<int64_t, int64_t>{2, 3}, {5, 4}}) {
    const Tensor y = random_tensor({batch, len}, 7);
    const std::vector<Tensor> out = c({y});
    ASSERT_EQ(out[0].shape(), (Shape{batch, len}));
    EXPECT_EQ(out[0].to_vector<float>(), y.to_vector<float>());
  }
  EXPECT_EQ(c.stats().graph_breaks, 0u) << c.explain().break_reasons.at(0);
  EXPECT_EQ(c.stats().compiles, 1u);
}

// A shape read from input data cannot be folded: it stays one break, named with its node.
TEST(OnnxShapeFold, AShapeFromInputDataStaysABreakAndSaysSo) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {6}).input("shape", TensorProto::INT64, {2});
  b.output("z", TensorProto::FLOAT);
  b.node("Relu", {"x"}, {"r"});
  b.node("Reshape", {"r", "shape"}, {"z"}, "reshape_by_data");
  onnx::CompiledModel c = compiled(b);
  const Tensor x = random_tensor({6}, 8);
  const std::vector<Tensor> out = c({x, Tensor::from_vector(std::vector<int64_t>{2, 3}, {2})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  const ExplainReport r = c.explain();
  ASSERT_EQ(r.graph_break_count, 1u);
  EXPECT_NE(r.break_reasons[0].find("Reshape node 'reshape_by_data'"), std::string::npos)
      << r.break_reasons[0];
  EXPECT_NE(r.break_reasons[0].find("a host value is needed"), std::string::npos)
      << r.break_reasons[0];
}

}  // namespace
}  // namespace kiln::test
