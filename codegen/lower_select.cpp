// MaskedSelect and NonZero on shaders/select.comp: one workgroup compacts the data's selected
// elements (nonzero: their coordinates) in row-major order (a shared-memory scan per chunk, no
// atomics), then writes the count after the largest possible result (masked_select_count_offset),
// where the runtime reads it (exec/replay.cpp). The data's and the mask's elementwise producers
// fold into the loads.
#include <algorithm>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kSelectLocalSize = 256;
constexpr uint32_t kPerInvocation = 4;

}  // namespace

Expected<Kernel> select_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& data = g.node(n.inputs[0]);
  const bool coordinates = n.op == OpKind::NonZero;  // else MaskedSelect(data, mask)
  const DType dt = n.meta.dtype;
  const size_t rank = data.sym.size();
  // The runtime learns the length after the run, so nothing in the graph may read the result
  // (the trace starts a new graph for such reads).
  const std::vector<int> uses = g.use_counts();
  const auto outputs = std::count(g.outputs().begin(), g.outputs().end(), root);
  if (uses[static_cast<size_t>(root)] > outputs)
    return unimplemented(std::string(op_name(n.op)) + " %" + std::to_string(root) +
                         ": its result is read inside its graph");
  // Wider workgroups for long inputs: fewer chunks, the chunk loop being the only loop.
  const SymInt numel = sym_numel(data.sym);
  int64_t hint = 1;
  for (int64_t d : data.meta.shape) hint *= d;
  const uint32_t local = line_workgroup_size((hint + kPerInvocation - 1) / kPerInvocation,
                                             kSelectLocalSize, 1, 4, opt.caps);

  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  std::string body;
  // kiln_mask: the mask's value, or (nonzero) the data's converted to bool as cast does.
  const Node& mask = g.node(n.inputs[coordinates ? 0 : 1]);
  Index mi = e.decompose("i", mask.sym, "c", 0);
  std::string m = e.value(mask.id, mi);
  if (coordinates) m = glsl_convert(m, mask.meta.dtype, DType::kBool);
  body += "bool kiln_mask(uint i) {\n" + e.take_body() + "  return " + m + ";\n}\n\n";
  e.reset_scope();
  Index di = e.decompose("i", data.sym, "c", 0);
  std::string store;
  if (coordinates) {  // row p: element i's coordinates
    for (size_t d = 0; d < rank; ++d)
      store += "  b0.data[p * " + std::to_string(rank) + "u + " + std::to_string(d) +
               "u] = " + glsl_from_uint(di[d].expr, DType::kI64) + ";\n";
  } else {
    std::string v = e.value(data.id, di);  // data's compute type: stored back as it was
    store = "  " + glsl_store("p", v, dt) + ";\n";
  }
  body += "void kiln_copy(uint i, uint p) {\n" + e.take_body() + store + "}\n\n";
  e.reset_scope();
  // The count: a uint at the first 4-byte boundary after the largest result (binding 0 again,
  // as uints), where the runtime reads it (masked_select_count_offset).
  const std::string inputs = e.size(numel);
  // Its uint index, without forming the byte offset (which may pass 2^32 where the index does
  // not: nonzero's rows are 8 bytes per dim).
  const size_t width = dtype_size(dt) * (coordinates ? rank : 1);
  const std::string at = width % 4 == 0
                             ? inputs + " * " + std::to_string(width / 4) + "u"
                             : "(" + inputs + " * " + std::to_string(width) + "u + 3u) / 4u";
  body += "layout(std430, set = 0, binding = 0) buffer KilnB0c { uint data[]; } b0c;\n";
  body += "void kiln_count(uint c) {\n  b0c.data[" + at + "] = c;\n}\n\n";

  std::string count_step, copy_step, scan;
  for (uint32_t j = 0; j < kPerInvocation; ++j) {
    const std::string i = "(first + " + std::to_string(j) + "u)";
    count_step += "if (" + i + " < n && kiln_mask(" + i + ")) ++mine; ";
    copy_step += "if (" + i + " < n && kiln_mask(" + i + ")) kiln_copy(" + i + ", p++); ";
  }
  for (uint32_t off = 1; off < local; off *= 2) {  // Hillis-Steele, inclusive
    const std::string o = std::to_string(off) + "u";
    scan += "{ uint t = lid >= " + o + " ? s_scan[lid - " + o +
            "] : 0u; barrier(); s_scan[lid] += t; barrier(); } ";
  }

  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, KernelVariant::kCompaction, opt.caps));
  k.local_size = local;
  k.groups = {SymInt(1), SymInt(1), SymInt(1)};
  k.loop_trips = groups_for(numel, local * kPerInvocation);  // the chunks
  // The kernel's own stop short of the driver's loop limit (the runtime sends such calls to
  // the interpreter first, kernel_loop_iterations): a count of ~0u, an error, never a
  // silently short result.
  const uint64_t max_chunks = opt.caps.loop_limit > 3 ? opt.caps.loop_limit - 3 : 0xFFFFFFFFu;
  KILN_ASSIGN_OR_RETURN(
      k.glsl, kernel_source("select.comp", e, e.declarations() + "\n" + body,
                            {{"KILN_LOCAL_SIZE", std::to_string(local) + "u"},
                             {"KILN_PER_INVOCATION", std::to_string(kPerInvocation) + "u"},
                             {"KILN_INPUTS", inputs},
                             {"KILN_MAX_CHUNKS", std::to_string(max_chunks) + "u"},
                             {"KILN_COUNT_STEP", count_step},
                             {"KILN_COPY_STEP", copy_step},
                             {"KILN_SCAN", scan}},
                            k, opt.caps));
  return k;
}

}  // namespace kiln
