// The ONNX importer: clear errors for unsupported and malformed models, symbolic shape folding
// (one compile for every size of a dim_param), element-type mapping, graph breaks.
#include <gtest/gtest.h>

#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "onnx/onnx_builder.h"

namespace kiln::test {
namespace {

using ::onnx::TensorProto;

std::string error_of(const Expected<onnx::Model>& m) {
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.status().to_string();
}

TEST(OnnxImporter, UnknownOpNamesOpNodeAndOpset) {
  OnnxBuilder b(16);
  b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT);
  b.node("Relu", {"x"}, {"r"});
  b.node("FancyOp", {"r"}, {"y"}, "my_node");
  auto m = onnx::Model::parse(as_bytes(b.bytes()), Device::cpu(), "m.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  const std::string e = m.status().message();
  EXPECT_NE(e.find("'FancyOp'"), std::string::npos) << e;
  EXPECT_NE(e.find("'my_node'"), std::string::npos) << e;
  EXPECT_NE(e.find("opset 16"), std::string::npos) << e;
}

TEST(OnnxImporter, CycleMissingInputAndDuplicateAreErrors) {
  {
    OnnxBuilder b;
    b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT);
    b.node("Add", {"x", "b"}, {"a"});
    b.node("Relu", {"a"}, {"b"});
    b.node("Relu", {"a"}, {"y"});
    EXPECT_NE(error_of(onnx::Model::parse(as_bytes(b.bytes()))).find("cycle"), std::string::npos);
  }
  {
    OnnxBuilder b;
    b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT);
    b.node("Add", {"x", "nowhere"}, {"y"});
    EXPECT_NE(error_of(onnx::Model::parse(as_bytes(b.bytes()))).find("'nowhere'"),
              std::string::npos);
  }
  {
    OnnxBuilder b;
    b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT);
    b.node("Relu", {"x"}, {"y"});
    b.node("Neg", {"x"}, {"y"});
    EXPECT_NE(error_of(onnx::Model::parse(as_bytes(b.bytes()))).find("defined twice"),
              std::string::npos);
  }
  {
    OnnxBuilder b;
    b.input("x", TensorProto::FLOAT, {2}).output("y", TensorProto::FLOAT);
    b.node("Relu", {"x"}, {"z"});
    EXPECT_NE(error_of(onnx::Model::parse(as_bytes(b.bytes()))).find("never computed"),
              std::string::npos);
  }
}

TEST(OnnxImporter, TruncatedAndBadTensorData) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {3}).output("y", TensorProto::FLOAT);
  b.init_f32("w", {1, 2, 3}, {3});
  b.node("Add", {"x", "w"}, {"y"});
  const std::string bytes = b.bytes();
  ASSERT_TRUE(onnx::Model::parse(as_bytes(bytes)).ok());
  const std::string cut = bytes.substr(0, bytes.size() - 7);
  EXPECT_NE(error_of(onnx::Model::parse(as_bytes(cut))).find("truncated or corrupt"),
            std::string::npos);
  // The initializer declares 4 elements but stores 3.
  b.proto().mutable_graph()->mutable_initializer(0)->set_dims(0, 4);
  EXPECT_NE(error_of(onnx::Model::parse(as_bytes(b.bytes()))).find("raw_data has 12 bytes"),
            std::string::npos);
  // A graph input of type COMPLEX128 is unsupported, naming the type (STRING inputs are host
  // values: null_onnx_host_values_test).
  OnnxBuilder s;
  s.input("x", TensorProto::COMPLEX128, {1}).output("y", TensorProto::COMPLEX128);
  s.node("Identity", {"x"}, {"y"});
  auto m = onnx::Model::parse(as_bytes(s.bytes()));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("COMPLEX128"), std::string::npos);
}

TEST(OnnxImporter, WrongAttributeTypeIsAnErrorAtRun) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {2, 3}).output("y", TensorProto::FLOAT);
  OnnxBuilder::attr_f(b.node("Softmax", {"x"}, {"y"}, "sm"), "axis", 1.0f);
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  ASSERT_TRUE(m.ok());
  onnx::CompiledModel c(*m);
  auto r = c.run({Tensor::full({2, 3}, 1.0)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Softmax node 'sm'"), std::string::npos)
      << r.status().to_string();
  EXPECT_NE(r.status().message().find("'axis' must be an INT"), std::string::npos);
}

// x [batch, 4] -> Reshape(x, Concat(Shape(x)[0], 2, 2)) * 2: the batch dim stays a symbol
// through the shape arithmetic, so one compile serves every batch size.
TEST(OnnxImporter, ShapeArithmeticStaysSymbolic) {
  OnnxBuilder b(13);
  b.input("x", TensorProto::FLOAT, {"batch", 4}).output("y", TensorProto::FLOAT);
  b.init_i64("zero", {0}, {}).init_i64("two_two", {2, 2}, {2}).init_i64("axes", {0}, {1});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "zero"}, {"batch"});
  b.node("Unsqueeze", {"batch", "axes"}, {"batch1"});
  b.node("Concat", {"batch1", "two_two"}, {"target"})->add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  b.node("Reshape", {"x", "target"}, {"r"});
  b.node("Add", {"r", "r"}, {"y"});
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->inputs()[0].str(), "x: FLOAT[batch, 4]");
  onnx::CompiledModel c(*m);
  for (int64_t n : {3, 5, 8}) {
    std::vector<float> x(static_cast<size_t>(n * 4));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    auto out = c({Tensor::from_vector(x, {n, 4})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (Shape{n, 2, 2}));
    std::vector<float> y = out[0].to_vector<float>();
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 2 * x[i]);
  }
  EXPECT_EQ(c.stats().compiles, 1u);
  EXPECT_EQ(c.stats().dynamic_compiles, 1u);
}

