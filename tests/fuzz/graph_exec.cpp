// Running a generated program through the Tensor API, its leaf data, and its printed form.
#include <cmath>
#include <limits>
#include <sstream>

#include "fuzz/graph_gen.h"

namespace kiln::fuzz {

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t Rng::range(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + (span == 0 ? next() : next() % span));
}

double Rng::unit() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

uint64_t mix_seed(uint64_t a, uint64_t b) {
  Rng r(a * 0x100000001b3ull ^ (b + 0x632be59bd9b4e019ull));
  r.next();
  return r.next();
}

Shape shape_at(const GShape& s, int64_t n) {
  Shape out;
  for (const GDim& d : s) out.push_back(d.at(n));
  return out;
}

namespace {

std::string dim_str(const GDim& d) {
  if (!d.var()) return std::to_string(d.c);
  std::string s = d.k == 1 ? "n" : std::to_string(d.k) + "n";
  if (d.c > 0) s += "+" + std::to_string(d.c);
  if (d.c < 0) s += std::to_string(d.c);
  return s;
}

const char* fill_name(Fill f) {
  switch (f) {
    case Fill::kNormal:
      return "normal";
    case Fill::kSpecial:
      return "special";
    case Fill::kPositive:
      return "positive";
    case Fill::kLargeInt:
      return "large";
    case Fill::kIndex:
      return "index";
  }
  return "?";
}

const char* kind_name(const Step& s) {
  switch (s.kind) {
    case StepKind::kLeaf:
      return "leaf";
    case StepKind::kUnary:
    case StepKind::kBinary:
    case StepKind::kCompare:
    case StepKind::kReduce:
      return op_name(s.op);
    case StepKind::kBinaryScalar:
    case StepKind::kCompareScalar:
      return op_name(s.op);
    case StepKind::kWhere:
      return "where";
    case StepKind::kMaskedFill:
      return "masked_fill";
    case StepKind::kCast:
      return "cast";
    case StepKind::kArgReduce:
      return s.flag2 ? "argmin" : "argmax";
    case StepKind::kMatMul:
      return "matmul";
    case StepKind::kSoftmax:
      return s.flag ? "log_softmax" : "softmax";
    case StepKind::kLayerNorm:
      return "layer_norm";
    case StepKind::kMerge:
      return "reshape(merge)";
    case StepKind::kSplit:
      return "reshape(split)";
    case StepKind::kFlatten:
      return "reshape(-1)";
    case StepKind::kPermute:
      return "permute";
    case StepKind::kUnsqueeze:
      return "unsqueeze";
    case StepKind::kSqueeze:
      return "squeeze";
    case StepKind::kExpand:
      return "expand";
    case StepKind::kSlice:
      return "slice";
    case StepKind::kConcat:
      return "concat";
    case StepKind::kGather:
      return "gather";
    case StepKind::kIndexSelect:
      return "index_select";
    case StepKind::kEmbedding:
      return "embedding";
    case StepKind::kTriangle:
      return s.flag ? "triu" : "tril";
    case StepKind::kFull:
      return "full";
    case StepKind::kArange:
      return "arange";
    case StepKind::kItemScale:
      return "mul_by_item";
    case StepKind::kHostCall:
      return "call_host(twice_plus_one)";
  }
  return "?";
}

std::string scalar_str(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

/// The Sizes an expand / full step asks for: (value, dim) pairs, value -1 a constant.
Sizes sizes_from(const std::vector<int64_t>& ints, size_t from, const std::vector<Tensor>& vals) {
  Sizes out;
  for (size_t i = from; i + 1 < ints.size(); i += 2) {
    if (ints[i] < 0)
      out.push_back(SymSize(ints[i + 1]));
    else
      out.push_back(vals[static_cast<size_t>(ints[i])].size(static_cast<int>(ints[i + 1])));
  }
  return out;
}

Tensor binary_op(OpKind op, const Tensor& a, const Tensor& b) {
  switch (op) {
    // Every binary row of the elementwise table: its public function has the row's name.
#define KILN_UNARY(e, name, ints, glsl)
#define KILN_BINARY(e, name, dtypes, glsl) \
  case OpKind::e:                          \
    return kiln::name(a, b);
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
#undef KILN_UNARY
    case OpKind::Eq:
      return eq(a, b);
    case OpKind::Ne:
      return ne(a, b);
    case OpKind::Lt:
      return lt(a, b);
    case OpKind::Le:
      return le(a, b);
    case OpKind::Gt:
      return gt(a, b);
    case OpKind::Ge:
      return ge(a, b);
    default:
      break;
  }
  throw Error(internal_error(std::string("fuzz: not a binary op: ") + op_name(op)));
}

Tensor unary_op(OpKind op, const Tensor& a) {
  switch (op) {
    // Every unary row of the elementwise table: its public function has the row's name.
#define KILN_UNARY(e, name, ints, glsl) \
  case OpKind::e:                       \
    return kiln::name(a);
#define KILN_BINARY(e, name, dtypes, glsl)
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
#undef KILN_UNARY
    default:
      break;
  }
  throw Error(internal_error(std::string("fuzz: not a unary op: ") + op_name(op)));
}

Tensor reduce_op(OpKind op, const Tensor& a, std::vector<int64_t> axes, bool keepdim) {
  switch (op) {
    case OpKind::Sum:
      return sum(a, std::move(axes), keepdim);
    case OpKind::Mean:
      return mean(a, std::move(axes), keepdim);
    case OpKind::Max:
      return max(a, std::move(axes), keepdim);
    case OpKind::Min:
      return min(a, std::move(axes), keepdim);
    default:
      break;
  }
  throw Error(internal_error(std::string("fuzz: not a reduction: ") + op_name(op)));
}

/// The binary op with a C++ number on one side (operators for the four arithmetic ops and the
/// compares, so the Number path is exercised; a rank-0 scalar tensor for the rest).
Tensor scalar_op(OpKind op, const Tensor& a, double v, bool left) {
  switch (op) {
    case OpKind::Add:
      return left ? Number(v) + a : a + v;
    case OpKind::Sub:
      return left ? Number(v) - a : a - v;
    case OpKind::Mul:
      return left ? Number(v) * a : a * v;
    case OpKind::Div:
      return left ? Number(v) / a : a / v;
    case OpKind::Lt:
      return a < v;
    case OpKind::Le:
      return a <= v;
    case OpKind::Gt:
      return a > v;
    case OpKind::Ge:
      return a >= v;
    default:
      break;
  }
  // The dtype a C++ number takes next to a tensor (as the operators do).
  DType d = a.dtype();
  if (!is_floating(d)) d = std::floor(v) != v ? DType::kF32 : (d == DType::kBool ? DType::kI64 : d);
  Tensor s = scalar(v, d);
  return left ? binary_op(op, s, a) : binary_op(op, a, s);
}

}  // namespace

std::string gshape_str(const GShape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + dim_str(s[i]);
  return out + "]";
}

std::string Program::str() const {
  std::ostringstream o;
  o << "program seed " << seed << " index " << index << ", dynamic "
    << (dynamic == Dynamic::kTrue   ? "true"
        : dynamic == Dynamic::kAuto ? "auto"
                                    : "false")
    << ", n per call:";
  for (int64_t n : sizes) o << " " << n;
  o << "\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    o << "  v" << i << " = ";
    if (s.kind == StepKind::kLeaf) {
      const Leaf& l = leaves[static_cast<size_t>(s.ints[0])];
      o << (l.captured ? "captured " : "input ") << dtype_name(l.dtype) << gshape_str(l.shape)
        << " " << fill_name(l.fill);
      if (l.fill == Fill::kIndex) o << " < " << dim_str(l.bound);
      o << "\n";
      continue;
    }
    o << kind_name(s) << "(";
    for (size_t j = 0; j < s.args.size(); ++j) o << (j ? ", v" : "v") << s.args[j];
    if (!s.ints.empty()) {
      o << (s.args.empty() ? "" : "; ") << "ints";
      for (int64_t v : s.ints) o << " " << v;
    }
    if (s.kind == StepKind::kBinaryScalar || s.kind == StepKind::kCompareScalar ||
        s.kind == StepKind::kMaskedFill || s.kind == StepKind::kFull ||
        s.kind == StepKind::kLayerNorm)
      o << "; scalar " << scalar_str(s.scalar) << (s.flag ? " on the left" : "");
    if (s.kind == StepKind::kReduce || s.kind == StepKind::kArgReduce)
      o << (s.flag ? "; keepdim" : "");
    if (s.kind == StepKind::kMatMul)
      o << (s.flag ? "; trans_a" : "") << (s.flag2 ? "; trans_b" : "");
    if (s.kind == StepKind::kCast || s.kind == StepKind::kFull || s.kind == StepKind::kArange)
      o << "; " << dtype_name(s.dtype);
    o << ") : " << dtype_name(s.out_dtype) << gshape_str(s.out_shape) << "\n";
  }
  o << "  outputs:";
  for (int v : outputs) o << " v" << v;
  return o.str();
}

