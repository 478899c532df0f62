// Malformed-input tests: truncated and corrupted .onnx, TensorProto (.pb) and .npy files, made
// from valid ones with fixed seeds, must each end in a Status (ok or a clear error), never in a
// crash or an exception other than kiln::Error. A model that still imports after corruption is
// also run on the interpreter. Built with AddressSanitizer + UBSan (tests/onnx/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "kiln/io.h"
#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "onnx/onnx_builder.h"

namespace fs = std::filesystem;

namespace kiln::test {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Truncations (every length up to 64, then evenly spaced) and corruptions (random byte
/// overwrites, 0xff runs that make huge varints and sizes, inserted and deleted bytes).
std::vector<std::string> mutations(const std::string& valid, uint32_t seed, int corruptions) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  const size_t n = valid.size();
  for (size_t len = 0; len < n && len <= 64; ++len) out.push_back(valid.substr(0, len));
  for (int i = 1; i < 40 && n > 64; ++i) out.push_back(valid.substr(0, 64 + (n - 64) * i / 40));
  auto pos = [&] { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto byte = [&] { return static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng)); };
  for (int i = 0; i < corruptions && n > 0; ++i) {
    std::string s = valid;
    switch (i % 4) {
      case 0:
        for (int k = 0; k < 1 + i % 7; ++k) s[pos()] = byte();
        break;
      case 1: {
        const size_t at = pos();
        for (size_t k = at; k < std::min(n, at + 9); ++k) s[k] = '\xff';
        break;
      }
      case 2:
        s.insert(pos(), std::string(1 + i % 5, byte()));
        break;
      default:
        s.erase(pos(), 1 + i % 13);
        break;
    }
    out.push_back(std::move(s));
  }
  return out;
}

/// Inputs for a model's declared inputs (named or unknown dims = 2); false if too large.
bool make_inputs(const onnx::Model& m, std::vector<Tensor>& inputs) {
  for (const onnx::ValueInfo& in : m.inputs()) {
    Shape shape;
    int64_t n = 1;
    for (int64_t d : in.dims) {
      shape.push_back(d < 0 ? 2 : d);
      n *= std::max<int64_t>(shape.back(), 1);
      if (n > (1 << 16)) return false;
    }
    if (!in.has_shape) shape = {2};
    inputs.push_back(Tensor::full(shape, 1.0, in.dtype));
  }
  return true;
}

struct Counts {
  int ok = 0, errors = 0, ran = 0;
};

void expect_clear(const Status& s, const std::string& what) {
  EXPECT_FALSE(s.message().empty()) << what << ": an error without a message";
}

/// KILN_FUZZ_SCALE=k multiplies the number of corruptions (default 1) for longer local runs.
int scale() {
  const char* s = std::getenv("KILN_FUZZ_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}

void fuzz_model(const std::string& valid, uint32_t seed, Counts& c) {
  int runs = 0;
  for (const std::string& bytes : mutations(valid, seed, 400 * scale())) {
    Expected<onnx::Model> m = onnx::Model::parse(as_bytes(bytes), Device::cpu(), "fuzz.onnx");
    if (!m.ok()) {
      expect_clear(m.status(), "import");
      ++c.errors;
      continue;
    }
    ++c.ok;
    std::vector<Tensor> inputs;
    if (runs >= 60 * scale() || !make_inputs(*m, inputs)) continue;
    ++runs;
    onnx::CompiledModel compiled(*m, {.name = "fuzz"});
    auto out = compiled.run(inputs);
    if (!out.ok()) expect_clear(out.status(), "run");
    ++c.ran;
  }
}

const fs::path kData = KILN_ONNX_TEST_DATA;

// Found by the libFuzzer target (tests/fuzz/libfuzzer): a Reshape whose target shape's element
// count overflows int64. These sizes multiply to 6 modulo 2^64, as many as the input has, so
// a wrapping count would accept the shape; it must be a clear error instead.
// Found by the libFuzzer target: Pad with pads far beyond any real size (one allocated 2^53
// bytes), and negative pads that remove more than the axis holds (INT64_MIN cannot be negated).
TEST(OnnxFuzz, PadWithHugeOrOverlyNegativePads) {
  for (const std::vector<int64_t>& pads :
       {std::vector<int64_t>{0, int64_t{1} << 40, 0, 0}, std::vector<int64_t>{INT64_MIN, 0, 0, 0},
        std::vector<int64_t>{0, 0, 0, -4}}) {
    OnnxBuilder b(13);
    b.input("x", ::onnx::TensorProto::FLOAT, {2, 3}).output("y", ::onnx::TensorProto::FLOAT);
    b.init_i64("pads", pads, {4});
    b.node("Pad", {"x", "pads"}, {"y"});
    Expected<onnx::Model> m = onnx::Model::parse(as_bytes(b.bytes()), Device::cpu(), "pad");
    ASSERT_TRUE(m.ok()) << m.status().message();
    try {
      (*m)({Tensor::full({2, 3}, 1.0)});
      ADD_FAILURE() << "pads " << pads[0] << " " << pads[1] << " " << pads[3] << " accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("more than 2^31 elements") != std::string::npos ||
                  what.find("remove more than axis") != std::string::npos)
          << what;
    }
  }
}

TEST(OnnxFuzz, ReshapeWhoseElementCountOverflows) {
  OnnxBuilder b(13);
  b.input("x", ::onnx::TensorProto::FLOAT, {2, 3}).output("y", ::onnx::TensorProto::FLOAT);
  b.init_i64("shape", {(int64_t{1} << 32) + 1, (int64_t{1} << 32) - 1, 2, INT64_MAX - 2}, {4});
  b.node("Reshape", {"x", "shape"}, {"y"});
  Expected<onnx::Model> m = onnx::Model::parse(as_bytes(b.bytes()), Device::cpu(), "reshape");
  ASSERT_TRUE(m.ok()) << m.status().message();
  try {
    (*m)({Tensor::full({2, 3}, 1.0)});
    ADD_FAILURE() << "a shape of more than 2^63 elements was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 2^63 elements"), std::string::npos) << e.what();
  }
}

