// nms_select on shaders/nms.comp: one workgroup per (batch, class) row; see the shader for the
// steps. The candidates of a row are the ranks whose box has a score that is a number (above
// the threshold when one applies); each step keeps the lowest candidate rank, as the
// interpreter's greedy loop does (eager/interpreter_nms.cpp), with the same f32 overlap test
// (`precise`: no fused multiply-add, no division), so both keep the same boxes on every device.
// The row length N is a constant of the compile (a guard), which sizes each invocation's
// private bits; the steps are at most min(max boxes, N), each ceil(N / local size) checks long
// (Kernel::loop_trips: past gallivm's loop limit the op runs on the interpreter, with a
// warning). The inputs' elementwise producers fold into the loads.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 256;

/// An f32 literal with the exact bits of `v` rounded to float.
std::string float_bits(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "uintBitsToFloat(0x%08xu)",
                std::bit_cast<uint32_t>(static_cast<float>(v)));
  return buf;
}

/// `name(uint j)`: input `id`'s element at flat position j (in x's compute type `type`).
std::string accessor(Emitter& e, const Node& in, const std::string& name, DType to,
                     const std::string& type) {
  Index at = e.decompose("j", in.sym, "q", 0);
  std::string v = glsl_convert(e.value(in.id, at), in.meta.dtype, to);
  std::string s = type + " " + name + "(uint j) {\n" + e.take_body() + "  return " + v + ";\n}\n\n";
  e.reset_scope();
  return s;
}

}  // namespace

Expected<Kernel> nms_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                            const CodegenOptions& opt, KernelVariant variant) {
  const Node& n = g.node(root);
  const Node& boxes = g.node(n.inputs[0]);
  const Node& scores = g.node(n.inputs[1]);
  const Node& order = g.node(n.inputs[2]);
  if (!n.sym[2].is_constant() || !n.sym[1].is_constant())
    return unimplemented("nms_select %" + std::to_string(root) + ": symbolic box or class counts");
  const int64_t boxes_n = n.sym[2].constant_value(), classes = n.sym[1].constant_value();
  const uint32_t local = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  const int64_t per = std::max<int64_t>((boxes_n + local - 1) / local, 1);
  const int64_t words = (per + 31) / 32;
  const int64_t max_out = std::min(n.attrs.dims[0], boxes_n);
  const bool center = n.attrs.index == 1, scored = n.attrs.axis == 1;

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  const SymInt rows = n.sym[0] * SymInt(classes);
  const std::string rows_size = e.size(rows);
  std::string body = accessor(e, boxes, "kiln_box", DType::kF32, "float");
  body += accessor(e, scores, "kiln_score", DType::kF32, "float");
  body += accessor(e, order, "kiln_order", DType::kI32, "int");
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
  const std::string iou = float_bits(n.attrs.range[0]);
  body += "bool kiln_overlaps(vec4 a, vec4 b) {\n";
  body += "  precise float ih = min(a.z, b.z) - max(a.x, b.x);\n";
  body += "  precise float iw = min(a.w, b.w) - max(a.y, b.y);\n";
  body += "  precise float area_a = (a.z - a.x) * (a.w - a.y);\n";
  body += "  precise float area_b = (b.z - b.x) * (b.w - b.y);\n";
  body += "  if (!(ih > 0.0) || !(iw > 0.0) || !(area_a > 0.0) || !(area_b > 0.0)) return false;\n";
  body += "  precise float inter = ih * iw;\n";
  body += "  precise float uni = area_a + area_b - inter;\n";
  body += "  precise float limit = " + iou + " * uni;\n";
  body += "  return inter > limit;\n}\n\n";

  const std::string N = std::to_string(boxes_n) + "u", L = std::to_string(local) + "u",
                    PER = std::to_string(per) + "u", W = std::to_string(words) + "u";
  std::string el = "void kiln_row(uint row) {\n";
  el += "  const uint lid = gl_LocalInvocationID.x;\n";
  el += "  const uint b = row / " + std::to_string(classes) + "u;\n";
  el += "  uint live[" + std::to_string(words) + "];\n";
  el += "  for (uint w = 0u; w < " + W + "; ++w) live[w] = 0u;\n";
  el += "  uint first = " + N + ";\n";
  el += "  for (uint j = 0u; j < " + PER + "; ++j) {\n";
  el += "    const uint r = lid + j * " + L + ";\n";
  el += "    if (r >= " + N + ") break;\n";
  el += "    const uint i = uint(kiln_order(row * " + N + " + r));\n";
  el += "    if (i >= " + N + ") continue;\n";
  el += "    const float s = kiln_score(row * " + N + " + i);\n";
  el += "    if (isnan(s)" +
        (scored ? " || !(s > " + float_bits(n.attrs.range[1]) + ")" : std::string()) +
        ") continue;\n";
  el += "    live[j >> 5u] |= 1u << (j & 31u);\n";
  el += "    first = min(first, r);\n  }\n";
  el += "  if (lid == 0u) kiln_next = " + N + ";\n";
  el += "  barrier();\n  atomicMin(kiln_next, first);\n  barrier();\n";
  el += "  uint kept = 0u;\n";
  el += "  for (;;) {\n";
  el += "    const uint r = kiln_next;\n";
  el += "    if (r >= " + N + " || kept >= " + std::to_string(max_out) + "u) break;\n";
  el += "    barrier();\n";
  el += "    const uint i = uint(kiln_order(row * " + N + " + r));\n";
  el += "    if (lid == 0u) {\n      kiln_next = " + N + ";\n      " +
        glsl_store("row * " + N + " + kept", glsl_from_uint("i", DType::kI64), DType::kI64) +
        ";\n    }\n";
  el += "    if (lid == r % " + L + ") live[(r / " + L + ") >> 5u] &= ~(1u << ((r / " + L +
        ") & 31u));\n";
  el += "    barrier();\n";
  el += "    const vec4 c = kiln_corners(b * " + N + " + i);\n";
  el += "    uint next = " + N + ";\n";
  el += "    for (uint j = r / " + L + "; j < " + PER + "; ++j) {\n";
  el += "      if ((live[j >> 5u] & (1u << (j & 31u))) == 0u) continue;\n";
  el += "      const uint r2 = lid + j * " + L + ";\n";
  el += "      const uint i2 = uint(kiln_order(row * " + N + " + r2));\n";
  el += "      if (kiln_overlaps(c, kiln_corners(b * " + N + " + i2)))\n";
  el += "        live[j >> 5u] &= ~(1u << (j & 31u));\n";
  el += "      else\n        next = min(next, r2);\n    }\n";
  el += "    atomicMin(kiln_next, next);\n";
  el += "    ++kept;\n    barrier();\n  }\n";
  el += "  for (uint k = kept + lid; k < " + N + "; k += " + L + ") " +
        glsl_store("row * " + N + " + k", glsl_int_literal(-1, DType::kI64), DType::kI64) + ";\n";
  el += "  barrier();\n}\n";

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, variant, opt.caps));
  kern.local_size = local;
  kern.groups = {rows, SymInt(1), SymInt(1)};
  // The marks and the fill, then each step's checks.
  kern.loop_trips = SymInt(words + 2 * per + (max_out + 1) * (per + 1));
  KILN_ASSIGN_OR_RETURN(
      kern.glsl, kernel_source("nms.comp", e, e.declarations() + "\n" + body + el,
                               {{"KILN_LOCAL_SIZE", L}, {"KILN_ROWS", rows_size}}, kern, opt.caps));
  return kern;
}

}  // namespace kiln
