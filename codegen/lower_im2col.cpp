// im2col on shaders/scatter.comp's driver: an invocation per 4 consecutive output elements
// (grid-stride), which finds each one's position (n, oy, ox) and tap (c, ky, kx) and loads the
// input there, or 0 in the padding, and stores the 4 as a vec4. The matrix's rows are a
// multiple of 4 long in both layouts (the lowering's condition). The input's elementwise producers
// and views (a permuted product, a bias add, an activation) fold into the load.
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {

Expected<Kernel> im2col_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt, KernelVariant variant) {
  constexpr uint32_t kLocalSize = 64;
  constexpr int64_t kMaxGroups = 256;
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const Attrs::Window& w = n.attrs.window;
  const bool rows = n.attrs.index == 0;
  const Shape& xs = x.meta.shape;
  const int64_t kh = w.kernel[0], kw = w.kernel[1];
  const int64_t oh =
      window_output_size(xs[2], kh, w.strides[0], w.pads[0], w.pads[2], w.dilations[0], false);
  const int64_t ow =
      window_output_size(xs[3], kw, w.strides[1], w.pads[1], w.pads[3], w.dilations[1], false);
  const int64_t positions = xs[0] * oh * ow, taps = xs[1] * kh * kw;
  if ((rows ? taps : positions) % 4 != 0)
    return unimplemented("im2col: rows of " + std::to_string(rows ? taps : positions) +
                         " elements, not a multiple of 4");
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  auto i = [](int64_t v) { return std::to_string(v); };

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  // kiln_x(n, c, y, x): the input element, in float.
  const std::string v = glsl_convert(
      e.value(x.id, Index{{"n", -1}, {"c", -1}, {"y", -1}, {"x", -1}}), x.meta.dtype, DType::kF32);
  std::string body = "float kiln_x(uint n, uint c, uint y, uint x) {\n" + e.take_body() +
                     "  return " + v + ";\n}\n\n";
  e.reset_scope();
  // kiln_tap(p, t): element (position p, tap t) of the matrix.
  std::string el = "float kiln_tap(uint p, uint t) {\n";
  el += "  const uint img = p / " + u(oh * ow) + ", oy = p / " + u(ow) + " % " + u(oh) +
        ", ox = p % " + u(ow) + ";\n";
  el += "  const uint c = t / " + u(kh * kw) + ", ky = t / " + u(kw) + " % " + u(kh) +
        ", kx = t % " + u(kw) + ";\n";
  el += "  const int iy = int(oy * " + u(w.strides[0]) + " + ky * " + u(w.dilations[0]) + ") - " +
        i(w.pads[0]) + ";\n";
  el += "  const int ix = int(ox * " + u(w.strides[1]) + " + kx * " + u(w.dilations[1]) + ") - " +
        i(w.pads[1]) + ";\n";
  el += "  const bool inside = iy >= 0 && iy < " + i(xs[2]) + " && ix >= 0 && ix < " + i(xs[3]) +
        ";\n";
  // The load at a clamped position, then the select: no branch around the load (lavapipe
  // runs a conditional load under a lane mask, several times slower).
  el += "  const float v = kiln_x(img, c, uint(clamp(iy, 0, " + i(xs[2] - 1) +
        ")), uint(clamp(ix, 0, " + i(xs[3] - 1) + ")));\n";
  el += "  return inside ? v : 0.0;\n}\n\n";
  // Element group o: the 4 elements from 4 o on, along the matrix's rows (taps for the rows
  // layout, positions for the columns layout; both a multiple of 4 long), stored as one vec4.
  el += "void kiln_element(uint o) {\n";
  if (rows) {
    el += "  const uint p = o / " + u(taps / 4) + ", t = o % " + u(taps / 4) + " * 4u;\n";
    el +=
        "  b0v.data[o] = vec4(kiln_tap(p, t), kiln_tap(p, t + 1u), kiln_tap(p, t + 2u), "
        "kiln_tap(p, t + 3u));\n}\n";
  } else {
    el += "  const uint t = o / " + u(positions / 4) + ", p = o % " + u(positions / 4) + " * 4u;\n";
    el +=
        "  b0v.data[o] = vec4(kiln_tap(p, t), kiln_tap(p + 1u, t), kiln_tap(p + 2u, t), "
        "kiln_tap(p + 3u, t));\n}\n";
  }
  e.store_output_vec4();

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, variant, opt.caps));
  kern.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  const int64_t outputs = positions * taps / 4;  // vec4 groups
  // A few hundred workgroups, each invocation looping over many elements (the driver's
  // grid-stride loop): lavapipe pays a fixed cost per workgroup that one element each would
  // not cover (measured: 10x slower on a 3x3 conv's 1.8M elements).
  const int64_t groups =
      std::clamp<int64_t>((outputs + kern.local_size - 1) / kern.local_size, 1, kMaxGroups);
  kern.groups = {SymInt(groups), 1, 1};
  kern.loop_trips = SymInt(outputs / (groups * kern.local_size) + 2);
  KILN_ASSIGN_OR_RETURN(kern.glsl,
                        kernel_source("scatter.comp", e, e.declarations() + "\n" + body + el,
                                      {{"KILN_LOCAL_SIZE", std::to_string(kern.local_size) + "u"},
                                       {"KILN_OUTPUTS", u(outputs)}},
                                      kern, opt.caps));
  return kern;
}

}  // namespace kiln
