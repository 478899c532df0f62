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

namespace {

void put(KeyWriter& w, int64_t v) {
  w.i64(v);
}
void put(KeyWriter& w, double v) {
  w.f64(v);
}
void put(KeyWriter& w, bool v) {
  w.boolean(v);
}
void put(KeyWriter& w, DType v) {
  w.u8(static_cast<uint8_t>(v));
}
void put(KeyWriter& w, const std::vector<int64_t>& v) {
  w.i64s(v);
}
void put(KeyWriter& w, const std::vector<double>& v) {
  w.f64s(v);
}

}  // namespace

void encode_attrs(const Attrs& attrs, KeyWriter& w) {
  // Every field, in the row order of graph/attrs.def (a new row bumps kGraphKeyFormat).
#define KILN_ATTR(type, name, init) put(w, attrs.name);
#define KILN_WINDOW_ATTR(type, name, init) put(w, attrs.window.name);
#define KILN_RESAMPLE_ATTR(type, name, init) put(w, attrs.resample.name);
#include "graph/attrs.def"
#undef KILN_RESAMPLE_ATTR
#undef KILN_WINDOW_ATTR
#undef KILN_ATTR
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