Tensor make_leaf(const Program& p, size_t leaf, int64_t n, int call) {
  const Leaf& l = p.leaves[leaf];
  const Shape shape = shape_at(l.shape, l.captured ? 0 : n);
  Rng rng(mix_seed(mix_seed(p.seed, p.index),
                   leaf * 131 + static_cast<uint64_t>(l.captured ? 0 : call)));
  const int64_t count = numel(shape);
  std::vector<double> v(static_cast<size_t>(count));
  const double inf = std::numeric_limits<double>::infinity();
  switch (l.dtype) {
    case DType::kF32:
    case DType::kF16: {
      const bool half = l.dtype == DType::kF16;
      const std::vector<double> specials = {
          std::nan(""),        inf,  -inf, -0.0, 0.0, half ? 1.5 : 3e38,
          half ? 1e-4 : 1e-30, -1.0, 1.0,  2.5,  0.5};
      for (double& x : v) {
        if (l.fill == Fill::kPositive) {
          x = 0.25 + 3.75 * rng.unit();
        } else if (l.fill == Fill::kSpecial && rng.chance(0.4)) {
          x = rng.pick(specials);
        } else {
          x = rng.chance(0.1) ? 0.0 : -4.0 + 8.0 * rng.unit();
        }
      }
      break;
    }
    case DType::kI32:
    case DType::kI64: {
      const bool wide = l.dtype == DType::kI64;
      const std::vector<int64_t> large =
          wide ? std::vector<int64_t>{INT64_MAX,           INT64_MIN,        (1ll << 31),
                                      (1ll << 31) - 1,     -(1ll << 31) - 1, (1ll << 53) - 1,
                                      (1ll << 53),         (1ll << 53) + 1,  -(1ll << 53) - 3,
                                      (1ll << 62) + 12345, (1ll << 40) + 7}
               : std::vector<int64_t>{INT32_MAX, INT32_MIN, INT32_MAX - 1, (1 << 30) + 3,
                                      -(1 << 24) - 1};
      std::vector<int64_t> iv(static_cast<size_t>(count));
      for (int64_t& x : iv) {
        if (l.fill == Fill::kIndex) {
          x = rng.range(0, std::max<int64_t>(l.bound.at(l.captured ? 0 : n), 1) - 1);
        } else if (l.fill == Fill::kLargeInt && rng.chance(0.5)) {
          x = static_cast<int64_t>(static_cast<uint64_t>(rng.pick(large)) +
                                   static_cast<uint64_t>(rng.chance(0.5) ? 0 : rng.range(-3, 3)));
        } else {
          x = rng.range(-20, 20);
        }
      }
      if (wide) return Tensor::from_vector(iv, shape);
      std::vector<int32_t> i32(iv.begin(), iv.end());
      return Tensor::from_vector(i32, shape);
    }
    case DType::kBool:
      for (double& x : v) x = rng.chance(0.5) ? 1.0 : 0.0;
      break;
    case DType::kC64:  // the generator makes no complex64 leaves
      break;
  }
  if (l.dtype == DType::kF32) {
    std::vector<float> f(v.begin(), v.end());
    return Tensor::from_vector(f, shape);
  }
  if (l.dtype == DType::kF16) {
    std::vector<uint16_t> h;
    for (double x : v) h.push_back(float_to_half(static_cast<float>(x)));
    return Tensor::from_bytes(DType::kF16, shape, h.data(), h.size() * 2);
  }
  std::vector<uint8_t> b;
  for (double x : v) b.push_back(x != 0 ? 1 : 0);
  return Tensor::from_bytes(DType::kBool, shape, b.data(), b.size());
}

