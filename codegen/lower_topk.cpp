// topk_indices on shaders/scatter.comp's driver: one invocation per INPUT element (row r,
// position i), which counts the elements of its row that come before it in TopK's order
// (eager/host_ops.h: x[m] beats x[i] when it is larger, or smaller for smallest, or equal with
// m < i; NaN beats every number for largest and loses to every number for smallest, two NaNs
// by position). That rank is i's place in the sorted row, so an invocation whose rank is below
// k stores i at out[r * k + rank]: the ranks of a row are a permutation, and every output
// element has exactly one writer. O(N) per invocation, one loop of N trips (Kernel::loop_trips:
// a row longer than gallivm's loop limit is reported unimplemented, and the op then runs on the
// interpreter). The input's elementwise producers fold into the loads.
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {

Expected<Kernel> topk_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                             const CodegenOptions& opt, KernelVariant variant) {
  constexpr uint32_t kLocalSize = 64;
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const int64_t k = n.attrs.dims[0];
  const bool largest = n.attrs.index == 1;
  const DType acc = ordering_type(x.meta.dtype);
  const std::string T = glsl_compute_type(acc);

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  std::string body = element_accessor(e, x, "kiln_x", acc);

  // Whether w (at position m) comes before v (at position i) in the row's order.
  const std::string ahead = glsl_binary(largest ? ">" : "<", "w", "v", acc);
  const std::string equal = glsl_binary("==", "w", "v", acc);
  std::string beats = ahead + " || (" + equal + " && m < i)";
  if (is_floating(acc))
    beats = largest ? "nw ? (!nv || m < i) : (!nv && (" + beats + "))"
                    : "nw ? (nv && m < i) : (nv || " + beats + ")";

  // k = -1: the whole row (its length may be symbolic).
  const std::string row = e.size(x.sym.back()),
                    kk = k == -1 ? "(" + row + ")" : std::to_string(k) + "u";
  std::string el = "void kiln_element(uint o) {\n" + e.take_body();
  el += "  const uint n = " + row + ";\n  const uint i = " + e.umod("o", x.sym.back()) +
        ", base = o - i;\n";
  el += "  const " + T + " v = kiln_x(o);\n";
  if (is_floating(acc)) el += "  const bool nv = isnan(v);\n";
  el += "  uint rank = 0u;\n  for (uint m = 0u; m < n; ++m) {\n";
  el += "    const " + T + " w = kiln_x(base + m);\n";
  if (is_floating(acc)) el += "    const bool nw = isnan(w);\n";
  el += "    if (" + beats + ") ++rank;\n  }\n";
  el += "  if (rank < " + kk + ") " +
        glsl_store(e.udiv("o", x.sym.back()) + " * " + kk + " + rank",
                   glsl_from_uint("i", DType::kI64), DType::kI64) +
        ";\n}\n";

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, variant, opt.caps));
  kern.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {groups_for(sym_numel(x.sym), kern.local_size), 1, 1};
  kern.loop_trips = x.sym.back() + SymInt(1);  // the row, and the driver's loop
  const std::string outputs = e.size(sym_numel(x.sym));
  KILN_ASSIGN_OR_RETURN(kern.glsl, scatter_driver_source(e, body + el, outputs, kern, opt.caps));
  return kern;
}

}  // namespace kiln
