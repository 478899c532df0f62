// Size-generic Vulkan kernels: symbolic graphs built directly (ShapeEnv + Graph), compiled once by
// Executable::create and run at many sizes against the interpreter on the instantiated graph.
// Each case also checks that no pipeline is created after the first size: sizes reach the kernels
// as push constants, so one compile serves the whole shape class.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "device/test_util.h"
#include "eager/interpreter.h"
#include "exec/calibration.h"  // ForcedMatmulKernel
#include "exec/executable.h"
#include "graph/graph.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;
using Values = std::vector<int64_t>;

/// Builds one symbolic graph: symbols with hints, inputs with symbolic shapes, ops.
class SymGraph {
 public:
  SymGraph() { g_.set_shape_env(&env_); }

  SymInt sym(int64_t hint) {
    return SymInt(env_.symbol(env_.create_symbol(hint, "test symbol " + std::to_string(hint))));
  }
  Shape at_hints(const SymShape& s) const {
    Values hints;
    for (int i = 0; i < env_.num_symbols(); ++i) hints.push_back(env_.info(i).hint);
    return evaluate_shape(s, hints);
  }
  NodeId input(DType dt, const SymShape& shape) {
    return g_.add_input(TensorMeta{dt, at_hints(shape)}, "", shape);
  }
  NodeId add(OpKind op, std::vector<NodeId> ins, Attrs attrs = {}, SymShape target = {}) {
    if (!target.empty() && (op == OpKind::Reshape || op == OpKind::Expand))
      attrs.dims = at_hints(target);
    auto r = g_.add(op, std::move(ins), attrs, "", target);
    EXPECT_TRUE(r.ok()) << op_name(op) << ": " << r.status().to_string();
    return r.ok() ? *r : 0;
  }
  Graph finish(std::vector<NodeId> outputs) {
    g_.set_outputs(std::move(outputs));
    g_.canonicalize(env_);
    return g_;
  }

 private:
  ShapeEnv env_;
  Graph g_;
};

/// Values for input `i` at symbol values `v` (default: uniform floats / small ints).
using DistFn = std::function<Dist(size_t input, const Values& v)>;

