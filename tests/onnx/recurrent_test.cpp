// The ONNX recurrent layers (RNN, GRU, LSTM) beyond the node suite, which has only forward
// cases: the reverse direction is the forward one on the time-reversed input, bidirectional
// stacks the two, sequence_lens masks each batch row to its own prefix (zeros after it, the
// state held), and layout 1 is layout 0 transposed. Checked on the interpreter and on Vulkan.
#include <gtest/gtest.h>

#include <random>

#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "onnx/onnx_builder.h"

namespace kiln::test {
namespace {

using ::onnx::TensorProto;

constexpr int64_t kSeq = 4, kBatch = 2, kIn = 3, kHidden = 5;

struct Layer {
  std::string op;  // RNN, GRU, LSTM
  int64_t gates() const { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }
};

std::vector<float> random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Options {
  std::string direction = "forward";
  std::vector<uint32_t> seeds = {100};  // the weights of each direction
  int64_t layout = 0;
  int64_t linear_before_reset = 0;
  bool lens = false;
};

/// Runs one layer on x ([seq, batch, in], or [batch, seq, in] for layout 1) and lens.
std::vector<Tensor> run(const Layer& l, const Options& o, const Tensor& x, const Tensor& lens,
                        Device device) {
  const int64_t dirs = static_cast<int64_t>(o.seeds.size());
  const int64_t g = l.gates();
  std::vector<float> w, r, b;
  for (uint32_t s : o.seeds) {
    auto wd = random(static_cast<size_t>(g * kHidden * kIn), s);
    auto rd = random(static_cast<size_t>(g * kHidden * kHidden), s + 1);
    auto bd = random(static_cast<size_t>(2 * g * kHidden), s + 2);
    w.insert(w.end(), wd.begin(), wd.end());
    r.insert(r.end(), rd.begin(), rd.end());
    b.insert(b.end(), bd.begin(), bd.end());
  }
  OnnxBuilder m(14);
  m.input("X", TensorProto::FLOAT, {x.shape()[0], x.shape()[1], kIn});
  m.input("L", TensorProto::INT32, {kBatch});
  m.init_f32("W", w, {dirs, g * kHidden, kIn});
  m.init_f32("R", r, {dirs, g * kHidden, kHidden});
  m.init_f32("B", b, {dirs, 2 * g * kHidden});
  m.output("Y", TensorProto::FLOAT).output("Y_h", TensorProto::FLOAT);
  auto* n = m.node(l.op, {"X", "W", "R", "B", o.lens ? "L" : ""}, {"Y", "Y_h"});
  OnnxBuilder::attr_i(n, "hidden_size", kHidden);
  OnnxBuilder::attr_i(n, "layout", o.layout);
  if (l.op == "GRU") OnnxBuilder::attr_i(n, "linear_before_reset", o.linear_before_reset);
  auto* a = n->add_attribute();
  a->set_name("direction");
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(o.direction);
  auto model = onnx::Model::parse(as_bytes(m.bytes()), device);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return {};
  onnx::CompiledModel c(*model);
  return c({x.to(device), lens.to(device)});
}

/// x with dim `axis` reversed.
Tensor reversed(const Tensor& x, int64_t axis) {
  std::vector<Tensor> parts;
  for (int64_t t = x.shape()[static_cast<size_t>(axis)] - 1; t >= 0; --t)
    parts.push_back(slice(x, axis, t, t + 1));
  return concat(parts, axis);
}

void expect_near(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto g = got.to(Device::cpu()).to_vector<float>(), w = want.to(Device::cpu()).to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-5) << what << " element " << i;
}

class Recurrent : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  Layer layer() const { return {std::get<0>(GetParam())}; }
  Device device() const { return std::get<1>(GetParam()) ? Device::vulkan() : Device::cpu(); }
  void SetUp() override {
    if (std::get<1>(GetParam()) && !vulkan_available()) GTEST_SKIP() << "no Vulkan device";
    validation_before_ = validation_messages().size();
  }
  void TearDown() override {
    EXPECT_EQ(validation_messages().size(), validation_before_) << "validation-layer messages";
  }
  size_t validation_before_ = 0;
  Tensor x_ = Tensor::from_vector(random(kSeq * kBatch * kIn, 7), {kSeq, kBatch, kIn});
  Tensor full_ = Tensor::from_vector(std::vector<int32_t>{kSeq, kSeq}, {kBatch});
};

