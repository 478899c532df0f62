// Symbolic sizes: SymExpr canonical forms, evaluation against a naive oracle, ShapeEnv facts,
// guards and the allocation-free guard check.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>

#include "graph/graph.h"
#include "graph/symbolic.h"

namespace {
size_t g_allocations = 0;  // counts every operator new in this binary
}  // namespace

// GCC flags free() of a pointer from operator new even when both are replaced here, as they are.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace kiln {
// gtest prints expressions readably on failure.
void PrintTo(const SymExpr& e, std::ostream* os) {
  *os << e.str();
}
void PrintTo(const SymInt& v, std::ostream* os) {
  *os << v.str();
}

namespace {

const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1), s2 = SymExpr::symbol(2);
SymExpr c(int64_t v) {
  return SymExpr::constant(v);
}

TEST(SymExprTest, CanonicalSumsAndProducts) {
  EXPECT_EQ(s0 + s1, s1 + s0);
  EXPECT_EQ(s0 * s1, s1 * s0);
  EXPECT_EQ((s0 + s1) + s2, s0 + (s2 + s1));
  EXPECT_EQ(s0 + s0, c(2) * s0);
  EXPECT_EQ(s0 - s0, c(0));
  EXPECT_EQ(s0 * c(0), c(0));
  EXPECT_EQ(s0 * c(1), s0);
  EXPECT_EQ(s0 + c(0), s0);
  EXPECT_EQ(c(3) * (s0 + c(2)), c(3) * s0 + c(6));
  EXPECT_EQ((s0 + c(1)) * (s0 + c(1)), s0 * s0 + c(2) * s0 + c(1));
  EXPECT_EQ(c(2) + c(3) * c(4), c(14));
  EXPECT_NE(s0 * s1, s0 + s1);
  EXPECT_EQ((s1 * s0 + c(2)).str(), "s0*s1 + 2");
  EXPECT_EQ((s0 * s0 * c(3) - s1 - c(4)).str(), "-s1 + 3*s0**2 - 4");
  EXPECT_EQ((s0 * s1).hash(), (s1 * s0).hash());
  EXPECT_EQ((c(2) * s0 + s1).free_symbols(), (std::vector<int>{0, 1}));
}

TEST(SymExprTest, FloorDivAndModSimplify) {
  EXPECT_EQ(sym_floordiv(c(4) * s0 + c(8), c(4)), s0 + c(2));
  EXPECT_EQ(sym_mod(c(4) * s0, c(4)), c(0));
  EXPECT_EQ(sym_floordiv(c(4) * s0 + c(6), c(4)), s0 + c(1));
  EXPECT_EQ(sym_mod(c(4) * s0 + c(6), c(4)), c(2));
  EXPECT_EQ(sym_floordiv(sym_floordiv(s0, c(4)), c(2)), sym_floordiv(s0, c(8)));
  EXPECT_EQ(sym_floordiv(c(2) * s0 + c(2), c(4)), sym_floordiv(s0 + c(1), c(2)));
  EXPECT_EQ(sym_mod(sym_mod(s0, c(16)), c(4)), sym_mod(s0, c(4)));
  EXPECT_EQ(sym_mod(c(2) * s0, c(4)), c(2) * sym_mod(s0, c(2)));
  EXPECT_EQ(sym_floordiv(s0, c(1)), s0);
  EXPECT_EQ(sym_mod(s0 * s1, c(1)), c(0));
  EXPECT_EQ(sym_floordiv(c(17), c(5)), c(3));
  EXPECT_EQ(sym_floordiv(s0 + s1, c(4)).str(), "((s0 + s1)//4)");
  EXPECT_EQ(sym_mod(s0, c(8)).str(), "(s0 % 8)");
  // Without ranges, s1 could be 0: (s0*s1)//s1 stays symbolic.
  EXPECT_EQ(sym_floordiv(s0 * s1, s1).kind(), SymKind::kFloorDiv);
  // ...but the exact quotient, for callers to whom a zero divisor is an error anyway.
  EXPECT_EQ(sym_exact_quotient(s0 * s1, s1), s0);
  EXPECT_EQ(sym_exact_quotient(c(16) * s0, s0), c(16));
  EXPECT_EQ(sym_exact_quotient(c(16) * s0, c(4) * s0), c(4));
  EXPECT_EQ(sym_exact_quotient(c(8) * s0 * s1 + c(4) * s0, c(4) * s0), c(2) * s1 + c(1));
  EXPECT_EQ(sym_exact_quotient(s0, s0), c(1));
  EXPECT_FALSE(sym_exact_quotient(c(6) * s0 * s1, c(4) * s0));  // 6 / 4
  EXPECT_FALSE(sym_exact_quotient(c(16) * s0 + c(1), s0));      // a constant term
  EXPECT_FALSE(sym_exact_quotient(s0 * s1, s0 + s1));           // not a monomial
  EXPECT_FALSE(sym_exact_quotient(s0, s1));
}