TEST(OnnxFuzz, TruncatedAndCorruptedModels) {
  uint32_t seed = 1;
  Counts c;
  for (const char* name : {"mlp", "cnn", "select", "encoder"}) {
    const std::string valid = slurp(kData / name / "model.onnx");
    ASSERT_FALSE(valid.empty()) << name;
    fuzz_model(valid, seed++, c);
  }
  // A model with shape arithmetic and attributes, built here.
  OnnxBuilder b(13);
  b.input("x", ::onnx::TensorProto::FLOAT, {"n", 4}).output("y", ::onnx::TensorProto::FLOAT);
  b.init_i64("zero", {0}, {}).init_i64("axes", {0}, {1}).init_i64("four", {4}, {1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  b.node("Concat", {"n1", "four"}, {"t"});
  OnnxBuilder::attr_i(b.proto().mutable_graph()->mutable_node(3), "axis", 0);
  b.node("ConstantOfShape", {"t"}, {"z"});
  b.node("Add", {"x", "z"}, {"a"});
  OnnxBuilder::attr_i(b.node("Softmax", {"a"}, {"y"}), "axis", -1);
  fuzz_model(b.bytes(), seed++, c);
  std::printf("models: %d imported, %d rejected, %d run\n", c.ok, c.errors, c.ran);
  EXPECT_GT(c.errors, 100);
  EXPECT_GT(c.ran, 20);
}

TEST(OnnxFuzz, TruncatedAndCorruptedTensorProtos) {
  ::onnx::TensorProto t;
  t.set_name("t");
  t.set_data_type(::onnx::TensorProto::FLOAT);
  t.add_dims(3);
  t.add_dims(4);
  for (int i = 0; i < 12; ++i) t.add_float_data(static_cast<float>(i) * 0.5f);
  ::onnx::TensorProto r = t;
  r.clear_float_data();
  r.set_data_type(::onnx::TensorProto::INT64);
  r.set_raw_data(std::string(96, '\x01'));
  int ok = 0, errors = 0;
  uint32_t seed = 100;
  for (const auto* proto : {&t, &r}) {
    for (const std::string& bytes : mutations(proto->SerializeAsString(), seed++, 500 * scale())) {
      auto p = onnx::parse_tensor_proto(as_bytes(bytes));
      if (p.ok()) {
        ++ok;
        (void)p->tensor.to_doubles();
      } else {
        expect_clear(p.status(), "tensor");
        ++errors;
      }
    }
  }
  std::printf("tensor protos: %d decoded, %d rejected\n", ok, errors);
  EXPECT_GT(errors, 100);
}

TEST(OnnxFuzz, TruncatedAndCorruptedNpy) {
  std::vector<std::string> valid;
  for (const char* f : {"mlp/0/x.npy", "encoder/0/ids.npy", "select/0/positive.npy"})
    valid.push_back(slurp(kData / f));
  valid.push_back([] {
    auto b = serialize_npy(Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}));
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }());
  int ok = 0, errors = 0;
  uint32_t seed = 200;
  for (const std::string& v : valid) {
    ASSERT_FALSE(v.empty());
    for (const std::string& bytes : mutations(v, seed++, 500 * scale())) {
      auto t = parse_npy(as_bytes(bytes));
      if (t.ok()) {
        ++ok;
        (void)t->to_doubles();
      } else {
        expect_clear(t.status(), "npy");
        ++errors;
      }
    }
  }
  std::printf("npy: %d parsed, %d rejected\n", ok, errors);
  EXPECT_GT(errors, 300);
}

}  // namespace
}  // namespace kiln::test
