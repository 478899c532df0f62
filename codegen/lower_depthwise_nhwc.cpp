// depthwise_nhwc (graph/ops.def: the conv lowering's depthwise conv over a product read as
// NHWC, codegen/conv_lowering.cpp) on shaders/scatter.comp's driver: an invocation per output
// position and group of 4 channels, loading each tap's 4 channels as one vec4 (an rgba32f
// texel where the device has them) and storing one vec4; its weights and bias as scalars (r32f
// texels). Neighbouring invocations read neighbouring channels, where the window kernel over
// the product's NCHW view (lower_window.cpp) gathered one element per tap through the view's
// index arithmetic, each lane's position 2·C floats from the next.
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 64;
/// A few hundred workgroups, each invocation looping over several outputs (as im2col: lavapipe
/// pays a fixed cost per workgroup).
constexpr int64_t kMaxGroups = 256;
/// Outputs along x per invocation.
constexpr int64_t kStrip = 4;

}  // namespace

Expected<Kernel> depthwise_nhwc_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                       const CodegenOptions& opt, KernelVariant variant) {
  return depthwise_nhwc_epilogue_kernel(g, fusion, root, opt, variant, -1);
}

Expected<Kernel> depthwise_nhwc_epilogue_kernel(const Graph& g, const FusionDecision& fusion,
                                                NodeId root, const CodegenOptions& opt,
                                                KernelVariant variant, NodeId exit) {
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const Attrs::Window& w = n.attrs.window;
  const int64_t channels = x.sym[3].constant_value();
  if (channels % 4 != 0 || channels == 0)
    return unimplemented("depthwise_nhwc: " + std::to_string(channels) +
                         " channels, not a multiple of 4");
  const int64_t c4 = channels / 4;
  const bool bias = n.inputs.size() == 3;
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  auto i = [](int64_t v) { return std::to_string(v); };

  Emitter e(g, fusion, true);
  if (opt.caps.texel_rgba32f)
    e.set_texel_loads(opt.caps.max_texel_elements, opt.caps.texels_cover_storage);
  use_scalar_texels(e, opt.caps);
  // With an epilogue (kWindowEpilogue) the kernel stores its exit, a [N·OH·OW, C] matrix of the
  // output's row-major order, computed from the sums through the reshape that reads them.
  const NodeId stored = exit >= 0 ? exit : root;
  NodeId view = -1;
  if (exit >= 0) {
    for (const Node& c : g.nodes())
      for (NodeId in : c.inputs)
        if (in == root) view = c.id;
    if (view < 0 || g.node(view).op != OpKind::Reshape)
      return internal_error("depthwise_nhwc: an epilogue not read through a reshape");
  }
  e.set_root(stored);
  e.bind_output(stored);
  // kiln_x(n, y, x, c): channels c..c+3 of the input at (n, y, x).
  const std::string v = e.value(x.id, Index{{"n", 0}, {"y", 0}, {"x", 0}, {"c", 1}});
  if (e.failed()) return unimplemented("depthwise_nhwc: the input does not load as vec4s");
  std::string code = "vec4 kiln_x(uint n, uint y, uint x, uint c) {\n" + e.take_body() +
                     "  return " + v + ";\n}\n\n";
  // kiln_w(c, ky, kx): channel c's weight at the tap (a scalar load, broadcast in vec4 mode).
  e.reset_scope();
  const std::string wv = e.value(n.inputs[1], Index{{"c", 0}, {"0u", 0}, {"ky", 0}, {"kx", 0}});
  code += "float kiln_w(uint c, uint ky, uint kx) {\n" + e.take_body() + "  return (" + wv +
          ").x;\n}\n\n";
  if (bias) {
    e.reset_scope();
    const std::string bv = e.value(n.inputs[2], Index{{"c", 0}});
    code += "float kiln_b(uint c) {\n" + e.take_body() + "  return (" + bv + ").x;\n}\n\n";
  }
  if (e.failed()) return unimplemented("depthwise_nhwc: the weight does not load as scalars");
  e.reset_scope();
  e.store_output_vec4();
  const std::string in_h = e.size(x.sym[1]), in_w = e.size(x.sym[2]), out_w = e.size(n.sym[2]);
  // A strip of kStrip outputs along x per invocation: a tap's 4 weights are loaded once for
  // the strip, and each input row's span once for every tap and output that reads it.
  const int64_t sx = w.strides[1], dx = w.dilations[1], kw = w.kernel[1];
  const int64_t span = (kStrip - 1) * sx + (kw - 1) * dx + 1;
  const SymInt strips = groups_for(n.sym[2], kStrip);
  code += "void kiln_element(uint o) {\n";
  code += "  const uint c = " + e.umod("o", SymInt(c4)) + " * 4u, s = " + e.udiv("o", SymInt(c4)) +
          ";\n";
  code += "  const uint ox0 = " + e.umod("s", strips) + " * " + u(kStrip) +
          ", oy = " + e.umod(e.udiv("s", strips), n.sym[1]) +
          ", img = " + e.udiv("s", n.sym[1] * strips) + ";\n";
  code += "  const int y0 = int(oy * " + u(w.strides[0]) + ") - " + i(w.pads[0]) +
          ", x0 = int(ox0 * " + u(sx) + ") - " + i(w.pads[1]) + ";\n";
  code += "  const int ih = int(" + in_h + "), iw = int(" + in_w + ");\n";
  // The bias, then the taps inside the input in row-major order (the interpreter's order):
  // a tap in the padding leaves the sum as it is.
  code += bias ? "  const vec4 b = vec4(kiln_b(c), kiln_b(c + 1u), kiln_b(c + 2u), "
                 "kiln_b(c + 3u));\n"
               : "  const vec4 b = vec4(0.0);\n";
  for (int64_t r = 0; r < kStrip; ++r) code += "  vec4 acc" + i(r) + " = b;\n";
  code += "  for (int ky = 0; ky < " + i(w.kernel[0]) + "; ++ky) {\n";
  code += "    const int iy = y0 + ky * " + i(w.dilations[0]) + ";\n";
  code += "    if (iy < 0 || iy >= ih) continue;\n";
  for (int64_t j = 0; j < span; ++j) {
    const std::string js = i(j);
    code += "    const bool ok" + js + " = x0 + " + js + " >= 0 && x0 + " + js + " < iw;\n";
    code += "    const vec4 xv" + js + " = kiln_x(img, uint(iy), uint(clamp(x0 + " + js +
            ", 0, iw - 1)), c);\n";
  }
  for (int64_t kx = 0; kx < kw; ++kx) {
    const std::string t = "uint(ky), " + u(kx);
    code += "    {\n      const vec4 wt = vec4(kiln_w(c, " + t + "), kiln_w(c + 1u, " + t +
            "), kiln_w(c + 2u, " + t + "), kiln_w(c + 3u, " + t + "));\n";
    for (int64_t r = 0; r < kStrip; ++r) {
      const std::string j = i(r * sx + kx * dx), a = "acc" + i(r);
      code += "      " + a + " = ok" + j + " ? " + a + " + wt * xv" + j + " : " + a + ";\n";
    }
    code += "    }\n";
  }
  code += "  }\n";
  code += "  const uint base = ((img * " + e.size(n.sym[1]) + " + oy) * " + out_w + " + ox0) * " +
          u(c4) + " + c / 4u;\n";
  for (int64_t r = 0; r < kStrip; ++r) {
    std::string value = "acc" + i(r);
    if (exit >= 0) {  // the epilogue at row base / C4 + r of the matrix
      e.reset_scope();
      e.clear_overrides();
      e.set_override(view, value);
      value = e.value(exit, Index{{"(base / " + u(c4) + " + " + u(r) + ")", 0}, {"c", 1}});
      if (e.failed()) return unimplemented("depthwise_nhwc: an epilogue that is not vec4");
    }
    code += "  if (ox0 + " + u(r) + " < " + out_w + ") {\n" + e.take_body() + "    b0v.data[base + " +
            u(r * c4) + "] = " + value + ";\n  }\n";
  }
  code += "}\n";
  const SymInt items = n.sym[0] * n.sym[1] * strips * SymInt(c4);
  const std::string outputs = e.size(items);

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, g.node(stored), variant, opt.caps));
  if (exit >= 0) {  // named depthwise_nhwc_<exit op>; the sums and their view are fused too
    kern.fused_nodes.push_back(view);
    mark_epilogue(kern, n, g.node(exit));
  }
  kern.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {sym_min(groups_for(items, kern.local_size), SymInt(kMaxGroups)), 1, 1};
  kern.texel_bindings = e.texel_bindings();
  kern.loop_trips =
      sym_floordiv(items, SymInt(kMaxGroups * static_cast<int64_t>(kern.local_size))) +
      SymInt(2 + w.kernel[0] * (span + w.kernel[1]));
  KILN_ASSIGN_OR_RETURN(kern.glsl, scatter_driver_source(e, code, outputs, kern, opt.caps));
  return kern;
}

}  // namespace kiln
