// The .npy header dict: a small strict parser for the Python literal and its formatter.
#include "io/npy_header.h"

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>

namespace kiln::io {
namespace {

constexpr size_t kMaxRank = 64;  // NumPy's own limit (NPY_MAXDIMS in NumPy 2)

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}

/// The header text made printable and short, for error messages.
std::string excerpt(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 96)) out += (c >= 0x20 && c < 0x7f) ? c : (c == '\n' ? ' ' : '?');
  if (text.size() > 96) out += "...";
  return out;
}

/// Recursive-descent parser over the header text; every method leaves pos_ after what it read.
class DictParser {
 public:
  explicit DictParser(std::string_view text) : s_(text) {}

  Expected<NpyHeader> parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<Shape> shape;
    if (!eat('{')) return error("expected '{' at the start of the header dict");
    while (!eat('}')) {
      if (at_end()) return error("unterminated dict (no closing '}')");
      KILN_ASSIGN_OR_RETURN(std::string key, string_literal("a quoted key"));
      if (!eat(':')) return error("expected ':' after key '" + key + "'");
      if (key == "descr") {
        if (descr) return error("duplicate key 'descr'");
        if (peek() == '[')
          return invalid_argument(
              "unsupported dtype: structured (record) dtypes are not "
              "supported; 'descr' is a list");
        KILN_ASSIGN_OR_RETURN(descr, string_literal("a quoted dtype string for 'descr'"));
      } else if (key == "fortran_order") {
        if (fortran) return error("duplicate key 'fortran_order'");
        KILN_ASSIGN_OR_RETURN(fortran, bool_literal());
      } else if (key == "shape") {
        if (shape) return error("duplicate key 'shape'");
        KILN_ASSIGN_OR_RETURN(shape, shape_tuple());
      } else {
        return error("unexpected key '" + key + "' (expected 'descr', 'fortran_order', 'shape')");
      }
      if (eat(',')) continue;
      if (at_end()) return error("unterminated dict (no closing '}')");
      if (peek() != '}') return error("expected ',' or '}' after the value of '" + key + "'");
    }
    skip_ws();
    if (!at_end()) return error("unexpected text after the closing '}'");
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      bool present = key[0] == 'd'   ? descr.has_value()
                     : key[0] == 'f' ? fortran.has_value()
                                     : shape.has_value();
      if (!present)
        return invalid_argument(std::string("malformed .npy header: missing key '") + key +
                                "' in " + excerpt(s_));
    }
    NpyHeader h;
    KILN_RETURN_IF_ERROR(parse_descr(*descr, h));
    h.fortran_order = *fortran;
    h.shape = std::move(*shape);
    return h;
  }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  void skip_ws() {
    while (!at_end() && is_space(s_[pos_])) ++pos_;
  }
  char peek() {
    skip_ws();
    return at_end() ? '\0' : s_[pos_];
  }
  bool eat(char c) {
    if (peek() != c || at_end()) return false;
    ++pos_;
    return true;
  }
  Status error(const std::string& what) const {
    return invalid_argument("malformed .npy header: " + what + " (at offset " +
                            std::to_string(pos_) + " of the header " + excerpt(s_) + ")");
  }

  Expected<std::string> string_literal(const char* expected) {
    char quote = peek();
    if (quote != '\'' && quote != '"') return error(std::string("expected ") + expected);
    const size_t start = ++pos_;
    while (!at_end() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') return error("escape sequences in strings are not supported");
      if (s_[pos_] == '\n') break;
      ++pos_;
    }
    if (at_end() || s_[pos_] != quote) return error("unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }

  Expected<bool> bool_literal() {
    skip_ws();
    for (std::string_view word : {std::string_view("True"), std::string_view("False")}) {
      if (s_.substr(pos_, word.size()) == word &&
          (pos_ + word.size() >= s_.size() || !is_word(s_[pos_ + word.size()]))) {
        pos_ += word.size();
        return word == "True";
      }
    }
    return error("'fortran_order' must be True or False");
  }

  /// An integer literal (optional '-', digits, optional Python 2 'L' suffix).
  Expected<int64_t> integer() {
    skip_ws();
    const size_t start = pos_;
    bool negative = !at_end() && s_[pos_] == '-';
    if (negative) ++pos_;
    if (at_end() || !is_digit(s_[pos_])) return error("shape dimension is not an integer");
    uint64_t v = 0;
    constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
    for (; !at_end() && is_digit(s_[pos_]); ++pos_) {
      const auto digit = static_cast<uint64_t>(s_[pos_] - '0');
      if (v > (kMax - digit) / 10) return error("shape dimension does not fit in int64");
      v = v * 10 + digit;
    }
    if (!at_end() && s_[pos_] == 'L') ++pos_;
    if (!at_end() && is_word(s_[pos_])) {
      size_t end = pos_;
      while (end < s_.size() && (is_word(s_[end]) || s_[end] == '+' || s_[end] == '-')) ++end;
      return error("shape dimension '" + std::string(s_.substr(start, end - start)) +
                   "' is not an integer");
    }
    if (negative) return error("negative dimension -" + std::to_string(v) + " in shape");
    return static_cast<int64_t>(v);
  }

  Expected<Shape> shape_tuple() {
    if (!eat('(')) return error("'shape' must be a tuple such as (2, 3)");
    Shape shape;
    if (eat(')')) return shape;
    while (true) {
      if (peek() == '\0' && at_end()) return error("unterminated shape tuple");
      if (shape.size() == kMaxRank)
        return error("shape has more than " + std::to_string(kMaxRank) + " dimensions");
      KILN_ASSIGN_OR_RETURN(int64_t d, integer());
      shape.push_back(d);
      if (eat(',')) {
        if (eat(')')) return shape;
        continue;
      }
      if (eat(')')) {
        if (shape.size() == 1)
          return error("shape (" + std::to_string(d) + ") is an integer, not a tuple; write (" +
                       std::to_string(d) + ",)");
        return shape;
      }
      if (at_end()) return error("unterminated shape tuple");
      return error("expected ',' or ')' in the shape tuple");
    }
  }

  static Status parse_descr(const std::string& descr, NpyHeader& h) {
    std::string_view s = descr;
    char order = '=';
    if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|')) {
      order = s[0];
      s.remove_prefix(1);
    }
    if (s == "f4") {
      h.dtype = DType::kF32;
    } else if (s == "f2") {
      h.dtype = DType::kF16;
    } else if (s == "i4") {
      h.dtype = DType::kI32;
    } else if (s == "i8") {
      h.dtype = DType::kI64;
    } else if (s == "b1") {
      h.dtype = DType::kBool;
    } else if (s == "c8") {
      h.dtype = DType::kC64;
    } else if (s == "u1") {
      return invalid_argument("unsupported dtype '" + descr +
                              "' (uint8): Kiln has no u8 type; convert to bool or int32 first");
    } else {
      return invalid_argument("unsupported dtype '" + descr +
                              "' (supported: <f4, <f2, <i4, <i8, |b1, <c8, in either byte order)");
    }
    h.descr = descr;
    h.item_size = dtype_size(h.dtype);
    if (order == '|' && h.item_size > 1)
      return invalid_argument("malformed .npy header: byte order '|' (not applicable) on the " +
                              std::to_string(h.item_size) + "-byte dtype '" + descr + "'");
    constexpr bool kHostLittle = std::endian::native == std::endian::little;
    const bool little = order == '<' || ((order == '=' || order == '|') && kHostLittle);
    h.swap = h.item_size > 1 && little != kHostLittle;
    return Status::ok_status();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Expected<NpyHeader> parse_npy_header(std::string_view text) {
  return DictParser(text).parse();
}

const char* npy_descr(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "<f4";
    case DType::kF16:
      return "<f2";
    case DType::kI32:
      return "<i4";
    case DType::kI64:
      return "<i8";
    case DType::kBool:
      return "|b1";
    case DType::kC64:
      return "<c8";
  }
  unreachable("npy_descr: unknown dtype");
}

std::string npy_shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string format_npy_header_dict(DType dtype, const Shape& shape) {
  return std::string("{'descr': '") + npy_descr(dtype) +
         "', 'fortran_order': False, 'shape': " + npy_shape_str(shape) + ", }";
}

}  // namespace kiln::io
