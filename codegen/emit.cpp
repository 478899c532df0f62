#include "codegen/emit.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

namespace kiln {

SymInt sym_numel(const SymShape& shape) {
  SymInt n = 1;
  for (const SymInt& d : shape) n = n * d;
  return n;
}

SymShape sym_contiguous_strides(const SymShape& shape) {
  SymShape strides(shape.size(), SymInt(1));
  SymInt s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    s = s * shape[k];
  }
  return strides;
}

namespace {

class AtLeastTwo final : public SymFacts {
 public:
  SymRange symbol_range(int) const override { return {2, SymRange::kPosInf}; }
  int64_t symbol_divisor(int) const override { return 1; }
};

/// True when to_glsl renders `e` exactly in uint arithmetic for every value of its symbols:
/// a polynomial in symbols with non-negative coefficients (no subtraction, floordiv, mod, min,
/// max), whose every partial sum and product is a non-negative size.
bool uint_exact(const SymExpr& e) {
  switch (e.kind()) {
    case SymKind::kConst:
      return e.constant_value() >= 0;
    case SymKind::kSymbol:
      return true;
    case SymKind::kMul:
      for (const SymExpr& a : e.args())
        if (!uint_exact(a)) return false;
      return true;
    case SymKind::kAdd:
      if (e.add_constant() < 0) return false;
      for (size_t i = 0; i < e.args().size(); ++i)
        if (e.ints()[i] < 0 || !uint_exact(e.args()[i])) return false;
      return true;
    default:
      return false;
  }
}

}  // namespace

const SymFacts* size_facts() {
  static const AtLeastTwo facts;
  return &facts;
}

const char* glsl_compute_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
      return "float";
    case DType::kI32:
      return "int";
    case DType::kI64:
      return "int64_t";
    case DType::kBool:
      return "bool";
    case DType::kC64:  // (real, imaginary)
      return "vec2";
  }
  unreachable("bad dtype");
}

const char* glsl_storage_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "float";
    case DType::kF16:
      return "float16_t";
    case DType::kI32:
      return "int";
    case DType::kI64:
      return "int64_t";
    case DType::kBool:
      return "uint8_t";
    case DType::kC64:  // std430 vec2: 8 bytes, real then imaginary part
      return "vec2";
  }
  unreachable("bad dtype");
}

std::string glsl_convert(const std::string& expr, DType from, DType to) {
  // Into f16: the float nearest in half (kiln_f16, shaders/common/kiln_common.glsl), as the
  // interpreter encodes a value into an f16 tensor.
  if (to == DType::kF16 && from != DType::kF16)
    return "kiln_f16(" + glsl_compute_convert(expr, from, DType::kF32) + ")";
  return glsl_compute_convert(expr, from, to);
}

std::string glsl_compute_convert(const std::string& expr, DType from, DType to) {
  std::string ft = glsl_compute_type(from), tt = glsl_compute_type(to);
  if (ft == tt) return expr;
  // complex64: a real value gets imaginary part 0 (the only conversion the ops make).
  if (to == DType::kC64) return "vec2(" + glsl_compute_convert(expr, from, DType::kF32) + ", 0.0)";
  if (from == DType::kC64) return glsl_compute_convert("(" + expr + ").x", DType::kF32, to);
  if (from == DType::kI32 && to == DType::kI64) {
    // Sign extension spelled out: Mesa 22.3's lavapipe miscompiles int64_t(int) (OpSConvert)
    // as a zero extension where a compare with a constant, abs or a conversion to float reads
    // it, so i64 ** i32 lost the exponent's sign.
    return "packInt2x32(ivec2(" + expr + ", (" + expr + ") >> 31))";
  }
  if (to == DType::kBool) return "(" + expr + " != " + ft + "(0))";
  if (from == DType::kBool) return "((" + expr + ") ? " + tt + "(1) : " + tt + "(0))";
  if (is_floating(from) && (to == DType::kI32 || to == DType::kI64)) {
    // GLSL leaves float -> int undefined for NaN and out-of-range values; the interpreter
    // truncates toward zero, clamps to the target range and maps NaN to 0.
    const bool wide = to == DType::kI64;
    const std::string e = "(" + expr + ")";
    const std::string hi = wide ? "int64_t(9223372036854775807l)" : "2147483647";
    const std::string lo =
        wide ? "(-int64_t(9223372036854775807l) - int64_t(1))" : "(-2147483647 - 1)";
    const std::string fhi = wide ? "9223372036854775807.0" : "2147483647.0";
    const std::string flo = wide ? "-9223372036854775808.0" : "-2147483648.0";
    // In range, the truncation is done on the float's bits (kiln_trunc_i32 / kiln_trunc_i64):
    // lavapipe's compiler folds GLSL's int64_t(float(i)) back to i, which skips the rounding
    // of the conversion to float (2^31 - 1 -> 2^31).
    const std::string trunc = wide ? "kiln_trunc_i64" : "kiln_trunc_i32";
    return "(isnan(" + e + ") ? " + tt + "(0) : (" + e + " >= " + fhi + " ? " + hi + " : (" + e +
           " <= " + flo + " ? " + lo + " : " + trunc + e + ")))";
  }
  return tt + "(" + expr + ")";
}

namespace {
/// double -> integer as the interpreter encodes it: truncated toward zero, clamped, NaN -> 0.
template <typename I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}
}  // namespace

std::string glsl_literal(double value, DType dtype) {
  char buf[64];
  switch (dtype) {
    case DType::kF32:
    case DType::kF16: {
      float f = static_cast<float>(value);
      if (dtype == DType::kF16) f = half_to_float(float_to_half(f));  // as the interpreter encodes
      if (std::isnan(f)) return "uintBitsToFloat(0x7fc00000u)";
      if (std::isinf(f)) return f > 0 ? "KILN_INF" : "(-KILN_INF)";
      std::snprintf(buf, sizeof buf, "%.9e", static_cast<double>(f));
      return buf;
    }
    case DType::kI32: {  // the interpreter's encoding: truncated, clamped, NaN -> 0
      const int32_t v = saturate<int32_t>(value);
      if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      std::snprintf(buf, sizeof buf, "int(%d)", v);
      return buf;
    }
    case DType::kI64: {
      const int64_t v = saturate<int64_t>(value);
      if (v == std::numeric_limits<int64_t>::min())
        return "(-int64_t(9223372036854775807l) - int64_t(1))";
      std::snprintf(buf, sizeof buf, "int64_t(%lldl)", static_cast<long long>(v));
      return buf;
    }
    case DType::kBool:
      return value != 0 ? "true" : "false";
    case DType::kC64:
      return "vec2(" + glsl_literal(value, DType::kF32) + ", 0.0)";
  }
  unreachable("bad dtype");
}

