// sort_slices on shaders/scatter.comp's driver: one invocation per slice s (x viewed as
// [outer, n, inner] around the axis), which counts the slices that come before it: those that
// compare lower, element by element in row-major order (eager/interpreter_unique.cpp: NaN
// after every number and equal to NaN, -0.0 == 0.0, int64 exactly), and equal ones at lower
// positions. That count is s's place in the sorted order, so out[count] = s: every output
// element has exactly one writer. O(n * slice length) per invocation (Kernel::loop_trips: past
// gallivm's loop limit the op runs on the interpreter, with a warning). The input's
// elementwise producers fold into the loads.
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {

Expected<Kernel> unique_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt, KernelVariant variant) {
  constexpr uint32_t kLocalSize = 64;
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const auto axis = static_cast<size_t>(n.attrs.axis);
  const DType acc = ordering_type(x.meta.dtype);
  const std::string T = glsl_compute_type(acc);
  SymInt outer(1), inner(1);
  for (size_t d = 0; d < x.sym.size(); ++d) {
    if (d < axis) outer = outer * x.sym[d];
    if (d > axis) inner = inner * x.sym[d];
  }
  const SymInt len = outer * inner;

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  const std::string N = e.size(x.sym[axis]), INNER = e.size(inner), LEN = e.size(len);
  const std::string outputs = e.size(x.sym[axis]);
  std::string body = element_accessor(e, x, "kiln_x", acc);

  body += "int kiln_compare(uint t, uint s) {\n";
  body += "  for (uint k = 0u; k < " + LEN + "; ++k) {\n";
  body += "    const uint o = " + e.udiv("k", inner) + ", i = k - o * " + INNER + ";\n";
  body += "    const " + T + " a = kiln_x((o * " + N + " + t) * " + INNER + " + i);\n";
  body += "    const " + T + " b = kiln_x((o * " + N + " + s) * " + INNER + " + i);\n";
  if (is_floating(acc)) {
    body += "    const bool na = isnan(a), nb = isnan(b);\n";
    body +=
        "    if (na || nb) {\n      if (na != nb) return na ? 1 : -1;\n      continue;\n    }\n";
  }
  body += "    if (" + glsl_binary("<", "a", "b", acc) + ") return -1;\n";
  body += "    if (" + glsl_binary("<", "b", "a", acc) + ") return 1;\n  }\n  return 0;\n}\n\n";

  std::string el = "void kiln_element(uint s) {\n" + e.take_body();
  el += "  uint rank = 0u;\n";
  el += "  for (uint t = 0u; t < " + N + "; ++t) {\n";
  el += "    const int c = kiln_compare(t, s);\n";
  el += "    if (c < 0 || (c == 0 && t < s)) ++rank;\n  }\n";
  el += "  " + glsl_store("rank", glsl_from_uint("s", DType::kI64), DType::kI64) + ";\n}\n";

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, variant, opt.caps));
  kern.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {groups_for(x.sym[axis], kern.local_size), 1, 1};
  kern.loop_trips = x.sym[axis] * (len + SymInt(1)) + SymInt(1);
  KILN_ASSIGN_OR_RETURN(kern.glsl, scatter_driver_source(e, body + el, outputs, kern, opt.caps));
  return kern;
}

}  // namespace kiln
