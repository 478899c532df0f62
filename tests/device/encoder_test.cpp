// A small transformer encoder (the seed's model at d_model 64, 2 layers) compiled on Vulkan
// against the same model run eagerly on the CPU interpreter, at several sequence lengths, with
// a bound on the kernels each layer needs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "device/test_util.h"
#include "kiln/nn.h"

namespace kiln {
namespace {

// The seed's model at a small size: vocab 100, d 64, 2 layers, 4 heads, FFN 128.
constexpr nn::TextEncoder::Config kSmall{100, 64, 2, 4, 128};

nn::TextEncoder small_encoder(Device d, uint64_t seed) {
  nn::WeightGenerator gen(seed);
  return nn::TextEncoder(kSmall, gen, d);
}

class DeviceEncoder : public test::DeviceTest {};

TEST_F(DeviceEncoder, CompiledMatchesTheInterpreterAtSeveralLengths) {
  const nn::TextEncoder cpu = small_encoder(Device::cpu(), 7),
                        gpu = small_encoder(Device::vulkan(), 7);
  auto f = compile([&](const Tensor& ids) { return gpu(ids); }, {.name = "encoder"});
  std::mt19937 rng(3);
  std::uniform_int_distribution<int64_t> tok(0, kSmall.vocab - 1);
  for (int64_t s : {5, 16, 33}) {
    SCOPED_TRACE("S = " + std::to_string(s));
    std::vector<int64_t> ids(static_cast<size_t>(2 * s));
    for (int64_t& t : ids) t = tok(rng);
    Tensor ids_cpu = Tensor::from_vector(ids, {2, s});
    std::vector<float> want = cpu(ids_cpu).to_vector<float>();
    std::vector<float> got = f(ids_cpu.to(Device::vulkan())).to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    double max_ref = 0, max_err = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      max_ref = std::max(max_ref, double(std::fabs(want[i])));
      max_err = std::max(max_err, double(std::fabs(got[i] - want[i])));
    }
    EXPECT_LE(max_err, 1e-4 * max_ref) << "max abs error " << max_err << ", max |ref| " << max_ref;
    const EntryInfo e = f.entries().back();  // entries() returns a copy
    EXPECT_TRUE(e.on_device);
    EXPECT_EQ(e.graph_count, 1);
    // Per layer: q, k, v projections (bias in the store), one attention kernel (scores, scale,
    // causal mask, softmax, context; heads merged in its store), the output projection with
    // bias and residual, norm, two feed-forward matmuls (bias + ReLU, bias + residual), norm
    // = 9; plus the mask, the embedding and the final projection. Head splits fold into loads.
    EXPECT_LE(e.kernels.size(), 9u * kSmall.layers + 3) << e.graph;
    int attention = 0;
    for (const std::string& k : e.kernels) attention += k.find("attention") != std::string::npos;
    EXPECT_EQ(attention, kSmall.layers) << e.graph;
    std::printf("S=%lld: %zu kernels, max abs error %.3g (max |ref| %.3g)\n",
                static_cast<long long>(s), e.kernels.size(), max_err, max_ref);
  }
  // Dynamic::kAuto: static at the first length, then one symbolic entry serves the others.
  EXPECT_EQ(f.stats().compiles, 2u);
  EXPECT_EQ(f.stats().dynamic_compiles, 1u);
}

}  // namespace
}  // namespace kiln
