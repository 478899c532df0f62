// im2col on shaders/scatter.comp's driver: an invocation per row (output position,
// grid-stride), which decomposes its position (n, oy, ox) once, steps through the taps (c, ky,
// kx), loads the input there, or 0 in the padding, and stores vec4s of 4 taps (a row is a
// multiple of 4 long, zeros after the last tap: graph/ops.def). The input's elementwise
// producers and views (a permuted product, a bias add, an activation) fold into the load.
// Batch and spatial sizes may be symbolic; channels and the window are constants.
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"
#include "graph/window_size.h"

namespace kiln {

Expected<Kernel> im2col_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt, KernelVariant variant) {
  constexpr uint32_t kLocalSize = 64;
  // A few hundred workgroups, each invocation looping over many vec4s (the driver's grid-stride
  // loop): lavapipe pays a fixed cost per workgroup that a vec4 each would not cover (measured:
  // 2-3x slower on a 3x3 conv's 1.8M elements).
  constexpr int64_t kMaxGroups = 256;
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const Attrs::Window& w = n.attrs.window;
  const SymInt positions = n.sym[0];
  const int64_t row = n.sym[1].constant_value();  // the taps, then zeros to a multiple of 4
  const int64_t channels = x.sym[1].constant_value();
  const int64_t kh = w.kernel[0], kw = w.kernel[1];
  if (channels < 1) return unimplemented("im2col: no input channels");
  if (row != im2col_row_length(channels * kh * kw))
    return internal_error("im2col: a row of " + std::to_string(row) + " for " +
                          std::to_string(channels * kh * kw) + " taps");
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  auto i = [](int64_t v) { return std::to_string(v); };

  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(root);
  e.bind_output(root);
  // kiln_x(n, c, y, x): the input element, in float.
  const std::string v = glsl_convert(
      e.value(x.id, Index{{"n", -1}, {"c", -1}, {"y", -1}, {"x", -1}}), x.meta.dtype, DType::kF32);
  std::string body = "float kiln_x(uint n, uint c, uint y, uint x) {\n" + e.take_body() +
                     "  return " + v + ";\n}\n\n";
  e.reset_scope();
  // The output's spatial sizes as the conv's rule writes them (graph/window_size.h).
  const SymInt out_hw[2] = {window_output_sym(x.sym[2], w, 0), window_output_sym(x.sym[3], w, 1)};
  const std::string in_h = e.size(x.sym[2]), in_w = e.size(x.sym[3]);
  std::string el;
  {
    // Row p whole: its position is decomposed once, then the taps run in order with (c, ky,
    // kx) stepped by compares, not divided out of t (a symbolic size makes every division a
    // scalar one per lane on a CPU driver). Past the last tap c reaches the channel count: the
    // row's zero padding.
    el = "void kiln_element(uint p) {\n";
    el += "  const uint img = " + e.udiv("p", out_hw[0] * out_hw[1]) +
          ", oy = " + e.umod(e.udiv("p", out_hw[1]), out_hw[0]) +
          ", ox = " + e.umod("p", out_hw[1]) + ";\n";
    el += "  const int y0 = int(oy * " + u(w.strides[0]) + ") - " + i(w.pads[0]) +
          ", x0 = int(ox * " + u(w.strides[1]) + ") - " + i(w.pads[1]) + ";\n";
    el += "  const int ih = int(" + in_h + "), iw = int(" + in_w + ");\n";
    el += "  uint c = 0u, ky = 0u, kx = 0u;\n";
    el += "  for (uint q = 0u; q < " + u(row / 4) + "; ++q) {\n";
    el += "    vec4 r;\n";
    for (int l = 0; l < 4; ++l) {
      const std::string ls = std::to_string(l);
      el += "    { const int iy = y0 + int(ky * " + u(w.dilations[0]) + "), ix = x0 + int(kx * " +
            u(w.dilations[1]) + ");\n";
      el += "      const float v = kiln_x(img, min(c, " + u(channels - 1) +
            "), uint(clamp(iy, 0, ih - 1)), uint(clamp(ix, 0, iw - 1)));\n";
      el += "      r[" + ls + "] = (c < " + u(channels) +
            " && iy >= 0 && iy < ih && ix >= 0 && ix < iw) ? v : 0.0;\n";
      el += "      ++kx; if (kx == " + u(kw) + ") { kx = 0u; ++ky; } if (ky == " + u(kh) +
            ") { ky = 0u; ++c; } }\n";
    }
    el += "    b0v.data[p * " + u(row / 4) + " + q] = r;\n  }\n}\n";
  }
  e.store_output_vec4();
  // The driver's items: the matrix's rows.
  const SymInt groups4 = positions;
  const std::string outputs = e.size(groups4);

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, variant, opt.caps));
  kern.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  const SymInt groups = sym_min(groups_for(groups4, kern.local_size), SymInt(kMaxGroups));
  kern.groups = {groups, 1, 1};
  kern.loop_trips =
      sym_floordiv(groups4, SymInt(kMaxGroups * static_cast<int64_t>(kern.local_size))) +
      SymInt(2 + row / 4);
  KILN_ASSIGN_OR_RETURN(kern.glsl, scatter_driver_source(e, body + el, outputs, kern, opt.caps));
  return kern;
}

}  // namespace kiln
