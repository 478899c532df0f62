// nms_select on shaders/nms.comp: one workgroup per (batch, class) row; see the shader for the
// steps. The candidates of a row are the ranks whose box has a score that is a number (above
// the threshold when one applies); each step keeps the lowest candidate rank, as the
// interpreter's greedy loop does (eager/interpreter_nms.cpp), with the same f32 overlap test
// (`precise`: no fused multiply-add, no division), so both keep the same boxes on every device.
// The row's candidates live in its own output elements until the last step (each read back
// only by the invocation that owns it), so any size works, a data-dependent N included. The
// steps are at most min(max boxes, N), each ceil(N / local size) checks long (Kernel::
// loop_trips: past gallivm's loop limit the op runs on the interpreter, with a warning). The
// inputs' elementwise producers fold into the loads.
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 256;

}  // namespace

Expected<Kernel> nms_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                            const CodegenOptions& opt, KernelVariant variant) {
  const Node& n = g.node(root);
  const Node& boxes = g.node(n.inputs[0]);
  const Node& scores = g.node(n.inputs[1]);
  const Node& order = g.node(n.inputs[2]);
  const uint32_t local = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  const int64_t max_out = std::min<int64_t>(n.attrs.dims[0], 0x7fffffff);
  const bool center = n.attrs.index == 1, scored = n.attrs.axis == 1;
  const SymInt boxes_n = n.sym[2], rows = n.sym[0] * n.sym[1];

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  const std::string N = e.size(boxes_n), C = e.size(n.sym[1]), rows_size = e.size(rows);
  std::string body = element_accessor(e, boxes, "kiln_box", DType::kF32);
  body += element_accessor(e, scores, "kiln_score", DType::kF32);
  body += element_accessor(e, order, "kiln_order", DType::kI32);
  // y1, x1, y2, x2 of box k (of the batch's boxes), y1 <= y2 and x1 <= x2.
  body += "vec4 kiln_corners(uint k) {\n";
  body +=
      "  const float p0 = kiln_box(4u * k), p1 = kiln_box(4u * k + 1u), "
      "p2 = kiln_box(4u * k + 2u), p3 = kiln_box(4u * k + 3u);\n";
  if (center) {
    body += "  precise float hw = p2 * 0.5, hh = p3 * 0.5;\n";
    body += "  precise vec4 c = vec4(p1 - hh, p0 - hw, p1 + hh, p0 + hw);\n  return c;\n}\n\n";
  } else {
    body += "  return vec4(min(p0, p2), min(p1, p3), max(p0, p2), max(p1, p3));\n}\n\n";
  }
  body += "bool kiln_overlaps(vec4 a, vec4 b) {\n";
  body += "  precise float ih = min(a.z, b.z) - max(a.x, b.x);\n";
  body += "  precise float iw = min(a.w, b.w) - max(a.y, b.y);\n";
  body += "  precise float area_a = (a.z - a.x) * (a.w - a.y);\n";
  body += "  precise float area_b = (b.z - b.x) * (b.w - b.y);\n";
  body += "  if (!(ih > 0.0) || !(iw > 0.0) || !(area_a > 0.0) || !(area_b > 0.0)) return false;\n";
  body += "  precise float inter = ih * iw;\n";
  body += "  precise float uni = area_a + area_b - inter;\n";
  body += "  precise float limit = " + glsl_literal(n.attrs.range[0], DType::kF32) + " * uni;\n";
  body += "  return inter > limit;\n}\n\n";
  // The row's state, in its own output elements: position p holds the box of rank p while that
  // is a candidate, else -1 (written and read back only by p's owner, invocation p % local size).
  const auto store = [](const std::string& at, const std::string& v) {
    return glsl_store(at, v, DType::kI64) + ";\n";
  };
  const std::string minus_one = glsl_int_literal(-1, DType::kI64);
  body += "int kiln_state(uint p) { return " +
          glsl_convert("b0.data[p]", DType::kI64, DType::kI32) + "; }\n\n";

  const std::string L = std::to_string(local) + "u";
  std::string el = "void kiln_row(uint row) {\n";
  el += "  const uint n = " + N + ", lid = gl_LocalInvocationID.x;\n";
  el += "  const uint b = row / " + C + ", base = row * n;\n";
  el += "  uint first = n;\n";
  el += "  for (uint r = lid; r < n; r += " + L + ") {\n";
  el += "    const uint i = uint(kiln_order(base + r));\n";
  el += "    bool live = i < n;\n";
  el += "    if (live) {\n      const float s = kiln_score(base + i);\n";
  el += "      live = !isnan(s)" +
        (scored ? " && s > " + glsl_literal(n.attrs.range[1], DType::kF32) : std::string()) +
        ";\n    }\n";
  el +=
      "    " + store("base + r", "live ? " + glsl_from_uint("i", DType::kI64) + " : " + minus_one);
  el += "    if (live) first = min(first, r);\n  }\n";
  el += "  if (lid == 0u) kiln_next = n;\n";
  el += "  barrier();\n  atomicMin(kiln_next, first);\n  barrier();\n";
  el += "  uint kept = 0u;\n";
  el += "  for (;;) {\n";
  el += "    const uint r = kiln_next;\n";
  el += "    if (r >= n || kept >= " + std::to_string(max_out) + "u) break;\n";
  el += "    barrier();\n";
  el += "    const uint i = uint(kiln_order(base + r));\n";
  el += "    if (lid == 0u) kiln_next = n;\n";
  // The kept box goes to element `kept` by that element's owner, so that every output element
  // is written by one invocation only (no write order between invocations to rely on).
  el +=
      "    if (lid == kept % " + L + ") " + store("base + kept", glsl_from_uint("i", DType::kI64));
  el += "    barrier();\n";
  el += "    const vec4 c = kiln_corners(b * n + i);\n";
  el += "    uint next = n;\n";
  el += "    for (uint p = r + 1u + (lid + " + L + " - (r + 1u) % " + L + ") % " + L +
        "; p < n; p += " + L + ") {\n";
  el += "      const int box = kiln_state(base + p);\n";
  el += "      if (box < 0) continue;\n";
  el += "      if (kiln_overlaps(c, kiln_corners(b * n + uint(box))))\n";
  el += "        " + store("base + p", minus_one);
  el += "      else\n        next = min(next, p);\n    }\n";
  el += "    atomicMin(kiln_next, next);\n";
  el += "    ++kept;\n    barrier();\n  }\n";
  el += "  for (uint k = kept + (lid + " + L + " - kept % " + L + ") % " + L +
        "; k < n; k += " + L + ") " + store("base + k", minus_one);
  el += "  barrier();\n}\n";

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, variant, opt.caps));
  kern.local_size = local;
  kern.groups = {rows, SymInt(1), SymInt(1)};
  // The marks and the fill, then up to min(max boxes, N) steps of one pass over the row each.
  const SymInt per = sym_floordiv(boxes_n + SymInt(local - 1), SymInt(local));
  const SymInt steps = sym_min(SymInt(max_out), boxes_n);
  kern.loop_trips = SymInt(2) * per + (steps + SymInt(1)) * (per + SymInt(1));
  KILN_ASSIGN_OR_RETURN(
      kern.glsl, kernel_source("nms.comp", e, e.declarations() + "\n" + body + el,
                               {{"KILN_LOCAL_SIZE", L}, {"KILN_ROWS", rows_size}}, kern, opt.caps));
  return kern;
}

}  // namespace kiln
