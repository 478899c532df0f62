#include "exec/program.h"

#include <complex>
#include <cstdio>
#include <cstring>

#include "tensor/tensor_impl.h"

namespace kiln {

int Program::graph_count() const {
  int n = 0;
  for (const ProgramStep& s : steps) n += s.kind == ProgramStep::Kind::kSegment;
  return n;
}

std::vector<GraphBreak> Program::breaks() const {
  std::vector<GraphBreak> out;
  for (const ProgramStep& s : steps)
    if (s.kind != ProgramStep::Kind::kSegment && s.is_break) out.push_back(s.where);
  return out;
}

bool host_equal(const HostTensor& a, const HostTensor& b) {
  return a.meta == b.meta && a.data.size() == b.data.size() &&
         (a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size()) == 0);
}

std::string format_tensor(const std::string& label, const HostTensor& t) {
  std::string s = label + ": " + t.meta.str() + " [";
  const int64_t n = t.meta.numel(), shown = std::min<int64_t>(n, 16);
  char buf[64];
  for (int64_t i = 0; i < shown; ++i) {
    if (is_complex(t.meta.dtype)) {  // 1+2j, as Python writes complex numbers
      const std::complex<float> z = t.ptr<std::complex<float>>()[i];
      std::snprintf(buf, sizeof buf, "%s%.6g%+.6gj", i ? ", " : "", static_cast<double>(z.real()),
                    static_cast<double>(z.imag()));
    } else {
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", t.get(i));
    }
    s += buf;
  }
  if (shown < n) s += ", ...";
  return s + "]";
}

std::optional<std::vector<Tensor>> Program::replay(const std::vector<Tensor>& args,
                                                   const std::vector<Tensor>& constants,
                                                   ValueGuardFailure* failure,
                                                   const HostStepRunner& run_host,
                                                   std::span<const int64_t> symbols) const {
  std::vector<Tensor> slots(static_cast<size_t>(num_slots));
  for (size_t i = 0; i < args.size(); ++i) slots[i] = args[i];
  std::vector<std::string> prints;
  // The symbol values, with the unbacked ones (masked_select lengths) filled in by the
  // segments that reveal them for the segments that read them.
  std::vector<int64_t> values(symbols.begin(), symbols.end());
  if (values.size() < static_cast<size_t>(num_symbols))
    values.resize(static_cast<size_t>(num_symbols), 0);
  for (const ProgramStep& s : steps) {
    std::vector<Tensor> in;
    for (int32_t id : s.in) in.push_back(slots[id]);
    std::vector<Tensor> out;
    switch (s.kind) {
      case ProgramStep::Kind::kSegment: {
        auto r = s.exe->run(in, constants, values, &values);
        if (!r.ok()) throw Error(r.status());
        out = std::move(r).value();
        break;
      }
      case ProgramStep::Kind::kValueGuard: {
        HostTensor now = to_host(in.at(0));
        if (!host_equal(now, s.expected)) {
          failure->description = "value read by " + s.label + " at " +
                                 (s.where.loc.empty() ? "an unknown location" : s.where.loc) +
                                 " changed: traced " + format_tensor("value", s.expected) +
                                 ", now " + format_tensor("value", now);
          return std::nullopt;
        }
        break;
      }
      case ProgramStep::Kind::kHost:
        out = run_host(s, in, device);
        for (size_t i = 0; i < out.size() && i < s.out_metas.size(); ++i) {
          if (!(out[i].meta() == s.out_metas[i])) {
            failure->description = "output " + std::to_string(i) + " of " + s.label + " at " +
                                   s.where.loc + " changed from " + s.out_metas[i].str() + " to " +
                                   out[i].meta().str();
            return std::nullopt;
          }
        }
        break;
      case ProgramStep::Kind::kPrint:
        prints.push_back(format_tensor(s.label, to_host(in.at(0))));
        break;
      case ProgramStep::Kind::kScalarRead:
        break;
      case ProgramStep::Kind::kSizeGuard: {
        const SymRel& r = s.size_guard;
        const int64_t lhs = r.lhs.evaluate(values), rhs = r.rhs.evaluate(values);
        if (!rel_holds(r.op, lhs, rhs)) {
          failure->description = "data-dependent size: " + r.str() + " held when traced (" +
                                 s.label + "), now " + std::to_string(lhs) + " " +
                                 rel_op_str(r.op) + " " + std::to_string(rhs) + " does not";
          return std::nullopt;
        }
        break;
      }
    }
    if (out.size() != s.out.size())
      throw Error(internal_error("step '" + s.label + "' returned " + std::to_string(out.size()) +
                                 " tensors, expected " + std::to_string(s.out.size())));
    for (size_t i = 0; i < out.size(); ++i) slots[s.out[i]] = std::move(out[i]);
  }
  for (const std::string& p : prints) std::printf("%s\n", p.c_str());
  std::vector<Tensor> result;
  for (int32_t id : outputs) result.push_back(slots[id]);
  return result;
}

}  // namespace kiln
