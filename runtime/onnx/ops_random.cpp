// Random ops on random_uniform (graph/ops.def: Philox 4x32-10, the same bits on Vulkan and the
// interpreter for a seed): RandomUniform(Like) = low + u (high - low); RandomNormal(Like) =
// mean + scale sqrt(-2 ln(1 - u1)) cos(2 pi u2) (Box-Muller on two streams); Bernoulli = u < p;
// training-mode Dropout keeps x / (1 - ratio) where u >= ratio. A node's `seed` (a float) keys
// the generator by its bits; a node without one draws a seed each time it is traced (so a
// compiled model replays the values of its trace until it traces again). ONNX's reference
// values come from NumPy's global generator, which no other runtime reproduces.
#include <bit>
#include <mutex>
#include <numbers>
#include <optional>
#include <random>
#include <string>

#include "onnx/importer.h"
#include "tensor/apply_op.h"

namespace kiln::onnx {

namespace {

std::mutex seed_mu;
std::optional<uint64_t> default_seed;  // set_default_seed

int64_t seed_of(NodeCtx& c) {
  for (const auto& a : c.node().attribute()) {  // a float (RandomUniform ...) or int (Dropout)
    if (a.name() != "seed") continue;
    if (a.type() == ::onnx::AttributeProto::INT) return a.i();
    return static_cast<int64_t>(std::bit_cast<uint32_t>(static_cast<float>(c.attr_f("seed", 0))));
  }
  std::lock_guard<std::mutex> lock(seed_mu);
  if (default_seed) {  // FNV-1a of the node's first output, mixed with the default seed
    uint64_t h = 14695981039346656037ull ^ *default_seed;
    for (char ch : c.node().output(0)) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
    return static_cast<int64_t>(h);
  }
  static std::random_device device;
  return static_cast<int64_t>((uint64_t{device()} << 32) | device());
}

/// Uniform f32 in [0, 1) of `like`'s shape (its values are not read), stream `stream`.
Tensor uniform(int64_t seed, int64_t stream, const Tensor& like) {
  Attrs a;
  a.scalar_int = seed;
  a.index = stream;
  return apply_op(OpKind::RandomUniform, {like}, std::move(a), Loc::current());
}

DType dtype_attr(NodeCtx& c, DType dflt) {
  if (!c.has_attr("dtype")) return dflt;
  auto d = kiln_dtype(static_cast<OnnxType>(c.attr_i("dtype", 1)));
  if (!d.ok()) throw Error(d.status());
  if (*d != DType::kF32 && *d != DType::kF16 && !c.node().op_type().starts_with("Bernoulli"))
    c.unsupported("random values of dtype " + std::string(dtype_name(*d)));
  return *d;
}

/// The shape source of a RandomUniform / RandomNormal node: its `shape` attribute.
Tensor shape_like(NodeCtx& c) {
  if (!c.has_attr("shape")) c.fail("needs the shape attribute");
  Sizes s;
  for (int64_t d : c.attr_ints("shape")) {
    if (d < 0) c.fail("shape dims must not be negative");
    s.push_back(d);
  }
  check_size(c, s);
  return zeros(s, DType::kF32, c.device());
}

Tensor lit(double v) {
  return scalar(v, DType::kF32);
}

void random_uniform(NodeCtx& c, const Tensor& like, DType dtype) {
  const double low = c.attr_f("low", 0.0), high = c.attr_f("high", 1.0);
  Tensor u = uniform(seed_of(c), 0, like);
  Tensor y = add(mul(u, lit(high - low)), lit(low));
  c.set(0, dtype == DType::kF32 ? y : cast(y, dtype));
}

void random_normal(NodeCtx& c, const Tensor& like, DType dtype) {
  const double mean = c.attr_f("mean", 0.0), scale = c.attr_f("scale", 1.0);
  const int64_t seed = seed_of(c);
  Tensor u1 = uniform(seed, 0, like), u2 = uniform(seed, 1, like);
  Tensor radius = sqrt(mul(log(sub(lit(1.0), u1)), lit(-2.0)));
  Tensor z = mul(radius, cos(mul(u2, lit(2 * std::numbers::pi))));
  Tensor y = add(mul(z, lit(scale)), lit(mean));
  c.set(0, dtype == DType::kF32 ? y : cast(y, dtype));
}

void bernoulli(NodeCtx& c) {
  Tensor p = c.in(0);
  if (!is_floating(p.dtype())) c.fail("input must be a float tensor of probabilities");
  const DType dtype = dtype_attr(c, p.dtype());
  Tensor u = uniform(seed_of(c), 0, p);
  c.set(0, cast(lt(u, cast(p, DType::kF32)), dtype));
}

}  // namespace

void set_default_seed(std::optional<uint64_t> seed) {
  std::lock_guard<std::mutex> lock(seed_mu);
  default_seed = seed;
}

void register_random_ops(std::map<std::string, OpHandler>& t) {
  t["RandomUniform"] = [](NodeCtx& c) {
    random_uniform(c, shape_like(c), dtype_attr(c, DType::kF32));
  };
  t["RandomNormal"] = [](NodeCtx& c) {
    random_normal(c, shape_like(c), dtype_attr(c, DType::kF32));
  };
  t["RandomUniformLike"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    random_uniform(c, x, dtype_attr(c, is_floating(x.dtype()) ? x.dtype() : DType::kF32));
  };
  t["RandomNormalLike"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    random_normal(c, x, dtype_attr(c, is_floating(x.dtype()) ? x.dtype() : DType::kF32));
  };
  t["Bernoulli"] = bernoulli;
  // Training-mode Dropout with a ratio in (0, 1): y = mask * x * 1 / (1 - ratio), mask =
  // u >= ratio, as ONNX's reference computes it; every other Dropout is the identity.
  OpHandler identity = t.at("Dropout");
  t["Dropout"] = [identity](NodeCtx& c) {
    const bool training = c.has(2) && c.scalar_int(2) != 0;
    const double ratio = c.has(1) ? c.scalar_double(1) : c.attr_f("ratio", 0.5);
    if (!training || ratio == 0) return identity(c);
    if (!(ratio > 0 && ratio < 1)) c.fail("ratio must lie in [0, 1)");
    Tensor x = c.in(0);
    Tensor mask = ge(uniform(seed_of(c), 0, x), lit(ratio));
    c.set(0, mul(mul(cast(mask, x.dtype()), x), scalar(1.0 / (1.0 - ratio), x.dtype())));
    if (c.wants(1)) c.set(1, mask);
  };
}

}  // namespace kiln::onnx