std::string glsl_literal(const Attrs& full, DType dtype) {
  if (!full.scalar_is_int) return glsl_literal(full.scalar, dtype);
  const int64_t v = full.scalar_int;
  char buf[64];
  switch (dtype) {
    case DType::kI64:  // the bits, so that every int64 (INT64_MIN too) is exact
      std::snprintf(buf, sizeof buf, "int64_t(0x%llxul)",
                    static_cast<unsigned long long>(static_cast<uint64_t>(v)));
      return buf;
    case DType::kI32:  // wraps like a cast from int64
      std::snprintf(buf, sizeof buf, "int(%d)", static_cast<int32_t>(static_cast<uint32_t>(v)));
      return buf;
    case DType::kBool:
      return v != 0 ? "true" : "false";
    case DType::kF32:
    case DType::kF16:
    case DType::kC64:
      return glsl_literal(static_cast<double>(static_cast<float>(v)), dtype);
  }
  unreachable("bad dtype");
}

namespace {

// pow with std::pow's special cases (GLSL's pow is undefined for x < 0 and for x = 0, y <= 0),
// and exact integer powers by squaring (wrapping like mul; a negative exponent truncates
// 1 / x^|y| toward zero). Defined in the kernels that use them.
constexpr const char* kPowHelpers = R"(float kiln_pow(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return x + y;
  const bool yint = floor(y) == y;
  const bool odd = yint && abs(y) < 16777216.0 && mod(y, 2.0) == 1.0;
  const bool xneg = (floatBitsToUint(x) >> 31) != 0u;
  if (isinf(y)) {
    const float ax = abs(x);
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0.0) ? KILN_INF : 0.0;
  }
  if (x == 0.0 || isinf(x)) {
    const float r = (y > 0.0) == (x == 0.0) ? 0.0 : KILN_INF;
    return xneg && odd ? -r : r;
  }
  if (xneg && !yint) return uintBitsToFloat(0x7fc00000u);
  const float r = pow(abs(x), y);
  return xneg && odd ? -r : r;
}
vec4 kiln_pow(vec4 x, vec4 y) {
  return vec4(kiln_pow(x.x, y.x), kiln_pow(x.y, y.y), kiln_pow(x.z, y.z), kiln_pow(x.w, y.w));
}
int kiln_ipow(int x, int y) {
  if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) != 0 ? -1 : 1) : 0);
  int r = 1;
  for (uint e = uint(y); e != 0u; e >>= 1) {
    if ((e & 1u) != 0u) r *= x;
    x *= x;
  }
  return r;
}
)";
constexpr const char* kPowHelpers64 = R"(int64_t kiln_ipow(int64_t x, int64_t y) {
  if (y < int64_t(0))
    return x == int64_t(1) ? int64_t(1)
         : (x == int64_t(-1) ? ((y & int64_t(1)) != int64_t(0) ? int64_t(-1) : int64_t(1))
                             : int64_t(0));
  int64_t r = int64_t(1);
  for (uint64_t e = uint64_t(y); e != uint64_t(0); e >>= 1) {
    if ((e & uint64_t(1)) != uint64_t(0)) r *= x;
    x *= x;
  }
  return r;
}
)";
// max / min of int64 with a compare and a select: SPIRV-Tools 2023.1's spirv-opt folds GLSL.std.450
// SMax / SMin of 64-bit constants by their low words (max(INT64_MIN, -6) gave INT64_MIN once a
// reduction loop over a literal was unrolled). Defined in every kernel that uses int64.
constexpr const char* kInt64Helpers =
    R"(int64_t kiln_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t kiln_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t kiln_trunc_i64(float x) {
  const uint u = floatBitsToUint(x);
  const int e = int((u >> 23) & 0xffu) - 127;
  if (e < 0) return int64_t(0);
  const int64_t m = int64_t((u & 0x7fffffu) | 0x800000u);
  const int64_t r = e >= 23 ? m << (e - 23) : m >> (23 - e);
  return (u >> 31) != 0u ? -r : r;
}
)";

// Float division with IEEE's special cases for a zero divisor: x / +-0 = +-inf by the signs,
// 0 / 0 and NaN / 0 = NaN. Drivers may divide as x * rcp(y) with a refinement step, which
// turns every x / 0 into NaN (lavapipe does).
constexpr const char* kDivHelpers = R"(float kiln_div(float a, float b) {
  if (b != 0.0) return a / b;
  if (a == 0.0 || isnan(a)) return uintBitsToFloat(0x7fc00000u);
  return ((floatBitsToUint(a) ^ floatBitsToUint(b)) >> 31) != 0u ? -KILN_INF : KILN_INF;
}
vec4 kiln_div(vec4 a, vec4 b) { return vec4(kiln_div(a.x, b.x), kiln_div(a.y, b.y), kiln_div(a.z, b.z), kiln_div(a.w, b.w)); }
)";

// mod / fmod of int64 (the int and float ones are in shaders/common/kiln_math.glsl, which
// cannot name int64_t: the extension is declared only where a kernel uses it).
constexpr const char* kModHelpers64 = R"(int64_t kiln_fmod(int64_t a, int64_t b) {
  if (b == int64_t(0)) return int64_t(0);
  const uint64_t r = uint64_t(a < int64_t(0) ? -a : a) % uint64_t(b < int64_t(0) ? -b : b);
  return a < int64_t(0) ? -int64_t(r) : int64_t(r);
}
int64_t kiln_mod(int64_t a, int64_t b) {
  const int64_t r = kiln_fmod(a, b);
  return r != int64_t(0) && (r < int64_t(0)) != (b < int64_t(0)) ? r + b : r;
}
)";

