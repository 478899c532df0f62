// Max pools over a [N, 1, H, W, C] tensor with a window of 1 along C (the conv lowering's pool
// over a product read as NHWC, codegen/conv_lowering.cpp) on shaders/scatter.comp's driver: an
// invocation per output position and group of 4 channels, loading each tap's 4 channels as one
// vec4 (an rgba32f texel where the device has them) and storing one vec4. Neighbouring
// invocations read neighbouring channels. The generic window kernel (lower_window.cpp) loads
// one element per tap.
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 64;
/// A few hundred workgroups, each invocation looping over several outputs (as im2col: lavapipe
/// pays a fixed cost per workgroup).
constexpr int64_t kMaxGroups = 256;

}  // namespace

bool pool_channels_applies(const Graph& g, const Node& n) {
  if (n.op != OpKind::MaxPool || n.meta.dtype != DType::kF32 || n.sym.size() != 5) return false;
  const Node& x = g.node(n.inputs[0]);
  const Attrs::Window& w = n.attrs.window;
  if (x.meta.dtype != DType::kF32 || !is_const(x.sym[1], 1) || w.kernel.size() != 3 ||
      w.pads.size() != 6)
    return false;
  const SymInt& c = x.sym[4];
  return c.is_constant() && c.constant_value() % 4 == 0 && c.constant_value() > 0 &&
         n.sym[4] == c && w.kernel[2] == 1 && w.strides[2] == 1 && w.dilations[2] == 1 &&
         w.pads[2] == 0 && w.pads[5] == 0;
}

Expected<Kernel> pool_channels_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                      const CodegenOptions& opt) {
  const Node& n = g.node(root);
  if (!pool_channels_applies(g, n)) return internal_error("pool_channels: not a channels pool");
  const Node& x = g.node(n.inputs[0]);
  const Attrs::Window& w = n.attrs.window;
  const int64_t c4 = x.sym[4].constant_value() / 4;
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  auto i = [](int64_t v) { return std::to_string(v); };

  Emitter e(g, fusion, true);
  if (opt.caps.texel_rgba32f)
    e.set_texel_loads(opt.caps.max_texel_elements, opt.caps.texels_cover_storage);
  e.set_root(root);
  e.bind_output(root);
  // kiln_x(n, y, x, c): channels c..c+3 of the input at (n, y, x).
  const std::string v = e.value(x.id, Index{{"n", 0}, {"0u", 0}, {"y", 0}, {"x", 0}, {"c", 1}});
  if (e.failed()) return unimplemented("pool_channels: the input does not load as vec4s");
  std::string code = "vec4 kiln_x(uint n, uint y, uint x, uint c) {\n" + e.take_body() +
                     "  return " + v + ";\n}\n\n";
  e.reset_scope();
  e.store_output_vec4();
  const std::string in_h = e.size(x.sym[2]), in_w = e.size(x.sym[3]);
  code += "void kiln_element(uint o) {\n";
  code += "  const uint c = " + e.umod("o", SymInt(c4)) + " * 4u, p = " + e.udiv("o", SymInt(c4)) +
          ";\n";
  code += "  const uint ox = " + e.umod("p", n.sym[3]) +
          ", oy = " + e.umod(e.udiv("p", n.sym[3]), n.sym[2]) +
          ", img = " + e.udiv("p", n.sym[2] * n.sym[3]) + ";\n";
  code += "  const int y0 = int(oy * " + u(w.strides[0]) + ") - " + i(w.pads[0]) +
          ", x0 = int(ox * " + u(w.strides[1]) + ") - " + i(w.pads[1]) + ";\n";
  code += "  const int ih = int(" + in_h + "), iw = int(" + in_w + ");\n";
  code += "  vec4 acc = vec4(-uintBitsToFloat(0x7f800000u));\n";
  // Taps in the padding, or past the input under ceil_mode, are skipped; a window with none
  // inside the input stays -inf, as on the interpreter. A tap replaces the maximum as in the
  // window kernel (KILN_TAKE): when it is greater or NaN, never once the maximum is NaN, so
  // ties keep the first tap (+0 before -0 stays +0).
  code += "  for (int ky = 0; ky < " + i(w.kernel[0]) + "; ++ky) {\n";
  code += "    const int iy = y0 + ky * " + i(w.dilations[0]) + ";\n";
  code += "    if (iy < 0 || iy >= ih) continue;\n";
  code += "    for (int kx = 0; kx < " + i(w.kernel[1]) + "; ++kx) {\n";
  code += "      const int ix = x0 + kx * " + i(w.dilations[1]) + ";\n";
  code += "      if (ix < 0 || ix >= iw) continue;\n";
  code += "      const vec4 v = kiln_x(img, uint(iy), uint(ix), c);\n";
  code +=
      "      acc = mix(acc, v, kiln_and(not(isnan(acc)), kiln_or(isnan(v), "
      "greaterThan(v, acc))));\n";
  code += "    }\n  }\n";
  code += "  b0v.data[o] = acc;\n}\n";
  const SymInt items = n.sym[0] * n.sym[2] * n.sym[3] * SymInt(c4);
  const std::string outputs = e.size(items);

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, KernelVariant::kWindow, opt.caps));
  kern.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {sym_min(groups_for(items, kern.local_size), SymInt(kMaxGroups)), 1, 1};
  kern.texel_bindings = e.texel_bindings();
  kern.loop_trips =
      sym_floordiv(items, SymInt(kMaxGroups * static_cast<int64_t>(kern.local_size))) +
      SymInt(2 + w.kernel[0] * (1 + w.kernel[1]));
  KILN_ASSIGN_OR_RETURN(kern.glsl, scatter_driver_source(e, code, outputs, kern, opt.caps));
  return kern;
}

}  // namespace kiln
