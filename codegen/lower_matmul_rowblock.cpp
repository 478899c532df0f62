// MatMul fast path: f32 C = A·B or A·Bᵀ with both operands stored row-major (graph inputs,
// weights, or outputs of earlier kernels) and a B without batch dims, which is every linear layer.
// A's batch dims flatten into its rows. The kernel (shaders/matmul_rowblock.comp) gives each
// invocation a 32-row register block (fewer rows for a short product: rowblock_rows) and shares
// A's rows across a subgroup with subgroupShuffle; the unrolled body is generated here. Other
// matmuls use the tiled kernel (lower_matmul.cpp).
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"
#include "codegen/matmul_choice.h"

namespace kiln {
namespace {

// Rows of C per invocation (rowblock_rows in matmul_choice.h): four groups of 8 subgroup lanes.
// Measured on lavapipe (docs/perf.md): 32 rows with one vec4 column (A·B) or 4 scalar columns
// (A·Bᵀ) ran 1.2x faster than 16 rows with two vec4 (or 4 scalar) columns; 24, 40, 48 and 64 rows
// measured within noise of 32. A product of at most 16 rows (a linear layer at batch 1, a 1x1
// conv on a 2x2 map) gets a block of the next power of two instead, so that it does not compute
// up to 32x its rows.
constexpr uint32_t kRows = 32;
// The largest column panel of B (K x a workgroup's columns) that row blocks along x share
// from cache: a typical per-core L2.
constexpr uint64_t kPanelCacheBytes = uint64_t{1} << 20;

struct RowBlockShape {
  bool abt = false;
  /// A·Bᵀ whose rows are a whole number of the lane's columns: those are neighbours, stored as
  /// one vec2 or vec4 per row; else they are LX apart, stored one by one.
  bool abt_vec_out = false;
  /// A·Bᵀ stored as NCHW (kMatmulLayout): row i of the part is position row0 + i, column j an
  /// output channel; kiln_nchw(g, j) gives the element's index, and rows of 4 (one plane's
  /// neighbours) are one vec4.
  bool nchw = false;
  std::string nchw_row0;
  uint32_t rows = kRows;  // rows of C per invocation: 1, 2, 4, 8, 16 or 32
  uint32_t local_size = 0;
  uint32_t cols = 0;  // A·Bᵀ: scalar columns per invocation; A·B: vec4 columns
};

std::string u(uint32_t v) {
  return std::to_string(v) + "u";
}
std::string acc(uint32_t r, uint32_t c) {
  return "c" + std::to_string(r) + "_" + std::to_string(c);
}
/// A·B's accumulators: component l of row r's vec4 column c.
std::string acc(uint32_t r, uint32_t c, uint32_t l) {
  return acc(r, c) + "_" + std::to_string(l);
}

/// The workgroup size for C's `width` columns (A·Bᵀ: scalar columns; A·B: vec4 columns) at
/// `cols` per lane: the fewest lanes, a multiple of 8 and at most `local_size`, that cover them
/// in as many column blocks as `local_size` lanes would need. Lanes past the last column compute
/// clamped copies of it, which cost as much as real ones (lavapipe runs every subgroup of a
/// workgroup in full): a 1x1 conv's 16 output channels at 2 columns per lane kept 4 of 32 lanes
/// busy. Every subgroup still holds lanes 0..7, which the row shuffles read (the kernel needs a
/// subgroup size of at least 8).
uint32_t narrow_local_size(uint32_t local_size, uint32_t cols, int64_t width) {
  if (width <= 0) return local_size;
  const int64_t per_block = int64_t{local_size} * cols;
  const int64_t blocks = (width + per_block - 1) / per_block;
  const int64_t lanes = (width + cols * blocks - 1) / (cols * blocks);
  return static_cast<uint32_t>(std::min<int64_t>(local_size, (lanes + 7) / 8 * 8));
}

/// A vec4s each lane loads per 4 K: one per group of 8 rows.
uint32_t groups(const RowBlockShape& s) {
  return (s.rows + 7) / 8;
}

/// The invocation's first row, and the vec4 offsets of the A rows its lane loads: i0 + 8g + lane
/// for g < groups (clamped; rows past M are loaded but never stored).
std::string rows_prologue(const RowBlockShape& s, const std::string& m, const std::string& k4) {
  std::string b;
  b += "  const uint x = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID;\n";
  b += "  const uint i0 = rb * " + u(s.rows) + ";\n";
  for (uint32_t g = 0; g < groups(s); ++g)
    b += "  const uint ar" + std::to_string(g) + " = min(i0 + " + u(8 * g) + " + lane, " + m +
         " - 1u) * " + k4 + ";\n";
  return b;
}

/// For each row r and K lane kk: take A[i0 + r][k + kk] from lane r % 8 with subgroupShuffle and
/// apply `fma(r, c, kk)` for every column block c. Rows outer, K lanes inner: a row's accumulators
/// take their 4 updates in a row. lavapipe keeps loop-carried values in memory and writes each
/// back once per iteration under the loop's mask; in this order LLVM holds an accumulator in a
/// register across its 4 updates (1.12x over K lanes outer, measured).
template <typename Fma>
std::string shuffle_fmas(const RowBlockShape& s, const Fma& fma) {
  std::string b;
  for (uint32_t r = 0; r < s.rows; ++r) {
    for (uint32_t kk = 0; kk < 4; ++kk) {
      b += "    { const float av = subgroupShuffle(al" + std::to_string(r / 8) + "[" +
           std::to_string(kk) + "], " + u(r % 8) + ");";
      for (uint32_t c = 0; c < s.cols; ++c) b += " " + fma(r, c, kk);
      b += " }\n";
    }
  }
  return b;
}

/// kMatmulLayout's stores: per column, the lane's rows in groups of 4 (positions p .. p + 3 of
/// one image, neighbours in its NCHW plane: planes and blocks are whole vec4s, so M is too and
/// a group is all in C or all past it), one vec4 each.
std::string nchw_stores(const RowBlockShape& s, const std::string& m, const std::string& width) {
  std::string b;
  for (uint32_t r = 0; r < s.rows; r += 4) {
    for (uint32_t c = 0; c < s.cols; ++c) {
      const std::string j = "j" + std::to_string(c), i = "i0 + " + u(r);
      std::string value;
      for (uint32_t t = 0; t < 4; ++t)
        value += std::string(t ? ", " : "vec4(") + "kiln_out(i0 + " + u(r + t) + ", " + j + ", " +
                 acc(r + t, c) + ")";
      b += "  if (" + i + " < " + m + " && " + j + " < " + width + ") b0v.data[kiln_nchw(" +
           s.nchw_row0 + " + " + i + ", " + j + ") / 4u] = " + value + ");\n";
    }
  }
  return b;
}

/// The body of kiln_rowblock. Lane x owns output columns j_c = cb * LX * cols + c * LX + x
/// (c < cols; x * cols + c with abt_vec_out): scalar columns for A·Bᵀ, where it reads B's row
/// j_c (C's column) as vec4 along K, or vec4 columns for A·B, where it reads B's row k as vec4.
/// `width` is C's row length in those units. Accumulators are scalars, 4 per vec4 column for A·B:
/// with vec4 accumulators the kernel as spirv-opt's performance recipe leaves it ran 0.86x as fast
/// on lavapipe (measured); with scalars it runs as fast optimized as not.
std::string rowblock_body(const RowBlockShape& s, const std::string& m, const std::string& width,
                          const std::string& k4) {
  std::string b = rows_prologue(s, m, k4);
  for (uint32_t c = 0; c < s.cols; ++c) {
    const std::string cs = std::to_string(c);
    b += "  const uint j" + cs + " = cb * " + u(s.local_size * s.cols) + " + " +
         (s.abt_vec_out ? "x * " + u(s.cols) + " + " + u(c) : u(c * s.local_size) + " + x") + ";\n";
    b += "  const uint jc" + cs + " = min(j" + cs + ", " + width + " - 1u)" +
         (s.abt ? " * " + k4 : std::string()) + ";\n";
  }
  for (uint32_t r = 0; r < s.rows; ++r)
    for (uint32_t c = 0; c < s.cols; ++c) {
      if (s.abt) {
        b += "  float " + acc(r, c) + " = 0.0;\n";
      } else {
        for (uint32_t l = 0; l < 4; ++l) b += "  float " + acc(r, c, l) + " = 0.0;\n";
      }
    }
  b += "  for (uint k = 0u; k < " + k4 + "; ++k) {\n";
  for (uint32_t g = 0; g < groups(s); ++g)
    b += "    const vec4 al" + std::to_string(g) + " = KILN_LOAD_A(ar" + std::to_string(g) +
         " + k);\n";
  for (uint32_t kk = 0; kk < (s.abt ? 1u : 4u); ++kk) {
    for (uint32_t c = 0; c < s.cols; ++c) {
      const std::string cs = std::to_string(c);
      b += "    const vec4 bv" + cs + (s.abt ? "" : "_" + std::to_string(kk)) + " = KILN_LOAD_B(" +
           (s.abt ? "jc" + cs + " + k" : "(k * 4u + " + u(kk) + ") * " + width + " + jc" + cs) +
           ");\n";
    }
  }
  b += shuffle_fmas(s, [&s](uint32_t r, uint32_t c, uint32_t kk) {
    const std::string cs = std::to_string(c), ks = std::to_string(kk);
    if (s.abt) return acc(r, c) + " = fma(av, bv" + cs + "[" + ks + "], " + acc(r, c) + ");";
    std::string f;
    for (uint32_t l = 0; l < 4; ++l)
      f += std::string(l ? " " : "") + acc(r, c, l) + " = fma(av, bv" + cs + "_" + ks + "[" +
           std::to_string(l) + "], " + acc(r, c, l) + ");";
    return f;
  });
  b += "  }\n";
  if (s.nchw) return b + nchw_stores(s, m, width);
  for (uint32_t r = 0; r < s.rows; ++r) {
    const std::string i = "i0 + " + u(r);
    b += "  if (" + i + " < " + m + ") {";
    if (s.abt_vec_out) {  // columns j0 .. j0 + cols - 1, all in C when j0 is
      const std::string n = std::to_string(s.cols);
      std::string value;
      for (uint32_t c = 0; c < s.cols; ++c)
        value += std::string(c ? ", " : "vec" + n + "(") + "kiln_out(" + i + ", j" +
                 std::to_string(c) + ", " + acc(r, c) + ")";
      b += " if (j0 < " + width + ") b0w.data[((" + i + ") * " + width + " + j0) / " + n +
           "u] = " + value + ");";
      b += " }\n";
      continue;
    }
    for (uint32_t c = 0; c < s.cols; ++c) {
      const std::string j = "j" + std::to_string(c);
      std::string value;
      if (s.abt) {
        value = "kiln_out(" + i + ", " + j + ", " + acc(r, c) + ")";
      } else {
        for (int l = 0; l < 4; ++l)
          value += std::string(l ? ", " : "vec4(") + "kiln_out(" + i + ", " + j + " * 4u + " +
                   u(l) + ", " + acc(r, c, static_cast<uint32_t>(l)) + ")";
        value += ")";
      }
      b += " if (" + j + " < " + width + ") " + (s.abt ? "b0" : "b0v") + ".data[(" + i + ") * " +
           width + " + " + j + "] = " + value + ";";
    }
    b += " }\n";
  }
  return b;
}

/// Texel-buffer operands need the format, and element counts within the device's texel limit:
/// at every size, so an operand of symbolic size only where the limit covers any storage buffer.
bool use_texel_operands(const Node& a, const Node& b, const TargetCaps& caps) {
  if (!caps.texel_rgba32f) return false;
  if (!caps.texels_cover_storage)
    for (const Node* n : {&a, &b})
      for (const SymInt& d : n->sym)
        if (!d.is_constant()) return false;
  const uint64_t limit = caps.max_texel_elements;
  return static_cast<uint64_t>(a.meta.numel()) / 4 <= limit / 2 &&
         static_cast<uint64_t>(b.meta.numel()) / 4 <= limit;
}

}  // namespace

NodeId storage_of(const Graph& g, const FusionDecision& f, NodeId id) {
  while (g.node(id).op == OpKind::Reshape && !f.materialize[id]) id = g.node(id).inputs[0];
  return id;
}

Expected<Kernel> matmul_rowblock_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                        const CodegenOptions& opt, NodeId epilogue_root,
                                        NodeId layout_root) {
  const Node& n = g.node(root);
  const Node &a = g.node(n.inputs[0]), &b = g.node(n.inputs[1]);
  RowBlockShape s;
  s.abt = n.attrs.trans_b;
  s.local_size = s.abt ? 32 : 64;
  // A·Bᵀ: 4 columns per lane (128 per workgroup), or 2 where C has at most 64 columns (a conv's
  // output channels as the product's columns, codegen/conv_lowering.cpp), so that half the
  // lanes do not compute clamped copies (measured on lavapipe: docs/perf.md).
  const bool narrow = s.abt && b.sym[0].is_constant() && b.sym[0].constant_value() <= 64;
  s.cols = s.abt ? (narrow ? 2 : 4) : 1;
  s.nchw = layout_root >= 0;
  if (s.nchw && !s.abt) return internal_error("an NCHW-stored product that is not A·Bᵀ");
  // One vec2 or vec4 store per row instead of 2 or 4 scalar ones (lavapipe stores each lane's
  // value at a lane-varying address in a loop over the lanes).
  s.abt_vec_out =
      s.abt && !s.nchw && b.sym[0].is_constant() && b.sym[0].constant_value() % s.cols == 0;
  const int64_t k = a.sym.back().constant_value();
  SymInt m = 1;
  for (size_t d = 0; d + 1 < a.sym.size(); ++d) m = m * a.sym[d];
  const SymInt cols = s.abt ? b.sym[0] : b.sym[1];
  if (cols.is_constant())
    s.local_size = narrow_local_size(s.local_size, s.cols,
                                     s.abt ? cols.constant_value() : cols.constant_value() / 4);

  const NodeId out_id = s.nchw ? layout_root : epilogue_root >= 0 ? epilogue_root : root;
  Emitter e(g, fusion, false);
  e.set_root(out_id);
  e.bind_output(out_id);
  // Operands as rgba32f texel buffers where the device has them (an imageLoad costs a fraction
  // of a storage-buffer load on lavapipe), else as vec4 storage buffers.
  const bool texel = use_texel_operands(a, b, opt.caps);
  // The epilogue's scalar operands (a bias, a residual) as r32f texel buffers (never A or B:
  // fusion gives an epilogue that reads an operand to the tiled kernel).
  use_scalar_texels(e, opt.caps);
  if (texel) e.reserve_texel_bindings(2);
  const int a_binding = e.binding(storage_of(g, fusion, a.id)),
            b_binding = e.binding(storage_of(g, fusion, b.id));
  std::string operand_decls;
  if (texel) {
    for (int bb : {a_binding, b_binding})
      operand_decls += "layout(set = 0, binding = " + std::to_string(bb) +
                       ", rgba32f) uniform readonly imageBuffer kiln_t" + std::to_string(bb) +
                       ";\n";
    operand_decls += "#define KILN_LOAD_A(i) imageLoad(kiln_t" + std::to_string(a_binding) +
                     ", int(i))\n#define KILN_LOAD_B(i) imageLoad(kiln_t" +
                     std::to_string(b_binding) + ", int(i))\n";
  } else {
    e.use_binding(a_binding, true, false);
    e.use_binding(b_binding, true, false);
    operand_decls = "#define KILN_LOAD_A(i) b" + std::to_string(a_binding) +
                    "v.data[i]\n#define KILN_LOAD_B(i) b" + std::to_string(b_binding) +
                    "v.data[i]\n";
  }
  if (s.abt_vec_out) {  // C as vec2s or vec4s (declared here; binding 0 is also C's floats)
    operand_decls += "layout(std430, set = 0, binding = 0) buffer KilnB0w { vec" +
                     std::to_string(s.cols) + " data[]; } b0w;\n";
  } else if (s.abt) {
    e.use_binding(0, s.nchw, true);
  } else {
    e.store_output_vec4();
  }
  // M and the first row come from their own size slots (even when M is static), so the
  // executable can split a kernel whose A or C exceeds maxStorageBufferRange into row ranges.
  const int rows_slot = e.add_slot(m.expr()), row0_slot = e.add_slot(SymExpr::constant(0));
  const std::string m_glsl = "kiln_pc.p" + std::to_string(rows_slot),
                    row0_glsl = "kiln_pc.p" + std::to_string(row0_slot),
                    k4 = std::to_string(k / 4) + "u";
  const SymInt width = s.abt ? cols : SymInt(cols.constant_value() / 4);
  const std::string w_glsl = e.size(width);
  // kiln_out(i, j, acc): what element (i, j) of the flattened [M, N] output stores.
  std::string out_value;
  const std::string out_body = matmul_output_value(
      e, g, root, epilogue_root, "((" + row0_glsl + " + i) * " + e.size(cols) + " + j)", "acc",
      DType::kF32, &out_value);
  std::string body = "float kiln_out(uint i, uint j, float acc) {\n" + out_body + "  return " +
                     out_value + ";\n}\n\n";
  if (s.nchw) {  // position g = n·P + p, channel j: element (n·C + j)·P + p of the NCHW tensor
    const SymShape& nhwc = g.node(g.node(layout_root).inputs[0]).sym;
    const SymInt plane = nhwc[1] * nhwc[2];
    const std::string p_glsl = e.size(plane);
    body += "uint kiln_nchw(uint g, uint j) {\n  return (" + e.udiv("g", plane) + " * " +
            e.size(cols) + " + j) * " + p_glsl + " + " + e.umod("g", plane) + ";\n}\n\n";
    s.nchw_row0 = row0_glsl;
    if (!plane.is_constant() || plane.constant_value() % 4 != 0)
      return internal_error("an NCHW-stored product whose planes are not a static multiple of 4");
  }
  // Few rows at the sizes being compiled: a block of that many rows (rowblock_rows). When M is
  // symbolic the block keeps at least 8 rows, since later calls of the shape class may bring
  // more: at 256 x 1024 x 1024 on lavapipe an 8-row A·Bᵀ block ran 1.5x and a 4-row one 2.5x
  // slower than the 32-row block, while at 4 rows they ran 2x and 2.5x faster (gemm_variants,
  // docs/perf.md). One kernel holding a small and the 32-row block behind a branch on M ran
  // 20x slower on lavapipe than either alone, so there is one block size per kernel.
  int64_t m_now = 1;
  for (size_t d = 0; d + 1 < a.meta.shape.size(); ++d) m_now *= a.meta.shape[d];
  s.rows = rowblock_rows(m_now, !m.is_constant());
  if (s.nchw && s.rows < 4) return internal_error("an NCHW-stored product of fewer than 4 rows");
  body += "void kiln_rowblock(uint rb, uint cb) {\n" + rowblock_body(s, m_glsl, w_glsl, k4) + "}\n";
  const SymInt row_blocks = groups_for(m, s.rows),
               col_blocks = groups_for(width, s.local_size * s.cols);
  const std::string rb_glsl = "((" + m_glsl + " + " + u(s.rows - 1) + ") / " + u(s.rows) + ")",
                    cb_glsl = e.size(col_blocks);

  KILN_ASSIGN_OR_RETURN(Kernel kern,
                        start_kernel(e, g.node(out_id), KernelVariant::kMatmulRowBlock, opt.caps));
  if (epilogue_root >= 0) mark_epilogue(kern, n, g.node(epilogue_root));
  if (s.nchw) {  // the product (and its epilogue) and the NHWC view are this kernel's too
    const NodeId view = g.node(layout_root).inputs[0];
    for (NodeId id : {root, epilogue_root, view, g.node(view).inputs[0]})
      if (id >= 0) kern.fused_nodes.push_back(id);
    std::sort(kern.fused_nodes.begin(), kern.fused_nodes.end());
    kern.fused_nodes.erase(std::unique(kern.fused_nodes.begin(), kern.fused_nodes.end()),
                           kern.fused_nodes.end());
    if (epilogue_root < 0) kern.name = op_name(n.op);
  }
  kern.local_size = s.local_size;
  // Row blocks along x when a workgroup's column panel of B fits in a core's cache (the
  // shader's comment): every row block then reads the panel from cache.
  const uint64_t panel_bytes =
      static_cast<uint64_t>(k) * s.local_size * s.cols * (s.abt ? 1 : 4) * sizeof(float);
  const bool rows_on_x = panel_bytes <= kPanelCacheBytes;
  kern.groups = rows_on_x ? std::array<SymInt, 3>{row_blocks, col_blocks, SymInt(1)}
                          : std::array<SymInt, 3>{col_blocks, row_blocks, SymInt(1)};
  kern.loop_trips = SymInt(k / 4 + 1);  // K / 4 steps per row block
  Kernel::RowSplit split;
  split.rows_slot = rows_slot;
  split.row0_slot = row0_slot;
  split.a_binding = 1;
  split.a_row_bytes = static_cast<uint64_t>(k) * 4;
  split.c_row_elements = cols;
  split.rows_per_group = s.rows;
  split.row_axis = rows_on_x ? 0 : 1;
  split.c_whole = s.nchw;
  kern.row_split = split;
  if (texel)
    kern.texel_bindings = {static_cast<uint32_t>(a_binding), static_cast<uint32_t>(b_binding)};
  KILN_ASSIGN_OR_RETURN(kern.glsl, kernel_source("matmul_rowblock.comp", e,
                                                 e.declarations() + operand_decls + "\n" + body,
                                                 {{"KILN_LOCAL_SIZE", u(s.local_size)},
                                                  {"KILN_ROW_BLOCKS", rb_glsl},
                                                  {"KILN_COL_BLOCKS", cb_glsl},
                                                  {"KILN_ROWS_ON_X", rows_on_x ? "1" : "0"}},
                                                 kern, opt.caps));
  return kern;
}

}  // namespace kiln