class DynamicCodegen : public test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    rng_.seed(test::seed_for_current_test());
    anchor_ = Tensor::full({64}, 0.0, DType::kF32, Device::vulkan());
  }
  void TearDown() override {
    anchor_ = Tensor();
    DeviceTest::TearDown();
  }

  /// Compiles `g` once and runs it at every binding in `sizes`, comparing every output with the
  /// interpreter on g.instantiate(values). Returns the executable for further checks.
  std::shared_ptr<Executable> check(const std::string& label, const Graph& g,
                                    const std::vector<Values>& sizes, Tol tol,
                                    const DistFn& dist = {}) {
    SCOPED_TRACE(label);
    EXPECT_TRUE(g.is_symbolic()) << label;
    auto exe = Executable::create(g, Device::vulkan(), CompileOptions{});
    EXPECT_TRUE(exe.ok()) << exe.status().to_string();
    if (!exe.ok()) return nullptr;
    EXPECT_TRUE(allow_cpu_fallback_ || (*exe)->on_device()) << label;
    if (std::getenv("DUMP_GLSL") && (*exe)->plan())
      for (const Kernel& k : (*exe)->plan()->kernels) std::cout << k.name << ":\n" << k.glsl;
    uint64_t pipelines = 0;
    for (size_t c = 0; c < sizes.size(); ++c) {
      const Values& v = sizes[c];
      std::string at = label + " at (";
      for (size_t i = 0; i < v.size(); ++i) at += (i ? ", " : "") + std::to_string(v[i]);
      at += ")";
      SCOPED_TRACE(at);
      auto inst = g.instantiate(v);
      EXPECT_TRUE(inst.ok()) << inst.status().to_string();
      if (!inst.ok()) continue;
      std::vector<HostTensor> hosts;
      std::vector<Tensor> on_device;
      for (size_t i = 0; i < inst->inputs().size(); ++i) {
        const TensorMeta& m = inst->node(inst->inputs()[i]).meta;
        Dist d = dist ? dist(i, v) : (is_floating(m.dtype) ? Dist{} : Dist{-9, 9});
        std::vector<double> vals = test::random_values(m.dtype, m.numel(), rng_, d);
        HostTensor h(m);
        for (int64_t k = 0; k < m.numel(); ++k) h.set(k, vals[static_cast<size_t>(k)]);
        hosts.push_back(std::move(h));
        on_device.push_back(test::tensor_from_doubles(m.dtype, m.shape, vals, Device::vulkan()));
      }
      std::vector<const HostTensor*> ptrs;
      for (const HostTensor& h : hosts) ptrs.push_back(&h);
      auto want = interpret(*inst, ptrs, {});
      EXPECT_TRUE(want.ok()) << want.status().to_string();
      if (!want.ok()) continue;
      size_t bytes = 0;
      for (const HostTensor& h : *want) bytes += h.data.size();
      test::poison_device_memory(2 * bytes + (64u << 10));
      auto got = (*exe)->run(on_device, {}, v);
      EXPECT_TRUE(got.ok()) << got.status().to_string();
      if (!got.ok()) continue;
      EXPECT_EQ(got->size(), want->size());
      for (size_t o = 0; o < got->size() && o < want->size(); ++o) {
        const HostTensor& w = (*want)[o];
        const Tensor& t = (*got)[o];
        EXPECT_EQ(t.device(), Device::vulkan());
        EXPECT_EQ(t.meta(), w.meta) << at << " output " << o;
        if (!(t.meta() == w.meta)) continue;
        std::vector<double> expected(static_cast<size_t>(w.meta.numel()));
        for (int64_t k = 0; k < w.meta.numel(); ++k) expected[static_cast<size_t>(k)] = w.get(k);
        EXPECT_TRUE(test::values_close(t.to_doubles(), expected, tol))
            << at << " output " << o << " " << w.meta.str();
      }
      if (c == 0) pipelines = runtime_counters().pipelines_created;
    }
    EXPECT_EQ(runtime_counters().pipelines_created, pipelines)
        << label << ": a later size created a pipeline";
    return exe.ok() ? *exe : nullptr;
  }

  static bool has_variant(const Executable& exe, KernelVariant v) {
    if (!exe.plan()) return false;
    for (const Kernel& k : exe.plan()->kernels)
      if (k.variant == v) return true;
    return false;
  }

  std::mt19937 rng_;
  Tensor anchor_;
};

Attrs full(double v) {
  return Attrs{.scalar = v, .dtype = DType::kF32};
}

TEST_F(DynamicCodegen, ElementwiseChainWithBroadcasting) {
  SymGraph b;
  SymInt s0 = b.sym(7), s1 = b.sym(9);
  NodeId x = b.input(DType::kF32, {s0, s1});
  NodeId y = b.input(DType::kF32, {1, s1});  // constant-1 dim broadcasts
  NodeId z = b.input(DType::kF32, {s0, 1});
  NodeId w = b.input(DType::kF32, {s1});  // lower rank
  NodeId two = b.add(OpKind::Full, {}, full(2.0));
  NodeId t = b.add(OpKind::Mul, {x, y});
  t = b.add(OpKind::Add, {t, z});
  t = b.add(OpKind::Sub, {t, w});
  t = b.add(OpKind::Mul, {t, two});
  NodeId out = b.add(OpKind::Tanh, {b.add(OpKind::Relu, {t})});
  NodeId cmp = b.add(OpKind::Gt, {x, z});  // a second (bool) output
  Graph g = b.finish({out, cmp});
  auto exe =
      check("elementwise broadcast chain", g,
            {{7, 9}, {2, 2}, {3, 5}, {37, 129}, {300, 3}, {5, 7}, {2, 1000}}, Tol{1e-5, 1e-6});
  ASSERT_TRUE(exe);
  ASSERT_TRUE(exe->on_device());
  for (const Kernel& k : exe->plan()->kernels) {
    EXPECT_FALSE(k.size_slots.empty()) << k.name;
    EXPECT_NE(k.glsl.find("uniform KilnSizes"), std::string::npos) << k.name;
    EXPECT_EQ(k.num_bindings(), k.bindings.size() + 1) << k.name;
  }
}