std::string pow_helpers(bool int64) {
  return std::string(kPowHelpers) + (int64 ? kPowHelpers64 : "");
}

}  // namespace

Emitter::Emitter(const Graph& graph, const FusionDecision& fusion, bool vec4)
    : graph_(graph), fusion_(fusion), vec4_(vec4) {}

std::string Emitter::vtype(DType dtype) const {
  return vec4_ ? "vec4" : glsl_compute_type(dtype);
}

std::string Emitter::fresh(const std::string& prefix) {
  return prefix + std::to_string(counter_++);
}

void Emitter::note_dtype(DType d) {
  if (d == DType::kI64) int64_ = true;
  if (d == DType::kF16) f16_ = true;
  if (d == DType::kBool) i8_ = true;
  if (vec4_ && d != DType::kF32) failed_ = true;
}

int Emitter::binding(NodeId node) {
  for (size_t i = 0; i < bindings_.size(); ++i)
    if (bindings_[i] == node) return static_cast<int>(i);
  bindings_.push_back(node);
  vec_use_.push_back(false);
  scalar_use_.push_back(false);
  note_dtype(graph_.node(node).meta.dtype);
  return static_cast<int>(bindings_.size() - 1);
}

std::string Emitter::slot(const SymExpr& e) {
  size_t i = 0;
  while (i < push_.size() && (!(push_[i] == e) || (i < reserved_.size() && reserved_[i]))) ++i;
  if (i == push_.size()) push_.push_back(e);
  return "kiln_pc.p" + std::to_string(i);
}

std::string Emitter::size(const SymInt& v) {
  if (v.is_constant()) {
    const int64_t c = v.constant_value();
    return c >= 0 ? std::to_string(c) + "u" : "uint(" + std::to_string(c) + ")";
  }
  const SymExpr e = v.expr();
  if (!uint_exact(e)) return slot(e);
  return to_glsl(e, [this](int s) { return slot(SymExpr::symbol(s)); });
}

std::string Emitter::declarations() const {
  std::string s;
  for (size_t i = 0; i < bindings_.size(); ++i) {
    DType dt = graph_.node(bindings_[i]).meta.dtype;
    std::string qual = i == 0 ? "" : "readonly ";
    std::string b = std::to_string(i);
    // Binding 0 (the output) is always declared so the interface is stable.
    if (scalar_use_[i] || (i == 0 && !vec_use_[i]))
      s += "layout(std430, set = 0, binding = " + b + ") " + qual + "buffer KilnB" + b + " { " +
           glsl_storage_type(dt) + " data[]; } b" + b + ";\n";
    if (texel_binding(i))
      s += "layout(set = 0, binding = " + b + ", rgba32f) uniform readonly imageBuffer kiln_t" + b +
           ";\n#define kiln_load" + b + "(i) imageLoad(kiln_t" + b + ", int(i))\n";
    else if (vec_use_[i])
      s += "layout(std430, set = 0, binding = " + b + ") " + qual + "buffer KilnB" + b +
           "v { vec4 data[]; } b" + b + "v;\n";
    if (max_texels_ > 0 && i != 0 && vec_use_[i] && !texel_binding(i))
      s += "#define kiln_load" + b + "(i) b" + b + "v.data[i]\n";
  }
  if (int64_) s += kInt64Helpers;
  if (pow_) s += pow_helpers(int64_);
  if (div_) s += kDivHelpers;
  if (mod64_) s += kModHelpers64;
  if (!push_.empty()) {  // after the tensors (Kernel::sizes_binding)
    sizes_binding_ = static_cast<int>(bindings_.size());
    s += "layout(std140, set = 0, binding = " + std::to_string(sizes_binding_) +
         ") uniform KilnSizes {";
    for (size_t i = 0; i < push_.size(); ++i) s += " uint p" + std::to_string(i) + ";";
    s += " } kiln_pc;\n";
  }
  return s;
}

bool Emitter::texel_binding(size_t b) const {
  if (max_texels_ == 0 || b == 0 || !vec_use_[b] || scalar_use_[b]) return false;
  const Node& n = graph_.node(bindings_[b]);
  return !n.sym.empty() && n.sym.back().is_constant() && n.sym.back().constant_value() % 4 == 0 &&
         static_cast<uint64_t>(n.meta.numel()) / 4 <= max_texels_;
}

std::vector<uint32_t> Emitter::texel_bindings() const {
  std::vector<uint32_t> out;
  for (size_t b = 0; b < bindings_.size(); ++b)
    if (texel_binding(b)) out.push_back(static_cast<uint32_t>(b));
  return out;
}

Index Emitter::broadcast_index(const Index& index, const SymShape& out_shape,
                               const SymShape& in_shape) {
  Index in(in_shape.size());
  size_t offset = out_shape.size() - in_shape.size();
  for (size_t d = 0; d < in_shape.size(); ++d)
    in[d] = is_const(in_shape[d], 1) ? IndexExpr{"0u", 0} : index[d + offset];
  return in;
}

Index Emitter::decompose(const std::string& linear, const SymShape& shape,
                         const std::string& prefix, int last_lane) {
  Index index(shape.size());
  SymShape strides = sym_contiguous_strides(shape);
  for (size_t k = 0; k < shape.size(); ++k) {
    int lane = k + 1 == shape.size() ? last_lane : 0;
    if (is_const(shape[k], 1)) {
      index[k] = {"0u", 0};
      continue;
    }
    std::string e = linear;
    if (!is_const(strides[k], 1)) e = "(" + e + " / " + size(strides[k]) + ")";
    if (k != 0) e = "(" + e + " % " + size(shape[k]) + ")";
    std::string var = prefix + std::to_string(k);
    add_statement("const uint " + var + " = " + e + ";");
    index[k] = {var, lane};
  }
  return index;
}

/// Splits the non-1 dims of a reshape's input and output into consecutive groups of equal
/// size products ([b, s, 512] -> [b, s, 8, 64]: {b}{s}{512 | 8, 64}). Returns false when the
/// sizes do not line up that way (symbolic products that cannot be compared).
using ReshapeGroups = std::vector<std::pair<std::vector<size_t>, std::vector<size_t>>>;

static void skip_ones(const SymShape& s, size_t& k) {
  while (k < s.size() && is_const(s[k], 1)) ++k;
}