TEST_P(Recurrent, ReverseIsForwardOnTheReversedSequence) {
  for (int64_t lbr : {0, 1}) {
    if (lbr == 1 && layer().op != "GRU") continue;
    Options rev{.direction = "reverse", .seeds = {200}, .linear_before_reset = lbr};
    Options fwd{.seeds = {200}, .linear_before_reset = lbr};
    auto r = run(layer(), rev, x_, full_, device());
    auto f = run(layer(), fwd, reversed(x_, 0), full_, device());
    ASSERT_EQ(r.size(), 2u);
    ASSERT_EQ(f.size(), 2u);
    expect_near(r[0], reversed(f[0], 0), "Y");
    expect_near(r[1], f[1], "Y_h");
  }
}

TEST_P(Recurrent, BidirectionalStacksBothDirections) {
  auto both =
      run(layer(), {.direction = "bidirectional", .seeds = {100, 200}}, x_, full_, device());
  auto f = run(layer(), {.seeds = {100}}, x_, full_, device());
  auto r = run(layer(), {.direction = "reverse", .seeds = {200}}, x_, full_, device());
  ASSERT_EQ(both.size(), 2u);
  expect_near(slice(both[0], 1, 0, 1), f[0], "Y forward");
  expect_near(slice(both[0], 1, 1, 2), r[0], "Y reverse");
  expect_near(slice(both[1], 0, 0, 1), f[1], "Y_h forward");
  expect_near(slice(both[1], 0, 1, 2), r[1], "Y_h reverse");
}

TEST_P(Recurrent, SequenceLensMaskEachRow) {
  // Row 0 runs all 4 steps, row 1 only 2: its outputs past step 2 are zero and its final state
  // is the state after step 2, in either direction (reverse walks the row's own prefix).
  Tensor lens = Tensor::from_vector(std::vector<int32_t>{kSeq, 2}, {kBatch});
  for (const char* dir : {"forward", "reverse"}) {
    const uint32_t seed = std::string(dir) == "reverse" ? 200 : 100;
    auto masked =
        run(layer(), {.direction = dir, .seeds = {seed}, .lens = true}, x_, lens, device());
    auto whole = run(layer(), {.direction = dir, .seeds = {seed}}, x_, full_, device());
    auto prefix =
        run(layer(), {.direction = dir, .seeds = {seed}}, slice(x_, 0, 0, 2), full_, device());
    ASSERT_EQ(masked.size(), 2u);
    const std::string d = dir;
    expect_near(slice(masked[0], 2, 0, 1), slice(whole[0], 2, 0, 1), d + " Y row 0");
    expect_near(slice(masked[1], 1, 0, 1), slice(whole[1], 1, 0, 1), d + " Y_h row 0");
    expect_near(slice(slice(masked[0], 2, 1, 2), 0, 0, 2), slice(prefix[0], 2, 1, 2),
                d + " Y row 1");
    expect_near(slice(slice(masked[0], 2, 1, 2), 0, 2, kSeq),
                Tensor::full({kSeq - 2, 1, 1, kHidden}, 0.0), d + " Y row 1 past its length");
    expect_near(slice(masked[1], 1, 1, 2), slice(prefix[1], 1, 1, 2), d + " Y_h row 1");
  }
}

TEST_P(Recurrent, BatchFirstLayoutIsTheTransposedLayout) {
  Options o{.direction = "bidirectional", .seeds = {100, 200}};
  auto a = run(layer(), o, x_, full_, device());
  o.layout = 1;
  auto b = run(layer(), o, permute(x_, {1, 0, 2}), full_, device());
  ASSERT_EQ(b.size(), 2u);
  expect_near(b[0], permute(a[0], {2, 0, 1, 3}), "Y");
  expect_near(b[1], permute(a[1], {1, 0, 2}), "Y_h");
}

INSTANTIATE_TEST_SUITE_P(Layers, Recurrent,
                         ::testing::Combine(::testing::Values("RNN", "GRU", "LSTM"),
                                            ::testing::Bool()));

}  // namespace
}  // namespace kiln::test
