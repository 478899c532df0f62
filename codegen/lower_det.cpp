// det on shaders/scatter.comp's driver: one invocation per matrix, which copies its M x M
// elements (in f32; M is a constant of the compile, a guard) into a private array and reduces
// it by LU with partial pivoting as the interpreter does (eager/interpreter_det.cpp: the first
// largest |pivot|, an exact zero pivot gives 0, a swap flips the sign), in f32 where the
// interpreter uses double; the pivots' product is carried as a mantissa and an exponent
// (frexp), so it over- or underflows only where the determinant does. Matrices above kMaxOrder are
// reported unimplemented (the op then runs on the interpreter with a warning): the private array
// would outgrow a GPU's registers. The input's elementwise producers fold into the loads.
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 64;
constexpr int64_t kMaxOrder = 32;

}  // namespace

Expected<Kernel> det_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                            const CodegenOptions& opt, KernelVariant variant) {
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  // The order: a constant, or a symbol the shape rule fixed with a guard to the traced value.
  const int64_t m =
      x.sym.back().is_constant() ? x.sym.back().constant_value() : x.meta.shape.back();
  if (m > kMaxOrder)
    return unimplemented("det %" + std::to_string(root) + ": matrices of order " +
                         std::to_string(m) + " (the kernel keeps at most " +
                         std::to_string(kMaxOrder) + " x " + std::to_string(kMaxOrder) +
                         " in private memory)");

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  std::string body = element_accessor(e, x, "kiln_x", DType::kF32);

  const std::string M = std::to_string(m) + "u", MM = std::to_string(std::max<int64_t>(m * m, 1));
  std::string el = "void kiln_element(uint o) {\n" + e.take_body();
  el += "  float a[" + MM + "];\n";
  el += "  for (uint j = 0u; j < " + std::to_string(m * m) + "u; ++j) a[j] = kiln_x(o * " +
        std::to_string(m * m) + "u + j);\n";
  // The product of the pivots as a mantissa in [0.5, 1) and an exponent, so that it over- or
  // underflows only if the determinant itself does, as in the interpreter's double.
  el += "  float d = 1.0;\n  int d_exp = 0;\n";
  el += "  for (uint c = 0u; c < " + M + "; ++c) {\n";
  el += "    uint p = c;\n";
  el += "    for (uint r = c + 1u; r < " + M + "; ++r)\n";
  el += "      if (abs(a[r * " + M + " + c]) > abs(a[p * " + M + " + c])) p = r;\n";
  el += "    const float piv = a[p * " + M + " + c];\n";
  el += "    if (piv == 0.0) { d = 0.0; break; }\n";
  el += "    if (p != c) {\n";
  el += "      for (uint j = c; j < " + M + "; ++j) {\n";
  el += "        const float t = a[p * " + M + " + j];\n";
  el += "        a[p * " + M + " + j] = a[c * " + M + " + j];\n";
  el += "        a[c * " + M + " + j] = t;\n      }\n";
  el += "      d = -d;\n    }\n";
  el += "    d *= piv;\n";
  el +=
      "    if (d != 0.0 && !isinf(d) && !isnan(d)) {\n      int e;\n      d = frexp(d, e);\n"
      "      d_exp += e;\n    }\n";
  el += "    for (uint r = c + 1u; r < " + M + "; ++r) {\n";
  el += "      const float f = a[r * " + M + " + c] / piv;\n";
  el += "      for (uint j = c + 1u; j < " + M + "; ++j) a[r * " + M + " + j] -= f * a[c * " + M +
        " + j];\n    }\n  }\n";
  // Past f32's range: +-inf; below its smallest denormal: +-0.
  el += "  if (d != 0.0 && !isinf(d) && !isnan(d)) {\n";
  el += "    if (d_exp > 128) d *= KILN_INF;\n";
  el += "    else if (d_exp < -149) d *= 0.0;\n";
  el += "    else d = ldexp(d, d_exp);\n  }\n";
  el += "  " + glsl_store("o", n.meta.dtype == DType::kF16 ? "kiln_f16(d)" : "d", n.meta.dtype) +
        ";\n}\n";

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, variant, opt.caps));
  kern.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {groups_for(sym_numel(n.sym), kern.local_size), 1, 1};
  kern.loop_trips = SymInt(m * m + m * m * m);  // the copy, and the elimination's nested loops
  const std::string outputs = e.size(sym_numel(n.sym));
  KILN_ASSIGN_OR_RETURN(kern.glsl, scatter_driver_source(e, body + el, outputs, kern, opt.caps));
  return kern;
}

}  // namespace kiln