TEST_F(DynamicCodegen, Vec4NeedsAStaticInnermostMultipleOfFour) {
  {
    SymGraph b;
    SymInt s0 = b.sym(40);
    NodeId x = b.input(DType::kF32, {s0, 64});
    NodeId bias = b.input(DType::kF32, {64});
    NodeId col = b.input(DType::kF32, {s0, 1});
    NodeId t = b.add(OpKind::Add, {b.add(OpKind::Mul, {x, col}), bias});
    Graph g = b.finish({b.add(OpKind::Sigmoid, {t})});
    auto exe = check("vec4 [s0, 64]", g, {{40}, {2}, {3}, {37}, {1001}, {5}}, Tol{1e-5, 1e-6});
    ASSERT_TRUE(exe);
    EXPECT_TRUE(has_variant(*exe, KernelVariant::kElementwiseVec4));
  }
  {
    SymGraph b;
    SymInt s0 = b.sym(8);
    NodeId x = b.input(DType::kF32, {s0, 6});
    Graph g = b.finish({b.add(OpKind::Exp, {x})});
    auto exe = check("scalar [s0, 6]", g, {{8}, {2}, {3}, {129}}, Tol{1e-5, 1e-6});
    ASSERT_TRUE(exe);
    EXPECT_TRUE(has_variant(*exe, KernelVariant::kElementwise));
  }
  {
    // The innermost dim is symbolic: scalar, even when the hint is a multiple of 4.
    SymGraph b;
    SymInt s0 = b.sym(3), s1 = b.sym(16);
    NodeId x = b.input(DType::kF32, {s0, s1});
    Graph g = b.finish({b.add(OpKind::Neg, {x})});
    auto exe = check("scalar [s0, s1]", g, {{3, 16}, {2, 5}, {7, 3}, {4, 130}}, Tol::exact());
    ASSERT_TRUE(exe);
    EXPECT_FALSE(has_variant(*exe, KernelVariant::kElementwiseVec4));
  }
}

TEST_F(DynamicCodegen, ReductionsOverSymbolicAndStaticAxes) {
  const std::vector<Values> sizes = {{2, 2}, {3, 300}, {37, 129}, {5, 127}, {130, 3}, {2, 1000}};
  for (int64_t r_hint : {300, 10}) {  // workgroup and thread variants
    SymGraph b;
    SymInt s0 = b.sym(6), s1 = b.sym(r_hint);
    NodeId x = b.input(DType::kF32, {s0, s1});
    NodeId sum = b.add(OpKind::Sum, {b.add(OpKind::Exp, {x})}, Attrs{.dims = {1}});
    NodeId mean = b.add(OpKind::Mean, {x}, Attrs{.dims = {1}, .keepdim = true});
    NodeId mx = b.add(OpKind::Max, {x}, Attrs{.dims = {0}});
    NodeId all = b.add(OpKind::Sum, {x}, Attrs{.dims = {0, 1}});
    Graph g = b.finish({sum, mean, mx, all});
    auto exe = check("reductions, row hint " + std::to_string(r_hint), g, sizes, Tol{1e-4, 1e-4});
    ASSERT_TRUE(exe);
    EXPECT_TRUE(has_variant(
        *exe, r_hint >= 128 ? KernelVariant::kReduceWorkgroup : KernelVariant::kReduceThread));
  }
  {
    SymGraph b;
    SymInt s0 = b.sym(5);
    NodeId x = b.input(DType::kF32, {s0, 200});
    NodeId y = b.input(DType::kI32, {s0, 3});
    Graph g = b.finish(
        {b.add(OpKind::Sum, {x}, Attrs{.dims = {1}}), b.add(OpKind::Min, {y}, Attrs{.dims = {1}})});
    check("reduce a static axis", g, {{5}, {2}, {3}, {77}}, Tol{1e-4, 1e-4});
  }
}

