// masked_select (the elements of a tensor where a bool mask is true, in row-major order: the
// seed's `x[x > t]`) and nonzero (the coordinates of the non-zero elements). Inside kiln::compile
// it is a graph op whose length is an unbacked size symbol: the compaction kernel runs on the
// device and the length is read back (4 bytes) when the graph has run. The graph ends at the op
// (TraceContext::sync_unbacked): the trace runs it, so the traced code reads the real length, and
// later ops go into the next graph, where the length is an input dim. Called eagerly on a device it
// is the same kernel in a one-op graph, the length read back before returning. nonzero of a rank-0
// tensor stays a host op (a graph break).
#include <string>

#include "capture/trace.h"
#include "tensor/apply_op.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

bool is_one(const SymSize& d) {
  return !d.is_symbolic() && d.hint() == 1;
}

/// A Compaction op on `ins`: traced, with a new unbacked length; eagerly, apply_op's one-op
/// graph (on a device it gives the length an unbacked symbol too). `most`: the largest length.
Tensor compaction(OpKind op, const std::vector<Tensor>& ins, int64_t most, const Loc& loc) {
  Attrs attrs;
  attrs.dims = {most};
  attrs.index = -1;
  if (TraceContext* trace = current_trace()) {
    attrs.index = trace->unbacked_symbol(
        most, "the length of " + std::string(op_name(op)) + " at " + loc_str(loc));
    Tensor out = apply_op(op, ins, std::move(attrs), loc);
    // The graph ends here: running it reveals the length before the traced code can read the
    // result's sizes (a reshape's -1, a loop bound), which then see the real value.
    trace->sync_unbacked({out});
    return out;
  }
  return apply_op(op, ins, std::move(attrs), loc);
}

}  // namespace

Tensor masked_select(const Tensor& x, const Tensor& mask, Loc loc) {
  const std::string where = loc_str(loc);
  if (!x.defined() || !mask.defined())
    throw Error(invalid_argument("masked_select: undefined tensor at " + where));
  if (mask.dtype() != DType::kBool)
    throw Error(invalid_argument("masked_select at " + where + ": the mask must be bool, got " +
                                 dtype_name(mask.dtype())));
  // NumPy broadcasting of the two shapes: a dim of 1 takes the other's size; other pairs must
  // agree (the expand below checks, guarding symbolic ones).
  const Sizes xs = x.sizes(loc), ms = mask.sizes(loc);
  const size_t rank = std::max(xs.size(), ms.size());
  std::vector<SymSize> dims(rank, SymSize(1));
  bool same = xs.size() == ms.size();
  for (size_t i = 0; i < rank; ++i) {
    const bool in_x = i + xs.size() >= rank, in_m = i + ms.size() >= rank;
    const SymSize a = in_x ? xs[i + xs.size() - rank] : SymSize(1);
    const SymSize b = in_m ? ms[i + ms.size() - rank] : SymSize(1);
    dims[i] = is_one(b) ? a : b;
    same = same && (a.is_symbolic() || b.is_symbolic() ? a.is_symbolic() && b.is_symbolic()
                                                       : a.hint() == b.hint());
  }
  const Tensor xb = same ? x : expand(x, Sizes(dims), loc);
  const Tensor mb = same ? mask : expand(mask, Sizes(dims), loc);
  int64_t most = 1;
  for (const SymSize& d : dims) most *= d.hint();
  return compaction(OpKind::MaskedSelect, {xb, mb}, most, loc);
}

Tensor nonzero_host(const Tensor& a, Loc loc);  // ops.cpp: a graph break

Tensor nonzero(const Tensor& a, Loc loc) {
  if (!a.defined()) throw Error(invalid_argument("nonzero: undefined tensor at " + loc_str(loc)));
  if (a.dim() == 0) return nonzero_host(a, loc);  // [count, 0]: nothing to compact
  int64_t most = 1;
  for (const SymSize& d : a.sizes(loc)) most *= d.hint();
  return compaction(OpKind::NonZero, {a}, most, loc);
}

}  // namespace kiln
