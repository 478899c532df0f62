// Structural graph keys (graph/graph_key.h): graphs that print alike but differ get different
// keys, source locations do not count, every Attrs field counts; the persisted record's name
// (graph_cache_key) follows the structure; SHA-256 test vectors; the bounded executable cache.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "exec/executable_cache.h"
#include "codegen/lower.h"
#include "core/sha256.h"
#include "graph/graph.h"
#include "graph/graph_key.h"

namespace kiln {
namespace {

NodeId add(Graph& g, OpKind op, std::vector<NodeId> in, Attrs a = {}, const std::string& loc = "") {
  auto r = g.add(op, std::move(in), std::move(a), loc);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : -1;
}

GraphKey key_of(const Graph& g, const std::string& target = "t") {
  return GraphKey(g, target);
}

/// x (i64[8]) + full(value) : the graph of eager `x + value`.
Graph add_scalar_graph(double value, const std::string& loc = "") {
  Graph g;
  NodeId x = g.add_input({DType::kI64, {8}}, loc);
  Attrs a;
  a.scalar = value;
  a.dtype = DType::kI64;
  NodeId c = add(g, OpKind::Full, {}, a, loc);
  g.set_outputs({add(g, OpKind::Add, {x, c}, {}, loc)});
  return g;
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(digest_hex(sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(digest_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(digest_hex(sha256("abc"), 4), "ba7816bf");
}

TEST(GraphKey, ConstantsThatPrintAlikeGetDifferentKeys) {
  Graph a = add_scalar_graph(1234567891.0), b = add_scalar_graph(1234567892.0);
  ASSERT_EQ(a.to_string(), b.to_string());  // the premise: %.9g prints both as 1.23456789e+09
  EXPECT_FALSE(key_of(a) == key_of(b));
  EXPECT_NE(key_of(a).hex(), key_of(b).hex());
  EXPECT_TRUE(key_of(a) == key_of(add_scalar_graph(1234567891.0)));
  // Bit patterns: 0.0 and -0.0 are different constants.
  EXPECT_FALSE(key_of(add_scalar_graph(0.0)) == key_of(add_scalar_graph(-0.0)));
}

TEST(GraphKey, AttrsThatPrintAlikeGetDifferentKeys) {
  auto layer_norm = [](double eps) {
    Graph g;
    NodeId x = g.add_input({DType::kF32, {4, 8}});
    NodeId w = g.add_input({DType::kF32, {8}});
    NodeId b = g.add_input({DType::kF32, {8}});
    Attrs a;
    a.index = 1;
    a.scalar = eps;
    g.set_outputs({add(g, OpKind::LayerNorm, {x, w, b}, a)});
    return g;
  };
  Graph e1 = layer_norm(1e-5), e2 = layer_norm(1.0000000001e-5);
  ASSERT_EQ(e1.to_string(), e2.to_string());
  EXPECT_FALSE(key_of(e1) == key_of(e2));

  // Conv prints neither ceil_mode nor count_include_pad.
  auto conv = [](bool ceil_mode) {
    Graph g;
    NodeId x = g.add_input({DType::kF32, {1, 1, 5, 5}});
    NodeId w = g.add_input({DType::kF32, {1, 1, 3, 3}});
    Attrs a;
    a.window.strides = {1, 1};
    a.window.pads = {0, 0, 0, 0};
    a.window.dilations = {1, 1};
    a.window.ceil_mode = ceil_mode;
    g.set_outputs({add(g, OpKind::Conv, {x, w}, a)});
    return g;
  };
  Graph c1 = conv(false), c2 = conv(true);
  ASSERT_EQ(c1.to_string(), c2.to_string());
  EXPECT_FALSE(key_of(c1) == key_of(c2));
}

TEST(GraphKey, SourceLocationsDoNotCount) {
  Graph a = add_scalar_graph(3.0, "model.cpp:12"), b = add_scalar_graph(3.0, "other.cpp:99");
  ASSERT_NE(a.to_string(), b.to_string());
  EXPECT_TRUE(key_of(a) == key_of(b));
  EXPECT_EQ(key_of(a).hex(), key_of(b).hex());
  EXPECT_EQ(key_of(a).hash(), key_of(b).hash());
}

TEST(GraphKey, TargetAndStructureCount) {
  Graph a = add_scalar_graph(3.0);
  EXPECT_FALSE(key_of(a, "cpu") == key_of(a, "vulkan"));
  // Outputs, dtypes and sizes are part of the structure.
  Graph b = add_scalar_graph(3.0);
  b.set_outputs({b.outputs()[0], b.inputs()[0]});
  EXPECT_FALSE(key_of(a) == key_of(b));
  Graph f;
  NodeId x = f.add_input({DType::kI64, {9}});
  Attrs s;
  s.scalar = 3.0;
  s.dtype = DType::kI64;
  f.set_outputs({add(f, OpKind::Add, {x, add(f, OpKind::Full, {}, s)})});
  EXPECT_FALSE(key_of(a) == key_of(f));
}

TEST(GraphKey, SymbolicShapesByStructure) {
  auto graph = [](SymShape sym, Dim hint = 6) {
    Graph g;
    NodeId x = g.add_input({DType::kF32, {hint, 4}}, "", std::move(sym));
    g.set_outputs({add(g, OpKind::Relu, {x})});
    return g;
  };
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1);
  Graph a = graph({SymInt(s0), 4});
  EXPECT_TRUE(key_of(a) == key_of(graph({SymInt(s0), 4})));
  EXPECT_FALSE(key_of(a) == key_of(graph({SymInt(s1), 4})));
  EXPECT_FALSE(key_of(a) == key_of(graph({6, 4})));
  // The sizes at the hints count: codegen picks tiles and blocks from them.
  EXPECT_FALSE(key_of(a) == key_of(graph({SymInt(s0), 4}, 8)));
  // Canonical forms: s0 + s0 is 2*s0; 2*s0 and s0*s0 differ.
  EXPECT_TRUE(key_of(graph({SymInt(s0 + s0), 4})) ==
              key_of(graph({SymInt(SymExpr::constant(2) * s0), 4})));
  EXPECT_FALSE(key_of(graph({SymInt(s0 + s0), 4})) == key_of(graph({SymInt(s0 * s0), 4})));
  EXPECT_FALSE(key_of(graph({SymInt(sym_floordiv(s0, SymExpr::constant(2))), 4})) ==
               key_of(graph({SymInt(sym_mod(s0, SymExpr::constant(2))), 4})));
}

std::string attrs_bytes(const Attrs& a) {
  KeyWriter w;
  encode_attrs(a, w);
  return w.take();
}

TEST(GraphKey, EveryAttrsFieldCounts) {
  const Attrs base;
  const std::vector<std::pair<const char*, std::function<void(Attrs&)>>> changes = {
      {"index", [](Attrs& a) { a.index = 1; }},
      {"scalar", [](Attrs& a) { a.scalar = 1e-300; }},
      {"scalar_is_int", [](Attrs& a) { a.scalar_is_int = true; }},
      {"scalar_int", [](Attrs& a) { a.scalar_int = (int64_t{1} << 53) + 1; }},
      {"dtype", [](Attrs& a) { a.dtype = DType::kI64; }},
      {"dims", [](Attrs& a) { a.dims = {0}; }},
      {"keepdim", [](Attrs& a) { a.keepdim = true; }},
      {"axis", [](Attrs& a) { a.axis = -1; }},
      {"trans_a", [](Attrs& a) { a.trans_a = true; }},
      {"trans_b", [](Attrs& a) { a.trans_b = true; }},
      {"range", [](Attrs& a) { a.range = {0.0}; }},
      {"window.kernel", [](Attrs& a) { a.window.kernel = {0}; }},
      {"window.strides", [](Attrs& a) { a.window.strides = {0}; }},
      {"window.pads", [](Attrs& a) { a.window.pads = {0}; }},
      {"window.dilations", [](Attrs& a) { a.window.dilations = {0}; }},
      {"window.groups", [](Attrs& a) { a.window.groups = 2; }},
      {"window.ceil_mode", [](Attrs& a) { a.window.ceil_mode = true; }},
      {"window.count_include_pad", [](Attrs& a) { a.window.count_include_pad = true; }},
      {"window.storage_order", [](Attrs& a) { a.window.storage_order = 1; }},
  };
  std::vector<std::string> seen = {attrs_bytes(base)};
  for (const auto& [name, change] : changes) {
    Attrs a = base;
    change(a);
    ASSERT_FALSE(a == base) << name;
    const std::string bytes = attrs_bytes(a);
    for (const std::string& s : seen) EXPECT_NE(bytes, s) << name;
    seen.push_back(bytes);
  }
  // Length prefixes keep neighbouring lists apart.
  Attrs x, y;
  x.dims = {1, 2};
  x.range = {3.0};
  y.dims = {1};
  y.range = {2.0, 3.0};
  EXPECT_NE(attrs_bytes(x), attrs_bytes(y));
}

TEST(GraphCacheKey, PersistedRecordNameFollowsTheStructure) {
  CodegenOptions o;
  o.caps = TargetCaps::generic();
  Graph a = add_scalar_graph(1234567891.0), b = add_scalar_graph(1234567892.0);
  ASSERT_EQ(a.to_string(), b.to_string());
  const std::string ka = graph_cache_key(a, o);
  EXPECT_EQ(ka.size(), 32u);
  EXPECT_NE(ka, graph_cache_key(b, o));
  EXPECT_EQ(ka, graph_cache_key(add_scalar_graph(1234567891.0, "elsewhere.cpp:3"), o));
  CodegenOptions unfused = o, scalar = o, other = o, small = o;
  unfused.fuse = false;
  scalar.vectorize = false;
  other.caps.device_key = "another device";
  small.caps.max_shared_memory = 16384;
  for (const CodegenOptions* c : {&unfused, &scalar, &other, &small})
    EXPECT_NE(ka, graph_cache_key(a, *c));
}

std::shared_ptr<Executable> cpu_executable(double value) {
  auto exe = Executable::create(add_scalar_graph(value), Device::cpu(), {});
  EXPECT_TRUE(exe.ok()) << exe.status().to_string();
  return exe.ok() ? *exe : nullptr;
}

TEST(ExecutableCache, EvictsTheLeastRecentlyUsed) {
  ExecutableCache cache(2);
  const GraphKey k1(add_scalar_graph(1), "cpu"), k2(add_scalar_graph(2), "cpu"),
      k3(add_scalar_graph(3), "cpu");
  auto e1 = cpu_executable(1), e2 = cpu_executable(2), e3 = cpu_executable(3);
  EXPECT_EQ(cache.find(k1), nullptr);
  cache.insert(k1, e1);
  cache.insert(k2, e2);
  EXPECT_EQ(cache.find(k1), e1);  // k1 is now the most recently used
  cache.insert(k3, e3);           // evicts k2
  EXPECT_EQ(cache.find(k2), nullptr);
  EXPECT_EQ(cache.find(k1), e1);
  EXPECT_EQ(cache.find(k3), e3);
  cache.insert(k3, e1);  // present: kept as it was
  EXPECT_EQ(cache.find(k3), e3);
  ExecutableCache::Stats s = cache.stats();
  EXPECT_EQ(s.size, 2u);
  EXPECT_EQ(s.capacity, 2u);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.hits, 4u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(eager_executable_cache(0)->stats().capacity, kEagerCacheCapacity);
}

TEST(ExecutableCache, StaysBoundedUnderConcurrentUse) {
  ExecutableCache cache(4);
  std::vector<GraphKey> keys;
  std::vector<std::shared_ptr<Executable>> exes;
  for (int i = 0; i < 12; ++i) {
    keys.emplace_back(add_scalar_graph(i), "cpu");
    exes.push_back(cpu_executable(i));
  }
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 500; ++r) {
        const size_t i = static_cast<size_t>((r * 7 + t * 3) % 12);
        std::shared_ptr<Executable> e = cache.find(keys[i]);
        if (e && e != exes[i]) ++wrong;
        if (!e) cache.insert(keys[i], exes[i]);
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  ExecutableCache::Stats s = cache.stats();
  EXPECT_LE(s.size, 4u);
  EXPECT_EQ(s.hits + s.misses, 2000u);
}

}  // namespace
}  // namespace kiln