TEST(SymExprTest, MinMaxFold) {
  EXPECT_EQ(sym_min(c(3), c(5)), c(3));
  EXPECT_EQ(sym_max(c(3), c(5)), c(5));
  EXPECT_EQ(sym_min(s0, s0), s0);
  EXPECT_EQ(sym_min(s0, s0 + c(1)), s0);
  EXPECT_EQ(sym_max(s0, s0 + c(1)), s0 + c(1));
  EXPECT_EQ(sym_min(s0, s1), sym_min(s1, s0));
  EXPECT_EQ(sym_min(sym_min(s0, s1), s2), sym_min(s0, sym_min(s2, s1)));
  EXPECT_EQ(sym_max(sym_max(s0, c(3)), c(7)), sym_max(s0, c(7)));
  EXPECT_EQ(sym_min(s0, s1).str(), "min(s0, s1)");
}

TEST(SymExprTest, PythonSemanticsOnNegatives) {
  EXPECT_EQ(python_floordiv(-7, 2), -4);
  EXPECT_EQ(python_floordiv(7, -2), -4);
  EXPECT_EQ(python_floordiv(-7, -2), 3);
  EXPECT_EQ(python_mod(-7, 2), 1);
  EXPECT_EQ(python_mod(7, -2), -1);
  EXPECT_EQ(python_mod(-7, -2), -1);
  EXPECT_EQ(python_mod(-8, 2), 0);
  std::vector<int64_t> v{-7};
  EXPECT_EQ(sym_floordiv(s0, c(2)).evaluate(v), -4);
  EXPECT_EQ(sym_mod(s0, c(-3)).evaluate(v), -1);
  EXPECT_EQ(sym_mod(s0 + c(9), c(-3)).evaluate(v), -1);
  EXPECT_EQ(sym_floordiv(c(2) * s0, c(-4)).evaluate(v), 3);
  EXPECT_EQ(sym_floordiv(SymInt(-7), SymInt(2)).constant_value(), -4);
}

// ---- property test: random trees against a naive evaluator ----------------------------------

struct Tree {
  enum Op { kConst, kSym, kAdd, kSub, kMul, kDiv, kMod, kMin, kMax } op;
  int64_t v = 0;
  std::vector<Tree> kids;
};

Tree random_tree(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  if (depth == 0 || pick(4) == 0) {
    if (pick(2)) return {Tree::kSym, pick(3), {}};
    return {Tree::kConst, pick(19) - 9, {}};
  }
  auto op = static_cast<Tree::Op>(Tree::kAdd + pick(7));
  Tree t{op, 0, {random_tree(rng, depth - 1), random_tree(rng, depth - 1)}};
  if (op == Tree::kDiv || op == Tree::kMod) {  // divisors are never 0
    int choice = pick(3);
    if (choice == 0) t.kids[1] = {Tree::kConst, (pick(2) ? 1 : -1) * (1 + pick(9)), {}};
    if (choice == 1) t.kids[1] = {Tree::kSym, pick(3), {}};
    if (choice == 2)
      t.kids[1] = {Tree::kMax, 0, {random_tree(rng, depth - 1), {Tree::kConst, 1, {}}}};
  }
  return t;
}

int64_t naive(const Tree& t, const std::vector<int64_t>& v) {
  if (t.op == Tree::kConst) return t.v;
  if (t.op == Tree::kSym) return v[static_cast<size_t>(t.v)];
  int64_t a = naive(t.kids[0], v), b = naive(t.kids[1], v);
  switch (t.op) {
    case Tree::kAdd:
      return a + b;
    case Tree::kSub:
      return a - b;
    case Tree::kMul:
      return a * b;
    case Tree::kDiv:
      return python_floordiv(a, b);
    case Tree::kMod:
      return python_mod(a, b);
    case Tree::kMin:
      return std::min(a, b);
    default:
      return std::max(a, b);
  }
}

