// Attrs::str: an op's attributes printed by the spec its ops.def row gives (op_attrs), the
// field values found by name through the rows of attrs.def.
#include <cstdio>
#include <optional>

#include "graph/op.h"

namespace kiln {
namespace {

std::string value_str(int64_t v) {
  return std::to_string(v);
}
std::string value_str(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
std::string value_str(bool v) {
  return v ? "1" : "0";
}
std::string value_str(DType v) {
  return dtype_name(v);
}
std::string value_str(const std::vector<int64_t>& v) {
  return shape_str(v);
}
std::string value_str(const std::vector<double>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    s += (i ? ", " : "") + std::string(buf);
  }
  return s + "]";
}

/// A field's value as an integer (for name lists) and as a flag, where its type allows.
template <typename T>
std::optional<int64_t> as_int(const T& v) {
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool>)
    return static_cast<int64_t>(v);
  else
    return std::nullopt;
}

struct Field {
  std::string text;
  std::optional<int64_t> number;
};

/// The field of `a` called `name` (a row of attrs.def), or nullopt.
std::optional<Field> field(const Attrs& a, std::string_view name) {
#define KILN_ATTR(type, n, init) \
  if (name == #n) return Field{value_str(a.n), as_int(a.n)};
#define KILN_WINDOW_ATTR(type, n, init) \
  if (name == #n) return Field{value_str(a.window.n), as_int(a.window.n)};
#define KILN_RESAMPLE_ATTR(type, n, init) \
  if (name == #n) return Field{value_str(a.resample.n), as_int(a.resample.n)};
#include "graph/attrs.def"
#undef KILN_RESAMPLE_ATTR
#undef KILN_WINDOW_ATTR
#undef KILN_ATTR
  return std::nullopt;
}

/// The `@name` formatters: attributes printed from more than one field.
std::string attr_special(const Attrs& a, OpKind op, std::string_view name) {
  if (name == "full_value")
    return "value=" + (a.scalar_is_int ? value_str(a.scalar_int) : value_str(a.scalar));
  if (name == "cumsum_flags") {
    std::string s = (a.index & kCumSumExclusive) ? "exclusive" : "";
    if (a.index & kCumSumReverse) s += s.empty() ? "reverse" : ", reverse";
    return s;
  }
  if (name == "resample") return detail::resample_str(op, a.dims, a.resample);
  if (name == "size_symbol") return "size=s" + std::to_string(a.index);
  return "@" + std::string(name) + "?";
}

std::string item_str(const Attrs& a, OpKind op, std::string_view item) {
  if (item.starts_with('@')) return attr_special(a, op, item.substr(1));
  if (item.starts_with('?')) {
    std::optional<Field> f = field(a, item.substr(1));
    return f && f->number.value_or(0) ? std::string(item.substr(1)) : "";
  }
  const size_t eq = item.find('=');
  std::string_view name = item.substr(eq + 1);
  std::string_view names;
  if (size_t colon = name.find(':'); colon != std::string_view::npos) {
    names = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  std::optional<Field> f = field(a, name);
  if (!f) return std::string(item) + "?";
  std::string value = f->text;
  if (!names.empty() && f->number && *f->number >= 0) {  // the name at the value's position
    int64_t i = *f->number;
    size_t at = 0;
    while (i > 0 && at != std::string_view::npos) {
      at = names.find('|', at);
      if (at != std::string_view::npos) ++at;
      --i;
    }
    if (at != std::string_view::npos)
      value = std::string(names.substr(at, names.find('|', at) - at));
  }
  return std::string(item.substr(0, eq + 1)) + value;
}

}  // namespace

std::string Attrs::str(OpKind op) const {
  std::string_view spec = op_attrs(op);
  std::string s;
  while (!spec.empty()) {
    const size_t comma = spec.find(", ");
    const std::string item = item_str(*this, op, spec.substr(0, comma));
    if (!item.empty()) s += (s.empty() ? "" : ", ") + item;
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 2);
  }
  return s;
}

}  // namespace kiln
