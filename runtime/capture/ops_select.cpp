// masked_select: the elements of a tensor where a bool mask is true, in row-major order (the
// seed's `x[x > t]`). Inside kiln::compile it is a graph op whose length is an unbacked size
// symbol: the compaction kernel runs on the device and the length is read back (4 bytes) when
// the graph has run; an op that uses the result makes the trace run its graph first and record
// that op in the next one, with the length as an input dim (TraceContext::sync_unbacked).
// Called eagerly on a device it is the same kernel in a one-op graph, the length read back
// before returning.
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
Tensor eager_device_select(const Tensor& x, const Tensor& mask, Attrs attrs,
                           const std::string& where) {
  if (x.device() != mask.device())
    throw Error(invalid_argument("masked_select at " + where + ": tensors on different devices (" +
                                 x.device().str() + ", " + mask.device().str() +
                                 "); move one with .to()"));
  ShapeEnv env;
  Graph g;
  g.set_shape_env(&env);
  const NodeId xi = g.add_input(x.meta()), mi = g.add_input(mask.meta());
  attrs.index = env.create_unbacked_symbol(attrs.dims.at(0), "the length of masked_select");
  const NodeId out = value_or_throw(g.add(OpKind::MaskedSelect, {xi, mi}, std::move(attrs)));
  g.set_outputs({out});
  g.canonicalize(env);
  g.set_shape_env(nullptr);
  CompileOptions options;
  options.name = "masked_select";
  const GraphKey key(g, Executable::target_key(x.device(), options));
  ExecutableCache& cache = eager_executable_cache();
  std::shared_ptr<Executable> exe = cache.find(key);
  if (!exe) {
    exe = value_or_throw(Executable::create(g, x.device(), options));
    cache.insert(key, exe);
  }
  auto result = exe->run({x, mask}, {});
  if (!result.ok()) throw Error(result.status().with_context("masked_select at " + where));
  return result->at(0);
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
  Attrs attrs;
  attrs.dims = {most};
  if (TraceContext* trace = current_trace()) {
    trace->sync_unbacked({xb, mb});  // a length the symbol's stand-in depends on
    attrs.index = trace->unbacked_symbol(most, "the length of masked_select at " + where);
    return apply_op(OpKind::MaskedSelect, {xb, mb}, std::move(attrs), loc);
  }
  if (xb.device().is_cpu() && mb.device().is_cpu()) {
    attrs.index = -1;  // the interpreter sizes its result
    return apply_op(OpKind::MaskedSelect, {xb, mb}, std::move(attrs), loc);
  }
  return eager_device_select(xb, mb, std::move(attrs), where);
}

}  // namespace kiln
