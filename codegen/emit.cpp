// Kernel assembly of the Emitter: buffer bindings, size slots, declarations (with the GLSL
// helpers that a kernel uses), loads, and the walk of a root's producer tree.
// Index maths is in emit_index.cpp, op expressions in emit_ops.cpp, GLSL types and literals
// in glsl_types.cpp.
#include "codegen/emit.h"

namespace kiln {

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

static bool same_exprs(const Index& a, const Index& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].expr != b[i].expr) return false;
  return true;
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

}  // namespace kiln
