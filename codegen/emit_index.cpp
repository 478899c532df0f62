// Index maths of the Emitter: broadcasting, permutes and reshapes as index expressions, the
// row-major linear index and its decomposition, and the index ops (slice, gather, concat,
// triu / tril, arange), which read their inputs at computed indices.
#include "codegen/emit.h"

#include <algorithm>
#include <cmath>

namespace kiln {

SymInt sym_numel(const SymShape& shape) {
  SymInt n = 1;
  for (const SymInt& d : shape) n = n * d;
  return n;
}

SymShape sym_contiguous_strides(const SymShape& shape) {
  SymShape strides(shape.size(), SymInt(1));
  SymInt s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    s = s * shape[k];
  }
  return strides;
}

Index Emitter::broadcast_index(const Index& index, const SymShape& out_shape,
                               const SymShape& in_shape) {
  Index in(in_shape.size());
  size_t offset = out_shape.size() - in_shape.size();
  for (size_t d = 0; d < in_shape.size(); ++d)
    in[d] = is_const(in_shape[d], 1) ? IndexExpr{"0u", 0} : index[d + offset];
  return in;
}

Index Emitter::decompose(const std::string& linear, const SymShape& shape,
                         const std::string& prefix, int last_lane) {
  Index index(shape.size());
  SymShape strides = sym_contiguous_strides(shape);
  for (size_t k = 0; k < shape.size(); ++k) {
    int lane = k + 1 == shape.size() ? last_lane : 0;
    if (is_const(shape[k], 1)) {
      index[k] = {"0u", 0};
      continue;
    }
    std::string e = linear;
    if (!is_const(strides[k], 1)) e = udiv(e, strides[k]);
    if (k != 0) e = umod(e, shape[k]);
    std::string var = prefix + std::to_string(k);
    add_statement("const uint " + var + " = " + e + ";");
    index[k] = {var, lane};
  }
  return index;
}

/// Splits the non-1 dims of a reshape's input and output into consecutive groups of equal
/// size products ([b, s, 512] -> [b, s, 8, 64]: {b}{s}{512 | 8, 64}). Returns false when the
/// sizes do not line up that way (symbolic products that cannot be compared).
using ReshapeGroups = std::vector<std::pair<std::vector<size_t>, std::vector<size_t>>>;

static void skip_ones(const SymShape& s, size_t& k) {
  while (k < s.size() && is_const(s[k], 1)) ++k;
}

static bool reshape_groups_from(const SymShape& in, const SymShape& out, size_t i, size_t o,
                                ReshapeGroups* g);

/// Grows the group (gi, go) of products (pi, po) until the products are equal, then groups the
/// rest. Two unequal symbolic products ([s0] against [8*s0]) may grow on either side: both are
/// tried, so a split such as [s1, s0, 512] -> [s1, 8*s0, 64] still finds its groups.
static bool grow_group(const SymShape& in, const SymShape& out, std::vector<size_t>& gi,
                       std::vector<size_t>& go, const SymInt& pi, const SymInt& po, size_t i,
                       size_t o, ReshapeGroups* g) {
  if (pi == po) {
    g->emplace_back(gi, go);
    if (reshape_groups_from(in, out, i, o, g)) return true;
    g->pop_back();
    return false;
  }
  std::vector<bool> sides;
  if (pi.is_constant() && po.is_constant())
    sides = {pi.constant_value() < po.constant_value()};
  else if (pi.is_constant() != po.is_constant())
    sides = {pi.is_constant()};  // a constant never equals a product holding a symbol
  else
    sides = {true, false};
  for (bool grow_in : sides) {
    size_t k = grow_in ? i : o;
    const SymShape& s = grow_in ? in : out;
    skip_ones(s, k);
    if (k >= s.size()) continue;
    std::vector<size_t>& grown = grow_in ? gi : go;
    grown.push_back(k);
    const bool ok = grow_in ? grow_group(in, out, gi, go, pi * s[k], po, k + 1, o, g)
                            : grow_group(in, out, gi, go, pi, po * s[k], i, k + 1, g);
    if (ok) return true;
    grown.pop_back();
  }
  return false;
}

static bool reshape_groups_from(const SymShape& in, const SymShape& out, size_t i, size_t o,
                                ReshapeGroups* g) {
  skip_ones(in, i), skip_ones(out, o);
  if (i >= in.size() || o >= out.size()) return i >= in.size() && o >= out.size();
  std::vector<size_t> gi = {i}, go = {o};
  return grow_group(in, out, gi, go, in[i], out[o], i + 1, o + 1, g);
}

