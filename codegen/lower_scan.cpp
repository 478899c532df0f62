// CumSum on the reduction template (shaders/reduce.comp): output element o is a reduction over
// its whole line along the axis, each element masked by its position (r <= i, r < i exclusive,
// r >= i / r > i reversed), so the scan is as parallel as the output and reuses both reduction
// variants; the work is O(numel x axis length), fine for the short axes models scan over. The
// input's elementwise producers fold into the load as for any reduction.
#include <algorithm>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kWorkgroupScanMinR = 128;  // below this, one invocation per output

}  // namespace

Expected<Kernel> cumsum_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& src = g.node(n.inputs[0]);
  const auto rank = static_cast<int64_t>(n.sym.size());
  const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis;
  if (axis < 0 || axis >= rank) return invalid_argument("cumsum: axis out of range");
  const bool exclusive = (n.attrs.index & kCumSumExclusive) != 0;
  const bool reverse = (n.attrs.index & kCumSumReverse) != 0;
  const DType acc = n.meta.dtype == DType::kF16 ? DType::kF32 : n.meta.dtype;
  const std::string acc_t = glsl_compute_type(acc);

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  const SymInt outputs = sym_numel(n.sym), len = n.sym[static_cast<size_t>(axis)];
  Index out_index = e.decompose("o", n.sym, "o", 0);
  Index in = out_index;
  in[static_cast<size_t>(axis)] = IndexExpr{"r", 0};
  const std::string i = out_index[static_cast<size_t>(axis)].expr;
  const std::string keep =
      reverse ? (exclusive ? "r > " : "r >= ") + i : (exclusive ? "r < " : "r <= ") + i;
  const std::string loaded = glsl_convert(e.value(n.inputs[0], in), src.meta.dtype, acc);
  const std::string load_body = e.take_body();
  e.reset_scope();
  std::string store = "acc";
  if (n.meta.dtype == DType::kF16) store = "float16_t(acc)";
  const std::string outputs_glsl = e.size(outputs), r_glsl = e.size(len);
  const std::string kernel_src =
      e.declarations() + "\n" + acc_t + " kiln_load(uint o, uint r) {\n" + load_body +
      "  return (" + keep + ") ? " + loaded + " : " + acc_t +
      "(0);\n}\n\nvoid kiln_store(uint o, " + acc_t + " acc) {\n  b0.data[o] = " + store + ";\n}\n";

  const int64_t len_hint = n.meta.shape[static_cast<size_t>(axis)];
  const bool workgroup = len_hint >= kWorkgroupScanMinR;
  KILN_ASSIGN_OR_RETURN(
      Kernel k,
      start_kernel(e, n, workgroup ? KernelVariant::kReduceWorkgroup : KernelVariant::kReduceThread,
                   opt.caps));
  set_reduce_geometry(k, workgroup, outputs, len, len_hint, 8, opt.caps);
  KILN_ASSIGN_OR_RETURN(k.glsl,
                        kernel_source("reduce.comp", e, kernel_src,
                                      {{"KILN_LOCAL_SIZE", std::to_string(k.local_size) + "u"},
                                       {"KILN_OUTPUTS", outputs_glsl},
                                       {"KILN_R", r_glsl},
                                       {"ACC_T", acc_t},
                                       {"KILN_INIT", acc_t + "(0)"},
                                       {"KILN_COMBINE(a, b)", "((a) + (b))"},
                                       {"KILN_WORKGROUP_REDUCE", workgroup ? "1" : "0"}},
                                      k, opt.caps));
  return k;
}

}  // namespace kiln
