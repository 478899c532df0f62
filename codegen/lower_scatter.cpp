// ScatterElements and ScatterND as one gather kernel each (shaders/scatter.comp): output
// element o starts from data and loops over the updates that could land on it, in row-major
// order: for ScatterElements the indices along the axis at o's other coordinates, for
// ScatterND every index tuple (O(outputs x tuples): meant for the small index sets models
// scatter with). The inputs' elementwise producers fold into the loads.
#include <algorithm>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kScatterLocalSize = 64;
// Updates tested per loop iteration (written out): an element may scan every update, and
// gallivm ends an invocation's loops after 65535 iterations (TargetCaps::loop_limit).
constexpr uint32_t kUnroll = 4;

/// `body` for every value of `var` below `count`, kUnroll per loop iteration, in order.
std::string unrolled_loop(const std::string& var, const std::string& count,
                          const std::string& body) {
  const std::string base = var + "_base";
  std::string s = "  for (uint " + base + " = 0u; " + base + " < " + count + "; " + base +
                  " += " + std::to_string(kUnroll) + "u) {\n";
  for (uint32_t u = 0; u < kUnroll; ++u)
    s += "   {\n    const uint " + var + " = " + base + " + " + std::to_string(u) + "u;\n    if (" +
         var + " < " + count + ") {\n" + body + "    }\n   }\n";
  return s + "  }\n";
}

/// "c0, c1, ..." of an index.
std::string args(const Index& idx) {
  std::string s;
  for (const IndexExpr& e : idx) s += (s.empty() ? "" : ", ") + e.expr;
  return s;
}

/// "uint p0, uint p1, ..." for `n` parameters.
std::string params(const std::string& prefix, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? ", uint " : "uint ") + prefix + std::to_string(i);
  return s;
}

Index param_index(const std::string& prefix, size_t n) {
  Index idx;
  for (size_t i = 0; i < n; ++i) idx.push_back({prefix + std::to_string(i), -1});
  return idx;
}

}  // namespace

Expected<Kernel> scatter_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& data = g.node(n.inputs[0]);
  const Node& ix = g.node(n.inputs[1]);
  const Node& upd = g.node(n.inputs[2]);
  const DType dt = n.meta.dtype, acc = dt == DType::kF16 ? DType::kF32 : dt;
  const std::string T = glsl_compute_type(acc), IT = glsl_compute_type(ix.meta.dtype);
  const size_t r = n.sym.size(), q = ix.sym.size();

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  std::string body;
  // kiln_<name>(uint p0, ...): `node` at the parameters, converted to `to`.
  auto function = [&](const std::string& name, const Node& node, DType to) {
    const size_t rank = node.sym.size();
    std::string v = glsl_convert(e.value(node.id, param_index("p", rank)), node.meta.dtype, to);
    body += std::string(glsl_compute_type(to)) + " kiln_" + name + "(" + params("p", rank) +
            ") {\n" + e.take_body() + "  return " + v + ";\n}\n\n";
    e.reset_scope();
  };
  function("data", data, acc);
  function("update", upd, acc);
  function("index", ix, ix.meta.dtype);

  std::string combine = "u";
  if (n.attrs.index == kScatterAdd) combine = glsl_binary("+", "acc", "u", acc);
  if (n.attrs.index == kScatterMul) combine = glsl_binary("*", "acc", "u", acc);
  // An index of data dim `d` wrapped if negative; `hit` tests it against coordinate `c`.
  auto wrapped = [&](const std::string& w, const std::string& raw, const SymInt& size) {
    const DType it = ix.meta.dtype;
    return "    " + IT + " " + w + " = " + raw + ";\n    if (" +
           glsl_binary("<", w, glsl_int_literal(0, it), it) + ") " + w + " = " +
           glsl_binary("+", w, glsl_from_uint(e.size(size), it), it) + ";\n";
  };

  Index c = e.decompose("o", n.sym, "c", 0);
  std::string el = "void kiln_element(uint o) {\n" + e.take_body();
  el += "  " + T + " acc = kiln_data(" + args(c) + ");\n";
  if (n.op == OpKind::ScatterElements) {
    const auto axis = static_cast<size_t>(n.attrs.axis);
    std::string inside = "true";
    for (size_t d = 0; d < r; ++d)
      if (d != axis && !(ix.sym[d] == n.sym[d]))
        inside += " && " + c[d].expr + " < " + e.size(ix.sym[d]);
    Index at = c;
    at[axis] = {"j", -1};
    std::string step = wrapped("w", "kiln_index(" + args(at) + ")", n.sym[axis]);
    step += "    if (w == " + glsl_from_uint(c[axis].expr, ix.meta.dtype) + ") {\n      const " + T +
            " u = kiln_update(" + args(at) + ");\n      acc = " + combine + ";\n    }\n";
    el += "  if (" + inside + ") {\n" + unrolled_loop("j", e.size(ix.sym[axis]), step) + "  }\n";
  } else {
    const auto m = static_cast<size_t>(ix.meta.shape.back());
    const SymShape outer(ix.sym.begin(), ix.sym.end() - 1);
    const std::string tuples = e.size(sym_numel(outer));
    Index t = e.decompose("t", outer, "t", 0);
    std::string split = e.take_body();
    std::string step = split + "    bool hit = true;\n";
    for (size_t k = 0; k < m; ++k) {
      Index at = t;
      at.push_back({std::to_string(k) + "u", -1});
      const std::string w = "w" + std::to_string(k);
      step += wrapped(w, "kiln_index(" + args(at) + ")", n.sym[k]);
      step += "    hit = hit && " + w + " == " + glsl_from_uint(c[k].expr, ix.meta.dtype) + ";\n";
    }
    Index at = t;
    for (size_t d = m; d < r; ++d) at.push_back(c[d]);
    step += "    if (hit) {\n      const " + T + " u = kiln_update(" + args(at) +
            ");\n      acc = " + combine + ";\n    }\n";
    el += unrolled_loop("t", tuples, step);
    (void)q;
  }
  const std::string store = glsl_store("o", dt == DType::kF16 ? "kiln_f16(acc)" : "acc", dt);
  el += "  " + store + ";\n}\n";

  const std::string outputs = e.size(sym_numel(n.sym));
  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, KernelVariant::kScatter, opt.caps));
  k.local_size = std::min(kScatterLocalSize, opt.caps.max_workgroup_invocations);
  k.groups = {groups_for(sym_numel(n.sym), k.local_size), 1, 1};
  // Every update along the element's line, or every index tuple, kUnroll per iteration.
  const SymInt updates = n.op == OpKind::ScatterElements
                             ? ix.sym[static_cast<size_t>(n.attrs.axis)]
                             : sym_numel(SymShape(ix.sym.begin(), ix.sym.end() - 1));
  k.loop_trips = groups_for(updates, kUnroll) + SymInt(1);
  KILN_ASSIGN_OR_RETURN(k.glsl, scatter_driver_source(e, body + el, outputs, k, opt.caps));
  return k;
}

}  // namespace kiln