SymExpr build(const Tree& t, const SymFacts* facts) {
  if (t.op == Tree::kConst) return c(t.v);
  if (t.op == Tree::kSym) return SymExpr::symbol(static_cast<int>(t.v));
  SymExpr a = build(t.kids[0], facts), b = build(t.kids[1], facts);
  switch (t.op) {
    case Tree::kAdd:
      return a + b;
    case Tree::kSub:
      return a - b;
    case Tree::kMul:
      return a * b;
    case Tree::kDiv:
      return sym_floordiv(a, b, facts);
    case Tree::kMod:
      return sym_mod(a, b, facts);
    case Tree::kMin:
      return sym_min(a, b, facts);
    default:
      return sym_max(a, b, facts);
  }
}

TEST(SymExprTest, RandomExpressionsEvaluateLikeTheirTrees) {
  std::mt19937 rng(1234);
  ShapeEnv env;  // three symbols in [1, 12]: ranges let floordiv/mod/min/max simplify further
  for (int i = 0; i < 3; ++i) env.create_symbol(5, "input 0 dim " + std::to_string(i), 1, 12);
  int checked = 0, symbolic = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Tree t = random_tree(rng, 4);
    SymExpr plain = build(t, nullptr), ranged = build(t, &env), twice = env.simplify(ranged);
    SymExpr other = build(random_tree(rng, 3), nullptr);
    EXPECT_EQ((plain + other) - other, plain) << plain.str();
    EXPECT_EQ(env.simplify(twice), twice) << twice.str();
    symbolic += !plain.is_constant();
    GuardProgram prog;
    for (int trial = 0; trial < 8; ++trial) {
      auto draw = [&rng] { return static_cast<int64_t>(1 + rng() % 12); };
      std::vector<int64_t> v{draw(), draw(), draw()};
      const int64_t want = naive(t, v);
      ASSERT_EQ(plain.evaluate(v), want)
          << plain.str() << " at " << v[0] << "," << v[1] << "," << v[2];
      ASSERT_EQ(ranged.evaluate(v), want) << ranged.str();
      ASSERT_EQ(twice.evaluate(v), want) << twice.str();
      ASSERT_TRUE(env.bound(SymInt(ranged)).contains(want)) << ranged.str();
      ShapeGuard g{ShapeGuardKind::kEqualsConstant, twice, RelOp::kEq, c(want), 0, 0, ""};
      prog = GuardProgram();
      ASSERT_TRUE(prog.add(g, 0).ok());
      ASSERT_EQ(prog.run(v), -1) << twice.str();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24000);
  EXPECT_GT(symbolic, 1000);
}

// ---- ShapeEnv ------------------------------------------------------------------------------

TEST(ShapeEnvTest, DuckSizingAndZeroOne) {
  ShapeEnv env;
  int a = -1, b = -1, one = -1;
  SymInt x = env.symbol_for_value(8, "input 0 dim 0", &a);
  SymInt y = env.symbol_for_value(8, "input 1 dim 0", &b);
  SymInt z = env.symbol_for_value(1, "input 1 dim 1", &one);
  SymInt w = env.symbol_for_value(0, "input 2 dim 0");
  EXPECT_EQ(x, y);
  EXPECT_EQ(x.str(), "s0");
  EXPECT_EQ(b, 1);
  EXPECT_TRUE(z.is_constant() && w.is_constant());
  EXPECT_EQ(z.constant_value(), 1);
  EXPECT_EQ(env.num_symbols(), 4);
  std::vector<ShapeGuard> g = env.guards();
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].to_string(), "2 <= s0  # size of input 0 dim 0");
  EXPECT_EQ(g[1].to_string(), "s1 == s0  # duck sizing: input 1 dim 0 == input 0 dim 0");
  EXPECT_EQ(g[2].to_string(), "s2 == 1  # 0/1 specialisation of input 1 dim 1");
  ShapeEnv no_duck(ShapeEnv::Options{false, true});
  EXPECT_NE(no_duck.symbol_for_value(8, "a"), no_duck.symbol_for_value(8, "b"));
}

