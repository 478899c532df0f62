// random_uniform on shaders/scatter.comp's driver: one invocation per element, Philox 4x32-10
// (eager/philox.h) on the counter {i, 0, stream, 0} and the seed's two words, in integer
// operations only (umulExtended for the 32 x 32 -> 64-bit products), so every device gives the
// interpreter's bits. The input only gives the shape: it is never read.
#include <algorithm>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kLocalSize = 64;

const char* kPhilox = R"(uvec4 kiln_philox(uvec4 c, uvec2 k) {
  for (int round = 0; round < 10; ++round) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

)";

}  // namespace

Expected<Kernel> random_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt, KernelVariant variant) {
  const Node& n = g.node(root);
  const auto seed = static_cast<uint64_t>(n.attrs.scalar_int);
  const auto stream = static_cast<uint32_t>(n.attrs.index);
  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  std::string el = "void kiln_element(uint o) {\n";
  el += "  const uvec4 r = kiln_philox(uvec4(o, 0u, " + std::to_string(stream) + "u, 0u), uvec2(" +
        std::to_string(static_cast<uint32_t>(seed)) + "u, " +
        std::to_string(static_cast<uint32_t>(seed >> 32)) + "u));\n";
  el += "  " + glsl_store("o", "float(r.x >> 8u) * 5.9604644775390625e-8", DType::kF32) + ";\n}\n";
  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, variant, opt.caps));
  k.local_size = std::min(kLocalSize, opt.caps.max_workgroup_invocations);
  k.groups = {groups_for(sym_numel(n.sym), k.local_size), 1, 1};
  k.loop_trips = SymInt(11);
  const std::string outputs = e.size(sym_numel(n.sym));
  KILN_ASSIGN_OR_RETURN(k.glsl, scatter_driver_source(e, kPhilox + el, outputs, k, opt.caps));
  return k;
}

}  // namespace kiln
