// Resize and GridSample as one kernel each (shaders/resample.comp): an invocation per output
// element gathers its input taps with weights. Resize's per-rank part is generated here: the
// output index decomposed, each resized axis' coordinate and taps (kiln_coord, kiln_taps), and
// the loop over the taps of every resized axis; an axis kept by its size (-1) with scale 0 or
// 1 reads at the output index, as in the interpreter. The input's elementwise producers fold into
// the loads (kiln_x); sizes are GLSL expressions (size slots when symbolic), scales and roi
// literals.
#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kResampleLocalSize = 64;

/// "uint a, uint b" / "a, b" over names prefix0 .. prefix{n-1}.
std::string name_list(const std::string& type, const std::string& prefix, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + type + prefix + std::to_string(i);
  return s;
}

/// kiln_resample(o) of a Resize over `rank` axes.
std::string resize_function(Emitter& e, const Node& n, const Node& x, DType acc) {
  const Attrs::Resample& r = n.attrs.resample;
  const size_t rank = n.sym.size();
  const auto coord = static_cast<ResizeCoord>(r.coord);
  const bool crop = coord == ResizeCoord::kTfCropAndResize;
  const Index q = e.decompose("o", n.sym, "q", 0);
  std::string s = "void kiln_resample(uint o) {\n" + e.take_body();
  std::vector<std::string> at(rank);  // the input index of each axis in the tap loop
  std::vector<size_t> resized;
  for (size_t a = 0; a < rank; ++a) {
    const std::string in = e.size(x.sym[a]), out = e.size(n.sym[a]), id = std::to_string(a);
    if (n.attrs.dims[a] < 0 && (r.scales[a] == 0.0 || r.scales[a] == 1.0) && !crop &&
        coord != ResizeCoord::kTfHalfPixelForNn) {
      at[a] = q[a].expr;
      continue;
    }
    resized.push_back(a);
    at[a] = "i" + id + "[k" + id + "]";
    const std::string fin = "float(" + in + ")", fout = "float(" + out + ")";
    const bool given = r.scales[a] != 0.0;
    const std::string scale = given ? glsl_literal(r.scales[a], DType::kF32) : fout + " / " + fin;
    s += "  precise float s" + id + " = " + scale + ";\n";
    s += "  precise float l" + id + " = " + (given ? fin + " * s" + id : fout) + ";\n";
    const std::string r0 = crop ? glsl_literal(r.roi[a], DType::kF32) : "0.0";
    const std::string r1 = crop ? glsl_literal(r.roi[rank + a], DType::kF32) : "0.0";
    s += "  precise float x" + id + " = kiln_coord(float(" + q[a].expr + "), s" + id + ", " + fin +
         ", l" + id + ", " + fout + ", " + r0 + ", " + r1 + ");\n";
    if (crop)
      s += "  if (x" + id + " < 0.0 || x" + id + " > " + fin + " - 1.0) {\n    kiln_store(o, " +
           glsl_literal(r.extrapolation, acc) + ");\n    return;\n  }\n";
    s += "  uint i" + id + "[KILN_TAPS];\n  float w" + id + "[KILN_TAPS];\n";
    s += "  kiln_taps(x" + id + ", int(" + in + "), i" + id + ", w" + id + ");\n";
  }
  std::string args;
  for (size_t a = 0; a < rank; ++a) args += (a ? ", " : "") + at[a];
  if (r.mode == kResampleNearest || resized.empty()) {
    for (size_t a : resized) at[a] = "i" + std::to_string(a) + "[0]";
    args.clear();
    for (size_t a = 0; a < rank; ++a) args += (a ? ", " : "") + at[a];
    return s + "  kiln_store(o, kiln_x(" + args + "));\n}\n";
  }
  s += "  precise float acc = 0.0;\n";
  std::string indent = "  ";
  for (size_t a : resized) {
    const std::string k = "k" + std::to_string(a);
    s += indent + "for (uint " + k + " = 0u; " + k + " < KILN_TAPS; ++" + k + ") {\n";
    indent += "  ";
  }
  std::string weight;
  for (size_t a : resized) {
    const std::string w = "w" + std::to_string(a) + "[k" + std::to_string(a) + "]";
    weight = weight.empty() ? w : "(" + weight + " * " + w + ")";
  }
  s += indent + "precise float w = " + weight + ";\n";
  s += indent + "acc = acc + w * kiln_x(" + args + ");\n";
  for (size_t i = 0; i < resized.size(); ++i) {
    indent.resize(indent.size() - 2);
    s += indent + "}\n";
  }
  return s + "  kiln_store(o, acc);\n}\n";
}

}  // namespace