TEST(ShapeEnvTest, EqualitiesCanonicalise) {
  ShapeEnv env;
  SymInt a = env.symbol_for_value(4, "input 0 dim 0");
  SymInt b = env.symbol_for_value(6, "input 1 dim 0");
  SymInt d = env.symbol_for_value(12, "input 2 dim 0");
  EXPECT_FALSE(env.add_equality(a, b, "add at m.cpp:3").ok());  // 4 != 6
  ASSERT_TRUE(env.add_equality(d, b * 2, "cat at m.cpp:4").ok());
  EXPECT_EQ(env.simplify(d + b), env.simplify(b * 3));
  EXPECT_EQ(env.simplify(sym_floordiv(d, SymInt(2))), b);
  EXPECT_TRUE(env.known_eq(d, b + b));
  EXPECT_EQ(env.guards().back().to_string(), "s2 == 2*s1  # cat at m.cpp:4");
}

TEST(ShapeEnvTest, RangesAndStaticKnowledge) {
  ShapeEnv env;
  SymInt a = env.symbol_for_value(64, "input 0 dim 0");
  SymInt b = env.symbol_for_value(100, "input 0 dim 1");
  EXPECT_TRUE(env.known_lt(a, a + 1));
  EXPECT_TRUE(env.known_lt(1, a));
  EXPECT_FALSE(env.known_lt(a, b));
  EXPECT_TRUE(env.known_ne(a, 0));
  Expected<bool> lt = env.evaluate_guarding(sym_lt(a, 128), "if at m.cpp:9");
  ASSERT_TRUE(lt.ok() && *lt);
  EXPECT_EQ(env.info(0).range, (SymRange{2, 127}));
  EXPECT_TRUE(env.known_lt(a, 200));
  EXPECT_EQ(env.simplify(sym_min(a.expr(), SymExpr::constant(500))), a.expr());
  EXPECT_EQ(env.simplify(sym_floordiv(a.expr(), SymExpr::constant(128))), SymExpr());
  EXPECT_EQ(env.simplify(sym_mod(a.expr(), SymExpr::constant(128))), a.expr());
  EXPECT_EQ(env.simplify(sym_floordiv(a * b, b).expr()), a.expr());  // b >= 2: exact
  ASSERT_TRUE(env.add_divisibility(a, 8, "view at m.cpp:11").ok());
  EXPECT_TRUE(env.known_divisible(a * 3 + 16, 8));
  EXPECT_EQ(env.simplify(sym_mod(a.expr() + SymExpr::constant(16), SymExpr::constant(8))),
            SymExpr());
  EXPECT_FALSE(env.add_divisibility(b, 8, "x").ok());  // 100 % 8 != 0
  Expected<bool> div4 = env.evaluate_guarding(sym_eq(sym_mod(b, 4), 0), "pad at m.cpp:12");
  ASSERT_TRUE(div4.ok() && *div4);
  EXPECT_EQ(env.guards().back().kind, ShapeGuardKind::kDivisible);
}

TEST(ShapeEnvTest, RangesResolveSymbolicDivisorsAndOrder) {
  ShapeEnv env;
  SymExpr a = SymExpr::symbol(env.create_symbol(3, "input 0 dim 0", 2, 5));
  SymExpr b = SymExpr::symbol(env.create_symbol(10, "input 0 dim 1", 8, 20));
  EXPECT_EQ(env.simplify(sym_floordiv(a, b)), SymExpr());
  EXPECT_EQ(env.simplify(sym_mod(a, b)), a);
  EXPECT_EQ(env.simplify(sym_min(a, b)), a);
  EXPECT_EQ(env.simplify(sym_max(a * c(4), b)), sym_max(a * c(4), b));  // 8..20 vs 8..20: unknown
  EXPECT_EQ(env.simplify(sym_max(a * c(4) + c(1), b - c(12))), a * c(4) + c(1));
  EXPECT_EQ(env.simplify(sym_floordiv(b, b)), c(1));
  EXPECT_EQ(env.bound(SymInt(sym_floordiv(b, a))), (SymRange{1, 10}));
}