TEST_F(DynamicCodegen, RowNormsOverSymbolicRowsAndLengths) {
  const auto rows_dist = [](size_t, const Values&) { return Dist{-6, 6}; };
  {
    SymGraph b;
    SymInt s0 = b.sym(9);
    NodeId x = b.input(DType::kF32, {s0, 64});
    Graph g = b.finish({b.add(OpKind::Softmax, {x}, Attrs{.axis = -1}),
                        b.add(OpKind::LogSoftmax, {x}, Attrs{.axis = 1})});
    check("softmax symbolic rows", g, {{9}, {2}, {3}, {130}}, Tol{2e-6, 4e-6}, rows_dist);
  }
  for (int64_t r_hint : {300, 10}) {  // workgroup-per-row and thread-per-row
    SymGraph b;
    SymInt s0 = b.sym(r_hint);
    NodeId x = b.input(DType::kF32, {4, s0});
    NodeId xt = b.input(DType::kF32, {s0, 3});
    NodeId w = b.input(DType::kF32, {s0});
    NodeId bias = b.input(DType::kF32, {s0});
    Graph g = b.finish({b.add(OpKind::Softmax, {x}, Attrs{.axis = 1}),
                        b.add(OpKind::LogSoftmax, {xt}, Attrs{.axis = 0}),
                        b.add(OpKind::LayerNorm, {x, w, bias}, Attrs{.index = 1, .scalar = 1e-5})});
    check("row norms, length hint " + std::to_string(r_hint), g,
          {{r_hint}, {2}, {3}, {255}, {257}, {1000}, {7}}, Tol{1e-5, 2e-5}, rows_dist);
  }
}

TEST_F(DynamicCodegen, MatmulSymbolicMNKBatchAndTransposes) {
  const auto dist = [](size_t, const Values&) { return Dist{-1, 1}; };
  const Tol tol{1e-4, 1e-4};
  for (int64_t hint : {70, 10}) {  // large and small tiles
    SymGraph b;
    SymInt m = b.sym(hint), k = b.sym(hint + 3), n = b.sym(hint + 1), batch = b.sym(3);
    NodeId a = b.input(DType::kF32, {batch, m, k});
    NodeId bb = b.input(DType::kF32, {k, n});
    NodeId at = b.input(DType::kF32, {k, m});
    NodeId bt = b.input(DType::kF32, {batch, n, k});
    NodeId v = b.input(DType::kF32, {k});
    NodeId p0 = b.add(OpKind::MatMul, {a, bb});
    NodeId p1 = b.add(OpKind::MatMul, {at, bt}, Attrs{.trans_a = true, .trans_b = true});
    NodeId p2 = b.add(OpKind::MatMul, {a, v});
    NodeId p3 = b.add(OpKind::MatMul, {b.add(OpKind::Relu, {a}), bt}, Attrs{.trans_b = true});
    Graph g = b.finish({p0, p1, p2, p3});
    check("matmul, tile hint " + std::to_string(hint), g,
          {{hint, hint + 3, hint + 1, 3},
           {2, 2, 2, 2},
           {3, 5, 7, 2},
           {65, 33, 130, 3},
           {17, 100, 2, 5}},
          tol, dist);
  }
}

