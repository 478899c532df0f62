// Softmax, LogSoftmax and LayerNorm as single kernels: one workgroup per normalised row, the
// input's elementwise producers folded into its load, layer_norm's scale and shift into its
// store (shaders/rownorm.comp). A LayerNorm spelled out as ops (FusionRule::kLayerNorm) runs on
// the same kernel, computing the graph's own expressions for the square, the variance plus eps
// and the normalisation, and its elementwise chain (scale, shift) in the store.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kNormLocalSize = 64;
constexpr int64_t kWorkgroupRowMinR = 256;  // rows shorter than this: one invocation per row

/// What differs between the row norms: the node stored, the node loaded, which of its dims are
/// normalised, the mode, and how the store's value and the layer_norm macros are written.
struct RowNormSpec {
  NodeId out = -1, src = -1;
  std::vector<bool> normalised;
  int mode = 0;  // 0 softmax, 1 log_softmax, 2 layer_norm
  // The stored value from the normalised value `v` (statements go to the emitter's body).
  std::function<std::string(Emitter&, const Index& full, const Index& reduced)> store_value;
  // layer_norm: GLSL functions defined in the body, and the three macros.
  std::function<std::string(Emitter&)> helpers;
  std::map<std::string, std::string> macros;
};

Expected<Kernel> row_norm_kernel(const Graph& g, const FusionDecision& fusion,
                                 const RowNormSpec& spec, const CodegenOptions& opt) {
  const Node& n = g.node(spec.out);
  const Node& src = g.node(spec.src);
  const SymShape& shape = src.sym;
  SymShape kept, reduced;
  int64_t r_hint = 1;  // the row length at the hints: variant choice only
  for (size_t d = 0; d < shape.size(); ++d) {
    (spec.normalised[d] ? reduced : kept).push_back(shape[d]);
    if (spec.normalised[d]) r_hint *= src.meta.shape[d];
  }
  const SymInt rows = sym_numel(kept), r_count = sym_numel(reduced);

  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(spec.out);
  e.bind_output(spec.out);
  // The element (row, r) as a full index of the input (and output: same shape).
  auto element_index = [&](Emitter& em) {
    Index ko = em.decompose("row", kept, "o", 0);
    Index kr = em.decompose("r", reduced, "q", 0);
    Index idx(shape.size());
    for (size_t d = 0, a = 0, b = 0; d < idx.size(); ++d)
      idx[d] = spec.normalised[d] ? kr[b++] : ko[a++];
    return std::make_pair(idx, kr);
  };
  auto [load_idx, load_r] = element_index(e);
  std::string loaded = glsl_convert(e.value(spec.src, load_idx), src.meta.dtype, DType::kF32);
  std::string load_body = e.take_body();
  e.reset_scope();
  std::string helpers = spec.helpers ? spec.helpers(e) : std::string();
  auto [store_idx, store_r] = element_index(e);
  std::string v = spec.store_value(e, store_idx, store_r);
  std::string out = e.linear_index(n.sym, store_idx);
  e.add_statement(glsl_store(out, v, n.meta.dtype) + ";");
  std::string store_body = e.take_body();
  const std::string rows_glsl = e.size(rows), r_glsl = e.size(r_count);
  std::string body = e.declarations() + "\n" + helpers + "float kiln_load(uint row, uint r) {\n" +
                     load_body + "  return " + loaded +
                     ";\n}\n\nvoid kiln_store(uint row, uint r, float v) {\n" + store_body + "}\n";

  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, KernelVariant::kRowNorm, opt.caps));
  // Short rows: one invocation per row (no barriers); long rows: one workgroup per row, of
  // more invocations for very long rows (each loops over its share three times; loop limit).
  const bool thread_rows = r_hint < kWorkgroupRowMinR;
  k.local_size = thread_rows ? std::min(kNormLocalSize, opt.caps.max_workgroup_invocations)
                             : line_workgroup_size(r_hint, kNormLocalSize, 3, 4, opt.caps);
  k.groups = {thread_rows ? groups_for(rows, k.local_size) : rows, 1, 1};
  k.loop_trips = thread_rows ? SymInt(3) * r_count
                             : SymInt(3) * groups_for(r_count, k.local_size) +
                                   SymInt(2 * (log2_u32(k.local_size) + 1));
  std::map<std::string, std::string> macros = spec.macros;
  macros["KILN_LOCAL_SIZE"] = std::to_string(k.local_size) + "u";
  macros["KILN_ROWS"] = rows_glsl;
  macros["KILN_R"] = r_glsl;
  macros["KILN_MODE"] = std::to_string(spec.mode);
  macros["KILN_THREAD_ROWS"] = thread_rows ? "1" : "0";
  KILN_ASSIGN_OR_RETURN(k.glsl, kernel_source("rownorm.comp", e, body, macros, k, opt.caps));
  // An empty output: nothing to dispatch (at run time the executable skips empty outputs).
  if (is_const(rows, 0) || is_const(r_count, 0)) k.groups = {0, 0, 0};
  return k;
}

