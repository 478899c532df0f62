// Kernel assembly of the Emitter: buffer bindings, size slots, declarations (with the helpers
// of shaders/common/ that a kernel uses), loads, and the walk of a root's producer tree.
// Index maths is in emit_index.cpp, op expressions in emit_ops.cpp, GLSL types and literals
// in glsl_types.cpp.
#include "codegen/emit.h"

#include "codegen/kernel.h"
#include "codegen/spirv.h"

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

/// A helper file of shaders/common/ (embedded at build time) as kernel text: without its
/// leading comment block, which documents the file.
std::string helper_source(const char* name) {
  Expected<std::string> text = embedded_shader(std::string("common/") + name);
  if (!text.ok()) unreachable("helper file missing from the embedded shaders");
  const std::string& s = *text;
  size_t start = 0;
  while (start < s.size() && (s.compare(start, 2, "//") == 0 || s[start] == '\n')) {
    const size_t end = s.find('\n', start);
    start = end == std::string::npos ? s.size() : end + 1;
  }
  return s.substr(start);
}

/// The helpers that a kernel defines only when it uses them (Emitter::declarations). Those of
/// int64 are separate files: a kernel may name int64_t only with the int64 extension, which
/// devices without shaderInt64 lack.
struct Helpers {
  std::string int64 = helper_source("kiln_int64.glsl");        // every kernel that uses int64
  std::string pow = helper_source("kiln_pow.glsl");            // kiln_pow, kiln_ipow (int)
  std::string pow64 = helper_source("kiln_pow_int64.glsl");    // kiln_ipow (int64)
  std::string div = helper_source("kiln_div.glsl");            // kiln_div
  std::string mod64 = helper_source("kiln_mod_int64.glsl");    // kiln_mod, kiln_fmod (int64)
  std::string pairs = helper_source("kiln_int64_pairs.glsl");  // int64 without shaderInt64
};

const Helpers& helpers() {
  static const Helpers h;
  return h;
}

}  // namespace

const SymFacts* size_facts() {
  static const AtLeastTwo facts;
  return &facts;
}

Emitter::Emitter(const Graph& graph, const FusionDecision& fusion, bool vec4)
    : graph_(graph), fusion_(fusion), vec4_(vec4) {}

std::string Emitter::vtype(DType dtype) const {
  return vec4_ ? "vec4" : glsl_compute_type(dtype);
}

std::string Emitter::fresh(const std::string& prefix) {
  return prefix + std::to_string(counter_++);
}

void Emitter::note_dtype(DType d) {
  if (d == DType::kI64) (int64_pairs() ? pairs_ : int64_) = true;
  if (d == DType::kF16) (half_words() ? half_words_ : f16_) = true;
  if (d == DType::kBool) (bool_words() ? bool_words_ : i8_) = true;
  if (vec4_ && d != DType::kF32) failed_ = true;
}

