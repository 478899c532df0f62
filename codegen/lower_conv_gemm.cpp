// Conv as an implicit GEMM (shaders/conv_gemm.comp): output channels are the rows of a
// row-block matmul whose A operand is the weight read as [C_out, C_in * window] and whose B
// operand is the input gathered per output position (im2col, never stored). The kernel's
// functions (kiln_x, kiln_w, kiln_bias, kiln_store) and window macros are window.comp's
// (codegen/lower_window.cpp); this file decides when the kernel applies and generates its
// unrolled block function.
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kRows = 32;  // output channels per invocation: 4 groups of 8 lanes

std::string u(uint32_t v) {
  return std::to_string(v) + "u";
}
std::string acc(uint32_t r, uint32_t c) {
  return "c" + std::to_string(r) + "_" + std::to_string(c);
}

}  // namespace

bool conv_gemm_applies(const Graph& g, const Node& n, const TargetCaps& caps) {
  if (n.op != OpKind::Conv || n.attrs.window.groups != 1 || !rowblock_supported(caps)) return false;
  if (caps.max_workgroup_invocations < kConvGemmLocalSize) return false;
  for (NodeId id : n.inputs)
    if (g.node(id).meta.dtype != DType::kF32) return false;
  if (n.meta.dtype != DType::kF32) return false;
  // At least half a row block of output channels: below that most FMAs would be wasted on
  // clamped rows, and the direct kernel's channel blocks fit better.
  return n.meta.shape[1] >= kRows / 2;
}

uint32_t conv_gemm_rows(int64_t c_out) {
  return c_out >= kRows ? kRows : static_cast<uint32_t>((c_out + 7) / 8 * 8);
}

std::string conv_gemm_block(uint32_t rows, uint32_t cols) {
  const uint32_t groups = rows / 8;  // weights each lane loads per window offset
  std::string b = "void kiln_conv_block(uint rb, uint cb) {\n";
  b += "  const uint x = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID;\n";
  b += "  const uint i0 = rb * " + u(rows) + ";\n";
  b += "  const int in0 = int(KILN_I0), in1 = int(KILN_I1), in2 = int(KILN_I2);\n";
  for (uint32_t g = 0; g < groups; ++g)
    b += "  const uint co" + std::to_string(g) + " = min(i0 + " + u(8 * g) +
         " + lane, KILN_C_OUT - 1u);\n";
  // Column c: output position p (clamped; positions past the end are computed, never stored).
  for (uint32_t c = 0; c < cols; ++c) {
    const std::string s = std::to_string(c);
    b += "  const uint p" + s + " = cb * " + u(kConvGemmLocalSize * cols) + " + " +
         u(c * kConvGemmLocalSize) + " + x;\n";
    b += "  const bool v" + s + " = p" + s + " < KILN_POSITIONS;\n";
    b += "  uint t" + s + " = min(p" + s + ", KILN_POSITIONS - 1u);\n";
    b += "  const uint q2_" + s + " = KILN_MOD_O2(t" + s + "); t" + s + " = KILN_DIV_O2(t" + s +
         ");\n";
    b += "  const uint q1_" + s + " = KILN_MOD_O1(t" + s + "); t" + s + " = KILN_DIV_O1(t" + s +
         ");\n";
    b += "  const uint q0_" + s + " = KILN_MOD_O0(t" + s + ");\n";
    b += "  const uint n_" + s + " = KILN_DIV_O0(t" + s + ");\n";
    for (int d = 0; d < 3; ++d) {
      const std::string ds = std::to_string(d);
      b += "  const int b" + ds + "_" + s + " = int(q" + ds + "_" + s + " * KILN_S" + ds +
           ") - KILN_P" + ds + ";\n";
    }
  }
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) b += "  float " + acc(r, c) + " = 0.0;\n";
  // K = (input channel, window offset) pairs, 4 per iteration so that each accumulator takes 4
  // updates in a row (rows outer, K inner: lavapipe keeps loop-carried values in memory, and
  // LLVM holds an accumulator in a register across its updates; see rowblock_body).
  b += "  const uint kwin = uint(KILN_K0 * KILN_K1 * KILN_K2), ktot = KILN_CG * kwin;\n";
  b += "  for (uint k = 0u; k < ktot; k += 4u) {\n";
  for (uint32_t kk = 0; kk < 4; ++kk) {
    const std::string ks = std::to_string(kk);
    b += "    const bool kv" + ks + " = k + " + u(kk) + " < ktot;\n";
    b += "    const uint kc" + ks + " = min(k + " + u(kk) + ", ktot - 1u), ci" + ks + " = kc" + ks +
         " / kwin, w" + ks + " = kc" + ks + " % kwin;\n";
    b += "    const int k0_" + ks + " = int(w" + ks + ") / (KILN_K1 * KILN_K2), k1_" + ks +
         " = (int(w" + ks + ") / KILN_K2) % KILN_K1, k2_" + ks + " = int(w" + ks + ") % KILN_K2;\n";
    for (uint32_t g = 0; g < groups; ++g)
      b += "    const float al" + std::to_string(g) + "_" + ks + " = kv" + ks + " ? kiln_w(co" +
           std::to_string(g) + ", ci" + ks + ", uint(k0_" + ks + "), uint(k1_" + ks +
           "), uint(k2_" + ks + ")) : 0.0;\n";
    for (uint32_t c = 0; c < cols; ++c) {
      const std::string s = std::to_string(c), e = "_" + s + "_" + ks;
      std::string in_bounds = "kv" + ks + " && v" + s;
      for (int d = 0; d < 3; ++d) {
        const std::string ds = std::to_string(d);
        b += "    const int e" + ds + e + " = b" + ds + "_" + s + " + k" + ds + "_" + ks +
             " * KILN_D" + ds + ";\n";
        in_bounds += " && e" + ds + e + " >= 0 && e" + ds + e + " < in" + ds;
      }
      b += "    const float xv" + s + "_" + ks + " = (" + in_bounds + ") ? kiln_x(n_" + s + ", ci" +
           ks + ", uint(e0" + e + "), uint(e1" + e + "), uint(e2" + e + ")) : 0.0;\n";
    }
  }
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t kk = 0; kk < 4; ++kk) {
      const std::string ks = std::to_string(kk);
      b += "    { const float av = subgroupShuffle(al" + std::to_string(r / 8) + "_" + ks + ", " +
           u(r % 8) + ");";
      for (uint32_t c = 0; c < cols; ++c)
        b += " " + acc(r, c) + " = fma(av, xv" + std::to_string(c) + "_" + ks + ", " + acc(r, c) +
             ");";
      b += " }\n";
    }
  }
  b += "  }\n";
  for (uint32_t r = 0; r < rows; ++r) {
    const std::string co = "i0 + " + u(r);
    b += "  if (" + co + " < KILN_C_OUT) { const float bias = kiln_bias(" + co + ");";
    for (uint32_t c = 0; c < cols; ++c) {
      const std::string s = std::to_string(c);
      b += " if (v" + s + ") kiln_store(((n_" + s + " * KILN_C_OUT + " + co + ") * KILN_O0 + q0_" +
           s + ") * KILN_O1 * KILN_O2 + q1_" + s + " * KILN_O2 + q2_" + s + ", " + acc(r, c) +
           " + bias);";
    }
    b += " }\n";
  }
  b += "}\n";
  return b;
}

SymInt conv_gemm_row_blocks(const SymInt& channels, uint32_t rows) {
  return groups_for(channels, rows);
}

}  // namespace kiln
