// Softmax, LogSoftmax and LayerNorm as single kernels: one workgroup per normalised row, the
// input's elementwise producers folded into its load, layer_norm's scale and shift into its
// store (shaders/rownorm.comp).
#include <algorithm>
#include <cstdio>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kNormLocalSize = 64;
constexpr int64_t kWorkgroupRowMinR = 256;  // rows shorter than this: one invocation per row

}  // namespace

Expected<Kernel> norm_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                             const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& src = g.node(n.inputs[0]);
  const SymShape& shape = src.sym;
  const int rank = static_cast<int>(shape.size());
  // Which dims are normalised: one axis (softmax) or the trailing k (layer_norm).
  std::vector<bool> normalised(shape.size(), false);
  if (n.op == OpKind::LayerNorm) {
    for (int d = rank - static_cast<int>(n.attrs.index); d < rank; ++d) normalised[d] = true;
  } else {
    const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis;
    normalised[static_cast<size_t>(axis)] = true;
  }
  SymShape kept, reduced;
  int64_t r_hint = 1;  // the row length at the hints: variant choice only
  for (size_t d = 0; d < shape.size(); ++d) {
    (normalised[d] ? reduced : kept).push_back(shape[d]);
    if (normalised[d]) r_hint *= src.meta.shape[d];
  }
  const SymInt rows = sym_numel(kept), r_count = sym_numel(reduced);

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  // The element (row, r) as a full index of the input (and output: same shape).
  auto element_index = [&](Emitter& em) {
    Index ko = em.decompose("row", kept, "o", 0);
    Index kr = em.decompose("r", reduced, "q", 0);
    Index idx(shape.size());
    for (size_t d = 0, a = 0, b = 0; d < idx.size(); ++d)
      idx[d] = normalised[d] ? kr[b++] : ko[a++];
    return std::make_pair(idx, kr);
  };
  auto [load_idx, load_r] = element_index(e);
  std::string loaded = glsl_convert(e.value(n.inputs[0], load_idx), src.meta.dtype, DType::kF32);
  std::string load_body = e.take_body();
  e.reset_scope();
  auto [store_idx, store_r] = element_index(e);
  std::string v = "v";
  if (n.op == OpKind::LayerNorm) {
    const Node& w = g.node(n.inputs[1]);
    const Node& b = g.node(n.inputs[2]);
    std::string wv = glsl_convert(e.value(w.id, store_r), w.meta.dtype, DType::kF32);
    std::string bv = glsl_convert(e.value(b.id, store_r), b.meta.dtype, DType::kF32);
    v = "(v * " + wv + " + " + bv + ")";
  }
  std::string out = e.linear_index(n.sym, store_idx);
  std::string stored = n.meta.dtype == DType::kF16 ? "float16_t(" + v + ")" : v;
  e.add_statement("b0.data[" + out + "] = " + stored + ";");
  std::string store_body = e.take_body();
  const std::string rows_glsl = e.size(rows), r_glsl = e.size(r_count);
  std::string body = e.declarations() + "\nfloat kiln_load(uint row, uint r) {\n" + load_body +
                     "  return " + loaded +
                     ";\n}\n\nvoid kiln_store(uint row, uint r, float v) {\n" + store_body + "}\n";

  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, KernelVariant::kRowNorm, opt.caps));
  k.local_size = std::min(kNormLocalSize, opt.caps.max_workgroup_invocations);
  // Short rows: one invocation per row (no barriers); long rows: one workgroup per row.
  const bool thread_rows = r_hint < kWorkgroupRowMinR;
  k.groups = {thread_rows ? groups_for(rows, k.local_size) : rows, 1, 1};
  char eps[32];
  std::snprintf(eps, sizeof eps, "%.9e", n.op == OpKind::LayerNorm ? n.attrs.scalar : 0.0);
  const int mode = n.op == OpKind::Softmax ? 0 : n.op == OpKind::LogSoftmax ? 1 : 2;
  KILN_ASSIGN_OR_RETURN(k.glsl,
                        kernel_source("rownorm.comp", e, body,
                                      {{"KILN_LOCAL_SIZE", std::to_string(k.local_size) + "u"},
                                       {"KILN_ROWS", rows_glsl},
                                       {"KILN_R", r_glsl},
                                       {"KILN_MODE", std::to_string(mode)},
                                       {"KILN_EPS", eps},
                                       {"KILN_THREAD_ROWS", thread_rows ? "1" : "0"}},
                                      k));
  // An empty output: nothing to dispatch (at run time the executable skips empty outputs).
  if (is_const(rows, 0) || is_const(r_count, 0)) k.groups = {0, 0, 0};
  return k;
}

}  // namespace kiln
