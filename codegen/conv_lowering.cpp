// Convs as an explicit im2col and a row-block product (codegen/lower.h: lower_for_device).
//
// The implicit-GEMM conv kernel (lower_conv_gemm.cpp) gathers its input per window tap inside
// the product loop: index arithmetic, bounds checks and scalar loads for every multiply-add.
// Storing the gathered matrix first (one im2col kernel, memory-bound and cheap next to the
// product) lets the row-block kernel run the product on vec4 loads with nothing else in its
// loop. On lavapipe that is 1.8-4.3x faster on 3x3 convs of 128 to 512 channels and even on
// a 64-channel 56x56 one, whose im2col matrix is large next to its product (docs/perf.md).
//
// The product is A·Bᵀ: im2col rows [N·P, K] (one row per output position, its K = C·KH·KW taps
// in the weight's order) times the weight [C_out, K] transposed, giving [N·P, C_out]; a
// reshape and a permute (which consumers fold into their loads) put it back in NCHW, and the
// bias is the product's epilogue. A K that is not a multiple of 4 (the row-block kernel's vec4
// loads) is rounded up: zero taps at the end of each im2col row, zero columns appended to the
// weight. The row-block kernel takes a symbolic M, so symbolic batch
// and image sizes work. (The other orientation, weight · im2col columns, needs a static N·P and
// an im2col that divides every element's position out of its index: slower on lavapipe, measured
// in docs/perf.md; it remains for the 1x1 conv with stride 1 and no padding of one image, whose
// input read as [C, H·W] is already the columns matrix, so that no im2col runs at all.)
//
// A 1x1 conv over a 1x1 map (squeeze-excite blocks after their global mean) needs no im2col
// either: its input read as [N, C] is the im2col matrix and its [N, C_out] product is NCHW.
//
// Both forms leave the conv's output as a view of its product, and what follows the conv runs
// on the product where it can: an elementwise op whose tensor operands are all such views of
// its own shape (a ReLU, a HardSwish's arithmetic, a residual block's sum of two convs'
// outputs), its other operands scalars, moves before the view (the product's epilogue takes
// it, computed once per element rather than in every load of its consumers: an im2col loads
// each element up to KH·KW times); a concat of such views along the channels is the concat of
// the products' columns; a 2-D pool over such a view is a 3-D pool over the product read as
// [N, 1, H, W, C] (codegen/lower_pool_channels.cpp: vec4 loads of 4 channels per tap); and a
// 1x1 conv with unit strides and no padding over such a view reads the product itself as its
// im2col matrix. squeezenet at 2×128²: 47 kernels instead of 66 (docs/perf.md).
#include <algorithm>
#include <map>
#include <optional>

#include "codegen/lower.h"
#include "codegen/lower_internal.h"
#include "graph/window_size.h"