static bool reshape_groups_from(const SymShape& in, const SymShape& out, size_t i, size_t o,
                                ReshapeGroups* g);

/// Grows the group (gi, go) of products (pi, po) until the products are equal, then groups the
/// rest. Two unequal symbolic products ([s0] against [8*s0]) may grow on either side: both are
/// tried, so a split such as [s1, s0, 512] -> [s1, 8*s0, 64] still finds its groups.
static bool grow_group(const SymShape& in, const SymShape& out, std::vector<size_t>& gi,
                       std::vector<size_t>& go, const SymInt& pi, const SymInt& po, size_t i,
                       size_t o, ReshapeGroups* g) {
  if (pi == po) {
    g->emplace_back(gi, go);
    if (reshape_groups_from(in, out, i, o, g)) return true;
    g->pop_back();
    return false;
  }
  std::vector<bool> sides;
  if (pi.is_constant() && po.is_constant())
    sides = {pi.constant_value() < po.constant_value()};
  else if (pi.is_constant() != po.is_constant())
    sides = {pi.is_constant()};  // a constant never equals a product holding a symbol
  else
    sides = {true, false};
  for (bool grow_in : sides) {
    size_t k = grow_in ? i : o;
    const SymShape& s = grow_in ? in : out;
    skip_ones(s, k);
    if (k >= s.size()) continue;
    std::vector<size_t>& grown = grow_in ? gi : go;
    grown.push_back(k);
    const bool ok = grow_in ? grow_group(in, out, gi, go, pi * s[k], po, k + 1, o, g)
                            : grow_group(in, out, gi, go, pi, po * s[k], i, k + 1, g);
    if (ok) return true;
    grown.pop_back();
  }
  return false;
}

static bool reshape_groups_from(const SymShape& in, const SymShape& out, size_t i, size_t o,
                                ReshapeGroups* g) {
  skip_ones(in, i), skip_ones(out, o);
  if (i >= in.size() || o >= out.size()) return i >= in.size() && o >= out.size();
  std::vector<size_t> gi = {i}, go = {o};
  return grow_group(in, out, gi, go, in[i], out[o], i + 1, o + 1, g);
}

static bool reshape_groups(const SymShape& in, const SymShape& out, ReshapeGroups* g) {
  g->clear();
  return reshape_groups_from(in, out, 0, 0, g);
}

bool Emitter::grouped_reshape_index(const SymShape& in_shape, const SymShape& out_shape,
                                    const Index& index, Index& in) {
  ReshapeGroups groups;
  if (!reshape_groups(in_shape, out_shape, &groups)) return false;
  for (size_t j = 0; j < in_shape.size(); ++j)
    if (is_const(in_shape[j], 1)) in[j] = {"0u", 0};
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& [ins, outs] = groups[gi];
    const bool last_group = gi + 1 == groups.size();
    if (ins.size() == 1 && outs.size() == 1) {
      in[ins[0]] = index[outs[0]];
      continue;
    }
    // The group's row-major linear index over its output dims.
    std::string lin;
    SymInt stride = 1;
    int lane = 0;
    for (size_t k = outs.size(); k-- > 0;) {
      const IndexExpr& x = index[outs[k]];
      std::string term = is_const(stride, 1) ? x.expr : x.expr + " * " + size(stride);
      lin = lin.empty() ? term : term + " + " + lin;
      stride = stride * out_shape[outs[k]];
      if (x.lane != 0) lane = -1;
    }
    // A merge into one input dim keeps the innermost lane when the group's inner output dim is
    // the output's last dim and a constant multiple of 4 (four lanes never cross a row).
    const size_t inner = outs.back();
    if (ins.size() == 1 && last_group && inner + 1 == out_shape.size() && index[inner].lane == 1 &&
        out_shape[inner].is_constant() && out_shape[inner].constant_value() % 4 == 0) {
      bool others_zero = true;
      for (size_t k = 0; k + 1 < outs.size(); ++k) others_zero &= index[outs[k]].lane == 0;
      if (others_zero) lane = 1;
    }
    std::string var = fresh("l");
    add_statement("const uint " + var + " = " + lin + ";");
    if (ins.size() == 1) {
      in[ins[0]] = {var, lane};
      continue;
    }
    // A split: decompose the group's linear index over its input dims.
    SymInt inner_size = 1;
    for (size_t k = ins.size(); k-- > 0;) {
      std::string e = var;
      if (!is_const(inner_size, 1)) e = "(" + e + " / " + size(inner_size) + ")";
      if (k != 0) e = "(" + e + " % " + size(in_shape[ins[k]]) + ")";
      std::string v = fresh("rs");  // not "r": reductions name their dims r0, r1, ...
      add_statement("const uint " + v + " = " + e + ";");
      in[ins[k]] = {v, lane == 0 ? 0 : -1};
      inner_size = inner_size * in_shape[ins[k]];
    }
  }
  return true;
}

Index Emitter::view_input_index(const Node& n, const Index& index) {
  const SymShape& in_shape = graph_.node(n.inputs[0]).sym;
  const SymShape& out_shape = n.sym;
  if (n.op == OpKind::Permute) {
    Index in(in_shape.size());
    for (size_t i = 0; i < n.attrs.dims.size(); ++i) in[n.attrs.dims[i]] = index[i];
    return in;
  }
  if (n.op == OpKind::Expand) return broadcast_index(index, out_shape, in_shape);
  // Reshape.
  if (in_shape == out_shape) return index;
  SymShape in_nz, out_nz;
  for (const SymInt& d : in_shape)
    if (!is_const(d, 1)) in_nz.push_back(d);
  for (const SymInt& d : out_shape)
    if (!is_const(d, 1)) out_nz.push_back(d);
  Index in(in_shape.size());
  if (in_nz == out_nz) {  // only size-1 dims inserted or removed
    size_t k = 0;
    for (size_t j = 0; j < in_shape.size(); ++j) {
      if (is_const(in_shape[j], 1)) {
        in[j] = {"0u", 0};
        continue;
      }
      while (is_const(out_shape[k], 1)) ++k;
      in[j] = index[k++];
    }
    return in;
  }
  if (grouped_reshape_index(in_shape, out_shape, index, in)) return in;
  // General: through the row-major linear index.
  SymShape cout = sym_contiguous_strides(out_shape);
  std::string lin;
  bool others_zero = true;
  for (size_t k = 0; k < out_shape.size(); ++k) {
    if (is_const(out_shape[k], 1)) continue;
    if (k + 1 < out_shape.size() && index[k].lane != 0) others_zero = false;
    if (!lin.empty()) lin += " + ";
    lin += is_const(cout[k], 1) ? index[k].expr : index[k].expr + " * " + size(cout[k]);
  }
  if (lin.empty()) lin = "0u";
  std::string var = fresh("l");
  add_statement("const uint " + var + " = " + lin + ";");
  bool keep_last = !in_shape.empty() && !out_shape.empty() && in_shape.back() == out_shape.back() &&
                   others_zero && index.back().lane >= 0;
  bool all_zero = others_zero && (out_shape.empty() || index.back().lane == 0);
  Index dec = decompose(var, in_shape, fresh("r") + "_", 0);
  for (size_t j = 0; j < in_shape.size(); ++j) {
    dec[j].lane = all_zero ? 0 : (keep_last ? 0 : -1);
    if (is_const(in_shape[j], 1)) dec[j].lane = 0;
  }
  if (keep_last) dec.back() = index.back();
  return dec;
}

