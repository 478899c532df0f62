// Conv, MaxPool, MaxPoolIndices and AvgPool as one kernel each (shaders/window.comp): a pool
// invocation loops over one output element's window, a conv invocation over the windows of a
// block of output channels x positions along the last spatial dim. The input's (and the
// weight's and bias's) elementwise producers fold into the loads; spatial sizes are GLSL
// expressions (push constants when symbolic), the window itself (kernel, strides, pads,
// dilations) is constant.
#include <algorithm>
#include <array>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kWindowLocalSize = 64;
/// The most inputs a direct conv's position block loads once per window row (KILN_SEG).
constexpr int64_t kMaxRowLoads = 32;

/// The index of a rank-(k + 2) tensor from the kernel's (n, c, three spatial) parameters: the
/// last k of the spatial names.
Index window_index(const std::string& n, const std::string& c, size_t k,
                   const std::array<std::string, 3>& spatial) {
  Index idx = {{n, -1}, {c, -1}};
  for (size_t i = 3 - k; i < 3; ++i) idx.push_back({spatial[i], -1});
  return idx;
}

}  // namespace

Expected<Kernel> window_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt) {
  const Node& n = g.node(root);
  if (n.op == OpKind::ConvTranspose) return conv_transpose_kernel(g, fusion, root, opt);
  if (pool_channels_applies(g, n)) {
    Expected<Kernel> k = pool_channels_kernel(g, fusion, root, opt);
    if (k.ok() || k.status().code() != StatusCode::kUnimplemented) return k;
  }
  const Node& x = g.node(n.inputs[0]);
  const Attrs::Window& w = n.attrs.window;
  const size_t k = x.sym.size() - 2, lead = 3 - k;
  const int mode = n.op == OpKind::Conv      ? 0
                   : n.op == OpKind::MaxPool ? 1
                   : n.op == OpKind::AvgPool ? 2
                                             : 3;
  // Accumulator: float for conv, avg_pool and floating max pools; the integer type otherwise.
  const DType acc = is_floating(x.meta.dtype) ? DType::kF32 : x.meta.dtype;
  const std::string acc_t = glsl_compute_type(acc);

  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(root);
  e.bind_output(root);
  std::string body;
  auto function = [&](const std::string& signature, NodeId node, const Index& idx) {
    std::string v = glsl_convert(e.value(node, idx), g.node(node).meta.dtype, acc);
    body += signature + " {\n" + e.take_body() + "  return " + v + ";\n}\n\n";
    e.reset_scope();
  };
  function(acc_t + " kiln_x(uint n, uint c, uint p0, uint p1, uint p2)", x.id,
           window_index("n", "c", k, {"p0", "p1", "p2"}));
  if (mode == 0) {
    function("float kiln_w(uint co, uint ci, uint k0, uint k1, uint k2)", n.inputs[1],
             window_index("co", "ci", k, {"k0", "k1", "k2"}));
    if (n.inputs.size() == 3)
      function("float kiln_bias(uint co)", n.inputs[2], Index{{"co", -1}});
    else
      body += "float kiln_bias(uint co) { return 0.0; }\n\n";
  }
  body += "void kiln_store(uint o, " +
          std::string(mode == 3 ? glsl_compute_type(DType::kI64) : acc_t) +
          " v) {\n  " + glsl_store("o", "v", n.meta.dtype) + ";\n}\n";

  // Sizes (spatial dims padded to three with 1s), then the macros.
  std::map<std::string, std::string> macros;
  std::array<std::string, 3> in{"1u", "1u", "1u"}, out{"1u", "1u", "1u"};
  std::array<SymInt, 3> out_sym{1, 1, 1};
  std::array<int64_t, 3> kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, pad_end{0, 0, 0},
      dil{1, 1, 1};
  for (size_t i = 0; i < k; ++i) {
    in[lead + i] = e.size(x.sym[2 + i]);
    out[lead + i] = e.size(n.sym[2 + i]);
    out_sym[lead + i] = n.sym[2 + i];
    kernel[lead + i] = mode == 0 ? g.node(n.inputs[1]).sym[2 + i].constant_value() : w.kernel[i];
    stride[lead + i] = w.strides[i];
    pad[lead + i] = w.pads[i];
    pad_end[lead + i] = w.pads[k + i];
    dil[lead + i] = w.dilations[i];
  }
  const SymInt outputs = sym_numel(n.sym);
  macros["KILN_OUTPUTS"] = e.size(outputs);
  macros["KILN_C_OUT"] = e.size(n.sym[1]);
  const bool implicit_gemm = mode == 0 && conv_gemm_applies(g, n, opt.caps);
  auto divisor = [&](const std::string& name, const SymInt& d) {
    add_divisor_macros(e, macros, name, d);
  };
  SymInt work = outputs;
  int64_t seg_len = 0;  // conv: KILN_SEG
  if (mode == 0) {
    // Output-channel and last-dim blocks per invocation, sized at the hints (speed only: the
    // kernel bounds-checks both).
    const SymInt cg = g.node(n.inputs[1]).sym[1];
    const SymInt og = sym_floordiv(n.sym[1], SymInt(w.groups));
    const int64_t og_hint = n.meta.shape[1] / w.groups, o2_hint = n.meta.shape.back();
    const int64_t co_block = og_hint >= 8 ? 8 : og_hint >= 4 ? 4 : og_hint >= 2 ? 2 : 1;
    const int64_t w_block = std::clamp<int64_t>(o2_hint, 1, 4);
    macros["KILN_CG"] = e.size(cg);
    macros["KILN_OG"] = e.size(og);
    macros["KILN_N"] = e.size(n.sym[0]);
    macros["KILN_CO_BLOCK"] = std::to_string(co_block) + "u";
    macros["KILN_W_BLOCK"] = std::to_string(w_block) + "u";
    // The block's windows along the last dim overlap at unit stride: its inputs loaded once,
    // into an array of at most kMaxRowLoads floats (a wide window's array would not fit a
    // driver's stack: SwiftShader's compiler aborts on one of 66,536 floats).
    const int64_t kw = k > 0 ? g.node(n.inputs[1]).sym.back().constant_value() : 1;
    const int64_t seg = (w_block - 1) * (k > 0 ? w.strides.back() : 1) +
                        (kw - 1) * (k > 0 ? w.dilations.back() : 1) + 1;
    seg_len = seg < w_block * kw && seg <= kMaxRowLoads ? seg : 0;
    macros["KILN_SEG"] = std::to_string(seg_len);
    const SymInt o2 = k > 0 ? n.sym.back() : SymInt(1);
    SymInt spatial = 1;
    for (size_t i = 0; i + 1 < k; ++i) spatial = spatial * n.sym[2 + i];
    const SymInt co_blocks = sym_floordiv(og + SymInt(co_block - 1), SymInt(co_block));
    const SymInt w_blocks = sym_floordiv(o2 + SymInt(w_block - 1), SymInt(w_block));
    work = n.sym[0] * SymInt(w.groups) * co_blocks * spatial * w_blocks;
    if (!implicit_gemm) {
      divisor("W_BLOCKS", w_blocks);
      divisor("CO_BLOCKS", co_blocks);
      divisor("GROUPS", SymInt(w.groups));
    }
  }
  if (mode == 0) {
    divisor("O0", out_sym[0]);
    divisor("O1", out_sym[1]);
    if (implicit_gemm) divisor("O2", out_sym[2]);
  } else {
    divisor("C_OUT", n.sym[1]);
    for (size_t i = 0; i < 3; ++i) divisor("O" + std::to_string(i), out_sym[i]);
  }
  for (size_t i = 0; i < 3; ++i) {
    const std::string d = std::to_string(i);
    macros["KILN_I" + d] = in[i];
    macros["KILN_O" + d] = out[i];
    macros["KILN_K" + d] = std::to_string(kernel[i]);
    macros["KILN_S" + d] = std::to_string(stride[i]) + "u";
    macros["KILN_P" + d] = std::to_string(pad[i]);
    macros["KILN_PE" + d] = std::to_string(pad_end[i]);
    macros["KILN_D" + d] = std::to_string(dil[i]);
  }
  macros["KILN_MODE"] = std::to_string(mode);
  macros["ACC_T"] = acc_t;
  if (acc == DType::kF32) {
    macros["KILN_LOWEST"] = "(-KILN_INF)";
    macros["KILN_MAX(a, b)"] = "kiln_maximum(a, b)";
    macros["KILN_TAKE(a, v)"] = "(!isnan(a) && (isnan(v) || (v) > (a)))";
  } else {
    // No 64-bit literal: the macros precede #extension.
    macros["KILN_LOWEST"] = acc == DType::kI32 ? "int(0x80000000)"
                            : int64_pairs()    ? glsl_int_literal(std::numeric_limits<int64_t>::min(), acc)
                                               : "(int64_t(1) << 63)";
    macros["KILN_MAX(a, b)"] = acc == DType::kI64 ? "kiln_max_i64(a, b)" : "kiln_max_i32(a, b)";
    macros["KILN_TAKE(a, v)"] = glsl_binary(">", "(v)", "(a)", acc);
  }
  // Mode 3's flat index, an int64.
  macros["KILN_INDEX(i)"] = glsl_from_uint("(i)", DType::kI64);
  macros["KILN_COUNT_INCLUDE_PAD"] = w.count_include_pad ? "1" : "0";
  macros["KILN_COLUMN_MAJOR"] = w.storage_order == 1 ? "1" : "0";

  const int64_t taps = kernel[0] * kernel[1] * kernel[2];
  if (implicit_gemm) {
    // Positions per lane: 4, or fewer when there are few positions (the small spatial sizes of
    // a CNN's last stages), so that lanes are not left idle.
    SymInt positions = n.sym[0];
    for (size_t i = 2; i < n.sym.size(); ++i) positions = positions * n.sym[i];
    const int64_t positions_hint = n.meta.numel() / std::max<int64_t>(n.meta.shape[1], 1);
    const uint32_t cols = positions_hint >= 4 * kConvGemmLocalSize   ? 4
                          : positions_hint >= 2 * kConvGemmLocalSize ? 2
                                                                     : 1;
    macros["KILN_POSITIONS"] = e.size(positions);
    const uint32_t rows = conv_gemm_rows(n.meta.shape[1]);
    const SymInt row_blocks = conv_gemm_row_blocks(n.sym[1], rows),
                 col_blocks = groups_for(positions, kConvGemmLocalSize * cols);
    macros["KILN_ROW_BLOCKS"] = e.size(row_blocks);
    macros["KILN_COL_BLOCKS"] = e.size(col_blocks);
    macros["KILN_LOCAL_SIZE"] = std::to_string(kConvGemmLocalSize) + "u";
    KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, KernelVariant::kConvGemm, opt.caps));
    kern.local_size = kConvGemmLocalSize;
    kern.groups = {row_blocks, col_blocks, SymInt(1)};
    kern.loop_trips = groups_for(g.node(n.inputs[1]).sym[1] * SymInt(taps), 4) + SymInt(1);
    KILN_ASSIGN_OR_RETURN(kern.glsl, kernel_source("conv_gemm.comp", e,
                                                   e.declarations() + "\n" + body + "\n" +
                                                       conv_gemm_block(rows, cols),
                                                   std::move(macros), kern, opt.caps));
    return kern;
  }
  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, KernelVariant::kWindow, opt.caps));
  kern.local_size = std::min(kWindowLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {groups_for(work, kern.local_size), 1, 1};
  // The window loops (k0, k1, k2), inside the input channels for conv; the loops over the
  // channel and position blocks are unrolled (measured on lavapipe: one trip per tap).
  // avg_pool with count_include_pad also counts each dim's window in a loop; a conv's row
  // loads (KILN_SEG) are one more loop per window row.
  const SymInt window_trips = SymInt(2 * kernel[0] + kernel[0] * kernel[1] + kernel[1] + taps +
                                     kernel[2] + 1 + kernel[0] * kernel[1] * seg_len);
  kern.loop_trips = mode == 0 ? g.node(n.inputs[1]).sym[1] * window_trips : window_trips;
  macros["KILN_LOCAL_SIZE"] = std::to_string(kern.local_size) + "u";
  KILN_ASSIGN_OR_RETURN(kern.glsl, kernel_source("window.comp", e, e.declarations() + "\n" + body,
                                                 std::move(macros), kern, opt.caps));
  return kern;
}

}  // namespace kiln
