/// \file graph_key.h
/// GraphKey: the structural identity of a graph compiled for a target, the key of every cache
/// of compiled graphs (the eager per-op cache, the segment cache of a compiled function, the
/// persisted compiled-graph records; docs/cache.md).
///
/// A key holds the canonical binary encoding of the graph's structure followed by the target's
/// encoding, and the SHA-256 of both. Two keys are equal exactly when their encodings are equal
/// (operator== compares the bytes, after the digest), so a hash collision can never hand out
/// another graph's kernels. The encoding is injective: every variable-length part is length-
/// prefixed and every alternative tagged.
///
/// What the graph encoding holds, per node in order: the op, the input ids, the dtype and the
/// concrete sizes (the meta; for symbolic dims the sizes at the hints, from which codegen takes
/// its tile and block choices), the symbolic shape (constants, and symbolic expressions by their
/// canonical structure: kind, symbol ids, coefficients, exponents, operands), and every field of
/// Attrs (doubles by their bit pattern); then the graph's input, constant and output lists.
/// Captured constants appear as their index and meta: an executable takes the constant tensors
/// with every call, and a compiled function guards their identity separately.
/// Not in the key: source locations (Node::loc), which change neither what a graph computes
/// nor the kernels it compiles to, and Graph::symbol_hints (the metas carry those sizes). Printing
/// (Graph::to_string) is for people only and never keys anything.
///
/// Immutable values; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "graph/graph.h"

namespace kiln {

/// Version of the canonical graph encoding; part of every key. Bump it whenever the encoding
/// changes, so that persisted records made by an older encoding are never matched.
inline constexpr uint32_t kGraphKeyFormat =
    14;  // 8: TargetCaps::loop_limit; 9: masked_select; 10: attrs.def order; 11: MatmulRates;
         // 12: TargetCaps::texels_cover_storage; 13: TargetCaps::texel_r32f;
         // 14: TargetCaps::scalar_texels_cover_storage, max_storage_range

/// Canonical little-endian byte writer for key encodings (graph structure and targets).
class KeyWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f64(double v);  ///< The bit pattern: -0.0 and 0.0, and NaN payloads, stay distinct.
  void str(std::string_view s);
  void i64s(std::span<const int64_t> v);
  void f64s(std::span<const double> v);
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

/// Appends the canonical encoding of `graph`'s structure (see the file comment) to `w`.
void encode_graph(const Graph& graph, KeyWriter& w);
/// Appends every field of `attrs` to `w`.
void encode_attrs(const Attrs& attrs, KeyWriter& w);

class GraphKey {
 public:
  GraphKey() = default;
  /// The key of `graph` compiled for `target`: the canonical encoding of what the compile
  /// depends on besides the graph (device identity, codegen switches), made with a KeyWriter.
  GraphKey(const Graph& graph, std::string_view target);

  /// The first 64 bits of the digest (for hash maps).
  uint64_t hash() const;
  /// The first 128 bits of the digest as 32 hex digits (names of persisted records).
  std::string hex() const { return digest_hex(digest_, 16); }
  const Sha256Digest& digest() const { return digest_; }
  /// The full encoding: format version, graph, target.
  const std::string& encoding() const { return encoding_; }

  friend bool operator==(const GraphKey& a, const GraphKey& b) {
    return a.digest_ == b.digest_ && a.encoding_ == b.encoding_;
  }

 private:
  std::string encoding_;
  Sha256Digest digest_{};
};

struct GraphKeyHash {
  size_t operator()(const GraphKey& k) const { return static_cast<size_t>(k.hash()); }
};

}  // namespace kiln