TEST(ShapeEnvTest, SpecialisationRecordsGuardsAndChecksThem) {
  ShapeEnv env;
  SymInt a = env.symbol_for_value(8, "input 0 dim 0");
  SymInt b = env.symbol_for_value(16, "input 0 dim 1");
  env.symbol_for_value(8, "input 1 dim 0");  // s2, duck of s0
  Expected<bool> lt = env.evaluate_guarding(sym_lt(a * 2, b + 1), "where at m.cpp:20");
  ASSERT_TRUE(lt.ok() && *lt);
  Expected<int64_t> n = env.evaluate_guarding(b, "item at m.cpp:21");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 16);
  EXPECT_TRUE(env.simplify(b).is_constant());
  const size_t count = env.guards().size();
  EXPECT_EQ(*env.specialize(1, "again"), 16);  // already known: no new guard
  EXPECT_EQ(env.guards().size(), count);
  std::vector<ShapeGuard> g = env.guards();
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[2].to_string(), "2*s0 < s1 + 1  # where at m.cpp:20");
  EXPECT_EQ(g[3].to_string(), "s1 == 16  # item at m.cpp:21");
  ASSERT_TRUE(env.freeze().ok());
  EXPECT_EQ(env.check_guards(std::vector<int64_t>{8, 16, 8}), -1);
  EXPECT_EQ(env.check_guards(std::vector<int64_t>{1, 16, 1}), 0);  // range of s0
  EXPECT_EQ(env.check_guards(std::vector<int64_t>{8, 16, 9}), 1);  // duck equality
  EXPECT_EQ(env.check_guards(std::vector<int64_t>{9, 16, 9}), 2);  // 18 < 17 fails
  EXPECT_EQ(env.check_guards(std::vector<int64_t>{4, 17, 4}), 3);  // s1 == 16 fails
}

// An expression no symbol can be solved for (x[3::3]'s length), recorded equal to a constant,
// is replaced by it wherever it appears; a broadcast against it records that fact itself.
TEST(ShapeEnvTest, ExpressionsEqualToAConstantSimplifyToIt) {
  ShapeEnv env;
  SymInt n = env.symbol_for_value(6, "input 0 dim 0");
  const SymInt len = resolve_sym_slice(3, int64_t{1} << 40, 3, n, &env).length;
  ASSERT_FALSE(len.is_constant());
  EXPECT_EQ(env.hint(len), 1);
  const std::vector<SymShape> ins = {{n}, {len}};
  Expected<SymShape> out = infer_sym_shape(OpKind::Add, ins, {}, TensorMeta{DType::kF32, {6}}, {},
                                           &env, "add at m.cpp:3");
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(*out, SymShape{n});
  EXPECT_EQ(env.simplify(len), SymInt(1));
  EXPECT_EQ(env.simplify(len * 2 + n), n + 2);
  ASSERT_TRUE(env.freeze().ok());
  EXPECT_EQ(env.check_guards(std::vector<int64_t>{5}), -1);  // length 1 again
  EXPECT_EQ(env.check_guards(std::vector<int64_t>{4}), -1);
  EXPECT_NE(env.check_guards(std::vector<int64_t>{7}), -1);  // length 2: retrace
  // Where neither side is 1 the sizes must still be equal.
  ShapeEnv env2;
  SymInt m = env2.symbol_for_value(9, "input 0 dim 0");
  const SymInt len2 = resolve_sym_slice(3, int64_t{1} << 40, 3, m, &env2).length;  // 2
  const std::vector<SymShape> ins2 = {{m}, {len2}};
  EXPECT_FALSE(infer_sym_shape(OpKind::Add, ins2, {}, TensorMeta{DType::kF32, {9}}, {}, &env2,
                               "add at m.cpp:4")
                   .ok());
}

TEST(ShapeEnvTest, MarkDynamicRefusesSpecialisation) {
  ShapeEnv env;
  int slot = -1, one = -1;
  SymInt a = env.symbol_for_value(64, "input 0 dim 0", &slot);
  env.symbol_for_value(1, "input 0 dim 1", &one);
  ASSERT_TRUE(env.mark_dynamic(slot).ok());
  EXPECT_FALSE(env.mark_dynamic(one).ok());
  Expected<int64_t> v = env.evaluate_guarding(a * 2, "view at model.cpp:7");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("model.cpp:7"), std::string::npos) << v.status().message();
  EXPECT_NE(v.status().message().find("input 0 dim 0"), std::string::npos);
  EXPECT_NE(v.status().message().find("dynamic"), std::string::npos);
  EXPECT_FALSE(env.specialize(slot, "reshape at model.cpp:8").ok());
  EXPECT_FALSE(env.evaluate_guarding(sym_eq(a, 64), "if at model.cpp:9").ok());
  Expected<bool> gt = env.evaluate_guarding(sym_gt(a, 16), "if at model.cpp:10");
  EXPECT_TRUE(gt.ok() && *gt);  // a range decision keeps it dynamic
  EXPECT_FALSE(env.simplify(a).is_constant());
}