TEST(OnnxImporter, NarrowIntegerTypesWrapOnOutput) {
  OnnxBuilder b;
  b.input("a", TensorProto::UINT8, {3}).input("b", TensorProto::UINT8, {3});
  b.output("y", TensorProto::UINT8);
  b.node("Add", {"a", "b"}, {"y"});
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->inputs()[0].dtype, DType::kI32);
  onnx::CompiledModel c(*m);
  auto out = c({Tensor::from_vector(std::vector<int32_t>{200, 1, 255}, {3}),
                Tensor::from_vector(std::vector<int32_t>{100, 2, 1}, {3})});
  EXPECT_EQ(onnx::values_as(out[0], onnx::OnnxType::kUint8), (std::vector<double>{44, 3, 0}));
}

// An input of another element type than the model declares is an error naming both, as in
// ONNX Runtime, not a silent cast (0.5 would become true, 2.7 would become 2).
TEST(OnnxImporter, InputElementTypesAreChecked) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {2}).input("m", TensorProto::BOOL, {2});
  b.output("y", TensorProto::FLOAT);
  b.init_f32("zero", {0.f}, {});
  b.node("Where", {"m", "x", "zero"}, {"y"});
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  onnx::CompiledModel c(*m);
  const Tensor x = Tensor::from_vector(std::vector<float>{1.5f, 2.5f}, {2});
  const Tensor mask = cast(Tensor::from_vector(std::vector<float>{1.f, 0.f}, {2}), DType::kBool);
  EXPECT_EQ(c({x, mask})[0].to_vector<float>(), (std::vector<float>{1.5f, 0.f}));
  auto wrong_mask = c.run({x, Tensor::from_vector(std::vector<float>{0.5f, 0.f}, {2})});
  ASSERT_FALSE(wrong_mask.ok());
  EXPECT_NE(wrong_mask.status().to_string().find("input 'm' is f32, the model expects BOOL"),
            std::string::npos)
      << wrong_mask.status().to_string();
  auto wrong_x = c.run({Tensor::from_vector(std::vector<int32_t>{1, 2}, {2}), mask});
  ASSERT_FALSE(wrong_x.ok());
  EXPECT_NE(wrong_x.status().to_string().find("input 'x' is i32, the model expects FLOAT"),
            std::string::npos)
      << wrong_x.status().to_string();
  EXPECT_EQ(c({x, mask})[0].to_vector<float>(), (std::vector<float>{1.5f, 0.f}));
}

TEST(OnnxImporter, TopKStaysInTheGraph) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {2, 5})
      .output("v", TensorProto::FLOAT)
      .output("i", TensorProto::INT64);
  b.init_i64("k", {2}, {1});
  b.node("Relu", {"x"}, {"r"});
  b.node("TopK", {"r", "k"}, {"v", "i"});
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  ASSERT_TRUE(m.ok());
  onnx::CompiledModel c(*m);
  auto out = c({Tensor::from_vector(std::vector<float>{1, 5, 2, 4, 3, 0, -1, 9, 8, 7}, {2, 5})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{5, 4, 9, 8}));
  EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 2, 3}));
  const ExplainReport r = c.explain();
  EXPECT_EQ(r.graph_break_count, 0u);
  EXPECT_EQ(r.graph_count, 1u);
}

TEST(OnnxImporter, UniqueRunsWithoutAGraphBreak) {
  OnnxBuilder b;
  b.input("x", TensorProto::FLOAT, {5}).output("y", TensorProto::FLOAT);
  b.output("counts", TensorProto::INT64);
  b.node("Relu", {"x"}, {"r"});
  b.node("Unique", {"r"}, {"y", "", "", "counts"});
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  ASSERT_TRUE(m.ok());
  onnx::CompiledModel c(*m);
  auto out = c({Tensor::from_vector(std::vector<float>{3, -1, 3, 0, 2}, {5})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{0, 2, 3}));
  EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 2}));
  // Another call with another number of unique values: the same program, a new length.
  out = c({Tensor::from_vector(std::vector<float>{1, 1, 1, 1, 1}, {5})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1}));
  EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{5}));
  const ExplainReport r = c.explain();
  EXPECT_EQ(r.graph_break_count, 0u);
}

TEST(OnnxImporter, TensorProtoFiles) {
  TensorProto t;
  t.set_name("t");
  t.set_data_type(TensorProto::INT64);
  t.add_dims(2);
  t.add_int64_data(7);
  t.add_int64_data(-3);
  auto p = onnx::parse_tensor_proto(as_bytes(t.SerializeAsString()));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->tensor.to_vector<int64_t>(), (std::vector<int64_t>{7, -3}));
  t.add_dims(2);  // 4 elements declared, 2 stored
  auto bad = onnx::parse_tensor_proto(as_bytes(t.SerializeAsString()));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("2 elements stored"), std::string::npos);
  EXPECT_FALSE(onnx::load_tensor_proto("/nonexistent/x.pb").ok());
}

}  // namespace
}  // namespace kiln::test
