// String tensors: host values of the front end (host_values.h; Kiln's devices hold no strings).
// Cast and CastLike to and from STRING (a number is written as NumPy's str() writes it: the
// shortest digits that read back to the same value, positional from 1e-4 to 1e16, otherwise
// scientific; a string is read as a number by strtod, which takes NaN and +-INF in any case),
// and StringNormalizer. A numeric tensor cast to strings is read on the host (a graph break
// while tracing). Other ops reject a string tensor with an unimplemented error.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "onnx/host_values.h"

namespace kiln::onnx {

namespace {

bool is_integral_type(OnnxType t) {
  switch (t) {
    case OnnxType::kUint8:
    case OnnxType::kInt8:
    case OnnxType::kUint16:
    case OnnxType::kInt16:
    case OnnxType::kInt32:
    case OnnxType::kInt64:
    case OnnxType::kUint32:
    case OnnxType::kUint64:
      return true;
    default:
      return false;
  }
}

/// NumPy's str() of a float: shortest round-trip digits; "nan", "inf", "-inf"; positional with
/// at least one decimal (1.0) for 1e-4 <= |v| < 1e16 and zero, otherwise scientific (1e-05).
/// `half`: the shortest digits that round to the same half.
std::string float_str(float v, bool half) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  const float a = std::fabs(v);
  const bool positional = a == 0.0f || (a >= 1e-4f && a < 1e16f);
  char buf[64];
  std::string s;
  if (!half) {
    auto r = std::to_chars(buf, buf + sizeof buf, v,
                           positional ? std::chars_format::fixed : std::chars_format::scientific);
    s.assign(buf, r.ptr);
  } else {  // the fewest significant digits that round back to the same half
    for (int digits = 1; digits <= 9; ++digits) {
      auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, digits - 1);
      const float back = std::strtof(std::string(buf, r.ptr).c_str(), nullptr);
      if (float_to_half(back) == float_to_half(v)) {
        const double d = std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
        r = positional ? std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
        s.assign(buf, r.ptr);
        break;
      }
    }
  }
  if (positional && s.find('.') == std::string::npos) s += ".0";
  return s;
}

/// A numeric value's elements as strings.
Val to_strings(NodeCtx& c, const Val& v) {
  const Tensor t = c.materialize(v);
  c.note_break(t, "a cast to strings is read on the host");
  std::vector<std::string> out;
  if (t.dtype() == DType::kBool) {
    for (int64_t x : int_elements(t)) out.push_back(x != 0 ? "True" : "False");
  } else if (is_integral(t.dtype())) {
    for (int64_t x : int_elements(t)) out.push_back(std::to_string(x));
  } else if (t.dtype() == DType::kC64) {
    c.unsupported("a cast of complex64 to strings");
  } else {
    for (double x : t.to_doubles())
      out.push_back(float_str(static_cast<float>(x), t.dtype() == DType::kF16));
  }
  std::vector<int64_t> shape;
  for (int64_t d : t.shape()) shape.push_back(d);
  return strings_val(std::move(shape), std::move(out));
}

/// A string tensor read as numbers of ONNX type `to`.
Tensor from_strings(NodeCtx& c, const Value& s, OnnxType to) {
  auto dtype = kiln_dtype(to);
  if (!dtype.ok()) throw Error(dtype.status());
  Shape shape(s.shape.begin(), s.shape.end());
  std::vector<double> d;
  std::vector<int64_t> ints;
  for (const std::string& str : s.strings) {
    const char* begin = str.c_str();
    char* end = nullptr;
    if (is_integral_type(to)) {
      errno = 0;
      const long long x = std::strtoll(begin, &end, 10);
      if (end == begin || *end != '\0' || errno == ERANGE)
        c.fail("'" + str + "' is not an integer of " + onnx_type_name(to));
      ints.push_back(x);
    } else {
      const double x = std::strtod(begin, &end);
      if (end == begin || *end != '\0') c.fail("'" + str + "' is not a number");
      d.push_back(x);
    }
  }
  if (is_integral_type(to)) {
    Tensor t = c.constant_i64(ints, shape);
    return *dtype == DType::kI64 ? t : cast(t, *dtype);
  }
  return c.constant(*dtype, shape, d);
}

