/// \file nn.h
/// Building blocks of transformer models on the Tensor API, with PyTorch's defaults
/// (batch_first layouts, post-norm encoder layers, ReLU feed-forward, dropout off).
///
/// Weights come from a seeded generator (PyTorch's default initialisation ranges) or are set
/// directly (for example from files). Modules hold tensors; calling a module records its ops,
/// so inside kiln::compile a whole model becomes one traced graph with its weights captured.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::nn {

/// Deterministic weight generator.
class WeightGenerator {
 public:
  explicit WeightGenerator(uint64_t seed) : rng_(seed) {}
  /// Uniform in [-bound, bound].
  Tensor uniform(Shape shape, double bound, Device device);
  Tensor normal(Shape shape, double stddev, Device device);

 private:
  std::mt19937_64 rng_;
};

/// y = x W^T + b; W is [out, in] as in PyTorch. Weights ~ U(-1/sqrt(in), 1/sqrt(in)).
struct Linear {
  Linear() = default;
  Linear(int64_t in, int64_t out, WeightGenerator& gen, Device device);
  Tensor operator()(const Tensor& x) const;
  Tensor weight, bias;
};

/// Normalises the last dim; weight 1, bias 0.
struct LayerNorm {
  LayerNorm() = default;
  LayerNorm(int64_t dim, Device device, double eps = 1e-5);
  Tensor operator()(const Tensor& x) const;
  Tensor weight, bias;
  double eps = 1e-5;
};

/// Token ids (i32/i64) -> rows of a [vocab, dim] table; weights ~ N(0, 1).
struct Embedding {
  Embedding() = default;
  Embedding(int64_t vocab, int64_t dim, WeightGenerator& gen, Device device);
  Tensor operator()(const Tensor& ids) const;
  Tensor weight;
};

/// Multi-head self-attention on [batch, seq, dim]; `mask` is an additive [seq, seq] float mask
/// (0 or -inf) or undefined.
struct MultiheadAttention {
  MultiheadAttention() = default;
  MultiheadAttention(int64_t dim, int64_t heads, WeightGenerator& gen, Device device);
  Tensor operator()(const Tensor& x, const Tensor& mask) const;
  int64_t dim = 0, heads = 0;
  Linear q, k, v, out;
};

/// Post-norm encoder layer: x = norm1(x + attn(x)); x = norm2(x + ff(x)), ff = W2 relu(W1 x).
struct TransformerEncoderLayer {
  TransformerEncoderLayer() = default;
  TransformerEncoderLayer(int64_t dim, int64_t heads, int64_t ffn, WeightGenerator& gen,
                          Device device);
  Tensor operator()(const Tensor& x, const Tensor& mask) const;
  MultiheadAttention attn;
  Linear ff1, ff2;
  LayerNorm norm1, norm2;
};

struct TransformerEncoder {
  TransformerEncoder() = default;
  TransformerEncoder(int64_t layers, int64_t dim, int64_t heads, int64_t ffn, WeightGenerator& gen,
                     Device device);
  Tensor operator()(const Tensor& x, const Tensor& mask) const;
  std::vector<TransformerEncoderLayer> layers;
};

/// The seed's text encoder: token embedding [vocab, dim], a TransformerEncoder with the causal
/// mask built inside forward from the sequence length (a symbolic size under dynamic shapes),
/// and a vocabulary head Linear(dim, vocab). Weights are drawn in that order from `gen`.
struct TextEncoder {
  struct Config {
    int64_t vocab = 30000, dim = 512, layers = 4, heads = 8, ffn = 2048;
  };
  TextEncoder() = default;
  TextEncoder(const Config& config, WeightGenerator& gen, Device device);
  /// ids: i32/i64 [batch, seq] -> logits f32 [batch, seq, vocab].
  Tensor operator()(const Tensor& ids) const;
  Device device = Device::cpu();
  Embedding embed;
  TransformerEncoder encoder;
  Linear head;
};

/// The additive causal mask for a sequence of `s`: 0 on and below the diagonal, -inf above.
/// Built from graph ops, so inside kiln::compile it is computed on the device.
Tensor causal_mask(SymSize s, Device device);

// --- Weights from .npy files (runtime/nn/load.cpp, docs/io.md) ----------------------------------

/// A module's tensors by PyTorch-like dotted name ("layers.0.attn.q.weight"), each name
/// prefixed by `prefix` and a dot unless `prefix` is empty. The pointers alias the module.
using NamedParameters = std::vector<std::pair<std::string, Tensor*>>;
NamedParameters named_parameters(Linear& m, const std::string& prefix = "");
NamedParameters named_parameters(LayerNorm& m, const std::string& prefix = "");
NamedParameters named_parameters(Embedding& m, const std::string& prefix = "");
NamedParameters named_parameters(MultiheadAttention& m, const std::string& prefix = "");
NamedParameters named_parameters(TransformerEncoderLayer& m, const std::string& prefix = "");
NamedParameters named_parameters(TransformerEncoder& m, const std::string& prefix = "");

/// Loads `<dir>/<name>.npy` into each named tensor. Each file's dtype and shape must match the
/// tensor already there; the error names the file and both metas. All files are read and
/// checked before any tensor changes. A tensor already on `device` is overwritten in place
/// (copy_from, so handles sharing it see the new values); otherwise it is replaced by a tensor
/// on `device`.
Status load_weights(const std::string& dir,
                    const std::vector<std::pair<std::string, Tensor*>>& params, Device device);

}  // namespace kiln::nn
