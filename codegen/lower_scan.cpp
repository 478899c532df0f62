// CumSum on shaders/scan.comp: a linear-work scan. The lines along the axis go to teams of
// invocations (one per line for short lines, up to a workgroup of 256 for long ones, more past
// the loop limit); a team walks its line in chunks, each invocation scanning KILN_PER
// consecutive positions in registers, a shared-memory Hillis-Steele scan joining the
// invocations, and a running carry joining the chunks. The input's elementwise producers fold
// into the load; exclusive and reverse only change which partial sum is stored and the order
// in which positions are walked. The per-invocation and scan steps are written out here: the
// chunk loop is the kernel's only loop that grows with its sizes (Kernel::loop_trips).
#include <algorithm>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kPer = 8;            // consecutive positions per invocation and chunk
constexpr uint32_t kMaxTeam = 256;      // invocations per line, unless the loop limit needs more
constexpr uint32_t kMinLocal = 64;      // invocations per workgroup: short lines share one
constexpr uint32_t kSymbolicTeam = 32;  // a symbolic line may grow: at least this many
constexpr int64_t kMaxChunks = 8192;    // chunks per line before teams grow (loop limit)

/// Invocations per line: enough for the line at the hints in one chunk, up to kMaxTeam, more
/// while a line would take more than kMaxChunks chunks (the loop limit), within the device's
/// workgroup size and shared memory (two buffers of `acc_bytes` per invocation). A power of two.
uint32_t team_size(int64_t len_hint, bool symbolic_len, uint32_t acc_bytes,
                   const TargetCaps& caps) {
  uint32_t most = 1;
  while (2 * most <= std::min<uint32_t>(1024, caps.max_workgroup_invocations) &&
         2ull * 2 * most * acc_bytes <= caps.max_shared_memory)
    most *= 2;
  uint32_t team = 1;
  while (team < kMaxTeam && static_cast<int64_t>(team) * kPer < len_hint) team *= 2;
  if (symbolic_len) team = std::max(team, kSymbolicTeam);
  while (team < 1024 && (len_hint + team * kPer - 1) / (team * kPer) > kMaxChunks) team *= 2;
  return std::min(team, most);
}

/// The written-out steps of scan.comp (one line each: they are macro values).
struct ScanSteps {
  std::string load, local_scan, team_scan, store;
};

ScanSteps scan_steps(uint32_t team, bool exclusive, DType acc) {
  ScanSteps s;
  auto add = [acc](const std::string& a, const std::string& b) {
    return glsl_binary("+", a, b, acc);  // (int64 pairs: a function)
  };
  for (uint32_t j = 0; j < kPer; ++j) {
    const std::string J = std::to_string(j), p = "q" + J, x = "x" + J, e = "e" + J;
    s.load += "const uint " + p + " = c0 + " + J + "u; ACC_T " + x + " = ACC_T(0); if (live && " +
              p + " < len) " + x + " = kiln_load(line, kiln_axis_index(" + p + ")); ";
    s.local_scan += exclusive ? "const ACC_T " + e + " = s; s = " + add("s", x) + "; "
                              : "s = " + add("s", x) + "; const ACC_T " + e + " = s; ";
    s.store += "if (live && " + p + " < len) kiln_store(line, kiln_axis_index(" + p + "), " +
               add("base", e) + "); ";
  }
  // Hillis-Steele over the team, inclusive: v holds this invocation's running value; each
  // step adds the value `off` places before it from the buffer the previous step wrote.
  int in = 0;
  s.team_scan = "ACC_T v = s; ";
  for (uint32_t off = 1; off < team; off *= 2) {
    const std::string o = std::to_string(off) + "u", b = std::to_string(in),
                      b2 = std::to_string(1 - in);
    s.team_scan += "if (t >= " + o + ") v = " + add("v", "s_scan[" + b + "][lid - " + o + "]") +
                   "; s_scan[" + b2 + "][lid] = v; barrier(); ";
    in = 1 - in;
  }
  const std::string f = std::to_string(in);
  s.team_scan += "const ACC_T before = t > 0u ? s_scan[" + f +
                 "][max(lid, 1u) - 1u] : ACC_T(0); const ACC_T total = s_scan[" + f + "][first + " +
                 std::to_string(team - 1) + "u]; ";
  // The next chunk writes buffer 0 first: when the scan ended there, wait for every read.
  if (in == 0) s.team_scan += "barrier(); ";
  return s;
}

}  // namespace

