// RoiAlign on shaders/scatter.comp's driver: one invocation per output element (roi, channel,
// bin), which reads its roi and batch index, then walks the bin's sampling grid in one loop,
// doing the interpreter's float operations in its order (eager/interpreter_roi_align.cpp;
// `precise`, so nothing is contracted into an fma). A batch index outside x is clamped (the
// interpreter reports it). With sampling_ratio 0 the grid of a bin is ceil(roi size / bins),
// read from the data: Kernel::loop_trips counts the grid of a roi that lies inside the image
// (scaled by spatial_scale), which is what bounds a kernel against gallivm's loop limit. The
// inputs' elementwise producers fold into the loads.
#include <algorithm>
#include <bit>
#include <cstdio>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 64;

/// An exact float constant.
std::string float_bits(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "uintBitsToFloat(0x%08xu)", std::bit_cast<uint32_t>(v));
  return buf;
}

}  // namespace

Expected<Kernel> roi_align_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                  const CodegenOptions& opt, KernelVariant variant) {
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const Node& rois = g.node(n.inputs[1]);
  const Node& batch = g.node(n.inputs[2]);
  const Attrs& a = n.attrs;
  const bool max_mode = a.index == 1, half_pixel = a.axis == 0;
  const int64_t oh = a.dims[0], ow = a.dims[1], ratio = a.dims[2];
  const DType dt = n.meta.dtype;

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
  function("x", x, DType::kF32);
  function("roi", rois, DType::kF32);
  function("batch", batch, DType::kI32);

  const std::string images = e.size(x.sym[0]), channels = e.size(x.sym[1]),
                    height = e.size(x.sym[2]), width = e.size(x.sym[3]);
  const std::string scale = float_bits(static_cast<float>(a.scalar));
  const std::string offset = float_bits(half_pixel ? 0.5f : 0.0f);
  std::string el = "void kiln_element(uint o) {\n" + e.take_body();
  el += "  const uint pw = o % " + std::to_string(ow) + "u;\n";
  el += "  const uint ph = (o / " + std::to_string(ow) + "u) % " + std::to_string(oh) + "u;\n";
  const std::string cell = "(o / " + std::to_string(oh * ow) + "u)";
  el += "  const uint c = " + e.umod(cell, x.sym[1]) + ";\n";
  el += "  const uint r = " + e.udiv(cell, x.sym[1]) + ";\n";
  el += "  const uint b = uint(clamp(kiln_batch(r), 0, max(int(" + images + ") - 1, 0)));\n";
  el += "  const int H = int(" + height + "), W = int(" + width + ");\n";
  el += "  const uint plane = (b * " + channels + " + c) * " + height + " * " + width + ";\n";
  el += "  precise float start_w = kiln_roi(r * 4u) * " + scale + " - " + offset + ";\n";
  el += "  precise float start_h = kiln_roi(r * 4u + 1u) * " + scale + " - " + offset + ";\n";
  el += "  precise float end_w = kiln_roi(r * 4u + 2u) * " + scale + " - " + offset + ";\n";
  el += "  precise float end_h = kiln_roi(r * 4u + 3u) * " + scale + " - " + offset + ";\n";
  el += "  precise float roi_w = end_w - start_w;\n  precise float roi_h = end_h - start_h;\n";
  if (!half_pixel)
    el += "  roi_w = roi_w < 1.0 ? 1.0 : roi_w;\n  roi_h = roi_h < 1.0 ? 1.0 : roi_h;\n";
  el += "  precise float bin_h = roi_h / float(" + std::to_string(oh) + ");\n";
  el += "  precise float bin_w = roi_w / float(" + std::to_string(ow) + ");\n";
  if (ratio > 0) {
    el += "  const uint grid_h = " + std::to_string(ratio) + "u, grid_w = grid_h;\n";
  } else {  // the interpreter's grid(): none for a NaN or huge roi
    el += "  precise float gh = ceil(roi_h / float(" + std::to_string(oh) + "));\n";
    el += "  precise float gw = ceil(roi_w / float(" + std::to_string(ow) + "));\n";
    el += "  const uint grid_h = gh >= 1.0 && gh < 1e9 ? uint(gh) : 0u;\n";
    el += "  const uint grid_w = gw >= 1.0 && gw < 1e9 ? uint(gw) : 0u;\n";
  }
  el += "  const uint samples = grid_h * grid_w;\n";
  el += "  precise float count = float(max(samples, 1u));\n";
  el += "  precise float acc = 0.0;\n";
  el += "  for (uint s = 0u; s < samples; ++s) {\n";
  el += "    const uint iy = s / grid_w, ix = s % grid_w;\n";
  el +=
      "    precise float y = start_h + float(ph) * bin_h + (float(iy) + 0.5) * bin_h / "
      "float(grid_h);\n";
  el +=
      "    precise float xx = start_w + float(pw) * bin_w + (float(ix) + 0.5) * bin_w / "
      "float(grid_w);\n";
  el += "    precise float v = 0.0;\n";
  el += "    if (H > 0 && W > 0 && !(y < -1.0 || y > float(H) || xx < -1.0 || xx > float(W))) {\n";
  el += "      y = y < 0.0 ? 0.0 : y;\n      xx = xx < 0.0 ? 0.0 : xx;\n";
  el += "      int y_lo = int(y), x_lo = int(xx), y_hi = y_lo + 1, x_hi = x_lo + 1;\n";
  el += "      if (y_lo >= H - 1) { y_lo = H - 1; y_hi = y_lo; y = float(y_lo); }\n";
  el += "      if (x_lo >= W - 1) { x_lo = W - 1; x_hi = x_lo; xx = float(x_lo); }\n";
  el += "      precise float ly = y - float(y_lo), lx = xx - float(x_lo);\n";
  el += "      precise float hy = 1.0 - ly, hx = 1.0 - lx;\n";
  el += "      precise float v1 = hy * hx * kiln_x(plane + uint(y_lo * W + x_lo));\n";
  el += "      precise float v2 = hy * lx * kiln_x(plane + uint(y_lo * W + x_hi));\n";
  el += "      precise float v3 = ly * hx * kiln_x(plane + uint(y_hi * W + x_lo));\n";
  el += "      precise float v4 = ly * lx * kiln_x(plane + uint(y_hi * W + x_hi));\n";
  if (max_mode)  // std::max(a, b): a < b ? b : a
    el += "      v = v1 < v2 ? v2 : v1;\n      v = v < v3 ? v3 : v;\n      v = v < v4 ? v4 : v;\n";
  else
    el += "      v = v1 + v2 + v3 + v4;\n";
  el += "    }\n";
  el += max_mode ? "    if (s == 0u || v > acc) acc = v;\n" : "    acc += v;\n";
  el += "  }\n";
  const std::string result = max_mode ? "acc" : "acc / count";
  el += "  precise float result = " + result + ";\n";
  el += "  " + glsl_store("o", dt == DType::kF16 ? "kiln_f16(result)" : "result", dt) + ";\n}\n";

  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, variant, opt.caps));
  k.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  k.groups = {groups_for(sym_numel(n.sym), k.local_size), 1, 1};
  // The sampling grid of a bin: fixed, or (adaptive) that of a roi inside the image.
  const SymInt grid_h = ratio > 0 ? SymInt(ratio) : sym_floordiv(x.sym[2] + SymInt(oh), SymInt(oh));
  const SymInt grid_w = ratio > 0 ? SymInt(ratio) : sym_floordiv(x.sym[3] + SymInt(ow), SymInt(ow));
  k.loop_trips = grid_h * grid_w + SymInt(1);
  const std::string outputs = e.size(sym_numel(n.sym));
  KILN_ASSIGN_OR_RETURN(k.glsl, scatter_driver_source(e, body + el, outputs, k, opt.caps));
  return k;
}

}  // namespace kiln