// The row-block kernel over a symbolic M compiled at few rows: its block is the power of two at
// or above the rows at compile time but at least 8 (codegen/matmul_choice.h), and must stay
// right at every later M of the class, with a bias epilogue. The kernel is forced: the device's
// calibrated rates might pick the tiled one.
TEST_F(DynamicCodegen, MatmulRowBlockCompiledAtFewRows) {
  const auto dist = [](size_t, const Values&) { return Dist{-1, 1}; };
  for (int64_t hint : {3, 12}) {
    for (bool tb : {false, true}) {
      SymGraph b;
      SymInt m = b.sym(hint);
      NodeId a = b.input(DType::kF32, {m, 36});
      NodeId w = b.input(DType::kF32, tb ? SymShape{20, 36} : SymShape{36, 20});
      NodeId bias = b.input(DType::kF32, {20});
      NodeId p = b.add(OpKind::MatMul, {a, w}, Attrs{.trans_b = tb});
      Graph g = b.finish({b.add(OpKind::Add, {p, bias})});
      const ForcedMatmulKernel rowblock(MatmulRates::Force::kRowBlock);
      auto exe =
          check("row-block at " + std::to_string(hint) + (tb ? " rows, A·Bᵀ" : " rows, A·B"), g,
                {{hint}, {2}, {7}, {8}, {9}, {17}, {33}, {100}, {257}}, Tol{1e-5, 1e-5}, dist);
      if (!exe || !exe->plan()) continue;
      auto dev = vk::VulkanDevice::default_device();
      if (!dev.ok() || !(*dev)->info().subgroup_shuffle || (*dev)->info().subgroup_size < 8)
        continue;
      const std::string rows = hint <= 8 ? "i0 = rb * 8u" : "i0 = rb * 16u";
      bool found = false;
      for (const Kernel& k : exe->plan()->kernels)
        found = found || k.glsl.find(rows) != std::string::npos;
      EXPECT_TRUE(found) << rows;
    }
  }
}

TEST_F(DynamicCodegen, IndexOps) {
  {  // slices: negative start, a step, a start past the end (empty at small sizes)
    SymGraph b;
    SymInt s0 = b.sym(10);
    NodeId x = b.input(DType::kF32, {s0, 8});
    NodeId tail = b.add(OpKind::Slice, {x}, Attrs{.dims = {-3, 100, 1}, .axis = 0});
    NodeId step = b.add(OpKind::Slice, {x}, Attrs{.dims = {1, 100, 2}, .axis = 0});
    NodeId late = b.add(OpKind::Slice, {x}, Attrs{.dims = {5, 9, 1}, .axis = 0});
    NodeId two = b.add(OpKind::Full, {}, full(2.0));
    Graph g = b.finish(
        {b.add(OpKind::Mul, {tail, two}), b.add(OpKind::Neg, {step}), b.add(OpKind::Exp, {late})});
    check("slices", g, {{10}, {2}, {3}, {4}, {5}, {6}, {37}}, Tol{1e-6, 1e-6});
  }
  {  // concat along a symbolic axis
    SymGraph b;
    SymInt s0 = b.sym(3), s1 = b.sym(5);
    NodeId p = b.input(DType::kF32, {s0, 4});
    NodeId q = b.input(DType::kF32, {s1, 4});
    NodeId r = b.input(DType::kF32, {2, 4});
    NodeId c = b.add(OpKind::Concat, {p, r, q}, Attrs{.axis = 0});
    Graph g = b.finish({b.add(OpKind::Tanh, {c})});
    check("concat", g, {{3, 5}, {2, 2}, {7, 3}, {100, 33}}, Tol{2e-6, 1e-6});
  }
  {  // concat with a part that is empty at some sizes: those calls run on the interpreter
    SymGraph b;
    SymInt s0 = b.sym(8);
    NodeId x = b.input(DType::kF32, {s0, 3});
    NodeId late = b.add(OpKind::Slice, {x}, Attrs{.dims = {4, 100, 1}, .axis = 0});
    NodeId c = b.add(OpKind::Concat, {late, x}, Attrs{.axis = 0});
    Graph g = b.finish({b.add(OpKind::Neg, {c})});
    check("concat with a possibly empty part", g, {{8}, {2}, {4}, {5}, {33}}, Tol::exact());
  }
  {  // index_select and gather with symbolic tables and index counts
    SymGraph b;
    SymInt rows = b.sym(10), count = b.sym(6), cols = b.sym(7);
    NodeId table = b.input(DType::kF32, {rows, 8});
    NodeId ids = b.input(DType::kI64, {count});
    NodeId x = b.input(DType::kF32, {rows, cols});
    NodeId gi = b.input(DType::kI32, {rows, count});
    NodeId sel = b.add(OpKind::IndexSelect, {table, ids}, Attrs{.axis = 0});
    NodeId gat = b.add(OpKind::Gather, {x, gi}, Attrs{.axis = 1});
    Graph g = b.finish({b.add(OpKind::Relu, {sel}), b.add(OpKind::Neg, {gat})});
    const DistFn dist = [](size_t input, const Values& v) {
      if (input == 1) return Dist{0, static_cast<double>(v[0] - 1)};  // rows
      if (input == 3) return Dist{0, static_cast<double>(v[2] - 1)};  // cols
      return Dist{};
    };
    check("index_select and gather", g, {{10, 6, 7}, {2, 2, 2}, {3, 50, 5}, {129, 3, 2}},
          Tol::exact(), dist);
  }
  {  // triu / tril and arange of a symbolic length
    SymGraph b;
    SymInt s0 = b.sym(6), s1 = b.sym(9);
    NodeId x = b.input(DType::kF32, {s0, s1});
    NodeId v = b.input(DType::kF32, {s1});
    NodeId up = b.add(OpKind::Triu, {x}, Attrs{.index = 1});
    NodeId lo = b.add(OpKind::Tril, {x}, Attrs{.index = -1});
    NodeId ar = b.add(OpKind::Arange, {},
                      Attrs{.dtype = DType::kF32, .range = {0.5, 0.5 + 9 * 2.0, 2.0}}, {s1});
    NodeId ai =
        b.add(OpKind::Arange, {}, Attrs{.dtype = DType::kI64, .range = {3, 3 + 6, 1}}, {s0});
    Graph g = b.finish(
        {b.add(OpKind::Add, {up, lo}), b.add(OpKind::Mul, {ar, v}), b.add(OpKind::Neg, {ai})});
    check("triu/tril/arange", g, {{6, 9}, {2, 2}, {3, 7}, {40, 130}}, Tol{1e-6, 1e-6});
  }
}

