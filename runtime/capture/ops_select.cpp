// masked_select (the elements of a tensor where a bool mask is true, in row-major order: the
// seed's `x[x > t]`) and nonzero (the coordinates of the non-zero elements). Inside kiln::compile
// it is a graph op whose length is an unbacked size symbol: the compaction kernel runs on the
// device and the length is read back (4 bytes) when the graph has run. The graph ends at the op
// (TraceContext::sync_unbacked): the trace runs it, so the traced code reads the real length, and
// later ops go into the next graph, where the length is an input dim. Called eagerly on a device it
// is the same kernel in a one-op graph, the length read back before returning. nonzero of a rank-0
// tensor stays a host op (a graph break).
#include <string>

#include "capture/executable_cache.h"
#include "capture/trace.h"
#include "graph/graph_key.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

bool is_one(const SymSize& d) {
  return !d.is_symbolic() && d.hint() == 1;
}

/// Eagerly on a device: a one-op graph whose length is an unbacked symbol of its own ShapeEnv,
/// cached by structure like every eager op's executable.
Tensor eager_device_compaction(OpKind op, const std::vector<Tensor>& ins, Attrs attrs,
                               const std::string& where) {
  for (const Tensor& t : ins)
    if (t.device() != ins[0].device())
      throw Error(invalid_argument(std::string(op_name(op)) + " at " + where +
                                   ": tensors on different devices (" + ins[0].device().str() +
                                   ", " + t.device().str() + "); move one with .to()"));
  ShapeEnv env;
  Graph g;
  g.set_shape_env(&env);
  std::vector<NodeId> ids;
  for (const Tensor& t : ins) ids.push_back(g.add_input(t.meta()));
  attrs.index =
      env.create_unbacked_symbol(attrs.dims.at(0), "the length of " + std::string(op_name(op)));
  const NodeId out = value_or_throw(g.add(op, std::move(ids), std::move(attrs)));
  g.set_outputs({out});
  g.canonicalize(env);
  g.set_shape_env(nullptr);
  CompileOptions options;
  options.name = op_name(op);
  const GraphKey key(g, Executable::target_key(ins[0].device(), options));
  ExecutableCache& cache = eager_executable_cache();
  std::shared_ptr<Executable> exe = cache.find(key);
  if (!exe) {
    exe = value_or_throw(Executable::create(g, ins[0].device(), options));
    cache.insert(key, exe);
  }
  auto result = exe->run(ins, {});
  if (!result.ok())
    throw Error(result.status().with_context(std::string(op_name(op)) + " at " + where));
  return result->at(0);
}

/// A Compaction op on `ins`: traced, with a new unbacked length; eagerly on the CPU, the
/// interpreter; eagerly on a device, its kernel. `most`: the largest length (the hint).
Tensor compaction(OpKind op, const std::vector<Tensor>& ins, int64_t most, const Loc& loc) {
  const std::string where = loc_str(loc);
  Attrs attrs;
  attrs.dims = {most};
  if (TraceContext* trace = current_trace()) {
    trace->sync_unbacked(ins);  // a length the symbol's stand-in depends on
    attrs.index =
        trace->unbacked_symbol(most, "the length of " + std::string(op_name(op)) + " at " + where);
    Tensor out = apply_op(op, ins, std::move(attrs), loc);
    // The graph ends here: running it reveals the length before the traced code can read the
    // result's sizes (a reshape's -1, a loop bound), which then see the real value.
    trace->sync_unbacked({out});
    return out;
  }
  bool cpu = true;
  for (const Tensor& t : ins) cpu = cpu && t.device().is_cpu();
  if (cpu) {
    attrs.index = -1;  // the interpreter sizes its result
    return apply_op(op, ins, std::move(attrs), loc);
  }
  return eager_device_compaction(op, ins, std::move(attrs), where);
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