static bool same_exprs(const Index& a, const Index& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].expr != b[i].expr) return false;
  return true;
}

std::string Emitter::linear_index(const SymShape& shape, const Index& index) {
  SymShape strides = sym_contiguous_strides(shape);
  std::string lin;
  for (size_t k = 0; k < index.size(); ++k) {
    if (is_const(shape[k], 1)) continue;
    if (!lin.empty()) lin += " + ";
    lin += is_const(strides[k], 1) ? index[k].expr : index[k].expr + " * " + size(strides[k]);
  }
  return lin.empty() ? "0u" : lin;
}

std::string Emitter::load(NodeId node, const Index& index) {
  int b = binding(node);
  const Node& n = graph_.node(node);
  // Same shape and index as the kernel's output: the element's linear index is the output's.
  const bool identity =
      !root_linear_.empty() && n.sym == graph_.node(root_).sym && same_exprs(index, root_index_);
  std::string lin = identity ? root_linear_ : linear_index(n.sym, index);
  std::string bs = "b" + std::to_string(b);
  if (vec4_ && identity) {
    vec_use_[b] = true;
    if (max_texels_ > 0) return "kiln_load" + std::to_string(b) + "(" + root_group_ + ")";
    return bs + "v.data[" + root_group_ + "]";
  }
  if (vec4_) {
    bool others_zero = true;
    for (size_t k = 0; k + 1 < index.size(); ++k) others_zero &= index[k].lane == 0;
    int last = index.empty() ? 0 : index.back().lane;
    if (others_zero && last == 1) {
      vec_use_[b] = true;
      if (max_texels_ > 0) return "kiln_load" + std::to_string(b) + "((" + lin + ") / 4u)";
      return bs + "v.data[(" + lin + ") / 4u]";
    }
    if (others_zero && last == 0) {
      scalar_use_[b] = true;
      return "vec4(" + bs + ".data[" + lin + "])";
    }
    failed_ = true;
    return "vec4(0)";
  }
  scalar_use_[b] = true;
  std::string raw = bs + ".data[" + lin + "]";
  switch (n.meta.dtype) {
    case DType::kF16:
      return "float(" + raw + ")";
    case DType::kBool:
      return "(uint(" + raw + ") != 0u)";
    default:
      return raw;
  }
}

/// An f16 elementwise result that is already a half value: one of its f16 operands (or -1, 0,
/// 1), or a cast, which rounds itself (glsl_convert). Every other f16 result is rounded to
/// half where it is computed, as the interpreter stores each op's result.
static bool exact_in_f16(const Node& n, const std::vector<DType>& types) {
  if (unary_keeps_ints(n.op)) return types[0] == DType::kF16;  // neg, abs, floor, ...
  switch (n.op) {
    case OpKind::Cast:
      return true;
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Where:
      for (size_t i = n.op == OpKind::Where ? 1 : 0; i < types.size(); ++i)
        if (types[i] != DType::kF16) return false;
      return true;
    default:
      return false;
  }
}

std::string Emitter::value(NodeId id, const Index& index) {
  if (auto it = overrides_.find(id); it != overrides_.end()) return it->second;
  std::string key = std::to_string(id);
  for (const IndexExpr& e : index) key += "|" + e.expr;
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const Node& n = graph_.node(id);
  note_dtype(n.meta.dtype);
  std::string result;
  if (fusion_.materialize[id] && id != root_) {
    std::string var = fresh("x");
    add_statement("const " + vtype(n.meta.dtype) + " " + var + " = " + load(id, index) + ";");
    result = var;
  } else if (n.op == OpKind::Full) {
    result = vtype(n.meta.dtype) + "(" + glsl_literal(n.attrs, n.meta.dtype) + ")";
  } else if (is_movement(n.op)) {
    result = value(n.inputs[0], view_input_index(n, index));
  } else if (is_elementwise(n.op)) {
    fused_.push_back(id);
    std::vector<std::string> args;
    std::vector<DType> types;
    for (NodeId in : n.inputs) {
      const Node& src = graph_.node(in);
      args.push_back(value(in, broadcast_index(index, n.sym, src.sym)));
      types.push_back(src.meta.dtype);
    }
    std::string e = zero_operand_expr(n, args, types);
    if (e.empty()) e = op_expr(n, args, types);
    if (n.meta.dtype == DType::kF16 && !exact_in_f16(n, types)) e = "kiln_f16(" + e + ")";
    std::string var = fresh("v");
    add_statement("const " + vtype(n.meta.dtype) + " " + var + " = " + e + ";");
    result = var;
  } else if (is_index_op(n.op)) {
    result = index_op_value(n, index);
  } else {
    unreachable("reduction reached the elementwise emitter unmaterialized");
  }
  memo_[key] = result;
  return result;
}

