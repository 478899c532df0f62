// einsum: an equation over the operands' dims, lowered onto existing ops. Each operand first
// takes its diagonals (a label repeated within one operand: the two dims flattened and every
// (n + 1)-th element selected) and sums the labels no one else needs; operands then combine
// left to right, each pair as one batched matmul [batch, kept A, contracted] x [batch,
// contracted, kept B] between permutes and reshapes; the result sums what the output does not
// name and is permuted into the output's order. Ellipsis dims broadcast (right-aligned, size 1
// against any size) like NumPy's.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "capture/trace.h"

namespace kiln {
namespace {

constexpr int kEllipsisLabel = 1000;  // ellipsis dim j (of the widest) is label 1000 + j

[[noreturn]] void fail(const std::string& equation, const std::string& what) {
  throw Error(invalid_argument("einsum('" + equation + "'): " + what));
}

/// Labels of one term: letters as their character codes, "..." as -1.
std::vector<int> parse_term(const std::string& equation, const std::string& term) {
  std::vector<int> labels;
  for (size_t i = 0; i < term.size(); ++i) {
    const char ch = term[i];
    if (ch == ' ') continue;
    if (ch == '.') {
      if (term.compare(i, 3, "...") != 0) fail(equation, "'.' outside an ellipsis '...'");
      if (std::count(labels.begin(), labels.end(), -1) > 0)
        fail(equation, "two ellipses in a term");
      labels.push_back(-1);
      i += 2;
      continue;
    }
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
      fail(equation, std::string("'") + ch + "' is not a letter");
    labels.push_back(ch);
  }
  return labels;
}

struct Term {
  Tensor t;
  std::vector<int> labels;  // one per dim
};

bool is_one(const SymSize& s) {
  return !s.is_symbolic() && s.hint() == 1;
}

std::vector<int64_t> positions_of(const std::vector<int>& labels, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  for (int l : order) perm.push_back(std::find(labels.begin(), labels.end(), l) - labels.begin());
  return perm;
}

/// Sums (drops) the dims of `op` whose label `keep` rejects.
template <typename Keep>
void sum_unneeded(Term& op, Keep keep, Loc loc) {
  std::vector<int64_t> axes;
  std::vector<int> left;
  for (size_t d = 0; d < op.labels.size(); ++d) {
    if (keep(op.labels[d]))
      left.push_back(op.labels[d]);
    else
      axes.push_back(static_cast<int64_t>(d));
  }
  if (axes.empty()) return;
  op.t = sum(op.t, axes, false, loc);
  op.labels = left;
}

/// Replaces each pair of dims sharing a label by their diagonal (one dim, at the end).
void take_diagonals(Term& op, Loc loc) {
  for (;;) {
    size_t a = 0, b = 0;
    for (a = 0; a < op.labels.size() && b == 0; ++a)
      for (size_t j = a + 1; j < op.labels.size(); ++j)
        if (op.labels[j] == op.labels[a]) {
          b = j;
          break;
        }
    if (b == 0) return;
    --a;
    const int label = op.labels[a];
    std::vector<int> rest;
    std::vector<int64_t> perm;
    Sizes shape;
    for (size_t d = 0; d < op.labels.size(); ++d)
      if (d != a && d != b) {
        perm.push_back(static_cast<int64_t>(d));
        rest.push_back(op.labels[d]);
        shape.push_back(op.t.sizes()[d]);
      }
    const int64_t n = op.t.sizes()[a].value();
    if (op.t.sizes()[b].value() != n)
      throw Error(invalid_argument("einsum: a label repeated in one operand names dims of sizes " +
                                   std::to_string(n) + " and " +
                                   std::to_string(op.t.sizes()[b].value())));
    perm.push_back(static_cast<int64_t>(a));
    perm.push_back(static_cast<int64_t>(b));
    shape.push_back(SymSize(n * n));
    Tensor flat = reshape(permute(op.t, perm, loc), shape, loc);
    Tensor idx = arange(0.0, static_cast<double>(n * n), static_cast<double>(n + 1), DType::kI64,
                        op.t.device(), loc);
    op.t = index_select(flat, static_cast<int64_t>(rest.size()), idx, loc);
    rest.push_back(label);
    op.labels = rest;
  }
}

/// Expands a's dims of size 1 to b's size where they share a label (and vice versa).
void broadcast_shared(Term& a, Term& b, Loc loc) {
  auto grow = [loc](Term& x, const Term& y) {
    Sizes target = x.t.sizes();
    bool any = false;
    for (size_t d = 0; d < x.labels.size(); ++d) {
      auto it = std::find(y.labels.begin(), y.labels.end(), x.labels[d]);
      if (it == y.labels.end()) continue;
      const SymSize other = y.t.sizes()[static_cast<size_t>(it - y.labels.begin())];
      if (is_one(target[d]) && !is_one(other)) {
        target[d] = other;
        any = true;
      }
    }
    if (any) x.t = expand(x.t, target, loc);
  };
  grow(a, b);
  grow(b, a);
}

SymSize product(const Tensor& t, const std::vector<int64_t>& dims) {
  SymSize p = 1;
  for (int64_t d : dims) p = p * t.sizes()[static_cast<size_t>(d)];
  return p;
}

/// a and b combined into one operand over the labels `keep` needs, as a batched matmul.
Term contract(Term a, Term b, const std::vector<int>& keep, Loc loc) {
  auto kept = [&](int l) { return std::find(keep.begin(), keep.end(), l) != keep.end(); };
  auto in = [](const Term& o, int l) {
    return std::find(o.labels.begin(), o.labels.end(), l) != o.labels.end();
  };
  sum_unneeded(
      a, [&](int l) { return kept(l) || in(b, l); }, loc);
  sum_unneeded(
      b, [&](int l) { return kept(l) || in(a, l); }, loc);
  broadcast_shared(a, b, loc);
  std::vector<int> batch, contracted, a_only, b_only;
  for (int l : a.labels) {
    if (!in(b, l))
      a_only.push_back(l);
    else if (kept(l))
      batch.push_back(l);
    else
      contracted.push_back(l);
  }
  for (int l : b.labels)
    if (!in(a, l)) b_only.push_back(l);
  auto cat = [](std::vector<int> x, const std::vector<int>& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  const std::vector<int64_t> pa = positions_of(a.labels, cat(cat(batch, a_only), contracted));
  const std::vector<int64_t> pb = positions_of(b.labels, cat(cat(batch, contracted), b_only));
  auto span = [](const std::vector<int64_t>& p, size_t from, size_t count) {
    return std::vector<int64_t>(p.begin() + static_cast<int64_t>(from),
                                p.begin() + static_cast<int64_t>(from + count));
  };
  const size_t nb = batch.size(), na = a_only.size(), nc = contracted.size();
  const SymSize bsz = product(a.t, span(pa, 0, nb)), m = product(a.t, span(pa, nb, na)),
                k = product(a.t, span(pa, nb + na, nc)),
                n = product(b.t, span(pb, nb + nc, b_only.size()));
  Tensor a3 = reshape(permute(a.t, pa, loc), {bsz, m, k}, loc);
  Tensor b3 = reshape(permute(b.t, pb, loc), {bsz, k, n}, loc);
  Sizes out_shape;
  for (size_t i = 0; i < nb + na; ++i) out_shape.push_back(a.t.sizes()[static_cast<size_t>(pa[i])]);
  for (size_t i = nb + nc; i < pb.size(); ++i)
    out_shape.push_back(b.t.sizes()[static_cast<size_t>(pb[i])]);
  return {reshape(matmul(a3, b3, false, false, loc), out_shape, loc),
          cat(cat(batch, a_only), b_only)};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands, Loc loc) {
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(equation, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size())
    fail(equation, std::to_string(terms.size()) + " terms for " + std::to_string(operands.size()) +
                       " operands");
  // Ellipsis dims: right-aligned labels kEllipsisLabel + j over the widest ellipsis.
  int64_t ellipsis_rank = 0;
  std::vector<Term> ops;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!operands[i].defined()) fail(equation, "operand " + std::to_string(i) + " is undefined");
    const int64_t letters =
        static_cast<int64_t>(terms[i].size()) - std::count(terms[i].begin(), terms[i].end(), -1);
    const int64_t extra = operands[i].dim() - letters;
    const bool has_ellipsis = letters != static_cast<int64_t>(terms[i].size());
    if (extra < 0 || (extra > 0 && !has_ellipsis))
      fail(equation, "term " + std::to_string(i) + " names " + std::to_string(letters) +
                         " dims of a rank-" + std::to_string(operands[i].dim()) + " operand");
    ellipsis_rank = std::max(ellipsis_rank, extra);
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t extra = operands[i].dim() - static_cast<int64_t>(terms[i].size()) +
                          std::count(terms[i].begin(), terms[i].end(), -1);
    Term op{operands[i], {}};
    for (int l : terms[i]) {
      if (l != -1) {
        op.labels.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < extra; ++j)
        op.labels.push_back(kEllipsisLabel + static_cast<int>(ellipsis_rank - extra + j));
    }
    ops.push_back(std::move(op));
  }
  std::map<int, int> count;
  for (const Term& op : ops)
    for (int l : op.labels) ++count[l];
  std::vector<int> output;
  if (arrow != std::string::npos) {
    for (int l : parse_term(equation, equation.substr(arrow + 2))) {
      if (l == -1) {
        for (int64_t j = 0; j < ellipsis_rank; ++j)
          output.push_back(kEllipsisLabel + static_cast<int>(j));
        continue;
      }
      if (!count.contains(l))
        fail(equation, std::string("output label '") + char(l) + "' is in no input");
      if (std::find(output.begin(), output.end(), l) != output.end())
        fail(equation, std::string("output label '") + char(l) + "' repeats");
      output.push_back(l);
    }
  } else {  // implicit: the ellipsis dims, then the letters named once, alphabetically
    for (int64_t j = 0; j < ellipsis_rank; ++j)
      output.push_back(kEllipsisLabel + static_cast<int>(j));
    for (const auto& [l, c] : count)
      if (l < kEllipsisLabel && c == 1) output.push_back(l);
  }
  auto needed_after = [&](size_t i) {  // labels the output or operands after i name
    std::vector<int> keep = output;
    for (size_t j = i + 1; j < ops.size(); ++j)
      keep.insert(keep.end(), ops[j].labels.begin(), ops[j].labels.end());
    return keep;
  };
  for (size_t i = 0; i < ops.size(); ++i) take_diagonals(ops[i], loc);
  Term acc = ops[0];
  const std::vector<int> keep = needed_after(0);
  sum_unneeded(
      acc, [&](int l) { return std::find(keep.begin(), keep.end(), l) != keep.end(); }, loc);
  for (size_t i = 1; i < ops.size(); ++i)
    acc = contract(std::move(acc), ops[i], needed_after(i), loc);
  sum_unneeded(
      acc, [&](int l) { return std::find(output.begin(), output.end(), l) != output.end(); }, loc);
  const std::vector<int64_t> perm = positions_of(acc.labels, output);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? acc.t : permute(acc.t, perm, loc);
}

}  // namespace kiln