TEST_F(DynamicCodegen, ViewsWithSymbolicDims) {
  SymGraph b;
  SymInt s0 = b.sym(5), s1 = b.sym(3);
  NodeId x = b.input(DType::kF32, {s0, s1, 4});
  NodeId flat = b.add(OpKind::Reshape, {x}, {}, {s0, s1 * SymInt(4)});
  NodeId t = b.add(OpKind::Permute, {flat}, Attrs{.dims = {1, 0}});
  NodeId out1 = b.add(OpKind::Tanh, {t});
  NodeId y = b.input(DType::kF32, {s0, 6});
  NodeId split = b.add(OpKind::Reshape, {y}, {}, {s0 * SymInt(2), 3});  // general reshape
  NodeId out2 = b.add(OpKind::Neg, {split});
  NodeId row = b.input(DType::kF32, {1, s1});
  NodeId ex = b.add(OpKind::Expand, {row}, {}, {s0, s1});
  NodeId out3 = b.add(OpKind::Exp, {ex});
  NodeId unsq = b.add(OpKind::Reshape, {x}, {}, {s0, 1, s1, 4});  // size-1 dims only
  NodeId out4 = b.add(OpKind::Sum, {unsq}, Attrs{.dims = {3}});
  Graph g = b.finish({out1, out2, out3, out4});
  check("views", g, {{5, 3}, {2, 2}, {3, 7}, {33, 129}}, Tol{1e-5, 1e-5});
}

