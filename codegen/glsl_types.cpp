// GLSL types, conversions and literals for each dtype, encoded as the interpreter encodes them.
#include "codegen/emit.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "codegen/emit_internal.h"

namespace kiln {

namespace {
thread_local bool t_int64_pairs = false;
thread_local bool t_bool_words = false;
thread_local bool t_half_words = false;

/// The pair literal of an int64: uvec2(low word, high word).
std::string pair_literal(int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "uvec2(0x%xu, 0x%xu)", static_cast<unsigned>(u & 0xffffffffu),
                static_cast<unsigned>(u >> 32));
  return buf;
}
}  // namespace

bool int64_pairs() { return t_int64_pairs; }
bool bool_words() { return t_bool_words; }
bool half_words() { return t_half_words; }
StorageModeScope::StorageModeScope(bool int64_pairs, bool bool_words, bool half_words)
    : previous_pairs_(t_int64_pairs), previous_words_(t_bool_words), previous_halves_(t_half_words) {
  t_int64_pairs = int64_pairs;
  t_bool_words = bool_words;
  t_half_words = half_words;
}
StorageModeScope::~StorageModeScope() {
  t_int64_pairs = previous_pairs_;
  t_bool_words = previous_words_;
  t_half_words = previous_halves_;
}

std::string glsl_store(const std::string& index, const std::string& value, DType dtype) {
  if (dtype == DType::kBool) return glsl_store_bool(index, value);
  if (dtype == DType::kF16) {
    if (t_half_words) return "kiln_store_f16(" + index + ", " + value + ")";
    return "b0.data[" + index + "] = float16_t(" + value + ")";
  }
  return "b0.data[" + index + "] = " + value;
}

std::string glsl_store_bool(const std::string& index, const std::string& value) {
  if (t_bool_words) return "kiln_store_bool(" + index + ", " + value + ")";
  return "b0.data[" + index + "] = uint8_t((" + value + ") ? 1u : 0u)";
}

const char* glsl_compute_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
      return "float";
    case DType::kI32:
      return "int";
    case DType::kI64:
      return t_int64_pairs ? "uvec2" : "int64_t";
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
    case DType::kF16:  // half words: two elements a uint
      return t_half_words ? "uint" : "float16_t";
    case DType::kI32:
      return "int";
    case DType::kI64:  // pairs: std430 uvec2, the same 8 bytes
      return t_int64_pairs ? "uvec2" : "int64_t";
    case DType::kBool:  // bool words: four elements a uint
      return t_bool_words ? "uint" : "uint8_t";
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
  if (t_int64_pairs && (from == DType::kI64 || to == DType::kI64)) {
    const std::string e = "(" + expr + ")";
    if (to == DType::kBool) return "(" + e + " != uvec2(0u))";
    if (from == DType::kBool) return "(" + e + " ? uvec2(1u, 0u) : uvec2(0u))";
    if (from == DType::kI32) return "kiln_i64(" + expr + ")";
    if (to == DType::kI32) return "int(" + e + ".x)";  // wraps, as a cast from int64
    if (from == DType::kI64) return glsl_compute_convert("kiln_i64_to_float" + e, DType::kF32, to);
    // float -> int64: as below, saturating, NaN -> 0
    return "(isnan(" + e + ") ? uvec2(0u) : (" + e + " >= 9223372036854775807.0 ? " +
           pair_literal(std::numeric_limits<int64_t>::max()) + " : (" + e +
           " <= -9223372036854775808.0 ? " + pair_literal(std::numeric_limits<int64_t>::min()) +
           " : kiln_trunc_i64" + e + ")))";
  }
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
      if (t_int64_pairs) return pair_literal(v);
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
      if (t_int64_pairs) return pair_literal(v);
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

std::string glsl_int_literal(int64_t value, DType dtype) {
  Attrs a;
  a.scalar_is_int = true;
  a.scalar_int = value;
  return glsl_literal(a, dtype);
}

std::string glsl_from_uint(const std::string& expr, DType dtype) {
  if (dtype == DType::kI64 && t_int64_pairs) return "uvec2(" + expr + ", 0u)";
  return std::string(glsl_compute_type(dtype)) + "(" + expr + ")";
}

std::string glsl_binary(const std::string& op, const std::string& a, const std::string& b,
                        DType dtype) {
  if (dtype != DType::kI64 || !t_int64_pairs || op == "==" || op == "!=")
    return "(" + a + " " + op + " " + b + ")";  // (== and != compare whole vectors)
  const char* f = op == "+"    ? "kiln_i64_add("
                  : op == "-"  ? "kiln_i64_sub("
                  : op == "*"  ? "kiln_i64_mul("
                  : op == "<"  ? "kiln_i64_lt("
                  : op == "<=" ? "kiln_i64_le("
                  : op == ">"  ? "kiln_i64_gt("
                  : op == ">=" ? "kiln_i64_ge("
                               : nullptr;
  if (f == nullptr) unreachable("glsl_binary: not an operator of int64 pairs");
  return f + a + ", " + b + ")";
}

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

}  // namespace kiln
