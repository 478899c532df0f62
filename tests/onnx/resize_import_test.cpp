// The importer's Resize, Upsample and GridSample: opset 18's axes and keep_aspect_ratio_policy,
// opset 10 Resize and Upsample (asymmetric, truncating nearest), constant scales without a
// graph break, scales as a model input read on the host (one break), unsupported attributes.
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

void attr_ints(::onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

Tensor iota(const Shape& shape) {
  F v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::from_vector(v, shape);
}

std::vector<Tensor> run(OnnxBuilder& b, const std::vector<Tensor>& in, size_t* breaks = nullptr) {
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  if (!m.ok()) return {};
  onnx::CompiledModel c(*m);
  std::vector<Tensor> out = c(in);
  if (breaks) *breaks = c.explain().graph_break_count;
  return out;
}

TEST(OnnxResize, Opset18AxesWithConstantScales) {
  OnnxBuilder b(18);
  b.input("x", TensorProto::FLOAT, {2, 3, 4}).output("y", TensorProto::FLOAT);
  b.init_f32("scales", {2.0f, 0.5f}, {2});
  auto* n = b.node("Resize", {"x", "", "scales"}, {"y"});
  attr_s(n, "mode", "linear");
  attr_ints(n, "axes", {1, -1});
  size_t breaks = 99;
  std::vector<Tensor> out = run(b, {iota({2, 3, 4})}, &breaks);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(breaks, 0u);  // constant scales: no host read
  InterpolateOptions opt;
  opt.mode = InterpMode::kLinear;
  opt.scales = {1, 2, 0.5};
  EXPECT_EQ(out[0].shape(), (Shape{2, 6, 2}));
  EXPECT_EQ(out[0].to_vector<float>(),
            interpolate(iota({2, 3, 4}), {-1, 6, 2}, opt).to_vector<float>());
}

// Constant dyadic scales (2, 0.5, 1.5) over named dims: floor(size * scale) stays symbolic, so
// one compile serves every image size (a scale such as 1/3 keeps a guard on the size).
TEST(OnnxResize, DyadicScalesOverNamedDimsCompileOnce) {
  OnnxBuilder b(13);
  b.input("x", TensorProto::FLOAT, {"n", 2, "h", "w"}).output("y", TensorProto::FLOAT);
  b.init_f32("scales", {1.0f, 1.0f, 0.5f, 1.5f}, {4});
  attr_s(b.node("Resize", {"x", "", "scales"}, {"r"}), "mode", "linear");
  b.init_f32("up", {1.0f, 1.0f, 2.0f, 2.0f}, {4});
  b.node("Resize", {"r", "", "up"}, {"y"});  // nearest
  auto m = onnx::Model::parse(as_bytes(b.bytes()));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  onnx::CompiledModel c(*m);
  for (const Shape& s : {Shape{2, 2, 6, 5}, Shape{3, 2, 9, 4}, Shape{2, 2, 13, 7}}) {
    const Tensor x = iota(s);
    std::vector<Tensor> out = c({x});
    ASSERT_EQ(out.size(), 1u);
    const int64_t h = s[2] / 2, w = s[3] * 3 / 2;
    EXPECT_EQ(out[0].shape(), (Shape{s[0], 2, 2 * h, 2 * w})) << shape_str(s);
    InterpolateOptions lin;
    lin.mode = InterpMode::kLinear;
    lin.scales = {1.0, 1.0, 0.5, 1.5};
    InterpolateOptions near;
    near.scales = {1.0, 1.0, 2.0, 2.0};
    const Tensor want =
        interpolate(interpolate(x, {-1, -1, h, w}, lin), {-1, -1, 2 * h, 2 * w}, near);
    EXPECT_EQ(out[0].to_vector<float>(), want.to_vector<float>()) << shape_str(s);
  }
  EXPECT_EQ(c.stats().compiles, 1u);
}

TEST(OnnxResize, KeepAspectRatioNotLarger) {
  OnnxBuilder b(18);
  b.input("x", TensorProto::FLOAT, {1, 1, 4, 6}).output("y", TensorProto::FLOAT);
  b.init_i64("sizes", {3, 3}, {2});
  auto* n = b.node("Resize", {"x", "", "", "sizes"}, {"y"});
  attr_ints(n, "axes", {2, 3});
  attr_s(n, "keep_aspect_ratio_policy", "not_larger");
  std::vector<Tensor> out = run(b, {iota({1, 1, 4, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 3}));  // scale min(3/4, 3/6) = 0.5
}

TEST(OnnxResize, LegacyNearestTruncatesUpsampling) {
  for (int64_t opset : {7, 9, 10}) {
    OnnxBuilder b(opset);
    b.input("x", TensorProto::FLOAT, {1, 1, 2, 2}).output("y", TensorProto::FLOAT);
    ::onnx::NodeProto* n = nullptr;
    if (opset == 7) {
      n = b.node("Upsample", {"x"}, {"y"});
      auto* a = n->add_attribute();
      a->set_name("scales");
      a->set_type(::onnx::AttributeProto::FLOATS);
      for (float s : {1.0f, 1.0f, 2.0f, 3.0f}) a->add_floats(s);
    } else {
      b.init_f32("scales", {1, 1, 2, 3}, {4});
      n = b.node(opset == 9 ? "Upsample" : "Resize", {"x", "scales"}, {"y"});
    }
    attr_s(n, "mode", "nearest");
    std::vector<Tensor> out = run(b, {iota({1, 1, 2, 2})});
    ASSERT_EQ(out.size(), 1u) << "opset " << opset;
    EXPECT_EQ(out[0].to_vector<float>(),
              (F{0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 2, 2, 3, 3, 3}))
        << "opset " << opset;  // numpy.repeat
  }
}

TEST(OnnxResize, ScalesAsModelInputAreAHostRead) {
  OnnxBuilder b(13);
  b.input("x", TensorProto::FLOAT, {1, 1, 2, 2})
      .input("scales", TensorProto::FLOAT, {4})
      .output("y", TensorProto::FLOAT);
  b.node("Resize", {"x", "", "scales"}, {"y"});
  size_t breaks = 0;
  std::vector<Tensor> out =
      run(b, {iota({1, 1, 2, 2}), Tensor::from_vector(F{1, 1, 1, 2}, {4})}, &breaks);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector<float>(), (F{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(breaks, 1u);
}

TEST(OnnxResize, UnsupportedAndBadAttributes) {
  auto status_of = [](OnnxBuilder& b, const std::vector<Tensor>& in) {
    auto m = onnx::Model::parse(as_bytes(b.bytes()));
    if (!m.ok()) return m.status();
    try {
      (*m)(in);
    } catch (const Error& e) {
      return e.status();
    }
    return Status();
  };
  {
    OnnxBuilder b(18);
    b.input("x", TensorProto::FLOAT, {1, 4}).output("y", TensorProto::FLOAT);
    b.init_f32("scales", {1, 2}, {2});
    auto* n = b.node("Resize", {"x", "", "scales"}, {"y"});
    OnnxBuilder::attr_i(n, "antialias", 1);
    EXPECT_EQ(status_of(b, {iota({1, 4})}).code(), StatusCode::kUnimplemented);
  }
  {
    OnnxBuilder b(13);
    b.input("x", TensorProto::FLOAT, {1, 4}).output("y", TensorProto::FLOAT);
    b.init_f32("scales", {1, 2}, {2});
    auto* n = b.node("Resize", {"x", "", "scales"}, {"y"});
    attr_s(n, "mode", "area");
    EXPECT_EQ(status_of(b, {iota({1, 4})}).code(), StatusCode::kUnimplemented);
  }
  {
    OnnxBuilder b(13);  // neither scales nor sizes
    b.input("x", TensorProto::FLOAT, {1, 4}).output("y", TensorProto::FLOAT);
    b.node("Resize", {"x"}, {"y"});
    const Status s = status_of(b, {iota({1, 4})});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  }
}

}  // namespace
}  // namespace kiln::test