TEST_F(DynamicCodegen, LargeGridIsCappedAndGridStrides) {
  SymGraph b;
  SymInt s0 = b.sym(4), s1 = b.sym(5);
  NodeId x = b.input(DType::kF32, {s0, s1});
  Graph g = b.finish({b.add(OpKind::Neg, {x})});
  // 2100 * 4000 elements need more than 65535 workgroups of 128: the grid is capped.
  check("capped grid", g, {{4, 5}, {2100, 4000}}, Tol::exact());
}

TEST_F(DynamicCodegen, WrongInputShapeNamesTheSymbolicShape) {
  SymGraph b;
  SymInt s0 = b.sym(37);
  NodeId x = b.input(DType::kF32, {s0, 64});
  Graph g = b.finish({b.add(OpKind::Neg, {x})});
  auto exe = Executable::create(g, Device::vulkan(), CompileOptions{});
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  Tensor bad = Tensor::full({5, 7}, 1.0, DType::kF32, Device::vulkan());
  const Values v = {37};
  auto r = (*exe)->run({bad}, {}, v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("input 0: expected f32[s0, 64] (s0 = 37), got f32[5, 7]"),
            std::string::npos)
      << r.status().to_string();
  // Without symbol values they are read from the inputs.
  Tensor good = Tensor::full({3, 64}, 2.0, DType::kF32, Device::vulkan());
  auto ok = (*exe)->run({good}, {});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ((*ok)[0].shape(), (Shape{3, 64}));
  EXPECT_EQ((*ok)[0].to_doubles()[100], -2.0);
}

TEST_F(DynamicCodegen, MoreThan32SymbolsFallBackToTheInterpreter) {
  allow_cpu_fallback_ = true;
  SymGraph b;
  std::vector<NodeId> parts;
  Values sizes;
  for (int i = 0; i < 33; ++i) {
    parts.push_back(b.input(DType::kF32, {b.sym(2 + i)}));
    sizes.push_back(2 + (i * 7) % 5);
  }
  NodeId c = b.add(OpKind::Concat, parts, Attrs{.axis = 0});
  Graph g = b.finish({b.add(OpKind::Neg, {c})});
  auto exe = check("33 symbols", g, {sizes}, Tol::exact());
  ASSERT_TRUE(exe);
  EXPECT_FALSE(exe->on_device());
  bool warned = false;
  for (const std::string& w : warnings()) warned |= w.find("size slots") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(StaticCodegen, StaticGraphsEmitLiteralSizes) {
  Graph g;
  NodeId x = g.add_input(TensorMeta{DType::kF32, {37, 64}});
  NodeId s = *g.add(OpKind::Sum, {*g.add(OpKind::Exp, {x})}, Attrs{.dims = {1}});
  NodeId m = *g.add(OpKind::MatMul, {x, x}, Attrs{.trans_b = true});
  NodeId n = *g.add(OpKind::Softmax, {x}, Attrs{.axis = 1});
  g.set_outputs({s, m, n, *g.add(OpKind::Relu, {x})});
  CodegenOptions opt;
  opt.caps = TargetCaps::generic();
  auto plan = plan_kernels(g, opt);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->kernels.size(), 4u);
  for (const Kernel& k : plan->kernels) {
    EXPECT_TRUE(k.size_slots.empty()) << k.name;
    EXPECT_EQ(k.sizes_bytes(), 0u);
    EXPECT_EQ(k.num_bindings(), k.bindings.size()) << k.name;
    EXPECT_EQ(k.glsl.find("KilnSizes"), std::string::npos) << k.name;
    EXPECT_EQ(k.glsl.find("kiln_pc"), std::string::npos) << k.name;
    for (const SymInt& gr : k.groups) EXPECT_TRUE(gr.is_constant()) << k.name;
  }
  EXPECT_NE(plan->kernels[0].glsl.find("37u"), std::string::npos);  // the sum's output count
  // 37 rows in row blocks of 8 (5 blocks) x 64 / 4 vec4 columns.
  EXPECT_NE(plan->kernels[3].glsl.find("80u"), std::string::npos);
}

}  // namespace
}  // namespace kiln