std::vector<Tensor> run_program(const Program& p, const std::vector<Tensor>& leaves, Device device,
                                std::vector<Tensor>* values) {
  std::vector<Tensor> v;
  auto at = [&](const Step& s, size_t i) -> const Tensor& {
    return v[static_cast<size_t>(s.args[i])];
  };
  for (const Step& s : p.steps) {
    Tensor r;
    switch (s.kind) {
      case StepKind::kLeaf:
        r = leaves.at(static_cast<size_t>(s.ints[0]));
        break;
      case StepKind::kUnary:
        r = unary_op(s.op, at(s, 0));
        break;
      case StepKind::kBinary:
      case StepKind::kCompare:
        r = binary_op(s.op, at(s, 0), at(s, 1));
        break;
      case StepKind::kBinaryScalar:
      case StepKind::kCompareScalar:
        r = scalar_op(s.op, at(s, 0), s.scalar, s.flag);
        break;
      case StepKind::kWhere:
        r = where(at(s, 0), at(s, 1), at(s, 2));
        break;
      case StepKind::kMaskedFill:
        r = masked_fill(at(s, 0), at(s, 1), s.scalar);
        break;
      case StepKind::kCast:
        r = cast(at(s, 0), s.dtype);
        break;
      case StepKind::kReduce:
        r = reduce_op(s.op, at(s, 0), s.ints, s.flag);
        break;
      case StepKind::kArgReduce:
        r = s.flag2 ? argmin(at(s, 0), s.ints[0], s.flag) : argmax(at(s, 0), s.ints[0], s.flag);
        break;
      case StepKind::kMatMul:
        r = matmul(at(s, 0), at(s, 1), s.flag, s.flag2);
        break;
      case StepKind::kSoftmax:
        r = s.flag ? log_softmax(at(s, 0), s.ints[0]) : softmax(at(s, 0), s.ints[0]);
        break;
      case StepKind::kLayerNorm:
        r = layer_norm(at(s, 0), at(s, 1), at(s, 2), s.ints[0], s.scalar);
        break;
      case StepKind::kMerge: {
        Sizes sz = at(s, 0).sizes();
        const auto d = static_cast<size_t>(s.ints[0]);
        Sizes out;
        for (size_t i = 0; i < sz.size(); ++i) {
          if (i == d + 1) continue;
          out.push_back(i == d ? sz[d] * sz[d + 1] : sz[i]);
        }
        r = reshape(at(s, 0), out);
        break;
      }
      case StepKind::kSplit: {
        Sizes sz = at(s, 0).sizes();
        const auto d = static_cast<size_t>(s.ints[0]);
        Sizes out;
        for (size_t i = 0; i < sz.size(); ++i) {
          if (i == d) {
            out.push_back(SymSize(s.ints[1]));
            out.push_back(sz[i] / s.ints[1]);
          } else {
            out.push_back(sz[i]);
          }
        }
        r = reshape(at(s, 0), out);
        break;
      }
      case StepKind::kFlatten:
        r = reshape(at(s, 0), {-1});
        break;
      case StepKind::kPermute:
        r = permute(at(s, 0), s.ints);
        break;
      case StepKind::kUnsqueeze:
        r = unsqueeze(at(s, 0), s.ints[0]);
        break;
      case StepKind::kSqueeze:
        r = squeeze(at(s, 0), s.ints[0]);
        break;
      case StepKind::kExpand:
        r = expand(at(s, 0), sizes_from(s.ints, 0, v));
        break;
      case StepKind::kSlice:
        r = slice(at(s, 0), s.ints[0], s.ints[1], s.ints[2], s.ints[3]);
        break;
      case StepKind::kConcat: {
        std::vector<Tensor> parts;
        for (size_t i = 0; i < s.args.size(); ++i) parts.push_back(at(s, i));
        r = concat(parts, s.ints[0]);
        break;
      }
      case StepKind::kGather:
        r = gather(at(s, 0), s.ints[0], at(s, 1));
        break;
      case StepKind::kIndexSelect:
        r = index_select(at(s, 0), s.ints[0], at(s, 1));
        break;
      case StepKind::kEmbedding:
        r = embedding(at(s, 0), at(s, 1));
        break;
      case StepKind::kTriangle:
        r = s.flag ? triu(at(s, 0), s.ints[0]) : tril(at(s, 0), s.ints[0]);
        break;
      case StepKind::kFull:
        r = full(sizes_from(s.ints, 0, v), s.scalar, s.dtype, device);
        break;
      case StepKind::kArange:
        r = arange(at(s, 0).size(static_cast<int>(s.ints[0])), s.dtype, device);
        break;
      case StepKind::kItemScale: {
        const Tensor& b = at(s, 1);
        const double k = (s.ints.empty() ? b : sum(b, s.ints)).item<double>();
        r = at(s, 0) * k;
        break;
      }
      case StepKind::kHostCall:
        r = call_host("twice_plus_one",
                      [](const std::vector<Tensor>& in) {
                        return std::vector<Tensor>{in[0] * 2.0 + 1.0};
                      },
                      {at(s, 0)})
                .at(0);
        break;
    }
    v.push_back(std::move(r));
  }
  std::vector<Tensor> out;
  for (int o : p.outputs) out.push_back(v[static_cast<size_t>(o)]);
  if (values) *values = std::move(v);
  return out;
}

}  // namespace kiln::fuzz