/// A GLSL function `float name(params) { ...; return value; }` of the emitter's current body.
std::string function(Emitter& e, const std::string& name, const std::string& params,
                     const std::string& value) {
  std::string body = e.take_body();
  e.reset_scope();
  return "float " + name + "(" + params + ") {\n" + body + "  return " + value + ";\n}\n\n";
}

/// An index of `node` at element 0 of every dim (for single-element operands and values whose
/// index no longer matters once their inputs are overridden).
Index zero_index(const Node& node) {
  return Index(node.sym.size(), IndexExpr{"0u", 0});
}

}  // namespace

Expected<Kernel> norm_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                             const CodegenOptions& opt) {
  const Node& n = g.node(root);
  RowNormSpec spec;
  spec.out = root;
  spec.src = n.inputs[0];
  const int rank = static_cast<int>(g.node(spec.src).sym.size());
  // Which dims are normalised: one axis (softmax) or the trailing k (layer_norm).
  spec.normalised.assign(static_cast<size_t>(rank), false);
  if (n.op == OpKind::LayerNorm) {
    for (int d = rank - static_cast<int>(n.attrs.index); d < rank; ++d) spec.normalised[d] = true;
  } else {
    const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis;
    spec.normalised[static_cast<size_t>(axis)] = true;
  }
  spec.mode = n.op == OpKind::Softmax ? 0 : n.op == OpKind::LogSoftmax ? 1 : 2;
  char eps[32];
  std::snprintf(eps, sizeof eps, "%.9e", n.op == OpKind::LayerNorm ? n.attrs.scalar : 0.0);
  spec.macros = {{"KILN_SQUARE(d)", "((d) * (d))"},
                 {"KILN_SHIFT(v)", "((v) + " + std::string(eps) + ")"},
                 {"KILN_NORMALIZE(d, t)", "((d) * inversesqrt(t))"}};
  spec.store_value = [&g, &n](Emitter& e, const Index&, const Index& store_r) -> std::string {
    if (n.op != OpKind::LayerNorm) return "v";
    const Node& w = g.node(n.inputs[1]);
    const Node& b = g.node(n.inputs[2]);
    std::string wv = glsl_convert(e.value(w.id, store_r), w.meta.dtype, DType::kF32);
    std::string bv = glsl_convert(e.value(b.id, store_r), b.meta.dtype, DType::kF32);
    return "(v * " + wv + " + " + bv + ")";
  };
  return row_norm_kernel(g, fusion, spec, opt);
}

Expected<Kernel> layer_norm_pattern_kernel(const Graph& g, const FusionDecision& fusion,
                                           NodeId root, const CodegenOptions& opt) {
  const LayerNormMatch& m = fusion.layer_norms.at(fusion.layer_norm_of[root]);
  RowNormSpec spec;
  spec.out = root;
  spec.src = m.x;
  const size_t rank = g.node(m.x).sym.size();
  spec.normalised.assign(rank, false);
  for (size_t d = rank - static_cast<size_t>(m.dims); d < rank; ++d) spec.normalised[d] = true;
  spec.mode = 2;
  spec.helpers = [&g, &m](Emitter& e) {
    auto at_zero = [&g, &e](NodeId id) { return e.value(id, zero_index(g.node(id))); };
    e.set_override(m.centred, "d");
    std::string f = function(e, "kiln_square", "float d", at_zero(m.square));
    e.clear_overrides();
    e.set_override(m.var, "v");
    f += function(e, "kiln_shift", "float v", at_zero(m.shifted));
    e.clear_overrides();
    e.set_override(m.shifted, "t");
    f += function(e, "kiln_denom", "float t", at_zero(m.denom));
    e.clear_overrides();
    e.set_override(m.centred, "d");
    e.set_override(m.denom, "kiln_denom(t)");
    f += function(e, "kiln_normalize", "float d, float t", at_zero(m.normed));
    e.clear_overrides();
    return f;
  };
  spec.macros = {{"KILN_SQUARE(d)", "kiln_square(d)"},
                 {"KILN_SHIFT(v)", "kiln_shift(v)"},
                 {"KILN_NORMALIZE(d, t)", "kiln_normalize(d, t)"}};
  spec.store_value = [&m](Emitter& e, const Index& full, const Index&) {
    e.set_override(m.normed, "v");
    std::string v = e.value(m.root, full);
    e.clear_overrides();
    return v;
  };
  KILN_ASSIGN_OR_RETURN(Kernel k, row_norm_kernel(g, fusion, spec, opt));
  // The pattern's nodes are computed by this kernel, though the emitter never reached them.
  for (NodeId id : {m.mean, m.centred, m.square, m.var, m.shifted, m.denom, m.normed})
    if (std::find(k.fused_nodes.begin(), k.fused_nodes.end(), id) == k.fused_nodes.end())
      k.fused_nodes.push_back(id);
  std::sort(k.fused_nodes.begin(), k.fused_nodes.end());
  k.name = "layer_norm";
  return k;
}

}  // namespace kiln
