// The front end's host values: sequences built, edited and concatenated inside one compiled
// graph with no break, sequence and optional inputs and outputs through Model::run_values,
// string tensors (Cast both ways, StringNormalizer), random nodes with and without a seed, and
// the errors for values of the wrong kind or bad strings.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "onnx/onnx_builder.h"

namespace kiln::test {
namespace {

using ::onnx::TensorProto;
using F = std::vector<float>;

void attr_s(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

void attr_strings(::onnx::NodeProto* n, const std::string& name, std::vector<std::string> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const std::string& s : v) a->add_strings(s);
}

onnx::Model load(OnnxBuilder& b) {
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  if (!m.ok()) throw Error(m.status());
  return *m;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.status().to_string();
  }
  return "no error";
}

onnx::Value strings(std::vector<int64_t> shape, std::vector<std::string> s) {
  onnx::Value v;
  v.kind = onnx::Value::Kind::kStrings;
  v.shape = std::move(shape);
  v.strings = std::move(s);
  return v;
}

// x [5, 2] split into rows [2, 3], the second erased, x's first row appended, concatenated:
// rows 0, 1 then 0 again, in one graph (the sequence is a host value while tracing).
TEST(OnnxHostValues, SequenceEditsCompileWithoutBreaks) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {5, 2}).output("y", TensorProto::FLOAT);
  b.init_i64("split", {2, 3}, {2});
  b.init_i64("one", {1}, {});
  b.init_i64("zero", {0}, {});
  b.node("SplitToSequence", {"x", "split"}, {"seq"});
  b.node("SequenceErase", {"seq", "one"}, {"seq2"});
  b.node("Gather", {"x", "zero"}, {"row0"});
  b.node("Unsqueeze", {"row0", "zero1"}, {"row"});
  b.init_i64("zero1", {0}, {1});
  b.node("SequenceInsert", {"seq2", "row"}, {"seq3"});
  auto* c = b.node("ConcatFromSequence", {"seq3"}, {"y"});
  OnnxBuilder::attr_i(c, "axis", 0);
  onnx::CompiledModel run(load(b));
  const F x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<Tensor> out = run({Tensor::from_vector(x, {5, 2})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(out[0].to_vector<float>(), (F{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(run.explain().graph_break_count, 0u);
}

TEST(OnnxHostValues, SequenceAndOptionalValuesInAndOut) {
  OnnxBuilder b;
  auto* in = b.proto().mutable_graph()->add_input();
  in->set_name("s");
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(TensorProto::FLOAT);
  auto* out = b.proto().mutable_graph()->add_output();
  out->set_name("o");
  out->mutable_type()
      ->mutable_optional_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(TensorProto::FLOAT);
  b.output("n", TensorProto::INT64);
  b.init_i64("last", {-1}, {});
  b.node("SequenceAt", {"s", "last"}, {"t"});
  b.node("Optional", {"t"}, {"o"});
  b.node("SequenceLength", {"s"}, {"n"});
  onnx::Model m = load(b);
  EXPECT_FALSE(m.tensors_only());
  onnx::Value s;
  s.kind = onnx::Value::Kind::kSequence;
  s.elements = {onnx::Value::of(Tensor::from_vector(F{1, 2}, {2})),
                onnx::Value::of(Tensor::from_vector(F{3, 4, 5}, {3}))};
  std::vector<onnx::Value> r = m.run_values({s});
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(r[0].kind, onnx::Value::Kind::kOptional);
  ASSERT_EQ(r[0].elements.size(), 1u);
  EXPECT_EQ(r[0].elements[0].tensor.to_vector<float>(), (F{3, 4, 5}));
  EXPECT_EQ(r[1].tensor.to_vector<int64_t>(), (std::vector<int64_t>{2}));
  // The tensor API refuses the model; a position past the end and a tensor for the sequence
  // are errors naming the node.
  EXPECT_NE(error_of([&] { m({Tensor::from_vector(F{1}, {1})}); }).find("run_values"),
            std::string::npos);
  s.elements.clear();
  EXPECT_NE(error_of([&] {
              m.run_values({s});
            }).find("position -1 is outside [0, -1] for a sequence of 0 tensors"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              m.run_values({onnx::Value::of(Tensor::from_vector(F{1}, {1}))});
            }).find("input 's' is a tensor"),
            std::string::npos);
}

TEST(OnnxHostValues, StringsCastAndNormalize) {
  OnnxBuilder b;
  b.input("s", TensorProto::STRING, {3}).output("f", TensorProto::FLOAT);
  b.output("back", TensorProto::STRING).output("norm", TensorProto::STRING);
  OnnxBuilder::attr_i(b.node("Cast", {"s"}, {"f"}), "to", TensorProto::FLOAT);
  OnnxBuilder::attr_i(b.node("Cast", {"f"}, {"back"}), "to", TensorProto::STRING);
  auto* n = b.node("StringNormalizer", {"s"}, {"norm"});
  attr_s(n, "case_change_action", "UPPER");
  attr_strings(n, "stopwords", {"1E-5"});  // compared ignoring case
  onnx::Model m = load(b);
  std::vector<onnx::Value> r = m.run_values({strings({3}, {"1e-5", "0.25", "-inf"})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].tensor.to_vector<float>(), (F{1e-5f, 0.25f, -INFINITY}));
  EXPECT_EQ(r[1].strings, (std::vector<std::string>{"1e-05", "0.25", "-inf"}));
  EXPECT_EQ(r[2].strings, (std::vector<std::string>{"0.25", "-INF"}));
  EXPECT_NE(error_of([&] {
              m.run_values({strings({3}, {"1", "x2", "3"})});
            }).find("'x2' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              m.run_values({strings({2}, {"1", "2", "3"})});
            }).find("3 strings for 2 elements"),
            std::string::npos);
}

TEST(OnnxHostValues, AStringTensorIntoArithmeticIsUnimplemented) {
  OnnxBuilder b;
  b.input("s", TensorProto::STRING, {1}).output("y", TensorProto::FLOAT);
  b.node("Neg", {"s"}, {"y"});
  onnx::Model m = load(b);
  EXPECT_NE(error_of([&] { m.run_values({strings({1}, {"1"})}); }).find("string tensor"),
            std::string::npos);
}

TEST(OnnxHostValues, RandomSeeds) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {64}).output("a", TensorProto::FLOAT);
  b.output("b", TensorProto::FLOAT);
  OnnxBuilder::attr_f(b.node("RandomUniformLike", {"x"}, {"a"}), "seed", 3.0f);
  b.node("RandomUniformLike", {"x"}, {"b"});  // no seed
  onnx::Model m = load(b);
  const Tensor x = zeros({64}, DType::kF32);
  std::vector<Tensor> r1 = m({x}), r2 = m({x});
  EXPECT_EQ(r1[0].to_vector<float>(), r2[0].to_vector<float>());  // seeded: repeats
  EXPECT_NE(r1[1].to_vector<float>(), r2[1].to_vector<float>());  // a fresh seed per run
  onnx::set_default_seed(11);
  std::vector<Tensor> d1 = m({x}), d2 = m({x});
  onnx::set_default_seed(std::nullopt);
  EXPECT_EQ(d1[1].to_vector<float>(), d2[1].to_vector<float>());
  for (float v : r1[0].to_vector<float>()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

// MelWeightMatrix of 2 mel bins over a 8-point DFT at 8 kHz, 0 to 4 kHz: the edges are mels
// 0, 2146/4, 2*2146/4, ... back in hertz, as bins floor(9 hz / 8000) = 0, 0, 1, 2; filter 0
// rises over [0, 0] (one bin: 1 at bin 0) and falls over [0, 1) (1 at bin 0), filter 1 rises
// over bins 0..1 (0, 1) and falls over [1, 2) (1 at bin 1).
TEST(OnnxHostValues, MelWeightMatrixByHandAndErrors) {
  OnnxBuilder b;
  b.input("n", TensorProto::INT64, {}).input("dft", TensorProto::INT64, {});
  b.input("rate", TensorProto::INT64, {}).input("lo", TensorProto::FLOAT, {});
  b.input("hi", TensorProto::FLOAT, {}).output("w", TensorProto::FLOAT);
  b.node("MelWeightMatrix", {"n", "dft", "rate", "lo", "hi"}, {"w"});
  onnx::Model m = load(b);
  const auto i64 = [](int64_t v) { return Tensor::from_vector(std::vector<int64_t>{v}, {}); };
  const auto f32 = [](float v) { return Tensor::from_vector(std::vector<float>{v}, {}); };
  std::vector<Tensor> r = m({i64(2), i64(8), i64(8000), f32(0), f32(4000)});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].shape(), (Shape{5, 2}));
  EXPECT_EQ(r[0].to_vector<float>(), (F{1, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_NE(error_of([&] {
              m({i64(0), i64(8), i64(8000), f32(0), f32(4000)});
            }).find("num_mel_bins must be positive"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              m({i64(2), i64(8), i64(8000), f32(0), f32(40000)});
            }).find("above the Nyquist frequency"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::test