// A known value whose expression mentions a symbol that is later replaced: simplify() resolved
// replacements through itself, which rewrote the known values again at every step and never
// finished (a stack overflow, found by the differential fuzzer).
TEST(ShapeEnvTest, KnownValueOverALaterReplacedSymbol) {
  ShapeEnv env;
  SymInt n = env.symbol_for_value(4, "input 0 dim 0");
  // A slice's length: max(0, min(2^40, n) - max(0, n - 6)), found equal to 4.
  const SymInt len = resolve_sym_slice(-6, int64_t{1} << 40, 1, n, &env).length;
  ASSERT_FALSE(env.simplify(len).is_constant());
  ASSERT_TRUE(env.add_equality(len, SymInt(4), "concat at p.cpp:1").ok());
  ASSERT_TRUE(env.add_equality(n, SymInt(4), "matmul at p.cpp:2").ok());
  EXPECT_EQ(env.simplify(n + 1), SymInt(5));
  EXPECT_EQ(env.simplify(len), SymInt(4));
}

TEST(SymExprTest, GlslText) {
  auto name = [](int s) { return "pc.s" + std::to_string(s); };
  EXPECT_EQ(to_glsl(s0 * s1 + c(2), name), "((pc.s0 * pc.s1) + 2u)");
  EXPECT_EQ(to_glsl(s0 - c(1), name), "(pc.s0 - 1u)");
  EXPECT_EQ(to_glsl(sym_min(s0, s1), name), "min(pc.s0, pc.s1)");
  std::string g = to_glsl(
      sym_floordiv(s0 * s0 + c(3) * s1, c(4)) + sym_mod(s1, c(8)) + sym_max(s0, sym_max(s1, s2)),
      name);
  EXPECT_NE(g.find(" / 4u"), std::string::npos) << g;
  EXPECT_NE(g.find(" % 8u"), std::string::npos) << g;
  EXPECT_NE(g.find("max(pc.s0, max(pc.s1, pc.s2))"), std::string::npos) << g;
  EXPECT_EQ(g.find("//"), std::string::npos);
  int depth = 0;
  for (char ch : g) {
    depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
    ASSERT_GE(depth, 0) << g;
  }
  EXPECT_EQ(depth, 0) << g;
}

TEST(ShapeEnvTest, CheckGuardsDoesNotAllocate) {
  ShapeEnv env;
  std::vector<SymInt> s;
  for (int i = 0; i < 4; ++i)
    s.push_back(env.symbol_for_value(8 * (i + 1), "dim " + std::to_string(i)));
  env.symbol_for_value(8, "dup");  // duck guard
  ASSERT_TRUE(env.add_divisibility(s[1], 16, "a").ok());
  ASSERT_TRUE(env.evaluate_guarding(sym_lt(s[0] * s[1], s[2] * s[3] + 7), "b").ok());
  ASSERT_TRUE(env.evaluate_guarding(sym_le(sym_floordiv(s[3], 3), sym_max(s[0], s[1])), "c").ok());
  ASSERT_TRUE(env.evaluate_guarding(sym_ne(sym_mod(s[2], 5), 0), "d").ok());
  ASSERT_TRUE(env.evaluate_guarding(sym_lt(s[3], 1000), "e").ok());
  ASSERT_TRUE(env.freeze().ok());
  ASSERT_GE(env.guards().size(), 9u);
  const std::vector<int64_t> pass{8, 16, 24, 32, 8}, fail{8, 16, 24, 32, 9};
  const size_t before = g_allocations;
  const auto t0 = std::chrono::steady_clock::now();
  int failures = 0;
  for (int i = 0; i < 10000; ++i) {
    failures += (env.check_guards(pass) == -1) + (env.check_guards(fail) >= 0);
  }
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(g_allocations, before);
  EXPECT_EQ(failures, 20000);
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / 20000;
  std::printf("check_guards over %zu guards: %.0f ns per call\n", env.guards().size(), ns);
}

}  // namespace
}  // namespace kiln
