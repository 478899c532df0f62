// The front-end compositions of the node suite's newer ops on Vulkan against the interpreter,
// compiled, on fresh random inputs of several shapes (odd sizes, sizes 0 and 1), with no graph
// on the interpreter: TfIdfVectorizer on integers (TF / IDF / TFIDF, skips, 1-D and batched),
// SplitToSequence -> ConcatFromSequence, RoiAlign and a seeded RandomUniformLike (the same bits).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "onnx/onnx_builder.h"

namespace kiln::test {
namespace {

using ::onnx::TensorProto;

void attr_s(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

void attr_floats(::onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

class OnnxHostValuesDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!vulkan_available()) GTEST_SKIP() << "no Vulkan device";
  }
  std::mt19937 rng_{20261205};

  Tensor ints(const Shape& s, int64_t hi, DType dt) {
    std::uniform_int_distribution<int64_t> u(0, hi);
    std::vector<int64_t> v(static_cast<size_t>(numel(s)));
    for (int64_t& x : v) x = u(rng_);
    return cast(Tensor::from_vector(v, s), dt);
  }
  Tensor floats(const Shape& s, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(static_cast<size_t>(numel(s)));
    for (float& x : v) x = u(rng_);
    return Tensor::from_vector(v, s);
  }

  /// Runs the model compiled on the interpreter and on Vulkan; the outputs must agree within
  /// `tol` (0: exactly) and no Vulkan graph may run on the interpreter.
  void compare(OnnxBuilder& b, const std::vector<Tensor>& in, double tol, const std::string& what) {
    SCOPED_TRACE(what);
    std::vector<std::string> fallbacks;
    set_log_sink([&](LogTopic topic, std::string_view m) {
      if (topic == LogTopic::kWarning) fallbacks.emplace_back(m);
    });
    const std::string bytes = b.bytes();
    auto cpu = onnx::Model::parse(as_bytes(bytes), Device::cpu());
    auto vk = onnx::Model::parse(as_bytes(bytes), Device::vulkan());
    ASSERT_TRUE(cpu.ok() && vk.ok());
    onnx::CompiledModel c(*cpu), v(*vk);
    std::vector<Tensor> want = c(in), got = v(in);
    set_log_sink({});
    EXPECT_TRUE(fallbacks.empty()) << fallbacks.front();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].device(), Device::vulkan());
      ASSERT_EQ(got[i].shape(), want[i].shape());
      const std::vector<double> g = got[i].to_doubles(), w = want[i].to_doubles();
      for (size_t k = 0; k < g.size(); ++k)
        ASSERT_LE(std::abs(g[k] - w[k]), tol * (1 + std::abs(w[k])))
            << "output " << i << " element " << k << ": " << g[k] << " vs " << w[k];
    }
  }
};

TEST_F(OnnxHostValuesDevice, TfIdfVectorizerOnIntegers) {
  for (const char* mode : {"TF", "IDF", "TFIDF"})
    for (int64_t skips : {0, 2})
      for (Shape s : {Shape{3, 11}, Shape{1, 1}, Shape{2, 0}, Shape{7}, Shape{1}})
        for (DType dt : {DType::kI64, DType::kI32}) {
          OnnxBuilder b(17);
          b.input("x", dt == DType::kI64 ? TensorProto::INT64 : TensorProto::INT32, {})
              .output("y", TensorProto::FLOAT);
          b.proto()
              .mutable_graph()
              ->mutable_input(0)
              ->mutable_type()
              ->mutable_tensor_type()
              ->clear_shape();
          auto* n = b.node("TfIdfVectorizer", {"x"}, {"y"});
          OnnxBuilder::attr_i(n, "min_gram_length", 1);
          OnnxBuilder::attr_i(n, "max_gram_length", 3);
          OnnxBuilder::attr_i(n, "max_skip_count", skips);
          attr_s(n, "mode", mode);
          // Unigrams 0 2 4, bigrams (1 1) (2 3), a trigram (0 1 0); output columns shuffled.
          OnnxBuilder::attr_ints(n, "pool_int64s", {0, 2, 4, 1, 1, 2, 3, 0, 1, 0});
          OnnxBuilder::attr_ints(n, "ngram_counts", {0, 3, 7});
          OnnxBuilder::attr_ints(n, "ngram_indexes", {5, 0, 2, 1, 4, 3});
          attr_floats(n, "weights", {0.5f, 2, 1, 3, 0.25f, 4});
          compare(b, {ints(s, 4, dt)}, 0,
                  std::string(mode) + " skips " + std::to_string(skips) + " " + shape_str(s));
        }
}

TEST_F(OnnxHostValuesDevice, SplitToSequenceAndConcat) {
  for (Shape s : {Shape{5, 3}, Shape{1, 1}, Shape{4, 0}, Shape{7, 2, 3}}) {
    OnnxBuilder b(17);
    b.input("x", TensorProto::FLOAT, {}).output("y", TensorProto::FLOAT);
    b.proto()
        .mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->clear_shape();
    OnnxBuilder::attr_i(b.node("SplitToSequence", {"x"}, {"seq"}), "keepdims", 0);
    auto* c = b.node("ConcatFromSequence", {"seq"}, {"y"});
    OnnxBuilder::attr_i(c, "axis", -1);
    OnnxBuilder::attr_i(c, "new_axis", 1);
    compare(b, {floats(s, -2, 2)}, 0, "split and stack " + shape_str(s));
  }
}

TEST_F(OnnxHostValuesDevice, RoiAlign) {
  for (const char* coord : {"half_pixel", "output_half_pixel"})
    for (const char* mode : {"avg", "max"}) {
      OnnxBuilder b(16);
      b.input("x", TensorProto::FLOAT, {2, 3, 9, 7}).input("rois", TensorProto::FLOAT, {5, 4});
      b.input("b", TensorProto::INT64, {5}).output("y", TensorProto::FLOAT);
      auto* n = b.node("RoiAlign", {"x", "rois", "b"}, {"y"});
      attr_s(n, "coordinate_transformation_mode", coord);
      attr_s(n, "mode", mode);
      OnnxBuilder::attr_i(n, "output_height", 3);
      OnnxBuilder::attr_i(n, "output_width", 2);
      OnnxBuilder::attr_f(n, "spatial_scale", 0.5f);
      compare(b, {floats({2, 3, 9, 7}, -1, 1), floats({5, 4}, -2, 16), ints({5}, 1, DType::kI64)},
              1e-5, std::string("roi_align ") + coord + " " + mode);
    }
}

TEST_F(OnnxHostValuesDevice, SeededRandomGivesTheSameBits) {
  OnnxBuilder b(17);
  b.input("x", TensorProto::FLOAT, {13, 7}).output("y", TensorProto::FLOAT);
  b.output("m", TensorProto::BOOL);
  auto* n = b.node("RandomNormalLike", {"x"}, {"n"});
  OnnxBuilder::attr_f(n, "seed", 5.0f);
  b.node("Bernoulli", {"p"}, {"y"});
  b.node("Sigmoid", {"x"}, {"p"});
  b.node("Less", {"n", "x"}, {"m"});
  onnx::set_default_seed(99);  // Bernoulli has no seed of its own
  compare(b, {floats({13, 7}, -2, 2)}, 1e-5, "random");
  onnx::set_default_seed(std::nullopt);
}

}  // namespace
}  // namespace kiln::test
