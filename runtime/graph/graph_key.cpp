// The canonical encoding of a graph's structure and the GraphKey built on it.
#include "graph/graph_key.h"

#include <bit>

namespace kiln {
namespace {

void encode_expr(const SymExpr& e, KeyWriter& w) {
  const SymKind kind = e.kind();
  w.u8(static_cast<uint8_t>(kind));
  switch (kind) {
    case SymKind::kConst:
      w.i64(e.constant_value());
      return;
    case SymKind::kSymbol:
      w.i64(e.symbol_id());
      return;
    case SymKind::kAdd:
      w.i64(e.add_constant());
      break;
    case SymKind::kMul:
    case SymKind::kFloorDiv:
    case SymKind::kMod:
    case SymKind::kMin:
    case SymKind::kMax:
      break;
  }
  const std::span<const SymExpr> args = e.args();
  w.u64(args.size());
  for (const SymExpr& a : args) encode_expr(a, w);
  w.i64s(e.ints());
}

void encode_sym_int(const SymInt& d, KeyWriter& w) {
  w.boolean(d.is_constant());
  if (d.is_constant())
    w.i64(d.constant_value());
  else
    encode_expr(d.expr(), w);
}

void encode_ids(std::span<const NodeId> ids, KeyWriter& w) {
  w.u64(ids.size());
  for (NodeId id : ids) w.i64(id);
}

}  // namespace

void KeyWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
}

void KeyWriter::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
}

void KeyWriter::f64(double v) {
  u64(std::bit_cast<uint64_t>(v));
}

void KeyWriter::str(std::string_view s) {
  u64(s.size());
  bytes_.append(s);
}

void KeyWriter::i64s(std::span<const int64_t> v) {
  u64(v.size());
  for (int64_t x : v) i64(x);
}

void KeyWriter::f64s(std::span<const double> v) {
  u64(v.size());
  for (double x : v) f64(x);
}

void encode_attrs(const Attrs& attrs, KeyWriter& w) {
  // Every field, in declaration order. The structured bindings stop compiling when a field is
  // added to Attrs, Attrs::Window or Attrs::Resample: add it here (one line) and bump
  // kGraphKeyFormat.
  const auto& [index, scalar, scalar_is_int, scalar_int, dtype, dims, keepdim, axis, trans_a,
               trans_b, range, window, resample] = attrs;
  w.i64(index);
  w.f64(scalar);
  w.boolean(scalar_is_int);
  w.i64(scalar_int);
  w.u8(static_cast<uint8_t>(dtype));
  w.i64s(dims);
  w.boolean(keepdim);
  w.i64(axis);
  w.boolean(trans_a);
  w.boolean(trans_b);
  w.f64s(range);
  const auto& [kernel, strides, pads, dilations, groups, ceil_mode, count_include_pad,
               storage_order, output_padding] = window;
  w.i64s(kernel);
  w.i64s(strides);
  w.i64s(pads);
  w.i64s(dilations);
  w.i64(groups);
  w.boolean(ceil_mode);
  w.boolean(count_include_pad);
  w.i64(storage_order);
  const auto& [mode, coord, nearest, cubic_a, exclude_outside, extrapolation, scales, roi, padding,
               align_corners] = resample;
  w.i64(mode);
  w.i64(coord);
  w.i64(nearest);
  w.f64(cubic_a);
  w.boolean(exclude_outside);
  w.f64(extrapolation);
  w.f64s(scales);
  w.f64s(roi);
  w.i64(padding);
  w.boolean(align_corners);
  w.i64s(output_padding);
}

void encode_graph(const Graph& graph, KeyWriter& w) {
  w.u64(graph.nodes().size());
  for (const Node& n : graph.nodes()) {
    // n.id is the node's position (Graph::verify); n.loc is deliberately left out.
    w.u8(static_cast<uint8_t>(n.op));
    encode_ids(n.inputs, w);
    w.u8(static_cast<uint8_t>(n.meta.dtype));
    w.i64s(n.meta.shape);
    w.u64(n.sym.size());
    for (const SymInt& d : n.sym) encode_sym_int(d, w);
    encode_attrs(n.attrs, w);
  }
  encode_ids(graph.inputs(), w);
  encode_ids(graph.constants(), w);
  encode_ids(graph.outputs(), w);
  w.u64(graph.unbacked_symbols().size());
  for (int s : graph.unbacked_symbols()) w.i64(s);
}

GraphKey::GraphKey(const Graph& graph, std::string_view target) {
  KeyWriter w;
  w.str("kiln-graph-key");
  w.u32(kGraphKeyFormat);
  encode_graph(graph, w);
  w.str(target);
  encoding_ = w.take();
  digest_ = sha256(encoding_);
}

uint64_t GraphKey::hash() const {
  uint64_t h = 0;
  for (int i = 0; i < 8; ++i) h |= uint64_t{digest_[static_cast<size_t>(i)]} << (8 * i);
  return h;
}

}  // namespace kiln