int Emitter::binding(NodeId node) {
  for (size_t i = 0; i < bindings_.size(); ++i)
    if (bindings_[i] == node) return static_cast<int>(i);
  bindings_.push_back(node);
  vec_use_.push_back(false);
  scalar_use_.push_back(false);
  sload_use_.push_back(false);
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

namespace {
/// floor((2^32 - 1) / d) for the divisor d (at least 1: an empty dim divides nothing).
SymInt udiv_reciprocal(const SymInt& d) {
  return sym_floordiv(SymInt(int64_t{0xFFFFFFFF}), sym_max(d, SymInt(1)));
}
}  // namespace

/// Size slots past which a division by a symbolic size stays GLSL's `/` and `%`, leaving the
/// rest of kMaxSizeSlots to the sizes themselves (a kernel past the limit would not run on the
/// device at all).
constexpr size_t kReciprocalSlots = kMaxSizeSlots / 2;

std::string Emitter::udiv(const std::string& e, const SymInt& d) {
  if (d.is_constant() || push_.size() >= kReciprocalSlots) return "(" + e + " / " + size(d) + ")";
  return "kiln_udiv(" + e + ", " + size(d) + ", " + size(udiv_reciprocal(d)) + ")";
}

std::string Emitter::umod(const std::string& e, const SymInt& d) {
  if (d.is_constant() || push_.size() >= kReciprocalSlots) return "(" + e + " % " + size(d) + ")";
  return "kiln_umod(" + e + ", " + size(d) + ", " + size(udiv_reciprocal(d)) + ")";
}

std::string Emitter::declarations() const {
  std::string s;
  const std::vector<TexelKind> kinds = texel_kinds();
  for (size_t i = 0; i < bindings_.size(); ++i) {
    DType dt = graph_.node(bindings_[i]).meta.dtype;
    std::string qual = i == 0 ? "" : "readonly ";
    std::string b = std::to_string(i);
    // Binding 0 (the output) is always declared so the interface is stable. Scalar loads of
    // a binding that cannot be an r32f texel buffer read the storage buffer.
    const bool scalar_texel = kinds[i] == TexelKind::kR32f;
    if (scalar_use_[i] || (sload_use_[i] && !scalar_texel) || (i == 0 && !vec_use_[i]))
      s += "layout(std430, set = 0, binding = " + b + ") " + qual + "buffer KilnB" + b + " { " +
           glsl_storage_type(dt) + " data[]; } b" + b + ";\n";
    if (scalar_texel)
      s += "layout(set = 0, binding = " + b + ", r32f) uniform readonly imageBuffer kiln_s" + b +
           ";\n#define kiln_sload" + b + "(i) imageLoad(kiln_s" + b + ", int(i)).x\n";
    else if (sload_use_[i])
      s += "#define kiln_sload" + b + "(i) b" + b + ".data[i]\n";
    if (kinds[i] == TexelKind::kRgba32f)
      s += "layout(set = 0, binding = " + b + ", rgba32f) uniform readonly imageBuffer kiln_t" + b +
           ";\n#define kiln_load" + b + "(i) imageLoad(kiln_t" + b + ", int(i))\n";
    else if (vec_use_[i])
      s += "layout(std430, set = 0, binding = " + b + ") " + qual + "buffer KilnB" + b +
           "v { vec4 data[]; } b" + b + "v;\n";
    if (max_texels_ > 0 && i != 0 && vec_use_[i] && kinds[i] != TexelKind::kRgba32f)
      s += "#define kiln_load" + b + "(i) b" + b + "v.data[i]\n";
  }
  if (bool_words_ && !bindings_.empty() && graph_.node(bindings_[0]).meta.dtype == DType::kBool)
    // Each element is one invocation's: the two atomics leave the word's other bytes alone.
    s += "void kiln_store_bool(uint i, bool v) {\n  const uint shift = (i & 3u) << 3u;\n"
         "  atomicAnd(b0.data[i >> 2u], ~(0xffu << shift));\n"
         "  if (v) atomicOr(b0.data[i >> 2u], 1u << shift);\n}\n";
  if (half_words_) {
    // A half's bits and value converted with integer operations, exactly: packHalf2x16 and
    // unpackHalf2x16 leave rounding and subnormals to the implementation.
    s += "float kiln_half_value(uint h) {\n"
         "  const uint s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
         "  if (e == 0x1fu) return uintBitsToFloat(s | 0x7f800000u | (m << 13));\n"
         "  if (e != 0u) return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));\n"
         "  const float v = float(m) * 5.9604644775390625e-8;\n"
         "  return s != 0u ? -v : v;\n}\n";
    if (!bindings_.empty() && graph_.node(bindings_[0]).meta.dtype == DType::kF16)
      // v is rounded to half first (kiln_f16), so its bits are exact.
      s += "uint kiln_half_bits(float v) {\n"
           "  const uint u = floatBitsToUint(v), s = (u >> 16) & 0x8000u, e = (u >> 23) & 0xffu;\n"
           "  if (e == 0xffu) return s | 0x7c00u | ((u & 0x7fffffu) != 0u ? 0x200u : 0u);\n"
           "  if (e >= 113u) return s | ((e - 112u) << 10) | ((u & 0x7fffffu) >> 13);\n"
           "  return s | uint(abs(v) * 16777216.0);\n}\n"
           "void kiln_store_f16(uint i, float v) {\n  const uint shift = (i & 1u) << 4u;\n"
           "  atomicAnd(b0.data[i >> 1u], ~(0xffffu << shift));\n"
           "  atomicOr(b0.data[i >> 1u], kiln_half_bits(kiln_f16(v)) << shift);\n}\n";
  }
  const Helpers& h = helpers();
  if (int64_) s += h.int64;
  if (pairs_) s += h.pairs;
  if (pow_) s += h.pow + (int64_ ? h.pow64 : "");
  if (div_) s += h.div;
  if (mod64_) s += h.mod64;
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
  if (max_texels_ == 0 || b == 0 || !vec_use_[b] || scalar_use_[b] || sload_use_[b]) return false;
  const Node& n = graph_.node(bindings_[b]);
  if (n.sym.empty() || !n.sym.back().is_constant() || n.sym.back().constant_value() % 4 != 0)
    return false;
  // A symbolic size may outgrow the texel limit at a later call: only where it cannot.
  for (const SymInt& d : n.sym)
    if (!d.is_constant() && !symbolic_texels_) return false;
  return static_cast<uint64_t>(n.meta.numel()) / 4 <= max_texels_;
}

bool Emitter::scalar_texel_binding(size_t b) const {
  if (scalar_max_texels_ == 0 || b == 0 || !sload_use_[b] || scalar_use_[b] || vec_use_[b])
    return false;
  const Node& n = graph_.node(bindings_[b]);
  if (n.meta.dtype != DType::kF32) return false;
  for (const SymInt& d : n.sym)
    if (!d.is_constant() && !scalar_symbolic_texels_) return false;
  // The buffer bound may be rounded up past the tensor (to 256 bytes at most): keep clear of
  // the limit by that much.
  return static_cast<uint64_t>(n.meta.numel()) + 64 <= scalar_max_texels_;
}

std::vector<Emitter::TexelKind> Emitter::texel_kinds() const {
  // Storage texel buffers count against maxPerStageDescriptorStorageImages, whose Vulkan
  // minimum is 4: the first four bindings that may be texel buffers are (less those the
  // lowerer declares itself), the rest storage buffers.
  constexpr int kMaxTexelBindings = 4;
  std::vector<TexelKind> kinds(bindings_.size(), TexelKind::kNone);
  int used = reserved_texels_;
  for (size_t b = 0; b < bindings_.size() && used < kMaxTexelBindings; ++b) {
    if (texel_binding(b))
      kinds[b] = TexelKind::kRgba32f;
    else if (scalar_texel_binding(b))
      kinds[b] = TexelKind::kR32f;
    used += kinds[b] != TexelKind::kNone;
  }
  return kinds;
}

std::vector<uint32_t> Emitter::bindings_of_kind(TexelKind kind) const {
  std::vector<uint32_t> out;
  const std::vector<TexelKind> kinds = texel_kinds();
  for (size_t b = 0; b < kinds.size(); ++b)
    if (kinds[b] == kind) out.push_back(static_cast<uint32_t>(b));
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
      if (scalar_max_texels_ > 0) {
        sload_use_[b] = true;
        return "vec4(kiln_sload" + std::to_string(b) + "(" + lin + "))";
      }
      scalar_use_[b] = true;
      return "vec4(" + bs + ".data[" + lin + "])";
    }
    failed_ = true;
    return "vec4(0)";
  }
  if (n.meta.dtype == DType::kF32 && scalar_max_texels_ > 0) {
    sload_use_[b] = true;
    return "kiln_sload" + std::to_string(b) + "(" + lin + ")";
  }
  scalar_use_[b] = true;
  std::string raw = bs + ".data[" + lin + "]";
  switch (n.meta.dtype) {
    case DType::kF16:
      if (half_words())  // half (lin % 2) of word (lin / 2)
        return "kiln_half_value(" + bs + ".data[(" + lin + ") >> 1u] >> (((" + lin +
               ") & 1u) << 4u))";
      return "float(" + raw + ")";
    case DType::kBool:
      if (bool_words())  // byte (lin % 4) of word (lin / 4)
        return "(((" + bs + ".data[(" + lin + ") >> 2u] >> (((" + lin +
               ") & 3u) << 3u)) & 0xffu) != 0u)";
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