static bool reshape_groups(const SymShape& in, const SymShape& out, ReshapeGroups* g) {
  g->clear();
  return reshape_groups_from(in, out, 0, 0, g);
}

bool Emitter::grouped_reshape_index(const SymShape& in_shape, const SymShape& out_shape,
                                    const Index& index, Index& in) {
  ReshapeGroups groups;
  if (!reshape_groups(in_shape, out_shape, &groups)) return false;
  for (size_t j = 0; j < in_shape.size(); ++j)
    if (is_const(in_shape[j], 1)) in[j] = {"0u", 0};
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& [ins, outs] = groups[gi];
    const bool last_group = gi + 1 == groups.size();
    if (ins.size() == 1 && outs.size() == 1) {
      in[ins[0]] = index[outs[0]];
      continue;
    }
    // The group's row-major linear index over its output dims.
    std::string lin;
    SymInt stride = 1;
    int lane = 0;
    for (size_t k = outs.size(); k-- > 0;) {
      const IndexExpr& x = index[outs[k]];
      std::string term = is_const(stride, 1) ? x.expr : x.expr + " * " + size(stride);
      lin = lin.empty() ? term : term + " + " + lin;
      stride = stride * out_shape[outs[k]];
      if (x.lane != 0) lane = -1;
    }
    // A merge into one input dim keeps the innermost lane when the group's inner output dim is
    // the output's last dim and a constant multiple of 4 (four lanes never cross a row).
    const size_t inner = outs.back();
    if (ins.size() == 1 && last_group && inner + 1 == out_shape.size() && index[inner].lane == 1 &&
        out_shape[inner].is_constant() && out_shape[inner].constant_value() % 4 == 0) {
      bool others_zero = true;
      for (size_t k = 0; k + 1 < outs.size(); ++k) others_zero &= index[outs[k]].lane == 0;
      if (others_zero) lane = 1;
    }
    std::string var = fresh("l");
    add_statement("const uint " + var + " = " + lin + ";");
    if (ins.size() == 1) {
      in[ins[0]] = {var, lane};
      continue;
    }
    // A split: decompose the group's linear index over its input dims. When the group's inner
    // input and output dims are both the tensor's last, of one constant size a multiple of 4,
    // and only the output's innermost index moves with the lane, the inner input index is that
    // index itself (its four lanes stay in one row) and the rest do not move with the lane: a
    // product's [P, C] read as [N, 1, H, W, C] whose P the sizes do not show equal to N·H·W.
    const bool keep_inner = ins.back() + 1 == in_shape.size() && inner + 1 == out_shape.size() &&
                            index[inner].lane == 1 && in_shape.back() == out_shape.back() &&
                            in_shape.back().is_constant() &&
                            in_shape.back().constant_value() % 4 == 0 && [&] {
                              for (size_t k = 0; k + 1 < outs.size(); ++k)
                                if (index[outs[k]].lane != 0) return false;
                              return true;
                            }();
    SymInt inner_size = 1;
    for (size_t k = ins.size(); k-- > 0;) {
      if (keep_inner && k + 1 == ins.size()) {
        in[ins[k]] = index[inner];
        inner_size = inner_size * in_shape[ins[k]];
        continue;
      }
      std::string e = var;
      if (!is_const(inner_size, 1)) e = udiv(e, inner_size);
      if (k != 0) e = umod(e, in_shape[ins[k]]);
      std::string v = fresh("rs");  // not "r": reductions name their dims r0, r1, ...
      add_statement("const uint " + v + " = " + e + ";");
      in[ins[k]] = {v, lane == 0 || keep_inner ? 0 : -1};
      inner_size = inner_size * in_shape[ins[k]];
    }
  }
  return true;
}