/// A uint index read from an index tensor, clamped into [0, size) so that a bad index can never
/// address outside the buffer (the interpreter reports it as an error instead).
std::string Emitter::clamped_index(NodeId index_node, const Index& at, const SymInt& extent) {
  const Node& in = graph_.node(index_node);
  std::string raw = glsl_convert(value(index_node, at), in.meta.dtype, DType::kI64);
  if (!int64_) raw = "int64_t(" + raw + ")";  // (value() noted i64 only for i64 inputs)
  int64_ = true;
  // The last valid index, never negative (an empty axis reads element 0, as static kernels do).
  const std::string last =
      extent.is_constant()
          ? "int64_t(" + std::to_string(std::max<Dim>(extent.constant_value() - 1, 0)) + ")"
          : "kiln_max_i64(int64_t(" + size(extent) + ") - int64_t(1), int64_t(0))";
  std::string var = fresh("j");
  add_statement("const uint " + var + " = uint(kiln_min_i64(kiln_max_i64(" + raw +
                ", int64_t(0)), " + last + "));");
  return var;
}

std::string Emitter::index_op_value(const Node& n, const Index& index) {
  if (vec4_) {  // gathers and selects are scalar
    failed_ = true;
    return "vec4(0)";
  }
  fused_.push_back(n.id);
  const int rank = n.meta.rank();
  const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis;
  const std::string T = glsl_compute_type(n.meta.dtype);
  switch (n.op) {
    case OpKind::Slice: {
      const SymInt& len = graph_.node(n.inputs[0]).sym[axis];
      SymSliceRange r =
          resolve_sym_slice(n.attrs.dims[0], n.attrs.dims[1], n.attrs.dims[2], len, size_facts());
      Index in = index;
      in[axis] = {"(" + size(r.start) + " + " + index[axis].expr + " * " +
                      std::to_string(n.attrs.dims[2]) + "u)",
                  -1};
      return value(n.inputs[0], in);
    }
    case OpKind::IndexSelect: {
      const Node& x = graph_.node(n.inputs[0]);
      Index in = index;
      Index at = graph_.node(n.inputs[1]).meta.rank() == 0 ? Index{} : Index{index[axis]};
      in[axis] = {clamped_index(n.inputs[1], at, x.sym[axis]), -1};
      return glsl_convert(value(x.id, in), x.meta.dtype, n.meta.dtype);
    }
    case OpKind::Gather: {
      const Node& x = graph_.node(n.inputs[0]);
      Index in = index;
      in[axis] = {clamped_index(n.inputs[1], index, x.sym[axis]), -1};
      return glsl_convert(value(x.id, in), x.meta.dtype, n.meta.dtype);
    }
    case OpKind::Concat: {
      // Every input is read at a clamped position; the one that owns the element is selected.
      // (A part whose symbolic size is 0 at run time is never read: the executable runs such a
      // call on the interpreter.)
      std::string result;
      SymInt offset = 0;
      std::vector<std::pair<SymInt, std::string>> parts;
      const std::string& i = index[axis].expr;
      for (NodeId in_id : n.inputs) {
        const Node& in = graph_.node(in_id);
        const SymInt& extent = in.sym[axis];
        if (is_const(extent, 0)) continue;
        Index at = index;
        if (offset.is_constant() && extent.is_constant()) {
          at[axis] = {"uint(clamp(int(" + i + ") - " + std::to_string(offset.constant_value()) +
                          ", 0, " + std::to_string(extent.constant_value() - 1) + "))",
                      -1};
        } else {  // uint: i - offset wraps when i < offset, and min() clamps it
          const std::string last = size(extent) + " - 1u";
          const std::string off = size(offset);
          at[axis] = {is_const(offset, 0) ? "min(" + i + ", " + last + ")"
                                          : "(" + i + " < " + off + " ? 0u : min(" + i + " - " +
                                                off + ", " + last + "))",
                      -1};
        }
        offset = offset + extent;
        parts.emplace_back(offset, glsl_convert(value(in_id, at), in.meta.dtype, n.meta.dtype));
      }
      // Every part empty along the axis: the result has no elements and is never read.
      if (parts.empty()) return T + "(0)";
      result = parts.back().second;
      for (size_t p = parts.size() - 1; p-- > 0;)
        result =
            "(" + i + " < " + size(parts[p].first) + " ? " + parts[p].second + " : " + result + ")";
      std::string var = fresh("v");
      add_statement("const " + T + " " + var + " = " + result + ";");
      return var;
    }
    case OpKind::GatherND: {
      // data[batch.., indices[i.., 0..m), rest..]: each index wraps if negative, then clamps.
      const Node& x = graph_.node(n.inputs[0]);
      const Node& ix = graph_.node(n.inputs[1]);
      const size_t b = static_cast<size_t>(n.attrs.index), q = ix.sym.size();
      const size_t m = static_cast<size_t>(ix.meta.shape.back());
      Index in(x.sym.size());
      for (size_t i = 0; i < b; ++i) in[i] = index[i];
      for (size_t j = 0; j < m; ++j) {
        Index at(index.begin(), index.begin() + static_cast<int64_t>(q - 1));
        at.push_back({std::to_string(j) + "u", 0});
        // In the indices' own type (int or int64_t): sizes fit either (kernels index in uint32).
        const std::string IT = glsl_compute_type(ix.meta.dtype);
        const std::string extent = IT + "(" + size(x.sym[b + j]) + ")";
        const std::string w = fresh("w"), var = fresh("j");
        const std::string r = value(ix.id, at);
        add_statement("const " + IT + " " + w + " = " + r + " < " + IT + "(0) ? " + r + " + " +
                      extent + " : " + r + ";");
        const bool wide = ix.meta.dtype == DType::kI64;  // (kInt64Helpers: not GLSL's max)
        const std::string mx = wide ? "kiln_max_i64(" : "kiln_max_i32(",
                          mn = wide ? "kiln_min_i64(" : "kiln_min_i32(";
        add_statement("const uint " + var + " = uint(" + mn + mx + w + ", " + IT + "(0)), " + mx +
                      extent + " - " + IT + "(1), " + IT + "(0))));");
        in[b + j] = {var, -1};
      }
      for (size_t t = b + m; t < x.sym.size(); ++t) in[t] = index[q - 1 + (t - b - m)];
      return glsl_convert(value(x.id, in), x.meta.dtype, n.meta.dtype);
    }
    case OpKind::Triu:
    case OpKind::Tril: {
      std::string v = value(n.inputs[0], index);
      std::string diff = "(int(" + index[rank - 1].expr + ") - int(" + index[rank - 2].expr + "))";
      std::string keep =
          diff + (n.op == OpKind::Triu ? " >= " : " <= ") + std::to_string(n.attrs.index);
      std::string var = fresh("v");
      add_statement("const " + T + " " + var + " = " + keep + " ? " + v + " : " + T + "(0);");
      return var;
    }
    case OpKind::Arange: {
      // start + i * step: in int64 for integral dtypes and bounds, else in float (no double
      // arithmetic: shaderFloat64 is rare). The interpreter rounds the double result.
      const double start = n.attrs.range[0], step = n.attrs.range[2];
      const bool integral =
          !is_floating(n.meta.dtype) && std::floor(start) == start && std::floor(step) == step;
      std::string e;
      if (integral) {
        int64_ = true;
        e = "(" + glsl_literal(start, DType::kI64) + " + int64_t(" + index[0].expr + ") * " +
            glsl_literal(step, DType::kI64) + ")";
      } else {
        e = "(" + glsl_literal(start, DType::kF32) + " + float(" + index[0].expr + ") * " +
            glsl_literal(step, DType::kF32) + ")";
      }
      const DType from = integral ? DType::kI64 : DType::kF32;
      std::string var = fresh("v");
      add_statement("const " + T + " " + var + " = " + glsl_convert(e, from, n.meta.dtype) + ";");
      return var;
    }
    default:
      unreachable("not an index op");
  }
}

