// MaxUnpool as a gather on shaders/scatter.comp's driver: output element o starts as 0 and
// takes, in row-major order, every x element whose index is o (indices are flat positions in
// the output: MaxPool's input, whose shape output_shape gives), so the last write wins as in
// the interpreter and no atomics are needed. Every index is tested for every output element
// (O(outputs x inputs), kUnroll per loop iteration: gallivm ends an invocation's loops after
// 65535 iterations). An index outside the output matches nothing (the interpreter
// reports it). The inputs' elementwise producers fold into the loads.
#include <algorithm>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 64;
constexpr uint32_t kUnroll = 4;

}  // namespace

Expected<Kernel> max_unpool_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                   const CodegenOptions& opt, KernelVariant variant) {
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const Node& ix = g.node(n.inputs[1]);
  const DType dt = n.meta.dtype, acc = dt == DType::kF16 ? DType::kF32 : dt;
  const std::string T = glsl_compute_type(acc), IT = glsl_compute_type(ix.meta.dtype);

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  std::string body;
  // kiln_<name>(uint j): `node`'s element at flat position j, converted to `to`.
  auto function = [&](const std::string& name, const Node& node, DType to) {
    Index at = e.decompose("j", node.sym, "q", 0);
    std::string v = glsl_convert(e.value(node.id, at), node.meta.dtype, to);
    body += std::string(glsl_compute_type(to)) + " kiln_" + name + "(uint j) {\n" + e.take_body() +
            "  return " + v + ";\n}\n\n";
    e.reset_scope();
  };
  function("x", x, acc);
  function("index", ix, ix.meta.dtype);

  // Indices are flat positions in the output (MaxPool's input), so element o takes index o.
  const std::string count = e.size(sym_numel(x.sym));
  std::string el = "void kiln_element(uint o) {\n" + e.take_body() + "  " + T + " acc = " + T +
                   "(0);\n  {\n    const " + IT + " t = " + glsl_from_uint("o", ix.meta.dtype) + ";\n";
  el += "    for (uint j_base = 0u; j_base < " + count + "; j_base += " + std::to_string(kUnroll) +
        "u) {\n";
  for (uint32_t u = 0; u < kUnroll; ++u)
    el += "      {\n        const uint j = j_base + " + std::to_string(u) + "u;\n        if (j < " +
          count + " && kiln_index(j) == t) acc = kiln_x(j);\n      }\n";
  el += "    }\n  }\n";
  el += "  " + glsl_store("o", dt == DType::kF16 ? "kiln_f16(acc)" : "acc", dt) + ";\n}\n";

  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, variant, opt.caps));
  k.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  k.groups = {groups_for(sym_numel(n.sym), k.local_size), 1, 1};
  k.loop_trips = groups_for(sym_numel(x.sym), kUnroll) + SymInt(1);
  const std::string outputs = e.size(sym_numel(n.sym));
  KILN_ASSIGN_OR_RETURN(k.glsl, scatter_driver_source(e, body + el, outputs, k, opt.caps));
  return k;
}

}  // namespace kiln