Index Emitter::view_input_index(const Node& n, const Index& index) {
  const SymShape& in_shape = graph_.node(n.inputs[0]).sym;
  const SymShape& out_shape = n.sym;
  if (n.op == OpKind::Permute) {
    Index in(in_shape.size());
    for (size_t i = 0; i < n.attrs.dims.size(); ++i) in[n.attrs.dims[i]] = index[i];
    return in;
  }
  if (n.op == OpKind::Expand) return broadcast_index(index, out_shape, in_shape);
  // Reshape.
  if (in_shape == out_shape) return index;
  SymShape in_nz, out_nz;
  for (const SymInt& d : in_shape)
    if (!is_const(d, 1)) in_nz.push_back(d);
  for (const SymInt& d : out_shape)
    if (!is_const(d, 1)) out_nz.push_back(d);
  Index in(in_shape.size());
  if (in_nz == out_nz) {  // only size-1 dims inserted or removed
    size_t k = 0;
    for (size_t j = 0; j < in_shape.size(); ++j) {
      if (is_const(in_shape[j], 1)) {
        in[j] = {"0u", 0};
        continue;
      }
      while (is_const(out_shape[k], 1)) ++k;
      in[j] = index[k++];
    }
    return in;
  }
  if (grouped_reshape_index(in_shape, out_shape, index, in)) return in;
  // General: through the row-major linear index.
  SymShape cout = sym_contiguous_strides(out_shape);
  std::string lin;
  bool others_zero = true;
  for (size_t k = 0; k < out_shape.size(); ++k) {
    if (is_const(out_shape[k], 1)) continue;
    if (k + 1 < out_shape.size() && index[k].lane != 0) others_zero = false;
    if (!lin.empty()) lin += " + ";
    lin += is_const(cout[k], 1) ? index[k].expr : index[k].expr + " * " + size(cout[k]);
  }
  if (lin.empty()) lin = "0u";
  std::string var = fresh("l");
  add_statement("const uint " + var + " = " + lin + ";");
  bool keep_last = !in_shape.empty() && !out_shape.empty() && in_shape.back() == out_shape.back() &&
                   others_zero && index.back().lane >= 0;
  bool all_zero = others_zero && (out_shape.empty() || index.back().lane == 0);
  Index dec = decompose(var, in_shape, fresh("r") + "_", 0);
  for (size_t j = 0; j < in_shape.size(); ++j) {
    dec[j].lane = all_zero ? 0 : (keep_last ? 0 : -1);
    if (is_const(in_shape[j], 1)) dec[j].lane = 0;
  }
  if (keep_last) dec.back() = index.back();
  return dec;
}

std::string Emitter::linear_index(const SymShape& shape, const Index& index) {
  SymShape strides = sym_contiguous_strides(shape);
  std::string lin;
  for (size_t k = 0; k < index.size(); ++k) {
    if (is_const(shape[k], 1)) continue;
    if (!lin.empty()) lin += " + ";
    lin += is_const(strides[k], 1) ? index[k].expr : index[k].expr + " * " + size(strides[k]);
  }
  return lin.empty() ? "0u" : lin;
}

/// A uint index read from an index tensor, clamped into [0, size) so that a bad index can never
/// address outside the buffer (the interpreter reports it as an error instead).
std::string Emitter::clamped_index(NodeId index_node, const Index& at, const SymInt& extent) {
  const Node& in = graph_.node(index_node);
  std::string var = fresh("j");
  if (in.meta.dtype != DType::kI64) {
    // 32-bit indices clamp in 32 bits, on every device.
    const std::string raw = glsl_convert(value(index_node, at), in.meta.dtype, DType::kI32);
    const std::string last =
        extent.is_constant() ? std::to_string(std::max<Dim>(extent.constant_value() - 1, 0)) + "u"
                             : "(max(" + size(extent) + ", 1u) - 1u)";
    const std::string r = fresh("jraw");  // (no prefix of decompose())
    add_statement("const int " + r + " = " + raw + ";");
    add_statement("const uint " + var + " = " + r + " < 0 ? 0u : min(uint(" + r + "), " + last +
                  ");");
    return var;
  }
  const std::string raw = value(index_node, at);
  if (int64_pairs()) {
    const std::string last =
        extent.is_constant() ? std::to_string(std::max<Dim>(extent.constant_value() - 1, 0)) + "u"
                             : "(max(" + size(extent) + ", 1u) - 1u)";
    add_statement("const uint " + var + " = kiln_i64_clamp_index(" + raw + ", " + last + ");");
    return var;
  }
  // The last valid index, never negative (an empty axis reads element 0, as static kernels do).
  const std::string last =
      extent.is_constant()
          ? "int64_t(" + std::to_string(std::max<Dim>(extent.constant_value() - 1, 0)) + ")"
          : "kiln_max_i64(int64_t(" + size(extent) + ") - int64_t(1), int64_t(0))";
  add_statement("const uint " + var + " = uint(kiln_min_i64(kiln_max_i64(" + raw +
                ", int64_t(0)), " + last + "));");
  return var;
}

