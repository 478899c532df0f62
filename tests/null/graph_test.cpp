// Graph IR and op registry: shape/dtype rules, printing, verification, f16 conversions.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "graph/graph.h"
#include "graph/op.h"

namespace kiln {
namespace {

TensorMeta m(DType dt, Shape shape) {
  return {dt, std::move(shape)};
}

// Output meta of `op` applied to `ins` (through infer_meta; reduce axes as given).
Expected<TensorMeta> infer(OpKind op, std::vector<TensorMeta> ins, Attrs attrs = {}) {
  return infer_meta(op, ins, attrs);
}

Attrs dims_attrs(std::vector<int64_t> dims, bool keepdim = false) {
  Attrs a;
  a.dims = std::move(dims);
  a.keepdim = keepdim;
  return a;
}

// Meta of a one-node graph built with Graph::add (normalises reduce axes).
Expected<TensorMeta> build(OpKind op, std::vector<TensorMeta> ins, Attrs attrs = {}) {
  Graph g;
  std::vector<NodeId> ids;
  for (const TensorMeta& t : ins) ids.push_back(g.add_input(t));
  KILN_ASSIGN_OR_RETURN(NodeId id, g.add(op, ids, attrs));
  return g.node(id).meta;
}

void expect_error(const Expected<TensorMeta>& r, std::vector<std::string> needles) {
  ASSERT_FALSE(r.ok()) << "unexpectedly got " << r->str();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  for (const std::string& n : needles)
    EXPECT_NE(r.status().message().find(n), std::string::npos)
        << "'" << n << "' not in: " << r.status().message();
}

TEST(Broadcast, Shapes) {
  EXPECT_EQ(*broadcast_shapes(Shape{2, 3}, Shape{3}), (Shape{2, 3}));
  EXPECT_EQ(*broadcast_shapes(Shape{2, 1}, Shape{1, 3}), (Shape{2, 3}));
  EXPECT_EQ(*broadcast_shapes(Shape{}, Shape{2, 3}), (Shape{2, 3}));
  EXPECT_EQ(*broadcast_shapes(Shape{4, 1, 5}, Shape{3, 1}), (Shape{4, 3, 5}));
  EXPECT_EQ(*broadcast_shapes(Shape{0, 3}, Shape{1, 3}), (Shape{0, 3}));
  EXPECT_EQ(*broadcast_shapes(Shape{1}, Shape{0}), (Shape{0}));
  EXPECT_EQ(*broadcast_shapes(Shape{0}, Shape{}), (Shape{0}));
  EXPECT_EQ(*broadcast_shapes(Shape{}, Shape{}), (Shape{}));
}

TEST(Broadcast, FailuresNameTheShapes) {
  auto r = broadcast_shapes(Shape{2, 3}, Shape{4});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("[2, 3]"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("[4]"), std::string::npos) << r.status().message();
  EXPECT_FALSE(broadcast_shapes(Shape{0}, Shape{2}).ok());
  // Binary ops report the shapes (not the op name; where() reports both).
  expect_error(infer(OpKind::Add, {m(DType::kF32, {2, 3}), m(DType::kF32, {2})}),
               {"[2, 3]", "[2]", "not broadcastable", "dim 1: 3 vs 2"});
  expect_error(build(OpKind::Mul, {m(DType::kF32, {3}), m(DType::kF32, {4})}), {"[3]", "[4]"});
  expect_error(build(OpKind::Lt, {m(DType::kF32, {0}), m(DType::kI32, {2})}), {"[0]", "[2]"});
}

TEST(Reduce, AxesNormalisation) {
  EXPECT_EQ(*normalize_axes(std::vector<int64_t>{-1, 0}, 3), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(*normalize_axes(std::vector<int64_t>{2, 1}, 3), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(*normalize_axes(std::vector<int64_t>{-3}, 3), (std::vector<int64_t>{0}));
  EXPECT_FALSE(normalize_axes(std::vector<int64_t>{3}, 3).ok());
  EXPECT_FALSE(normalize_axes(std::vector<int64_t>{-4}, 3).ok());
  EXPECT_FALSE(normalize_axes(std::vector<int64_t>{0}, 0).ok());
  auto rep = normalize_axes(std::vector<int64_t>{1, -2}, 3);
  ASSERT_FALSE(rep.ok());
  EXPECT_NE(rep.status().message().find("repeated"), std::string::npos);
}

TEST(Reduce, Shapes) {
  const TensorMeta x = m(DType::kF32, {2, 3, 4});
  EXPECT_EQ(*build(OpKind::Sum, {x}, dims_attrs({1})), m(DType::kF32, {2, 4}));
  EXPECT_EQ(*build(OpKind::Sum, {x}, dims_attrs({-1, 0})), m(DType::kF32, {3}));
  EXPECT_EQ(*build(OpKind::Sum, {x}, dims_attrs({0, 1, 2})), m(DType::kF32, {}));
  EXPECT_EQ(*build(OpKind::Mean, {x}, dims_attrs({2, 0}, true)), m(DType::kF32, {1, 3, 1}));
  EXPECT_EQ(*build(OpKind::Max, {x}, dims_attrs({-2}, true)), m(DType::kF32, {2, 1, 4}));
  // Graph::add stores the normalised axes.
  Graph g;
  NodeId in = g.add_input(x);
  NodeId s = *g.add(OpKind::Sum, {in}, dims_attrs({-1, -3}));
  EXPECT_EQ(g.node(s).attrs.dims, (std::vector<int64_t>{0, 2}));
  // infer_meta itself insists on normalised axes.
  expect_error(infer(OpKind::Sum, {x}, dims_attrs({-1})), {"normalised"});
  expect_error(build(OpKind::Sum, {x}, dims_attrs({})), {"at least one axis"});
  expect_error(build(OpKind::Sum, {x}, dims_attrs({3})), {"out of range"});
  expect_error(build(OpKind::Sum, {m(DType::kF32, {})}, dims_attrs({0})), {"out of range"});
}

TEST(Reduce, Dtypes) {
  EXPECT_EQ(build(OpKind::Sum, {m(DType::kBool, {4})}, dims_attrs({0}))->dtype, DType::kI64);
  EXPECT_EQ(build(OpKind::Sum, {m(DType::kI32, {4})}, dims_attrs({0}))->dtype, DType::kI32);
  EXPECT_EQ(build(OpKind::Sum, {m(DType::kF16, {4})}, dims_attrs({0}))->dtype, DType::kF16);
  EXPECT_EQ(build(OpKind::Max, {m(DType::kBool, {4})}, dims_attrs({0}))->dtype, DType::kBool);
  EXPECT_EQ(build(OpKind::Mean, {m(DType::kF16, {4})}, dims_attrs({0}))->dtype, DType::kF16);
  expect_error(build(OpKind::Mean, {m(DType::kI32, {4})}, dims_attrs({0})), {"floating"});
  expect_error(build(OpKind::Max, {m(DType::kF32, {2, 0})}, dims_attrs({1})), {"empty axis"});
  // Sum over an empty axis is fine (it is 0).
  EXPECT_EQ(*build(OpKind::Sum, {m(DType::kF32, {2, 0})}, dims_attrs({1})), m(DType::kF32, {2}));
}

TEST(Movement, Reshape) {
  const TensorMeta x = m(DType::kI32, {2, 3});
  EXPECT_EQ(*build(OpKind::Reshape, {x}, dims_attrs({3, 2})), m(DType::kI32, {3, 2}));
  EXPECT_EQ(*build(OpKind::Reshape, {x}, dims_attrs({6})), m(DType::kI32, {6}));
  EXPECT_EQ(*build(OpKind::Reshape, {m(DType::kF32, {1, 1})}, dims_attrs({})), m(DType::kF32, {}));
  EXPECT_EQ(*build(OpKind::Reshape, {m(DType::kF32, {0, 3})}, dims_attrs({3, 0})),
            m(DType::kF32, {3, 0}));
  expect_error(build(OpKind::Reshape, {x}, dims_attrs({4, 2})),
               {"cannot reshape", "[4, 2]", "6 elements vs 8"});
  expect_error(build(OpKind::Reshape, {x}, dims_attrs({-1, 6})), {"negative"});
}

TEST(Movement, Permute) {
  const TensorMeta x = m(DType::kF32, {2, 3, 4});
  EXPECT_EQ(*build(OpKind::Permute, {x}, dims_attrs({2, 0, 1})), m(DType::kF32, {4, 2, 3}));
  EXPECT_EQ(*build(OpKind::Permute, {x}, dims_attrs({0, 1, 2})), x);
  EXPECT_EQ(*build(OpKind::Permute, {m(DType::kF32, {})}, dims_attrs({})), m(DType::kF32, {}));
  expect_error(build(OpKind::Permute, {x}, dims_attrs({0, 1})), {"not a permutation"});
  expect_error(build(OpKind::Permute, {x}, dims_attrs({0, 1, 1})), {"[0, 1, 1]"});
  expect_error(build(OpKind::Permute, {x}, dims_attrs({0, 1, 3})), {"not a permutation"});
  expect_error(build(OpKind::Permute, {x}, dims_attrs({-1, 0, 1})), {"not a permutation"});
}

TEST(Movement, Expand) {
  EXPECT_EQ(*build(OpKind::Expand, {m(DType::kF32, {3})}, dims_attrs({2, 3})),
            m(DType::kF32, {2, 3}));
  EXPECT_EQ(*build(OpKind::Expand, {m(DType::kF32, {2, 1})}, dims_attrs({2, 4})),
            m(DType::kF32, {2, 4}));
  EXPECT_EQ(*build(OpKind::Expand, {m(DType::kF32, {})}, dims_attrs({2, 2})),
            m(DType::kF32, {2, 2}));
  EXPECT_EQ(*build(OpKind::Expand, {m(DType::kF32, {1})}, dims_attrs({0})), m(DType::kF32, {0}));
  expect_error(build(OpKind::Expand, {m(DType::kF32, {2})}, dims_attrs({3})),
               {"cannot expand to [3]"});
  expect_error(build(OpKind::Expand, {m(DType::kF32, {2, 3})}, dims_attrs({3})), {"fewer dims"});
  expect_error(build(OpKind::Expand, {m(DType::kF32, {0})}, dims_attrs({1})), {"cannot expand"});
  expect_error(build(OpKind::Expand, {m(DType::kF32, {1})}, dims_attrs({-1})), {"negative"});
}

TEST(Rules, Where) {
  const TensorMeta c = m(DType::kBool, {2, 1});
  EXPECT_EQ(*build(OpKind::Where, {c, m(DType::kF32, {3}), m(DType::kI32, {})}),
            m(DType::kF32, {2, 3}));
  EXPECT_EQ(*build(OpKind::Where, {c, m(DType::kBool, {}), m(DType::kBool, {1})}),
            m(DType::kBool, {2, 1}));
  expect_error(
      build(OpKind::Where, {m(DType::kI32, {2}), m(DType::kF32, {2}), m(DType::kF32, {2})}),
      {"condition must be bool", "i32"});
  expect_error(build(OpKind::Where, {c, m(DType::kF32, {3}), m(DType::kF32, {4})}),
               {"where", "not broadcastable"});
}

TEST(Rules, DtypePromotion) {
  auto dt = [](OpKind op, DType a, DType b) { return build(op, {m(a, {2}), m(b, {2})})->dtype; };
  EXPECT_EQ(promote_types(DType::kBool, DType::kI32), DType::kI32);
  EXPECT_EQ(promote_types(DType::kI64, DType::kI32), DType::kI64);
  EXPECT_EQ(promote_types(DType::kI64, DType::kF16), DType::kF16);
  EXPECT_EQ(promote_types(DType::kF16, DType::kF32), DType::kF32);
  EXPECT_EQ(dt(OpKind::Add, DType::kI32, DType::kF16), DType::kF16);
  EXPECT_EQ(dt(OpKind::Mul, DType::kI32, DType::kI64), DType::kI64);
  EXPECT_EQ(dt(OpKind::Sub, DType::kBool, DType::kI32), DType::kI32);
  EXPECT_EQ(dt(OpKind::Maximum, DType::kF16, DType::kF32), DType::kF32);
  EXPECT_EQ(dt(OpKind::Div, DType::kI32, DType::kI32), DType::kF32);  // true division
  EXPECT_EQ(dt(OpKind::Div, DType::kI64, DType::kBool), DType::kF32);
  EXPECT_EQ(dt(OpKind::Div, DType::kF16, DType::kF16), DType::kF16);
  EXPECT_EQ(dt(OpKind::Lt, DType::kF32, DType::kI32), DType::kBool);
  EXPECT_EQ(dt(OpKind::Eq, DType::kBool, DType::kBool), DType::kBool);
  expect_error(build(OpKind::Add, {m(DType::kBool, {2}), m(DType::kBool, {2})}), {"bool"});
}

TEST(Rules, UnaryAndCast) {
  auto un = [](OpKind op, DType a) { return build(op, {m(a, {3})}); };
  EXPECT_EQ(un(OpKind::Exp, DType::kI32)->dtype, DType::kF32);
  EXPECT_EQ(un(OpKind::Sqrt, DType::kI64)->dtype, DType::kF32);
  EXPECT_EQ(un(OpKind::Tanh, DType::kF16)->dtype, DType::kF16);
  EXPECT_EQ(un(OpKind::Neg, DType::kI32)->dtype, DType::kI32);
  EXPECT_EQ(un(OpKind::Relu, DType::kI64)->dtype, DType::kI64);
  EXPECT_EQ(un(OpKind::Gelu, DType::kF32)->shape, (Shape{3}));
  expect_error(un(OpKind::Exp, DType::kBool), {"exp", "bool"});
  expect_error(un(OpKind::Neg, DType::kBool), {"neg", "bool"});
  Attrs a;
  a.dtype = DType::kF16;
  EXPECT_EQ(*build(OpKind::Cast, {m(DType::kI32, {2, 2})}, a), m(DType::kF16, {2, 2}));
  expect_error(build(OpKind::Neg, {m(DType::kF32, {2}), m(DType::kF32, {2})}),
               {"expects 1 inputs"});
}

TEST(Rules, Full) {
  Attrs a;
  a.scalar = 2.5;
  a.dtype = DType::kI64;
  a.dims = {2, 0};
  EXPECT_EQ(*build(OpKind::Full, {}, a), m(DType::kI64, {2, 0}));
  a.dims = {-2};
  expect_error(build(OpKind::Full, {}, a), {"negative"});
  Graph g;
  auto bad = g.add(OpKind::Input, {});
  EXPECT_FALSE(bad.ok());
  auto unknown = g.add(OpKind::Neg, {7});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("%7"), std::string::npos);
}

TEST(Graph, ToStringVerifyAndUses) {
  Graph g;
  NodeId x = g.add_input(m(DType::kF32, {2, 3}), "model.cpp:3");
  NodeId w = g.add_constant(m(DType::kF32, {3}), 0);
  NodeId y = *g.add(OpKind::Mul, {x, w}, {}, "model.cpp:7");
  NodeId z = *g.add(OpKind::Add, {y, y});
  NodeId s = *g.add(OpKind::Sum, {z}, dims_attrs({-1}, true));
  g.set_outputs({s, y});
  EXPECT_TRUE(g.verify().ok()) << g.verify().to_string();
  EXPECT_EQ(g.op_count(), 3u);
  EXPECT_EQ(g.use_counts(), (std::vector<int>{1, 1, 3, 1, 1}));
  const std::string text = g.to_string();
  EXPECT_NE(text.find("%0 = input(index=0) : f32[2, 3]  # model.cpp:3"), std::string::npos) << text;
  EXPECT_NE(text.find("%1 = constant(index=0) : f32[3]"), std::string::npos) << text;
  EXPECT_NE(text.find("%2 = mul(%0, %1) : f32[2, 3]  # model.cpp:7"), std::string::npos) << text;
  EXPECT_NE(text.find("%3 = add(%2, %2) : f32[2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("%4 = sum(%3, axes=[1], keepdim) : f32[2, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("return (%4, %2)"), std::string::npos) << text;

  Graph bad;
  bad.set_outputs({3});
  EXPECT_FALSE(bad.verify().ok());
}

TEST(Ops, Registry) {
  EXPECT_STREQ(op_name(OpKind::Gelu), "gelu");
  EXPECT_EQ(op_arity(OpKind::Where), 3);
  OpKind k;
  ASSERT_TRUE(op_from_name("permute", &k));
  EXPECT_EQ(k, OpKind::Permute);
  ASSERT_TRUE(op_from_name("conv_transpose", &k));
  EXPECT_EQ(k, OpKind::ConvTranspose);
  EXPECT_FALSE(op_from_name("no_such_op", &k));
  EXPECT_TRUE(is_elementwise(OpKind::Cast));
  EXPECT_TRUE(is_reduce(OpKind::Mean));
  EXPECT_TRUE(is_movement(OpKind::Expand));
  EXPECT_TRUE(is_source(OpKind::Full));
}

// A KILN_KERNEL_OP row's shape rule gives the concrete shape by evaluation at constant sizes.
TEST(Ops, MaxUnpoolShapeRule) {
  Attrs a;
  a.window.kernel = {2, 3};
  a.window.strides = {2, 2};
  a.window.pads = {0, 1, 0, 0};
  const TensorMeta x{DType::kF32, {2, 3, 4, 5}}, i{DType::kI64, {2, 3, 4, 5}};
  const std::vector<TensorMeta> ins = {x, i};
  auto m = infer_meta(OpKind::MaxUnpool, ins, a);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->shape, (Shape{2, 3, 8, 10}));  // (4-1)*2+2, (5-1)*2+3-1
  EXPECT_EQ(m->dtype, DType::kF32);
  EXPECT_EQ(a.str(OpKind::MaxUnpool),
            "kernel=[2, 3], strides=[2, 2], pads=[0, 1, 0, 0], output_shape=[]");
  // output_shape may only enlarge the unpooled [2, 3, 8, 10], in any dim.
  a.dims = {2, 3, 9, 11};
  EXPECT_EQ(infer_meta(OpKind::MaxUnpool, ins, a)->shape, (Shape{2, 3, 9, 11}));
  a.dims = {3, 4, 8, 12};
  EXPECT_EQ(infer_meta(OpKind::MaxUnpool, ins, a)->shape, (Shape{3, 4, 8, 12}));
  auto built = build(OpKind::MaxUnpool, ins, a);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  EXPECT_EQ(built->shape, (Shape{3, 4, 8, 12}));
  a.dims = {2, 3, 8, 9};
  auto small = infer_meta(OpKind::MaxUnpool, ins, a);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find(
                "output_shape [2, 3, 8, 9] is smaller than the unpooled shape [2, 3, 8, 10]"),
            std::string::npos)
      << small.status().message();
  a.dims = {1, 3, 8, 10};
  EXPECT_FALSE(infer_meta(OpKind::MaxUnpool, ins, a).ok());
  // ONNX's test_maxunpool_export_with_output_shape: 2x2 windows of a 4x4 input, output 5x5.
  Attrs onnx;
  onnx.window.kernel = {2, 2};
  onnx.window.strides = {2, 2};
  onnx.window.pads = {0, 0, 0, 0};
  onnx.dims = {1, 1, 5, 5};
  const std::vector<TensorMeta> small_ins = {TensorMeta{DType::kF32, {1, 1, 2, 2}},
                                             TensorMeta{DType::kI64, {1, 1, 2, 2}}};
  EXPECT_EQ(infer_meta(OpKind::MaxUnpool, small_ins, onnx)->shape, (Shape{1, 1, 5, 5}));
  a.dims = {2, 3, 9, 11};
  const std::vector<TensorMeta> bad = {x, TensorMeta{DType::kI64, {2, 3, 4, 6}}};
  auto e = infer_meta(OpKind::MaxUnpool, bad, a);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("max_unpool(f32[2, 3, 4, 5], i64[2, 3, 4, 6])"),
            std::string::npos)
      << e.status().message();
  EXPECT_TRUE(is_kernel_op(OpKind::MaxUnpool));
  EXPECT_FALSE(is_kernel_op(OpKind::ScatterND));
}

TEST(Half, RoundTripsEveryFiniteAndInfiniteValue) {
  int checked = 0;
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    const float f = half_to_float(h);
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) {  // NaN: stays NaN
      EXPECT_TRUE(std::isnan(f));
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    ASSERT_EQ(float_to_half(f), h) << "bits 0x" << std::hex << bits << " -> " << f;
    ++checked;
  }
  EXPECT_EQ(checked, 65536 - 2046);
}

TEST(Half, KnownValuesAndRounding) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(0.1f), 0x2e66);         // 0.0999755859375
  EXPECT_EQ(float_to_half(1.0f / 3.0f), 0x3555);  // 0.333251953125
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);     // max finite
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);     // below the halfway point
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);     // halfway, ties to even -> inf
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);
  EXPECT_EQ(float_to_half(-INFINITY), 0xfc00);
  EXPECT_EQ(float_to_half(1.0f + 0x1p-11f), 0x3c00);      // tie -> even (down)
  EXPECT_EQ(float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(float_to_half(2049.0f), float_to_half(2048.0f));
  EXPECT_EQ(float_to_half(0x1p-24f), 0x0001);             // smallest subnormal
  EXPECT_EQ(float_to_half(0x1p-25f), 0x0000);             // tie -> even (zero)
  EXPECT_EQ(float_to_half(3 * 0x1p-26f), 0x0001);         // above the tie
  EXPECT_EQ(float_to_half(0x1p-14f), 0x0400);             // smallest normal
  EXPECT_EQ(float_to_half(0x1p-14f - 0x1p-25f), 0x0400);  // rounds up into the normals
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x0001), 0x1p-24f);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Every row of ops.def names attributes that exist: the printer marks an unknown field with
// '?' (a typo in a row would otherwise print, encode nothing and pass unnoticed).
TEST(OpTable, EveryRowPrintsOnlyKnownAttributes) {
  std::vector<OpKind> ops;
#define KILN_OP(e, name, cat, arity, attrs) ops.push_back(OpKind::e);
#include "graph/ops.def"
#undef KILN_OP
  ASSERT_GT(ops.size(), 60u);
  Attrs a;
  a.window.kernel = {2};
  a.window.strides = {1};
  a.window.pads = {0, 0};
  a.window.dilations = {1};
  a.range = {0, 4, 1};
  for (OpKind op : ops) {
    SCOPED_TRACE(op_name(op));
    EXPECT_EQ(a.str(op).find('?'), std::string::npos) << a.str(op);
  }
}

}  // namespace
}  // namespace kiln
