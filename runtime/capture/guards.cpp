#include "capture/guards.h"

#include <algorithm>
#include <bit>
#include <cstdio>

namespace kiln {
namespace {
std::string fmt_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
/// The exact identity of a scalar's value: the integer, or the double's bits.
int64_t scalar_bits(const Scalar& s) {
  return s.is_integral() ? s.hint_int() : std::bit_cast<int64_t>(s.hint_double());
}
std::string fmt_scalar(const Scalar& s) {
  return s.is_integral() ? std::to_string(s.hint_int()) : fmt_double(s.hint_double());
}
std::string fmt_expected(const Guard& g) {
  return g.dim ? std::to_string(g.expected) : fmt_double(std::bit_cast<double>(g.expected));
}
}  // namespace

const char* guard_kind_name(GuardKind kind) {
  switch (kind) {
    case GuardKind::kArity:
      return "arity";
    case GuardKind::kDType:
      return "dtype";
    case GuardKind::kDevice:
      return "device";
    case GuardKind::kRank:
      return "rank";
    case GuardKind::kSize:
      return "size";
    case GuardKind::kConstantAlive:
      return "captured_identity";
    case GuardKind::kScalarKind:
      return "scalar_kind";
    case GuardKind::kScalarValue:
      return "scalar_value";
    case GuardKind::kShapes:
      return "symbolic_sizes";
  }
  return "?";
}

GuardSet GuardSet::build(const CallArgs& call, const std::vector<CapturedConstant>& constants,
                         std::string fn_name, std::shared_ptr<ShapeEnv> env,
                         std::vector<SymbolSource> sources, std::vector<bool> specialized_scalars) {
  const std::vector<Tensor>& args = call.tensors;
  GuardSet s;
  s.fn_name_ = std::move(fn_name);
  s.sources_ = std::move(sources);
  if (!s.sources_.empty()) {
    s.env_ = std::move(env);
    throw_if_error(s.env_->freeze());
  }
  auto symbolic = [&](size_t arg, int dim) {
    for (const SymbolSource& src : s.sources_)
      if (src.arg == static_cast<int32_t>(arg) && src.dim == dim) return true;
    return false;
  };
  s.guards_.push_back({GuardKind::kArity, 0, 0, static_cast<int64_t>(args.size())});
  for (size_t i = 0; i < args.size(); ++i) {
    int32_t idx = static_cast<int32_t>(i);
    const TensorImpl& t = *args[i].impl();
    s.guards_.push_back({GuardKind::kDType, idx, 0, static_cast<int64_t>(t.meta.dtype)});
    s.guards_.push_back({GuardKind::kDevice, idx, 0, static_cast<int64_t>(t.device.kind())});
    s.guards_.push_back({GuardKind::kRank, idx, 0, t.meta.rank()});
    for (int d = 0; d < t.meta.rank(); ++d)
      if (!symbolic(i, d)) s.guards_.push_back({GuardKind::kSize, idx, d, t.meta.shape[d]});
  }
  if (s.env_) s.guards_.push_back({GuardKind::kShapes, 0, 0, 0});
  s.guards_.push_back({GuardKind::kArity, 1, 0, static_cast<int64_t>(call.scalars.size())});
  for (size_t i = 0; i < call.scalars.size(); ++i) {
    const int32_t idx = static_cast<int32_t>(i);
    s.guards_.push_back({GuardKind::kScalarKind, idx, 0, call.scalars[i].is_integral() ? 1 : 0});
    // A scalar that stayed a graph value needs no value guard (specialized_scalars empty:
    // every scalar was specialised).
    if (specialized_scalars.empty() || specialized_scalars.at(i))
      s.guards_.push_back({GuardKind::kScalarValue, idx, call.scalars[i].is_integral() ? 1 : 0,
                           scalar_bits(call.scalars[i])});
  }
  for (size_t j = 0; j < constants.size(); ++j)
    s.guards_.push_back({GuardKind::kConstantAlive, static_cast<int32_t>(j), 0, 1});
  return s;
}

void GuardSet::bind(const std::vector<Tensor>& tensors, std::vector<int64_t>& out) const {
  out.assign(static_cast<size_t>(env_ ? env_->num_symbols() : 0), 0);
  for (size_t i = 0; i < sources_.size() && i < out.size(); ++i) {
    const SymbolSource& src = sources_[i];
    out[i] = tensors[static_cast<size_t>(src.arg)].impl()->meta.shape[static_cast<size_t>(src.dim)];
  }
}

bool GuardSet::check(const Guard& g, const CallArgs& call,
                     const std::vector<CapturedConstant>& constants) const {
  const std::vector<Tensor>& args = call.tensors;
  switch (g.kind) {
    case GuardKind::kArity:  // index 0: tensor arguments, 1: scalar arguments
      return static_cast<int64_t>(g.index == 0 ? args.size() : call.scalars.size()) == g.expected;
    case GuardKind::kScalarKind:
      return (call.scalars[g.index].is_integral() ? 1 : 0) == g.expected;
    case GuardKind::kScalarValue:
      return scalar_bits(call.scalars[g.index]) == g.expected;
    case GuardKind::kDType:
      return static_cast<int64_t>(args[g.index].impl()->meta.dtype) == g.expected;
    case GuardKind::kDevice:
      return static_cast<int64_t>(args[g.index].impl()->device.kind()) == g.expected;
    case GuardKind::kRank:
      return args[g.index].impl()->meta.rank() == g.expected;
    case GuardKind::kSize:
      return args[g.index].impl()->meta.shape[g.dim] == g.expected;
    case GuardKind::kConstantAlive:
      return !constants[g.index].tensor.expired();
    case GuardKind::kShapes: {
      // Per thread, so that calls on several threads check at once (no allocation per call).
      thread_local std::vector<int64_t> values;
      bind(args, values);
      return env_->check_guards(values) < 0;
    }
  }
  return false;
}

int GuardSet::first_failure(const CallArgs& args,
                            const std::vector<CapturedConstant>& constants) const {
  // Guards are ordered so that each one's preconditions (arity before any input, rank before
  // sizes) are checked first: a failure stops the scan before an out-of-range access.
  for (size_t i = 0; i < guards_.size(); ++i)
    if (!check(guards_[i], args, constants)) return static_cast<int>(i);
  return -1;
}

std::vector<int> GuardSet::all_failures(const CallArgs& args,
                                        const std::vector<CapturedConstant>& constants) const {
  std::vector<int> out;
  int bad_input = -1;
  for (size_t i = 0; i < guards_.size(); ++i) {
    const Guard& g = guards_[i];
    if (g.kind == GuardKind::kArity && !check(g, args, constants)) return {static_cast<int>(i)};
    if (g.kind == GuardKind::kShapes && bad_input >= 0) continue;  // cannot bind the symbols
    if (g.kind != GuardKind::kConstantAlive && g.kind != GuardKind::kArity &&
        g.kind != GuardKind::kScalarValue && g.kind != GuardKind::kScalarKind &&
        g.kind != GuardKind::kShapes && g.index == bad_input)
      continue;  // rank already differs: size guards of this input are meaningless
    if (!check(g, args, constants)) {
      out.push_back(static_cast<int>(i));
      if (g.kind == GuardKind::kRank) bad_input = g.index;
    }
  }
  return out;
}

std::string GuardSet::provenance(const Guard& g,
                                 const std::vector<CapturedConstant>& constants) const {
  if (g.kind == GuardKind::kArity) return "from the signature of '" + fn_name_ + "'";
  if (g.kind == GuardKind::kScalarValue || g.kind == GuardKind::kScalarKind)
    return "scalar argument " + std::to_string(g.index) + " of '" + fn_name_ + "'";
  if (g.kind == GuardKind::kShapes) return "size symbols of '" + fn_name_ + "'";
  if (g.kind == GuardKind::kConstantAlive)
    return "tensor captured by '" + fn_name_ + "' at " +
           (constants[g.index].loc.empty() ? "an unknown location" : constants[g.index].loc);
  return "from argument " + std::to_string(g.index) + " of '" + fn_name_ + "'";
}

std::string GuardSet::describe_failure(int i, const CallArgs& call,
                                       const std::vector<CapturedConstant>& constants) const {
  const std::vector<Tensor>& args = call.tensors;
  const Guard& g = guards_[i];
  std::string what, got;
  const bool on_tensor = g.kind != GuardKind::kArity && g.kind != GuardKind::kConstantAlive &&
                         g.kind != GuardKind::kScalarValue && g.kind != GuardKind::kScalarKind &&
                         g.kind != GuardKind::kShapes;
  const TensorImpl* t = on_tensor ? args[g.index].impl() : nullptr;
  switch (g.kind) {
    case GuardKind::kArity:
      what = std::string("number of ") + (g.index == 0 ? "tensor" : "scalar") +
             " arguments: expected " + std::to_string(g.expected);
      got = std::to_string(g.index == 0 ? args.size() : call.scalars.size());
      break;
    case GuardKind::kScalarKind:
      what = "scalar argument " + std::to_string(g.index) + " kind: expected " +
             (g.expected ? "an integer" : "a floating-point number");
      got = call.scalars[g.index].is_integral() ? "an integer" : "a floating-point number";
      break;
    case GuardKind::kScalarValue:
      what = "scalar argument " + std::to_string(g.index) + ": expected " + fmt_expected(g);
      got = fmt_scalar(call.scalars[g.index]);
      break;
    case GuardKind::kDType:
      what = "input " + std::to_string(g.index) + " dtype: expected " +
             dtype_name(static_cast<DType>(g.expected));
      got = dtype_name(t->meta.dtype);
      break;
    case GuardKind::kDevice:
      what = "input " + std::to_string(g.index) + " device: expected " +
             (g.expected == static_cast<int64_t>(Device::Kind::kCpu) ? "cpu" : "vulkan");
      got = t->device.str();
      break;
    case GuardKind::kRank:
      what = "input " + std::to_string(g.index) + " rank: expected " + std::to_string(g.expected);
      got = std::to_string(t->meta.rank());
      break;
    case GuardKind::kSize:
      what = "input " + std::to_string(g.index) + " size of dim " + std::to_string(g.dim) +
             ": expected " + std::to_string(g.expected);
      got = std::to_string(t->meta.shape[g.dim]);
      break;
    case GuardKind::kConstantAlive:
      what = "captured tensor " + std::to_string(g.index) + " (" + constants[g.index].meta.str() +
             ") no longer exists";
      return what + " (" + provenance(g, constants) + ")";
    case GuardKind::kShapes: {
      std::vector<int64_t> v;
      bind(args, v);
      const int bad = env_->check_guards(v);
      const ShapeGuard sg = env_->guards().at(static_cast<size_t>(std::max(bad, 0)));
      std::vector<int> syms = sg.lhs.free_symbols();
      for (int sym : sg.rhs.free_symbols())
        if (std::find(syms.begin(), syms.end(), sym) == syms.end()) syms.push_back(sym);
      std::string vals;
      for (int sym : syms) {
        const SymbolSource& src = sources_[static_cast<size_t>(sym)];
        vals += (vals.empty() ? "" : ", ") + std::string("s") + std::to_string(sym) + " = " +
                std::to_string(v[static_cast<size_t>(sym)]) + " (input " + std::to_string(src.arg) +
                " dim " + std::to_string(src.dim) + ")";
      }
      return "size guard " + sg.to_string() + " failed with " + vals;
    }
  }
  return what + ", got " + got + " (" + provenance(g, constants) + ")";
}

std::string GuardSet::to_string(const std::vector<CapturedConstant>& constants) const {
  std::string s;
  for (const Guard& g : guards_) {
    s += guard_kind_name(g.kind);
    switch (g.kind) {
      case GuardKind::kArity:
        s += std::string(g.index == 0 ? "(tensors)" : "(scalars)") +
             " == " + std::to_string(g.expected);
        break;
      case GuardKind::kScalarKind:
        s += "(scalar " + std::to_string(g.index) + ") == " + (g.expected ? "int" : "float");
        break;
      case GuardKind::kScalarValue:
        s += "(scalar " + std::to_string(g.index) + ") == " + fmt_expected(g);
        break;
      case GuardKind::kDType:
        s += "(input " + std::to_string(g.index) +
             ") == " + dtype_name(static_cast<DType>(g.expected));
        break;
      case GuardKind::kDevice:
        s += "(input " + std::to_string(g.index) +
             ") == " + (g.expected == static_cast<int64_t>(Device::Kind::kCpu) ? "cpu" : "vulkan");
        break;
      case GuardKind::kRank:
        s += "(input " + std::to_string(g.index) + ") == " + std::to_string(g.expected);
        break;
      case GuardKind::kSize:
        s += "(input " + std::to_string(g.index) + ", dim " + std::to_string(g.dim) +
             ") == " + std::to_string(g.expected);
        break;
      case GuardKind::kConstantAlive:
        s += "(captured " + std::to_string(g.index) + ": " + constants[g.index].meta.str() + ")";
        break;
      case GuardKind::kShapes: {
        s += ":    # " + provenance(g, constants) + "\n";
        for (size_t i = 0; i < sources_.size(); ++i)
          s += "  s" + std::to_string(i) + " := input " + std::to_string(sources_[i].arg) +
               " dim " + std::to_string(sources_[i].dim) + "\n";
        for (const ShapeGuard& sg : env_->guards()) s += "  " + sg.to_string() + "\n";
        continue;
      }
    }
    s += "    # " + provenance(g, constants) + "\n";
  }
  return s;
}

}  // namespace kiln