std::string Emitter::concat_vec4(const Node& n, const Index& index) {
  // Along the last dim, every part a constant multiple of 4 wide, only the innermost index
  // moving with the lane: the four elements lie in one part. Each part is read at its clamped
  // vec4 (c - offset wraps when c < offset, and min() clamps it) and the owner is selected.
  const size_t rank = n.sym.size();
  const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + static_cast<int64_t>(rank) : n.attrs.axis;
  bool ok = rank > 0 && axis + 1 == static_cast<int64_t>(rank) && index.back().lane == 1;
  for (size_t k = 0; ok && k + 1 < rank; ++k) ok = index[k].lane == 0;
  for (NodeId in : n.inputs) {
    const SymInt& w = graph_.node(in).sym.back();
    ok = ok && w.is_constant() && w.constant_value() % 4 == 0 && w.constant_value() > 0 &&
         graph_.node(in).meta.dtype == DType::kF32;
  }
  if (!ok) {
    failed_ = true;
    return "vec4(0)";
  }
  fused_.push_back(n.id);
  const std::string& c = index.back().expr;
  std::vector<std::pair<int64_t, std::string>> parts;
  int64_t offset = 0;
  for (NodeId in : n.inputs) {
    const int64_t w = graph_.node(in).sym.back().constant_value();
    Index at = index;
    at.back() = {offset == 0 ? "min(" + c + ", " + std::to_string(w - 4) + "u)"
                             : "min(" + c + " - " + std::to_string(offset) + "u, " +
                                   std::to_string(w - 4) + "u)",
                 1};
    offset += w;
    parts.emplace_back(offset, value(in, at));
  }
  std::string result = parts.back().second;
  for (size_t p = parts.size() - 1; p-- > 0;)
    result = "(" + c + " < " + std::to_string(parts[p].first) + "u ? " + parts[p].second + " : " +
             result + ")";
  const std::string var = fresh("v");
  add_statement("const vec4 " + var + " = " + result + ";");
  return var;
}