/// The ONNX type of CastLike's target (input 1): as declared, else from its dtype.
OnnxType target_type(NodeCtx& c) {
  if (c.val(1).kind == Value::Kind::kStrings) return OnnxType::kString;
  const OnnxType declared = c.declared_type(1);
  if (declared != OnnxType::kUndefined) return declared;
  switch (c.materialize(c.val(1)).dtype()) {
    case DType::kF32:
      return OnnxType::kFloat;
    case DType::kF16:
      return OnnxType::kFloat16;
    case DType::kI32:
      return OnnxType::kInt32;
    case DType::kI64:
      return OnnxType::kInt64;
    case DType::kBool:
      return OnnxType::kBool;
    case DType::kC64:
      return OnnxType::kComplex64;
  }
  return OnnxType::kUndefined;
}

/// Cast / CastLike when strings are involved; false to leave the node to the numeric handler.
bool string_cast(NodeCtx& c, OnnxType to) {
  if (!c.has(0)) c.fail("input 0 is missing");
  const Val& v = c.val(0);
  const bool from_strings_in = v.kind == Value::Kind::kStrings;
  if (to != OnnxType::kString && !from_strings_in) return false;
  if (to == OnnxType::kString) {
    c.set_val(0, from_strings_in ? v : to_strings(c, v));
  } else {
    c.set(0, from_strings(c, *v.host, to));
  }
  return true;
}

std::string change_case(std::string s, bool upper) {
  for (char& ch : s)  // ASCII letters; other bytes (UTF-8 sequences) are kept
    if (upper ? (ch >= 'a' && ch <= 'z') : (ch >= 'A' && ch <= 'Z'))
      ch = static_cast<char>(ch + (upper ? 'A' - 'a' : 'a' - 'A'));
  return s;
}

/// StringNormalizer: X [C] or [1, C]; drops the stopwords (compared ignoring ASCII case unless
/// is_case_sensitive), then changes case (LOWER, UPPER or NONE). Dropping every string leaves
/// one empty string ([1], or [1, 1]).
void string_normalizer(NodeCtx& c) {
  const Value& x = string_tensor(c, 0);
  if (!(x.shape.size() == 1 || (x.shape.size() == 2 && x.shape[0] == 1)))
    c.fail("X must be [C] or [1, C]");
  const std::string action = c.attr_s("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    c.fail("case_change_action '" + action + "' is not NONE, LOWER or UPPER");
  const bool sensitive = c.attr_i("is_case_sensitive", 0) != 0;
  std::vector<std::string> stop =
      c.has_attr("stopwords") ? c.attr_strings("stopwords") : std::vector<std::string>{};
  if (!sensitive)
    for (std::string& s : stop) s = change_case(s, false);
  std::vector<std::string> out;
  for (const std::string& s : x.strings) {
    const std::string key = sensitive ? s : change_case(s, false);
    bool dropped = false;
    for (const std::string& w : stop) dropped = dropped || w == key;
    if (dropped) continue;
    out.push_back(action == "NONE" ? s : change_case(s, action == "UPPER"));
  }
  if (out.empty()) out.emplace_back();
  const auto n = static_cast<int64_t>(out.size());
  c.set_val(0,
            strings_val(x.shape.size() == 1 ? std::vector<int64_t>{n} : std::vector<int64_t>{1, n},
                        std::move(out)));
}

}  // namespace

void register_string_ops(std::map<std::string, OpHandler>& t) {
  OpHandler cast_numbers = t.at("Cast"), cast_like_numbers = t.at("CastLike");
  t["Cast"] = [cast_numbers](NodeCtx& c) {
    if (!string_cast(c, static_cast<OnnxType>(c.attr_i("to", 0)))) cast_numbers(c);
  };
  t["CastLike"] = [cast_like_numbers](NodeCtx& c) {
    if (!c.has(1)) c.fail("input 1 (target_type) is missing");
    if (!string_cast(c, target_type(c))) cast_like_numbers(c);
  };
  t["StringNormalizer"] = string_normalizer;
}

}  // namespace kiln::onnx
