#include "kiln/nn.h"

#include <cmath>

namespace kiln::nn {

Tensor WeightGenerator::uniform(Shape shape, double bound, Device device) {
  std::uniform_real_distribution<float> d(static_cast<float>(-bound), static_cast<float>(bound));
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = d(rng_);
  return Tensor::from_vector(v, std::move(shape), device);
}

Tensor WeightGenerator::normal(Shape shape, double stddev, Device device) {
  std::normal_distribution<float> d(0.f, static_cast<float>(stddev));
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = d(rng_);
  return Tensor::from_vector(v, std::move(shape), device);
}

Linear::Linear(int64_t in, int64_t out, WeightGenerator& gen, Device device) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  weight = gen.uniform({out, in}, bound, device);
  bias = gen.uniform({out}, bound, device);
}

Tensor Linear::operator()(const Tensor& x) const {
  return matmul(x, weight, /*trans_a=*/false, /*trans_b=*/true) + bias;
}

LayerNorm::LayerNorm(int64_t dim, Device device, double epsilon)
    : weight(ones({dim}, DType::kF32, device)),
      bias(zeros({dim}, DType::kF32, device)),
      eps(epsilon) {}

Tensor LayerNorm::operator()(const Tensor& x) const {
  return layer_norm(x, weight, bias, 1, eps);
}

Embedding::Embedding(int64_t vocab, int64_t dim, WeightGenerator& gen, Device device)
    : weight(gen.normal({vocab, dim}, 1.0, device)) {}

Tensor Embedding::operator()(const Tensor& ids) const {
  return embedding(weight, ids);
}

MultiheadAttention::MultiheadAttention(int64_t d, int64_t h, WeightGenerator& gen, Device device)
    : dim(d),
      heads(h),
      q(d, d, gen, device),
      k(d, d, gen, device),
      v(d, d, gen, device),
      out(d, d, gen, device) {
  if (h <= 0 || d % h != 0)
    throw Error(invalid_argument("MultiheadAttention: dim " + std::to_string(d) +
                                 " is not divisible by heads " + std::to_string(h)));
}

Tensor MultiheadAttention::operator()(const Tensor& x, const Tensor& mask) const {
  const SymSize b = x.size(0), s = x.size(1);  // symbolic when dynamic
  const int64_t dh = dim / heads;
  // [b, s, dim] -> [b, heads, s, dh]: views, folded into the next kernel's loads.
  auto split = [&](const Tensor& t) {
    return permute(reshape(t, {b, s, heads, dh}), {0, 2, 1, 3});
  };
  Tensor scores = matmul(split(q(x)), split(k(x)), false, true) * (1.0 / std::sqrt(double(dh)));
  if (mask.defined()) scores = scores + mask;
  Tensor ctx = matmul(softmax(scores, -1), split(v(x)));
  return out(reshape(permute(ctx, {0, 2, 1, 3}), {b, s, dim}));
}

TransformerEncoderLayer::TransformerEncoderLayer(int64_t dim, int64_t heads, int64_t ffn,
                                                 WeightGenerator& gen, Device device)
    : attn(dim, heads, gen, device),
      ff1(dim, ffn, gen, device),
      ff2(ffn, dim, gen, device),
      norm1(dim, device),
      norm2(dim, device) {}

Tensor TransformerEncoderLayer::operator()(const Tensor& x, const Tensor& mask) const {
  Tensor h = norm1(x + attn(x, mask));
  return norm2(h + ff2(relu(ff1(h))));
}

TransformerEncoder::TransformerEncoder(int64_t n, int64_t dim, int64_t heads, int64_t ffn,
                                       WeightGenerator& gen, Device device) {
  for (int64_t i = 0; i < n; ++i) layers.emplace_back(dim, heads, ffn, gen, device);
}

Tensor TransformerEncoder::operator()(const Tensor& x, const Tensor& mask) const {
  Tensor h = x;
  for (const TransformerEncoderLayer& layer : layers) h = layer(h, mask);
  return h;
}

TextEncoder::TextEncoder(const Config& c, WeightGenerator& gen, Device dev)
    : device(dev),
      embed(c.vocab, c.dim, gen, dev),
      encoder(c.layers, c.dim, c.heads, c.ffn, gen, dev),
      head(c.dim, c.vocab, gen, dev) {}

Tensor TextEncoder::operator()(const Tensor& ids) const {
  // ids.size(1) stays a SymSize: under dynamic shapes the mask is [s0, s0], not a constant.
  return head(encoder(embed(ids), causal_mask(ids.size(1), device)));
}

Tensor causal_mask(SymSize s, Device device) {
  Tensor above = gt(triu(ones({s, s}, DType::kF32, device), 1), scalar(0.0));
  return masked_fill(zeros({s, s}, DType::kF32, device), above, -INFINITY);
}

}  // namespace kiln::nn