std::string Emitter::index_op_value(const Node& n, const Index& index) {
  if (vec4_) {  // gathers and selects are scalar, but for a concat along the last dim (below)
    if (n.op == OpKind::Concat) return concat_vec4(n, index);
    failed_ = true;
    return "vec4(0)";
  }
  fused_.push_back(n.id);
  const int rank = n.meta.rank();
  const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis;
  const std::string T = glsl_compute_type(n.meta.dtype);
  switch (n.op) {
    case OpKind::Slice: {
      const SymInt& len = graph_.node(n.inputs[0]).sym[axis];
      SymSliceRange r =
          resolve_sym_slice(n.attrs.dims[0], n.attrs.dims[1], n.attrs.dims[2], len, size_facts());
      Index in = index;
      in[axis] = {"(" + size(r.start) + " + " + index[axis].expr + " * " +
                      std::to_string(n.attrs.dims[2]) + "u)",
                  -1};
      return value(n.inputs[0], in);
    }
    case OpKind::IndexSelect: {
      const Node& x = graph_.node(n.inputs[0]);
      Index in = index;
      Index at = graph_.node(n.inputs[1]).meta.rank() == 0 ? Index{} : Index{index[axis]};
      in[axis] = {clamped_index(n.inputs[1], at, x.sym[axis]), -1};
      return glsl_convert(value(x.id, in), x.meta.dtype, n.meta.dtype);
    }
    case OpKind::Gather: {
      const Node& x = graph_.node(n.inputs[0]);
      Index in = index;
      in[axis] = {clamped_index(n.inputs[1], index, x.sym[axis]), -1};
      return glsl_convert(value(x.id, in), x.meta.dtype, n.meta.dtype);
    }
    case OpKind::Concat: {
      // Every input is read at a clamped position; the one that owns the element is selected.
      // (A part whose symbolic size is 0 at run time is never read: the executable runs such a
      // call on the interpreter.)
      std::string result;
      SymInt offset = 0;
      std::vector<std::pair<SymInt, std::string>> parts;
      const std::string& i = index[axis].expr;
      for (NodeId in_id : n.inputs) {
        const Node& in = graph_.node(in_id);
        const SymInt& extent = in.sym[axis];
        if (is_const(extent, 0)) continue;
        Index at = index;
        if (offset.is_constant() && extent.is_constant()) {
          at[axis] = {"uint(clamp(int(" + i + ") - " + std::to_string(offset.constant_value()) +
                          ", 0, " + std::to_string(extent.constant_value() - 1) + "))",
                      -1};
        } else {  // uint: i - offset wraps when i < offset, and min() clamps it
          const std::string last = size(extent) + " - 1u";
          const std::string off = size(offset);
          at[axis] = {is_const(offset, 0) ? "min(" + i + ", " + last + ")"
                                          : "(" + i + " < " + off + " ? 0u : min(" + i + " - " +
                                                off + ", " + last + "))",
                      -1};
        }
        offset = offset + extent;
        parts.emplace_back(offset, glsl_convert(value(in_id, at), in.meta.dtype, n.meta.dtype));
      }
      // Every part empty along the axis: the result has no elements and is never read.
      if (parts.empty()) return T + "(0)";
      result = parts.back().second;
      for (size_t p = parts.size() - 1; p-- > 0;)
        result =
            "(" + i + " < " + size(parts[p].first) + " ? " + parts[p].second + " : " + result + ")";
      std::string var = fresh("v");
      add_statement("const " + T + " " + var + " = " + result + ";");
      return var;
    }
    case OpKind::GatherND: {
      // data[batch.., indices[i.., 0..m), rest..]: each index wraps if negative, then clamps.
      const Node& x = graph_.node(n.inputs[0]);
      const Node& ix = graph_.node(n.inputs[1]);
      const size_t b = static_cast<size_t>(n.attrs.index), q = ix.sym.size();
      const size_t m = static_cast<size_t>(ix.meta.shape.back());
      Index in(x.sym.size());
      for (size_t i = 0; i < b; ++i) in[i] = index[i];
      for (size_t j = 0; j < m; ++j) {
        Index at(index.begin(), index.begin() + static_cast<int64_t>(q - 1));
        at.push_back({std::to_string(j) + "u", 0});
        // In the indices' own type (int or int64): sizes fit either (kernels index in uint32).
        const DType it = ix.meta.dtype;
        const std::string IT = glsl_compute_type(it);
        const std::string extent = glsl_from_uint(size(x.sym[b + j]), it);
        const std::string w = fresh("w"), var = fresh("j");
        const std::string r = value(ix.id, at);
        const std::string zero = glsl_int_literal(0, it);
        add_statement("const " + IT + " " + w + " = " + glsl_binary("<", r, zero, it) + " ? " +
                      glsl_binary("+", r, extent, it) + " : " + r + ";");
        if (it == DType::kI64 && int64_pairs()) {
          add_statement("const uint " + var + " = kiln_i64_clamp_index(" + w + ", max(" +
                        size(x.sym[b + j]) + ", 1u) - 1u);");
        } else {
          const bool wide = it == DType::kI64;  // (kiln_int64.glsl: not GLSL's max)
          const std::string mx = wide ? "kiln_max_i64(" : "kiln_max_i32(",
                            mn = wide ? "kiln_min_i64(" : "kiln_min_i32(";
          add_statement("const uint " + var + " = uint(" + mn + mx + w + ", " + IT + "(0)), " +
                        mx + extent + " - " + IT + "(1), " + IT + "(0))));");
        }
        in[b + j] = {var, -1};
      }
      for (size_t t = b + m; t < x.sym.size(); ++t) in[t] = index[q - 1 + (t - b - m)];
      return glsl_convert(value(x.id, in), x.meta.dtype, n.meta.dtype);
    }
    case OpKind::Triu:
    case OpKind::Tril: {
      std::string v = value(n.inputs[0], index);
      std::string diff = "(int(" + index[rank - 1].expr + ") - int(" + index[rank - 2].expr + "))";
      std::string keep =
          diff + (n.op == OpKind::Triu ? " >= " : " <= ") + std::to_string(n.attrs.index);
      std::string var = fresh("v");
      add_statement("const " + T + " " + var + " = " + keep + " ? " + v + " : " + T + "(0);");
      return var;
    }
    case OpKind::Arange: {
      // start + i * step: in int64 for integral dtypes and bounds, else in float (no double
      // arithmetic: shaderFloat64 is rare). The interpreter rounds the double result.
      const double start = n.attrs.range[0], step = n.attrs.range[2];
      const bool integral =
          !is_floating(n.meta.dtype) && std::floor(start) == start && std::floor(step) == step;
      std::string e;
      if (integral) {
        note_dtype(DType::kI64);
        e = glsl_binary("+", glsl_literal(start, DType::kI64),
                        glsl_binary("*", glsl_from_uint(index[0].expr, DType::kI64),
                                    glsl_literal(step, DType::kI64), DType::kI64),
                        DType::kI64);
      } else {
        e = "(" + glsl_literal(start, DType::kF32) + " + float(" + index[0].expr + ") * " +
            glsl_literal(step, DType::kF32) + ")";
      }
      const DType from = integral ? DType::kI64 : DType::kF32;
      std::string var = fresh("v");
      add_statement("const " + T + " " + var + " = " + glsl_convert(e, from, n.meta.dtype) + ";");
      return var;
    }
    default:
      unreachable("not an index op");
  }
}

}  // namespace kiln
