// The Spectral ops on shaders/fft.comp. The FFTs transform the last dim (the length is a
// constant: sym_rules specialises it): a radix-2 Stockham FFT in shared memory, one workgroup
// per row, when the length is a power of two and two rows of it fit; else a direct DFT over
// the row with a shared twiddle table, one workgroup per row; else (rows too long for shared
// memory, up to kMaxDirectLength) a direct DFT reading the buffer, one invocation per output
// element. The input's elementwise producers fold into kiln_load; a real input gets imaginary
// part 0 there. real / imag / abs / view_as_real / view_as_complex are one invocation per
// output element.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kFftLocalSize = 256;
/// Longest transform without shared memory: lavapipe ends an invocation's loops after 65535
/// iterations in total, and the direct DFT's invocation loops over the whole row.
constexpr int64_t kMaxDirectLength = 16384;
constexpr uint32_t kSpectralLocalSize = 64;

std::string float_literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9e", v);
  return buf;
}

Index with_last(Index idx, const std::string& last) {
  idx.push_back({last, -1});
  return idx;
}

Expected<Kernel> fft_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                            const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& src = g.node(n.inputs[0]);
  if (!src.sym.back().is_constant())
    return internal_error("fft: the transformed dim is not specialised");
  const int64_t m = src.sym.back().constant_value();
  const int64_t len = detail::fft_length(n.op, m, n.attrs);
  const int64_t out_len = n.meta.shape.back();
  const bool inverse = n.op == OpKind::Ifft || n.op == OpKind::Irfft;
  const bool hermitian = n.op == OpKind::Irfft;
  const int64_t used = std::min(m, hermitian ? len / 2 + 1 : len);  // input points read
  double scale = 1.0;
  if (n.attrs.index == kFftNormOrtho)
    scale = 1.0 / std::sqrt(static_cast<double>(len));
  else if ((n.attrs.index == kFftNormBackward) == inverse)
    scale = 1.0 / static_cast<double>(len);

  const SymShape batch(n.sym.begin(), n.sym.end() - 1);
  const SymInt rows = sym_numel(batch);
  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  Index b = e.decompose("row", batch, "o", 0);
  std::string loaded =
      glsl_convert(e.value(src.id, with_last(b, "j")), src.meta.dtype, DType::kC64);
  std::string body =
      "vec2 kiln_load(uint row, uint j) {\n" + e.take_body() + "  return " + loaded + ";\n}\n\n";
  e.reset_scope();
  const std::string stored = n.meta.dtype == DType::kC64 ? "v" : "v.x";
  body += "void kiln_store(uint row, uint k, vec2 v) {\n  b0.data[row * " +
          std::to_string(out_len) + "u + k] = " + stored + ";\n}\n";

  // Shared memory: two rows (Stockham) or a row and its twiddles (direct), 8 bytes a point.
  const bool pow2 = (len & (len - 1)) == 0;
  const bool fits = 16 * len <= static_cast<int64_t>(opt.caps.max_shared_memory);
  const int path = !fits ? 0 : pow2 ? 2 : 1;
  if (path == 0 && len > kMaxDirectLength)
    return unimplemented("fft: length " + std::to_string(len) +
                         " is above the kernels' limit (powers of two up to what shared memory "
                         "holds, other lengths up to 16384)");

  const std::string rows_glsl = e.size(rows);
  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, KernelVariant::kFft, opt.caps));
  k.local_size = std::min(kFftLocalSize, opt.caps.max_workgroup_invocations);
  k.groups = {path == 0 ? groups_for(sym_numel(n.sym), k.local_size) : rows, 1, 1};
  KILN_ASSIGN_OR_RETURN(k.glsl,
                        kernel_source("fft.comp", e, e.declarations() + "\n" + body,
                                      {{"KILN_FFT", "1"},
                                       {"KILN_LOCAL_SIZE", std::to_string(k.local_size) + "u"},
                                       {"KILN_ROWS", rows_glsl},
                                       {"KILN_N", std::to_string(len) + "u"},
                                       {"KILN_M", std::to_string(used) + "u"},
                                       {"KILN_OUT", std::to_string(out_len) + "u"},
                                       {"KILN_SIGN", inverse ? "1.0" : "-1.0"},
                                       {"KILN_SCALE", float_literal(scale)},
                                       {"KILN_HERMITIAN", hermitian ? "1" : "0"},
                                       {"KILN_PATH", std::to_string(path)}},
                                      k, opt.caps));
  if (is_const(rows, 0)) k.groups = {0, 0, 0};
  return k;
}

/// real, imag, abs, view_as_real, view_as_complex: output element o from its input element(s).
Expected<Kernel> complex_part_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                     const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& src = g.node(n.inputs[0]);
  Emitter e(g, fusion, false);
  e.set_root(root);
  e.bind_output(root);
  Index c = e.decompose("o", n.sym, "c", 0);
  std::string el = "void kiln_element(uint o) {\n" + e.take_body();
  if (n.op == OpKind::ViewAsComplex) {
    const std::string re = e.value(src.id, with_last(c, "0u"));
    const std::string im = e.value(src.id, with_last(c, "1u"));
    el += e.take_body() + "  b0.data[o] = vec2(" + re + ", " + im + ");\n}\n";
  } else if (n.op == OpKind::ViewAsReal) {
    const Index at(c.begin(), c.end() - 1);
    const std::string v = e.value(src.id, at);
    el += e.take_body() + "  const vec2 v = " + v + ";\n  b0.data[o] = " + c.back().expr +
          " == 0u ? v.x : v.y;\n}\n";
  } else {
    const std::string v = e.value(src.id, c);
    std::string part = "v.x";
    if (n.op == OpKind::Imag) part = "v.y";
    // |v| as hypot: inf if either part is, else scaled so that the squares cannot overflow.
    if (n.op == OpKind::ComplexAbs)
      part =
          "(isinf(v.x) || isinf(v.y)) ? KILN_INF : (isnan(v.x) || isnan(v.y)) ? v.x + v.y : "
          "(s == 0.0 ? 0.0 : s * sqrt((v.x / s) * (v.x / s) + (v.y / s) * (v.y / s)))";
    el += e.take_body() + "  const vec2 v = " + v +
          ";\n  const float s = max(abs(v.x), abs(v.y));\n  b0.data[o] = " + part + ";\n}\n";
  }
  const std::string outputs = e.size(sym_numel(n.sym));
  KILN_ASSIGN_OR_RETURN(Kernel k, start_kernel(e, n, KernelVariant::kComplexPart, opt.caps));
  k.local_size = std::min(kSpectralLocalSize, opt.caps.max_workgroup_invocations);
  k.groups = {groups_for(sym_numel(n.sym), k.local_size), 1, 1};
  KILN_ASSIGN_OR_RETURN(k.glsl,
                        kernel_source("fft.comp", e, e.declarations() + "\n" + el,
                                      {{"KILN_FFT", "0"},
                                       {"KILN_LOCAL_SIZE", std::to_string(k.local_size) + "u"},
                                       {"KILN_OUTPUTS", outputs}},
                                      k, opt.caps));
  return k;
}

}  // namespace

Expected<Kernel> spectral_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                 const CodegenOptions& opt) {
  switch (g.node(root).op) {
    case OpKind::Fft:
    case OpKind::Ifft:
    case OpKind::Rfft:
    case OpKind::Irfft:
      return fft_kernel(g, fusion, root, opt);
    default:
      return complex_part_kernel(g, fusion, root, opt);
  }
}

}  // namespace kiln
