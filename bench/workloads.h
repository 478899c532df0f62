/// \file workloads.h
/// The workloads shared by the Google Benchmark binaries (bench/*.cpp) and `kiln bench`
/// (tools/bench*.cpp), so that both measure exactly the same programs on the same inputs.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::bench {

/// The 6-op elementwise chain (mul, add, mul, sub, relu, add): x [rows, cols], a..d [cols].
/// Fused it is one vec4 kernel; compiled with `fuse = false`, six dispatches.
inline Tensor chain6(const Tensor& x, const Tensor& a, const Tensor& b, const Tensor& c,
                     const Tensor& d) {
  return relu((x * a + b) * c - d) + x;
}

/// The copy baseline for the chain: one elementwise kernel that reads every element of x once
/// and writes it once (negated, so that no pass can turn it into an alias of x). It moves the
/// same bytes as chain6 (a..d are 4 rows and stay in cache), so chain6's time over this one's
/// is the chain's cost above memory bandwidth.
inline Tensor copy1(const Tensor& x) {
  return neg(x);
}

/// A tiny program for the per-call overhead: one add of two small vectors.
inline Tensor tiny_add(const Tensor& a, const Tensor& b) {
  return a + b;
}

/// Uniform values in [-1, 1] of `shape`, on `device`, from a fixed seed.
inline Tensor random_tensor(Shape shape, uint32_t seed, Device device = Device::vulkan()) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& f : v) f = dist(rng);
  return Tensor::from_vector(v, std::move(shape), device);
}

/// chain6's inputs: x f32[rows, cols], then a, b, c, d f32[cols].
inline std::vector<Tensor> chain_inputs(int64_t rows, int64_t cols,
                                        Device device = Device::vulkan()) {
  std::vector<Tensor> t;
  t.push_back(random_tensor({rows, cols}, 1, device));
  for (uint32_t i = 0; i < 4; ++i) t.push_back(random_tensor({cols}, 2 + i, device));
  return t;
}

/// Bytes chain6 (and copy1) must move per call: read x and write y, f32.
inline double chain_bytes(int64_t rows, int64_t cols) {
  return 2.0 * 4.0 * static_cast<double>(rows) * static_cast<double>(cols);
}

/// GEMM modes of bench_models' BM_Gemm: 0 A·B, 1 A·Bᵀ (the row-block kernel), 2 Aᵀ·B (tiled).
inline Tensor gemm(const Tensor& a, const Tensor& b, int mode) {
  return matmul(a, b, mode == 2, mode == 1);
}

/// FLOPs of an n×n×n matmul (a multiply-add counts 2).
inline double gemm_flops(int64_t n) {
  const double d = static_cast<double>(n);
  return 2.0 * d * d * d;
}

/// The seed's text encoder configurations: the full model (vocab 30000, d 512, 4 layers,
/// 8 heads, FFN 2048, batch 4) and the small one `kiln demo --small` uses.
struct EncoderSetup {
  nn::TextEncoder::Config config;
  int64_t batch = 4;
  uint64_t seed = 2024;  // weights, as in `kiln demo`
};
inline EncoderSetup full_encoder() {
  return {};
}
inline EncoderSetup small_encoder() {
  return {{1000, 64, 1, 2, 128}, 2, 2024};
}

inline nn::TextEncoder make_encoder(const EncoderSetup& s, Device device = Device::vulkan()) {
  nn::WeightGenerator gen(s.seed);
  return nn::TextEncoder(s.config, gen, device);
}

/// Token ids i64 [batch, seq] in [0, vocab), from a fixed seed.
inline Tensor encoder_ids(const EncoderSetup& s, int64_t seq, Device device = Device::vulkan()) {
  std::mt19937 rng(static_cast<uint32_t>(1000 + seq));
  std::uniform_int_distribution<int64_t> d(0, s.config.vocab - 1);
  std::vector<int64_t> v(static_cast<size_t>(s.batch * seq));
  for (int64_t& x : v) x = d(rng);
  return Tensor::from_vector(v, {s.batch, seq}, device);
}

/// Bytes of every weight of the encoder (embedding, encoder layers, head).
inline uint64_t encoder_weight_bytes(nn::TextEncoder& m) {
  nn::NamedParameters params = nn::named_parameters(m.embed, "embed");
  for (auto& p : nn::named_parameters(m.encoder, "encoder")) params.push_back(p);
  for (auto& p : nn::named_parameters(m.head, "head")) params.push_back(p);
  uint64_t bytes = 0;
  for (const auto& [name, t] : params)
    bytes += static_cast<uint64_t>(t->numel()) * dtype_size(t->dtype());
  return bytes;
}

}  // namespace kiln::bench
