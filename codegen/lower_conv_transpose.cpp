// ConvTranspose as one gather kernel (shaders/conv_transpose.comp): an invocation computes a
// block of output channels at one output position, summing the input taps that map to it. The
// input's, weight's and bias's elementwise producers fold into the loads; spatial sizes are
// GLSL expressions (size slots when symbolic), the window itself (kernel, strides, pads,
// dilations) is constant.
#include <algorithm>
#include <array>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kConvTransposeLocalSize = 64;

/// The index of a rank-(k + 2) tensor from the kernel's (n, c, three spatial) parameters: the
/// last k of the spatial names.
Index spatial_index(const std::string& n, const std::string& c, size_t k,
                    const std::array<std::string, 3>& spatial) {
  Index idx = {{n, -1}, {c, -1}};
  for (size_t i = 3 - k; i < 3; ++i) idx.push_back({spatial[i], -1});
  return idx;
}

}  // namespace

Expected<Kernel> conv_transpose_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                       const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const Node& wt = g.node(n.inputs[1]);
  const Attrs::Window& w = n.attrs.window;
  const size_t k = x.sym.size() - 2, lead = 3 - k;

  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(root);
  e.bind_output(root);
  std::string body;
  auto function = [&](const std::string& signature, NodeId node, const Index& idx) {
    std::string v = glsl_convert(e.value(node, idx), g.node(node).meta.dtype, DType::kF32);
    body += signature + " {\n" + e.take_body() + "  return " + v + ";\n}\n\n";
    e.reset_scope();
  };
  function("float kiln_x(uint n, uint c, uint p0, uint p1, uint p2)", x.id,
           spatial_index("n", "c", k, {"p0", "p1", "p2"}));
  function("float kiln_w(uint c, uint j, uint k0, uint k1, uint k2)", wt.id,
           spatial_index("c", "j", k, {"k0", "k1", "k2"}));
  if (n.inputs.size() == 3)
    function("float kiln_bias(uint co)", n.inputs[2], Index{{"co", -1}});
  else
    body += "float kiln_bias(uint co) { return 0.0; }\n\n";
  body += "void kiln_store(uint o, float v) {\n  " + glsl_store("o", "v", n.meta.dtype) + ";\n}\n";

  std::map<std::string, std::string> macros;
  std::array<std::string, 3> in{"1u", "1u", "1u"}, out{"1u", "1u", "1u"};
  std::array<SymInt, 3> out_sym{1, 1, 1};
  std::array<int64_t, 3> kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  for (size_t i = 0; i < k; ++i) {
    in[lead + i] = e.size(x.sym[2 + i]);
    out[lead + i] = e.size(n.sym[2 + i]);
    out_sym[lead + i] = n.sym[2 + i];
    kernel[lead + i] = wt.sym[2 + i].constant_value();
    stride[lead + i] = w.strides[i];
    pad[lead + i] = w.pads[i];
    dil[lead + i] = w.dilations[i];
  }
  for (size_t i = 0; i < 3; ++i) {
    const std::string d = std::to_string(i);
    macros["KILN_I" + d] = in[i];
    macros["KILN_O" + d] = out[i];
    macros["KILN_K" + d] = std::to_string(kernel[i]);
    macros["KILN_S" + d] = std::to_string(stride[i]);
    macros["KILN_P" + d] = "(" + std::to_string(pad[i]) + ")";
    macros["KILN_D" + d] = std::to_string(dil[i]);
  }
  // Output channels per invocation, sized at the hint (speed only: the kernel bounds-checks).
  const SymInt og = wt.sym[1];
  const int64_t og_hint = wt.meta.shape[1];
  const int64_t co_block = og_hint >= 4 ? 4 : og_hint >= 2 ? 2 : 1;
  macros["KILN_N"] = e.size(n.sym[0]);
  macros["KILN_C_OUT"] = e.size(n.sym[1]);
  macros["KILN_CG"] = e.size(sym_floordiv(x.sym[1], SymInt(w.groups)));
  macros["KILN_OG"] = e.size(og);
  macros["KILN_CO_BLOCK"] = std::to_string(co_block) + "u";
  const SymInt co_blocks = sym_floordiv(og + SymInt(co_block - 1), SymInt(co_block));
  SymInt work = n.sym[0] * SymInt(w.groups) * co_blocks;
  for (size_t i = 2; i < n.sym.size(); ++i) work = work * n.sym[i];
  for (size_t i = 0; i < 3; ++i) add_divisor_macros(e, macros, "O" + std::to_string(i), out_sym[i]);
  add_divisor_macros(e, macros, "CO_BLOCKS", co_blocks);
  add_divisor_macros(e, macros, "GROUPS", SymInt(w.groups));

  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, KernelVariant::kWindow, opt.caps));
  kern.local_size = std::min(kConvTransposeLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {groups_for(work, kern.local_size), 1, 1};
  // The window loops (k0, k1, k2) and the input channels inside them.
  const int64_t taps = kernel[0] * kernel[1] * kernel[2];
  kern.loop_trips = SymInt(kernel[0] + kernel[0] * kernel[1] + taps + 1) +
                    SymInt(taps) * sym_floordiv(x.sym[1], SymInt(w.groups));
  macros["KILN_LOCAL_SIZE"] = std::to_string(kern.local_size) + "u";
  KILN_ASSIGN_OR_RETURN(kern.glsl,
                        kernel_source("conv_transpose.comp", e, e.declarations() + "\n" + body,
                                      std::move(macros), kern, opt.caps));
  return kern;
}

}  // namespace kiln