Expected<Kernel> resample_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                 const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& x = g.node(n.inputs[0]);
  const Attrs::Resample& r = n.attrs.resample;
  const bool grid = n.op == OpKind::GridSample;
  const DType acc = is_floating(x.meta.dtype) ? DType::kF32 : x.meta.dtype;
  const std::string acc_t = glsl_compute_type(acc);
  const size_t rank = x.sym.size();

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
  Index xi;
  for (size_t a = 0; a < rank; ++a) xi.push_back({"i" + std::to_string(a), -1});
  function(acc_t + " kiln_x(" + name_list("uint ", "i", rank) + ")", x.id, xi);
  if (grid)
    function("float kiln_grid(uint i0, uint i1, uint i2, uint i3)", n.inputs[1],
             Index{{"i0", -1}, {"i1", -1}, {"i2", -1}, {"i3", -1}});
  body += "void kiln_store(uint o, " + acc_t + " v) {\n  " + glsl_store("o", "v", n.meta.dtype) +
          ";\n}\n\n";
  if (!grid) body += resize_function(e, n, x, acc);

  std::map<std::string, std::string> macros;
  const SymInt outputs = sym_numel(n.sym);
  macros["KILN_OUTPUTS"] = e.size(outputs);
  macros["KILN_GRID"] = grid ? "1" : "0";
  macros["KILN_MODE"] = std::to_string(r.mode);
  macros["KILN_TAPS"] = r.mode == kResampleNearest ? "1" : r.mode == kResampleLinear ? "2" : "4";
  if (grid) {
    macros["KILN_C"] = e.size(n.sym[1]);
    macros["KILN_H"] = e.size(x.sym[2]);
    macros["KILN_W"] = e.size(x.sym[3]);
    macros["KILN_HO"] = e.size(n.sym[2]);
    macros["KILN_WO"] = e.size(n.sym[3]);
    // An output index split into (n, c, i, j) without per-lane divisions (Emitter::udiv).
    macros["KILN_GRID_J(o)"] = e.umod("(o)", n.sym[3]);
    macros["KILN_GRID_I(o)"] = e.umod(e.udiv("(o)", n.sym[3]), n.sym[2]);
    macros["KILN_GRID_C(o)"] = e.umod(e.udiv("(o)", n.sym[3] * n.sym[2]), n.sym[1]);
    macros["KILN_GRID_N(o)"] = e.udiv("(o)", n.sym[3] * n.sym[2] * n.sym[1]);
    macros["KILN_PADDING"] = std::to_string(r.padding);
    macros["KILN_ALIGN"] = r.align_corners ? "1" : "0";
  } else {
    macros["KILN_COORD"] = std::to_string(r.coord);
    macros["KILN_NEAREST"] = std::to_string(r.nearest);
    macros["KILN_CUBIC_A"] = glsl_literal(r.cubic_a, DType::kF32);
    macros["KILN_EXCLUDE_OUTSIDE"] = r.exclude_outside ? "1" : "0";
  }
  KILN_ASSIGN_OR_RETURN(Kernel kern, start_kernel(e, n, KernelVariant::kResample, opt.caps));
  kern.local_size = std::min(kResampleLocalSize, opt.caps.max_workgroup_invocations);
  kern.groups = {groups_for(outputs, kern.local_size), 1, 1};
  macros["KILN_LOCAL_SIZE"] = std::to_string(kern.local_size) + "u";
  KILN_ASSIGN_OR_RETURN(kern.glsl, kernel_source("resample.comp", e, e.declarations() + "\n" + body,
                                                 std::move(macros), kern, opt.caps));
  return kern;
}

}  // namespace kiln