namespace kiln {
namespace {

/// The largest im2col matrix stored (bytes): past it (or past what one storage binding may
/// cover, which the im2col kernel writes whole) the implicit kernel, which stores nothing.
constexpr int64_t kMaxIm2colBytes = int64_t{256} << 20;

bool all_constant(const SymShape& s) {
  for (const SymInt& d : s)
    if (!d.is_constant()) return false;
  return true;
}

/// Unit strides, no padding.
bool unit_window(const Attrs::Window& w) {
  return w.strides == std::vector<int64_t>{1, 1} && w.pads == std::vector<int64_t>{0, 0, 0, 0};
}

bool direct_1x1(const Graph& g, const Node& n) {
  const Node& wt = g.node(n.inputs[1]);
  return n.meta.shape[0] == 1 && wt.meta.shape[2] == 1 && wt.meta.shape[3] == 1 &&
         unit_window(n.attrs.window);
}

/// A 1x1 conv without padding over a 1x1 map (a squeeze-excite block's convs after the global
/// mean): its im2col matrix is the input read as [N, C] and its output [N, C_out] is already
/// NCHW, so the product reads and writes them in place.
bool pointwise_on_1x1_map(const Graph& g, const Node& n) {
  const Shape& xs = g.node(n.inputs[0]).meta.shape;
  const Shape& ws = g.node(n.inputs[1]).meta.shape;
  const SymShape& xsym = g.node(n.inputs[0]).sym;
  return xsym[2].is_constant() && xsym[3].is_constant() && xs[2] == 1 && xs[3] == 1 && ws[2] == 1 &&
         ws[3] == 1 && n.attrs.window.pads == std::vector<int64_t>{0, 0, 0, 0};
}

enum class Form { kNone, kDirect, kABt, kPointwise };

/// How (and whether) conv `n` runs as im2col + product on a target with the row-block kernel.
Form form_of(const Graph& g, const Node& n, const TargetCaps& caps) {
  if (n.op != OpKind::Conv || n.attrs.window.groups != 1 || n.meta.rank() != 4) return Form::kNone;
  if (n.meta.dtype != DType::kF32) return Form::kNone;
  for (NodeId id : n.inputs)
    if (g.node(id).meta.dtype != DType::kF32) return Form::kNone;
  // The weight is the product's stored operand as it is (reshaped): a graph input or weight of
  // static shape. The channel count is static too (K = C·KH·KW must be a constant).
  const Node& w = g.node(n.inputs[1]);
  if (w.op != OpKind::Input && w.op != OpKind::Constant) return Form::kNone;
  if (!all_constant(w.sym) || !g.node(n.inputs[0]).sym[1].is_constant()) return Form::kNone;
  const Shape& xs = g.node(n.inputs[0]).meta.shape;
  const int64_t c_out = n.meta.shape[1], k = xs[1] * w.meta.shape[2] * w.meta.shape[3];
  const int64_t positions = n.meta.shape[0] * n.meta.shape[2] * n.meta.shape[3];
  // A K that is not a multiple of 4 (a 3-channel stem's 147 or 27 taps) is padded with zero
  // taps in the im2col rows and zero columns in the weight, when it is at least 16 (measured on
  // lavapipe: mobilenet_v3's 16-channel 3x3 stem as im2col + product about as fast as
  // conv_gemm, and its product's view lets the depthwise conv after it run as depthwise_nhwc:
  // 0.3 ms less over the three kernels; docs/perf.md).
  if (k < 4 || c_out < 16 || positions == 0) return Form::kNone;
  if (k % 4 != 0 && k < 16) return Form::kNone;
  if (k % 4 == 0 && pointwise_on_1x1_map(g, n)) return Form::kPointwise;  // stores no im2col
  const int64_t max_bytes =
      std::min<int64_t>(kMaxIm2colBytes, static_cast<int64_t>(caps.max_storage_range));
  if (im2col_row_length(k) * positions * 4 > max_bytes) return Form::kNone;
  // A·B only for the 1x1 conv of one image that needs no im2col; everything else A·Bᵀ, whose
  // im2col (rows layout) steps through a row's taps where the columns layout divides every
  // element's position out (measured on lavapipe: the columns layout made a 64-channel 56x56
  // conv slower than the implicit kernel, the rows layout faster; docs/perf.md).
  return all_constant(n.sym) && positions % 4 == 0 && k % 4 == 0 && direct_1x1(g, n) ? Form::kDirect
                                                                                     : Form::kABt;
}

Expected<NodeId> reshape(Graph& g, NodeId x, Shape shape, const std::string& loc) {
  Attrs a;
  a.dims = std::move(shape);
  return g.add(OpKind::Reshape, {x}, std::move(a), loc);
}

/// A lowered conv's output as a view of its product `matrix` [P, C_out] (P = N·OH·OW rows, one
/// per output position): permute(reshape(matrix, [N, OH, OW, C_out]), {0, 3, 1, 2}) for the
/// A·Bᵀ form (`nhwc`), reshape(matrix, [N, C_out, 1, 1]) for a pointwise conv on a 1x1 map.
struct MatrixView {
  NodeId matrix = -1;
  bool nhwc = false;
};
using MatrixViews = std::map<NodeId, MatrixView>;

/// `m` [P, C] (in `out`) viewed back as the NCHW tensor `like` of the graph (`nhwc`: through
/// [N, H, W, C] and a permute; else a reshape of a 1x1 map).
Expected<NodeId> view_back(Graph& out, NodeId m, bool nhwc, const Node& like) {
  if (!nhwc)
    return out.add(OpKind::Reshape, {m}, Attrs{.dims = like.meta.shape}, like.loc, like.sym);
  const Shape& s = like.meta.shape;
  KILN_ASSIGN_OR_RETURN(
      NodeId r, out.add(OpKind::Reshape, {m}, Attrs{.dims = {s[0], s[2], s[3], s[1]}}, like.loc,
                        {like.sym[0], like.sym[2], like.sym[3], like.sym[1]}));
  return out.add(OpKind::Permute, {r}, Attrs{.dims = {0, 3, 1, 2}}, like.loc);
}

/// Appends conv `n`'s lowering to `out` (its inputs already mapped to `x`, `w`, `b`); returns
/// the node that stands for the conv's output.
Expected<NodeId> lower_conv(Graph& out, const Graph& g, const Node& n, Form form, NodeId x,
                            NodeId w, NodeId b, MatrixViews& views) {
  const std::string& loc = n.loc;
  const Shape& ws = g.node(n.inputs[1]).meta.shape;
  const int64_t batch = n.meta.shape[0], c_out = n.meta.shape[1], oh = n.meta.shape[2],
                ow = n.meta.shape[3];
  const int64_t k = ws[1] * ws[2] * ws[3];
  KILN_ASSIGN_OR_RETURN(NodeId wm, reshape(out, w, {c_out, k}, loc));
  NodeId m = -1;
  if (form == Form::kDirect) {  // weight · x read as [C, H·W]: already NCHW for one image
    KILN_ASSIGN_OR_RETURN(NodeId bm, reshape(out, x, {ws[1], oh * ow}, loc));
    KILN_ASSIGN_OR_RETURN(m, out.add(OpKind::MatMul, {wm, bm}, {}, loc));
    if (b >= 0) {
      KILN_ASSIGN_OR_RETURN(NodeId bc, reshape(out, b, {c_out, 1}, loc));
      KILN_ASSIGN_OR_RETURN(m, out.add(OpKind::Add, {m, bc}, {}, loc));
    }
    return reshape(out, m, {1, c_out, oh, ow}, loc);
  }
  if (form == Form::kPointwise) {  // x read as [N, C] · weightᵀ: [N, C_out] is NCHW
    KILN_ASSIGN_OR_RETURN(NodeId am, out.add(OpKind::Reshape, {x}, Attrs{.dims = {batch, ws[1]}},
                                             loc, {n.sym[0], SymInt(ws[1])}));
    KILN_ASSIGN_OR_RETURN(m, out.add(OpKind::MatMul, {am, wm}, Attrs{.trans_b = true}, loc));
    if (b >= 0) {
      KILN_ASSIGN_OR_RETURN(m, out.add(OpKind::Add, {m, b}, {}, loc));
    }
    KILN_ASSIGN_OR_RETURN(NodeId view, view_back(out, m, false, n));
    views[view] = MatrixView{m, false};
    return view;
  }
  NodeId am = -1;
  if (const auto v = views.find(x);
      v != views.end() && v->second.nhwc && ws[2] == 1 && ws[3] == 1 && k % 4 == 0 &&
      unit_window(n.attrs.window) &&
      out.node(v->second.matrix).meta.shape == Shape{batch * oh * ow, k} &&
      out.node(v->second.matrix).sym[0] == n.sym[0] * n.sym[2] * n.sym[3]) {
    // A 1x1 conv's im2col matrix over a product's view is the product (its rows provably the
    // conv's positions, so that the view back below needs no guard).
    am = v->second.matrix;
  } else {
    Attrs cols;  // [N·P, K4]: K rounded up to a multiple of 4, zeros after the taps
    cols.window = n.attrs.window;
    cols.window.kernel = {ws[2], ws[3]};
    KILN_ASSIGN_OR_RETURN(am, out.add(OpKind::Im2col, {x}, cols, loc));
  }
  if (const int64_t k4 = im2col_row_length(k); k4 != k) {  // weight [C_out, K] | zeros
    Attrs zeros;
    zeros.dtype = DType::kF32;
    zeros.dims = {c_out, k4 - k};
    KILN_ASSIGN_OR_RETURN(NodeId z, out.add(OpKind::Full, {}, std::move(zeros), loc));
    Attrs cat;
    cat.axis = 1;
    KILN_ASSIGN_OR_RETURN(wm, out.add(OpKind::Concat, {wm, z}, std::move(cat), loc));
  }
  Attrs tb;
  tb.trans_b = true;
  KILN_ASSIGN_OR_RETURN(m, out.add(OpKind::MatMul, {am, wm}, std::move(tb), loc));
  if (b >= 0) {
    KILN_ASSIGN_OR_RETURN(m, out.add(OpKind::Add, {m, b}, {}, loc));
  }
  KILN_ASSIGN_OR_RETURN(NodeId view, view_back(out, m, true, n));
  views[view] = MatrixView{m, true};
  return view;
}

/// `m` viewed back as `like` (view_back) and recorded in `views`; nothing when the view does not
/// come out as `like`'s meta and symbolic shape (the nodes added are then left unread).
std::optional<NodeId> record_view(Graph& out, NodeId m, bool nhwc, const Node& like,
                                  MatrixViews& views) {
  Expected<NodeId> view = view_back(out, m, nhwc, like);
  if (!view.ok() || out.node(*view).meta != like.meta || out.node(*view).sym != like.sym)
    return std::nullopt;
  views[*view] = MatrixView{m, nhwc};
  return *view;
}

/// An elementwise op whose tensor operands are all views of products (`views`) of its own shape
/// and layout, its other operands scalars (a ReLU, a HardSwish's arithmetic, a residual add of
/// two convs' outputs), applied to the products before the view instead: the product's
/// epilogue takes it, it is computed once per element instead of in every load of every
/// consumer (an im2col reads each element up to KH·KW times), and a chain of such ops ends in
/// one stored matrix. Returns the view of the moved op, or nothing when `n` is not such an op
/// (or does not come out as it should: it is then copied as it is, and the nodes added here are
/// left unread for without_dead_nodes).
std::optional<NodeId> sink_through_views(Graph& out, const Node& n, const std::vector<NodeId>& ins,
                                         MatrixViews& views) {
  if (!is_elementwise(n.op) || n.meta.rank() != 4) return std::nullopt;
  std::optional<MatrixView> kind;
  std::optional<SymShape> matrix_sym;
  std::vector<NodeId> moved = ins;
  for (NodeId& id : moved) {
    const auto v = views.find(id);
    if (v == views.end()) {
      if (out.node(id).meta.rank() != 0) return std::nullopt;
      continue;
    }
    // Same shape as the op (no broadcast), same layout, and matrices of one symbolic shape.
    const Node& m = out.node(v->second.matrix);
    if (out.node(id).meta.shape != n.meta.shape || out.node(id).sym != n.sym) return std::nullopt;
    if ((kind && kind->nhwc != v->second.nhwc) || (matrix_sym && *matrix_sym != m.sym))
      return std::nullopt;
    kind = v->second;
    matrix_sym = m.sym;
    id = v->second.matrix;
  }
  if (!kind) return std::nullopt;
  Expected<NodeId> op = out.add(n.op, std::move(moved), n.attrs, n.loc);
  if (!op.ok() || out.node(*op).meta.dtype != n.meta.dtype ||
      out.node(*op).meta.numel() != n.meta.numel() || out.node(*op).sym != *matrix_sym)
    return std::nullopt;
  return record_view(out, *op, kind->nhwc, n, views);
}

/// A concat along the channels of products' NHWC views (a fire module's two expand convs):
/// the concat of the products along their columns, viewed back. Nothing when `n` is not one.
std::optional<NodeId> concat_on_matrices(Graph& out, const Node& n, const std::vector<NodeId>& ins,
                                         MatrixViews& views) {
  if (n.op != OpKind::Concat || n.meta.rank() != 4 || (n.attrs.axis != 1 && n.attrs.axis != -3))
    return std::nullopt;
  std::vector<NodeId> matrices;
  for (NodeId id : ins) {
    const auto v = views.find(id);
    if (v == views.end() || !v->second.nhwc) return std::nullopt;
    const Node& x = out.node(id);
    if (x.sym[0] != n.sym[0] || x.sym[2] != n.sym[2] || x.sym[3] != n.sym[3]) return std::nullopt;
    if (!matrices.empty() && out.node(v->second.matrix).sym[0] != out.node(matrices[0]).sym[0])
      return std::nullopt;
    matrices.push_back(v->second.matrix);
  }
  Expected<NodeId> cat = out.add(OpKind::Concat, std::move(matrices), Attrs{.axis = 1}, n.loc);
  if (!cat.ok()) return std::nullopt;
  return record_view(out, *cat, true, n, views);
}

/// A 2-D max or average pool over a product's view, as a 3-D pool over the product read as
/// [N, 1, H, W, C] (a window of 1 along C): its output is again a [N·OH·OW, C] product's view.
/// Neighbouring invocations then read neighbouring channels (one cache line for a subgroup's
/// loads, where the NCHW view put each lane's position 2·C floats from the next), and a 1x1
/// conv after the pool reads its output as its im2col matrix. Nothing when `n` is not such a
/// pool.
std::optional<NodeId> pool_on_matrix(Graph& out, const Node& n, const std::vector<NodeId>& ins,
                                     MatrixViews& views) {
  if ((n.op != OpKind::MaxPool && n.op != OpKind::AvgPool) || n.meta.rank() != 4)
    return std::nullopt;
  const auto v = views.find(ins[0]);
  if (v == views.end() || !v->second.nhwc) return std::nullopt;
  const Node& x = out.node(ins[0]);
  const Attrs::Window& w = n.attrs.window;
  if (w.kernel.size() != 2 || w.strides.size() != 2 || w.pads.size() != 4 ||
      w.dilations.size() != 2)
    return std::nullopt;
  const Shape& xs = x.meta.shape;
  Expected<NodeId> r =
      out.add(OpKind::Reshape, {v->second.matrix}, Attrs{.dims = {xs[0], 1, xs[2], xs[3], xs[1]}},
              n.loc, {x.sym[0], SymInt(1), x.sym[2], x.sym[3], x.sym[1]});
  if (!r.ok()) return std::nullopt;
  Attrs a = n.attrs;
  a.window.kernel = {w.kernel[0], w.kernel[1], 1};
  a.window.strides = {w.strides[0], w.strides[1], 1};
  a.window.pads = {w.pads[0], w.pads[1], 0, w.pads[2], w.pads[3], 0};
  a.window.dilations = {w.dilations[0], w.dilations[1], 1};
  Expected<NodeId> pool = out.add(n.op, {*r}, std::move(a), n.loc);
  if (!pool.ok()) return std::nullopt;
  const SymShape& ps = out.node(*pool).sym;
  if (ps.size() != 5 || ps[2] != n.sym[2] || ps[3] != n.sym[3]) return std::nullopt;
  const Shape& s = n.meta.shape;
  Expected<NodeId> m = out.add(OpKind::Reshape, {*pool}, Attrs{.dims = {s[0] * s[2] * s[3], s[1]}},
                               n.loc, {n.sym[0] * n.sym[2] * n.sym[3], n.sym[1]});
  if (!m.ok()) return std::nullopt;
  return record_view(out, *m, true, n, views);
}

/// Whether the matrix `m` (a product, or ops the lowering moved onto products) reads as vec4s
/// along its rows: every concat on the way from the products is of parts a multiple of 4 wide
/// (the emitter's vec4 concat); a narrower part needs a scalar load.
bool loads_as_vec4(const Graph& out, NodeId m) {
  std::vector<NodeId> stack{m};
  std::vector<bool> seen(out.size(), false);
  while (!stack.empty()) {
    const Node& n = out.node(stack.back());
    stack.pop_back();
    if (seen[static_cast<size_t>(n.id)]) continue;
    seen[static_cast<size_t>(n.id)] = true;
    if (n.op == OpKind::Concat) {
      for (NodeId in : n.inputs) {
        const SymInt& w = out.node(in).sym.back();
        if (!w.is_constant() || w.constant_value() % 4 != 0) return false;
      }
    } else if (!is_elementwise(n.op) && n.op != OpKind::Reshape) {
      continue;  // a stored product, pool or depthwise output
    }
    stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
  }
  return true;
}

/// A depthwise conv (one input channel per output channel, a multiple of 4 of them) over a
/// product's view, as depthwise_nhwc over the product read as [N, H, W, C]: its output is again
/// a [N·OH·OW, C] product's view, so that what follows it runs on a matrix too (its activation
/// moves before the view, a 1x1 conv after it reads that matrix as its im2col). Its kernel
/// loads each tap's 4 channels as one vec4 (codegen/lower_depthwise_nhwc.cpp). Nothing when
/// `n` is not such a conv.
std::optional<NodeId> depthwise_on_matrix(Graph& out, const Node& n,
                                          const std::vector<NodeId>& ins, MatrixViews& views) {
  if (n.op != OpKind::Conv || n.meta.rank() != 4 || n.meta.dtype != DType::kF32)
    return std::nullopt;
  const auto v = views.find(ins[0]);
  if (v == views.end() || !v->second.nhwc || !loads_as_vec4(out, v->second.matrix))
    return std::nullopt;
  const Node& x = out.node(ins[0]);
  const Node& wt = out.node(ins[1]);
  const Attrs::Window& w = n.attrs.window;
  if (!x.sym[1].is_constant() || x.meta.dtype != DType::kF32) return std::nullopt;
  const int64_t c = x.sym[1].constant_value();
  if (c % 4 != 0 || c == 0 || w.groups != c || n.meta.shape[1] != c || !all_constant(wt.sym) ||
      wt.meta.rank() != 4 || wt.meta.shape[1] != 1 || w.strides.size() != 2 ||
      w.pads.size() != 4 || w.dilations.size() != 2)
    return std::nullopt;
  // (Copied before out.add, which may move the nodes `x` and `wt` refer to.)
  Attrs a;
  a.window.kernel = {wt.meta.shape[2], wt.meta.shape[3]};
  const Shape xs = x.meta.shape;
  const SymShape xsym = x.sym;
  Expected<NodeId> r =
      out.add(OpKind::Reshape, {v->second.matrix}, Attrs{.dims = {xs[0], xs[2], xs[3], xs[1]}},
              n.loc, {xsym[0], xsym[2], xsym[3], xsym[1]});
  if (!r.ok()) return std::nullopt;
  a.window.strides = w.strides;
  a.window.pads = w.pads;
  a.window.dilations = w.dilations;
  std::vector<NodeId> operands{*r, ins[1]};
  if (ins.size() == 3) operands.push_back(ins[2]);
  Expected<NodeId> dw = out.add(OpKind::DepthwiseNhwc, std::move(operands), std::move(a), n.loc);
  if (!dw.ok()) return std::nullopt;
  const SymShape& ds = out.node(*dw).sym;
  if (ds[1] != n.sym[2] || ds[2] != n.sym[3]) return std::nullopt;
  const Shape& s = n.meta.shape;
  Expected<NodeId> m = out.add(OpKind::Reshape, {*dw}, Attrs{.dims = {s[0] * s[2] * s[3], s[1]}},
                               n.loc, {n.sym[0] * n.sym[2] * n.sym[3], n.sym[1]});
  if (!m.ok()) return std::nullopt;
  return record_view(out, *m, true, n, views);
}

/// `g` without the nodes no output depends on (the views that moved ops left unread, whose
/// reads would otherwise count as uses in fusion, and any node the traced graph left unread);
/// inputs and constants all stay, in order.
Graph without_dead_nodes(const Graph& g) {
  std::vector<bool> live(g.size(), false);
  for (NodeId o : g.outputs()) live[static_cast<size_t>(o)] = true;
  for (size_t i = g.size(); i-- > 0;) {
    const Node& n = g.node(static_cast<NodeId>(i));
    if (n.op == OpKind::Input || n.op == OpKind::Constant) live[i] = true;
    if (live[i])
      for (NodeId in : n.inputs) live[static_cast<size_t>(in)] = true;
  }
  Graph out;
  std::vector<NodeId> map(g.size(), -1);
  for (const Node& n : g.nodes()) {
    if (!live[static_cast<size_t>(n.id)]) continue;
    std::vector<NodeId> ins;
    for (NodeId in : n.inputs) ins.push_back(map[static_cast<size_t>(in)]);
    map[static_cast<size_t>(n.id)] = out.add_copy(n, std::move(ins));
  }
  std::vector<NodeId> outputs;
  for (NodeId o : g.outputs()) outputs.push_back(map[static_cast<size_t>(o)]);
  out.set_outputs(std::move(outputs));
  out.copy_symbols_of(g);
  return out;
}

}  // namespace

Expected<std::optional<Graph>> lower_for_device(const Graph& graph, const TargetCaps& caps) {
  if (!rowblock_supported(caps)) return std::optional<Graph>();
  bool any = false;
  for (const Node& n : graph.nodes()) any = any || form_of(graph, n, caps) != Form::kNone;
  if (!any) return std::optional<Graph>();
  Graph out;
  std::vector<NodeId> map(graph.size(), -1);
  // The lowered convs' outputs, and the ops moved before them, as views of their products.
  MatrixViews views;
  for (const Node& n : graph.nodes()) {
    std::vector<NodeId> ins;
    for (NodeId id : n.inputs) ins.push_back(map[static_cast<size_t>(id)]);
    const Form form = form_of(graph, n, caps);
    if (form == Form::kNone) {
      std::optional<NodeId> on_matrix = sink_through_views(out, n, ins, views);
      if (!on_matrix) on_matrix = concat_on_matrices(out, n, ins, views);
      if (!on_matrix) on_matrix = pool_on_matrix(out, n, ins, views);
      if (!on_matrix) on_matrix = depthwise_on_matrix(out, n, ins, views);
      if (on_matrix) {
        map[static_cast<size_t>(n.id)] = *on_matrix;
        continue;
      }
      map[static_cast<size_t>(n.id)] = out.add_copy(n, std::move(ins));
      continue;
    }
    // The direct 1x1 form reads its input as [C, H·W]: over a product's NHWC view that is a
    // transposed read, where the A·Bᵀ form reads the product itself.
    const auto v = views.find(ins[0]);
    const Form f = form == Form::kDirect && v != views.end() && v->second.nhwc ? Form::kABt : form;
    Expected<NodeId> id =
        lower_conv(out, graph, n, f, ins[0], ins[1], ins.size() == 3 ? ins[2] : -1, views);
    if (!id.ok()) return id.status().with_context("lowering conv %" + std::to_string(n.id));
    if (out.node(*id).meta != n.meta || out.node(*id).sym != n.sym)
      return internal_error("lowering conv %" + std::to_string(n.id) + " gave " +
                            out.node(*id).meta.str() + " " + sym_shape_str(out.node(*id).sym) +
                            " for " + n.meta.str() + " " + sym_shape_str(n.sym));
    map[static_cast<size_t>(n.id)] = *id;
  }
  std::vector<NodeId> outputs;
  for (NodeId id : graph.outputs()) outputs.push_back(map[static_cast<size_t>(id)]);
  out.set_outputs(std::move(outputs));
  out.copy_symbols_of(graph);
  // Views that moved ops and products reading a view's matrix left unread.
  return std::optional<Graph>(without_dead_nodes(out));
}

}  // namespace kiln