namespace {
/// The GLSL function of a unary op on float / vec4 values (kiln/elementwise_ops.def).
const char* unary_glsl(OpKind op) {
  switch (op) {
#define KILN_UNARY(e, name, ints, glsl) \
  case OpKind::e:                       \
    return #glsl;
#include "kiln/elementwise_ops.def"
#undef KILN_UNARY
    default:
      unreachable("not a unary op");
  }
}

/// The GLSL function of a binary op on floats, or null where op_expr writes the op out
/// (`custom` in kiln/elementwise_ops.def).
const char* binary_glsl(OpKind op) {
  switch (op) {
#define KILN_BINARY(e, name, dtypes, glsl) \
  case OpKind::e:                          \
    return std::string_view(#glsl) == "custom" ? nullptr : #glsl;
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
    default:
      return nullptr;
  }
}

/// A literal's value as the interpreter holds it: an exact integer or a float.
struct Literal {
  bool integral = false;
  int64_t i = 0;
  double f = 0;
};
/// `x` encoded into `dtype` as the interpreter stores it (casts and Full's encoding).
Literal encode_literal(const Literal& x, DType dtype) {
  const double d = x.integral ? static_cast<double>(x.i) : x.f;
  switch (dtype) {
    case DType::kF32:
    case DType::kC64:  // the real part (complex64 literals do not occur)
      return {false, 0, static_cast<float>(d)};
    case DType::kF16:
      return {false, 0, half_to_float(float_to_half(static_cast<float>(d)))};
    case DType::kI32:  // integers wrap, floats saturate
      return {true,
              x.integral ? static_cast<int32_t>(static_cast<uint32_t>(x.i)) : saturate<int32_t>(d),
              0};
    case DType::kI64:
      return {true, x.integral ? x.i : saturate<int64_t>(d), 0};
    case DType::kBool:
      return {true, (x.integral ? x.i != 0 : d != 0) ? 1 : 0, 0};  // NaN is true
  }
  unreachable("bad dtype");
}

/// triu / tril whose mask is false at every element of a static-sized matrix (e.g. triu(x, 2)
/// of 1x1 matrices): every element is 0, and the kernel's mask condition is a constant.
bool all_zero_triangle(const Node& n) {
  if (n.op != OpKind::Triu && n.op != OpKind::Tril) return false;
  const SymInt& rows = n.sym[n.sym.size() - 2];
  const SymInt& cols = n.sym.back();
  if (!rows.is_constant() || !cols.is_constant()) return false;
  // Element (r, c) is kept where c - r >= k (triu) or c - r <= k (tril).
  const int64_t k = n.attrs.index;
  return n.op == OpKind::Triu ? cols.constant_value() - 1 < k : 1 - rows.constant_value() > k;
}
}  // namespace

bool Emitter::empty_inner_dim(const Node& matmul) const {
  const SymShape& a = graph_.node(matmul.inputs[0]).sym;
  if (a.empty()) return false;
  const SymInt& k = a.size() == 1 ? a[0] : a[a.size() - (matmul.attrs.trans_a ? 2 : 1)];
  return k.is_constant() && k.constant_value() == 0;
}

bool Emitter::is_literal_pos_zero(NodeId id) const {
  // Follow views and casts down to a Full (or a triangle of zeros), then encode its value back
  // up the chain.
  std::vector<DType> casts;
  for (;;) {
    const Node& n = graph_.node(id);
    if (fusion_.materialize[id] && id != root_) return false;  // loaded, not a literal
    if (n.op == OpKind::Full || all_zero_triangle(n)) break;
    // A matmul over a constant empty inner dimension is +0 everywhere; its accumulator starts
    // at the literal 0.0 and no loop runs, so the driver folds the epilogue by that constant.
    if (n.op == OpKind::MatMul && empty_inner_dim(n)) return true;
    if (!is_movement(n.op) && n.op != OpKind::Cast) return false;
    if (n.op == OpKind::Cast) casts.push_back(n.meta.dtype);
    id = n.inputs[0];
  }
  const Node& full = graph_.node(id);
  Literal v = full.op != OpKind::Full    ? Literal{true, 0, 0}
              : full.attrs.scalar_is_int ? Literal{true, full.attrs.scalar_int, 0}
                                         : Literal{false, 0, full.attrs.scalar};
  v = encode_literal(v, full.meta.dtype);
  for (size_t i = casts.size(); i-- > 0;) v = encode_literal(v, casts[i]);
  return v.integral ? v.i == 0 : v.f == 0 && !std::signbit(v.f);
}

std::string Emitter::zero_operand_expr(const Node& n, const std::vector<std::string>& args,
                                       const std::vector<DType>& types) {
  const DType out = n.meta.dtype;
  if (!is_floating(out) || n.inputs.size() != 2) return "";
  const bool z0 = is_literal_pos_zero(n.inputs[0]), z1 = is_literal_pos_zero(n.inputs[1]);
  auto arg = [&](size_t i) { return glsl_compute_convert(args[i], types[i], out); };
  switch (n.op) {
    case OpKind::Add:
      if (z1) return "kiln_add_zero(" + arg(0) + ")";
      if (z0) return "kiln_add_zero(" + arg(1) + ")";
      return "";
    case OpKind::Sub:  // x - 0.0 is x exactly, as folded
      return z0 ? "kiln_zero_sub(" + arg(1) + ")" : "";
    case OpKind::Mul:
      if (z1) return "kiln_mul_zero(" + arg(0) + ")";
      if (z0) return "kiln_mul_zero(" + arg(1) + ")";
      return "";
    case OpKind::Div:  // x / 0.0 is kiln_div's own case
      return z0 ? "kiln_zero_div(" + arg(1) + ")" : "";
    default:
      return "";
  }
}

std::string Emitter::op_expr(const Node& n, const std::vector<std::string>& args,
                             const std::vector<DType>& types) {
  DType out = n.meta.dtype;
  // Operand type: compares and `where` use the promoted input type; everything else the output.
  DType operand = out;
  if (op_category(n.op) == OpCategory::kCompare) {
    operand = promote_types(types[0], types[1]);
    if (operand == DType::kBool) operand = DType::kI32;  // GLSL has no ordered compare on bool
  }
  auto arg = [&](size_t i) {
    if (n.op == OpKind::Where && i == 0) return args[0];
    return glsl_compute_convert(args[i], types[i], operand);
  };
  std::string T = vtype(operand);
  if (op_category(n.op) == OpCategory::kUnary) {
    // Floats: the op's GLSL function from kiln/elementwise_ops.def. Integers reach here only
    // for the ops that keep them (KeepsInts), spelled out below.
    if (is_floating(operand)) return std::string(unary_glsl(n.op)) + "(" + arg(0) + ")";
    const std::string x = arg(0);
    switch (n.op) {
      case OpKind::Neg:
        return "(-" + x + ")";
      case OpKind::Relu:
        return operand == DType::kI64 ? "kiln_max_i64(" + x + ", int64_t(0))"
                                      : "kiln_max_i32(" + x + ", 0)";
      case OpKind::Abs:
        return "(" + x + " < " + T + "(0) ? -" + x + " : " + x + ")";
      case OpKind::Sign:
        return "(" + x + " > " + T + "(0) ? " + T + "(1) : (" + x + " < " + T + "(0) ? " + T +
               "(-1) : " + T + "(0)))";
      case OpKind::Floor:  // integers pass through
      case OpKind::Ceil:
      case OpKind::Round:
        return x;
      default:
        throw Error(internal_error(std::string(op_name(n.op)) + " has no integer form in codegen"));
    }
  }
  if (op_category(n.op) == OpCategory::kBinary) {
    const char* f = binary_glsl(n.op);
    if (f && is_floating(operand)) return std::string(f) + "(" + arg(0) + ", " + arg(1) + ")";
    // A table op whose dtypes admit integers writes its integer form here.
    if (f)
      throw Error(internal_error(std::string(op_name(n.op)) + " has no integer form in codegen"));
  }
  switch (n.op) {
    case OpKind::Pow:
      pow_ = true;
      return std::string(is_floating(operand) ? "kiln_pow(" : "kiln_ipow(") + arg(0) + ", " +
             arg(1) + ")";
    case OpKind::Mod:
    case OpKind::FMod:
      if (operand == DType::kI64) mod64_ = true;
      return std::string(n.op == OpKind::Mod ? "kiln_mod(" : "kiln_fmod(") + arg(0) + ", " +
             arg(1) + ")";
    case OpKind::ShiftLeft:
    case OpKind::ShiftRight: {  // out-of-range amounts: 0 (left) or the sign fill (right)
      const std::string w = operand == DType::kI64 ? "64" : "32", a = arg(0), b = arg(1);
      const std::string in_range =
          "(" + b + " >= " + T + "(0) && " + b + " < " + T + "(" + w + "))";
      if (n.op == OpKind::ShiftLeft)
        return "(" + in_range + " ? " + a + " << int(" + b + ") : " + T + "(0))";
      return "(" + in_range + " ? " + a + " >> int(" + b + ") : (" + a + " < " + T + "(0) ? " + T +
             "(-1) : " + T + "(0)))";
    }
    case OpKind::Add:
      return "(" + arg(0) + " + " + arg(1) + ")";
    case OpKind::Sub:
      return "(" + arg(0) + " - " + arg(1) + ")";
    case OpKind::Mul:
      return "(" + arg(0) + " * " + arg(1) + ")";
    case OpKind::Div:
      div_ = true;
      return "kiln_div(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::Maximum:
      return std::string(is_floating(operand)     ? "kiln_maximum("
                         : operand == DType::kI64 ? "kiln_max_i64("
                                                  : "kiln_max_i32(") +
             arg(0) + ", " + arg(1) + ")";
    case OpKind::Minimum:
      return std::string(is_floating(operand)     ? "kiln_minimum("
                         : operand == DType::kI64 ? "kiln_min_i64("
                                                  : "kiln_min_i32(") +
             arg(0) + ", " + arg(1) + ")";
    case OpKind::Eq:
      return "(" + arg(0) + " == " + arg(1) + ")";
    case OpKind::Ne:
      return "(" + arg(0) + " != " + arg(1) + ")";
    case OpKind::Lt:
      return "(" + arg(0) + " < " + arg(1) + ")";
    case OpKind::Le:
      return "(" + arg(0) + " <= " + arg(1) + ")";
    case OpKind::Gt:
      return "(" + arg(0) + " > " + arg(1) + ")";
    case OpKind::Ge:
      return "(" + arg(0) + " >= " + arg(1) + ")";
    case OpKind::Where:
      return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
    case OpKind::Cast:
      return glsl_convert(args[0], types[0], out);
    default:
      unreachable("not an elementwise op");
  }
}

}  // namespace kiln