Expected<Kernel> cumsum_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& src = g.node(n.inputs[0]);
  const auto rank = static_cast<int64_t>(n.sym.size());
  const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis;
  if (axis < 0 || axis >= rank) return invalid_argument("cumsum: axis out of range");
  const bool exclusive = (n.attrs.index & kCumSumExclusive) != 0;
  const bool reverse = (n.attrs.index & kCumSumReverse) != 0;
  // The sum's type: float for f16 (rounded once, at the store), i64 for bools (the output's).
  const DType acc = n.meta.dtype == DType::kF16 ? DType::kF32 : n.meta.dtype;
  const std::string acc_t = glsl_compute_type(acc);
  const uint32_t acc_bytes = acc == DType::kI64 ? 8 : 4;

  SymShape kept;  // every dim but the axis: the lines
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) continue;
    kept.push_back(n.sym[static_cast<size_t>(d)]);
  }
  const SymInt lines = sym_numel(kept), len = n.sym[static_cast<size_t>(axis)];
  const int64_t len_hint = n.meta.shape[static_cast<size_t>(axis)];

  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(root);
  e.bind_output(root);
  // Element r of line `line` as a full index (input and output have the same shape).
  auto element_index = [&](Emitter& em) {
    Index k = em.decompose("line", kept, "o", 0);
    Index idx;
    for (int64_t d = 0, a = 0; d < rank; ++d)
      idx.push_back(d == axis ? IndexExpr{"r", 0} : k[static_cast<size_t>(a++)]);
    return idx;
  };
  const std::string loaded =
      glsl_convert(e.value(n.inputs[0], element_index(e)), src.meta.dtype, acc);
  const std::string load_body = e.take_body();
  e.reset_scope();
  const std::string out = e.linear_index(n.sym, element_index(e));
  const std::string store_body = e.take_body();
  const std::string lines_glsl = e.size(lines), len_glsl = e.size(len);
  const std::string body = e.declarations() + "\n" + acc_t + " kiln_load(uint line, uint r) {\n" +
                           load_body + "  return " + loaded +
                           ";\n}\n\nvoid kiln_store(uint line, uint r, " + acc_t + " v) {\n" +
                           store_body + "  " + glsl_store(out, "v", n.meta.dtype) + ";\n}\n";

  const uint32_t team = team_size(len_hint, !len.is_constant(), acc_bytes, opt.caps);
  const uint32_t local = std::max(team, std::min(kMinLocal, opt.caps.max_workgroup_invocations));
  const ScanSteps steps = scan_steps(team, exclusive, acc);
  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, KernelVariant::kScan, opt.caps));
  k.local_size = local;
  k.groups = {groups_for(lines, local / team), 1, 1};
  k.loop_trips = groups_for(len, team * kPer);  // the chunks
  KILN_ASSIGN_OR_RETURN(k.glsl, kernel_source("scan.comp", e, body,
                                              {{"KILN_LOCAL_SIZE", std::to_string(local) + "u"},
                                               {"KILN_TEAM", std::to_string(team) + "u"},
                                               {"KILN_SHARED_SCAN", team > 1 ? "1" : "0"},
                                               {"KILN_PER", std::to_string(kPer) + "u"},
                                               {"KILN_LINES", lines_glsl},
                                               {"KILN_LEN", len_glsl},
                                               {"KILN_REVERSE", reverse ? "1" : "0"},
                                               {"ACC_T", acc_t},
                                               {"KILN_ADD(a, b)", glsl_binary("+", "(a)", "(b)", acc)},
                                               {"KILN_LOAD_STEP", steps.load},
                                               {"KILN_LOCAL_SCAN", steps.local_scan},
                                               {"KILN_TEAM_SCAN", steps.team_scan},
                                               {"KILN_STORE_STEP", steps.store}},
                                              k, opt.caps));
  if (is_const(lines, 0) || is_const(len, 0)) k.groups = {0, 0, 0};
  return k;
}

}  // namespace kiln
