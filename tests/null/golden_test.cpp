// Golden files for the generated GLSL (STYLE.md item 10).
//
// Each case builds a small graph, plans it with TargetCaps::generic(), and compares every
// kernel's preprocessed GLSL, normalised (no `#line` directives, no blank lines, no trailing
// spaces, none of the shared helpers included from shaders/common/), with
// tests/golden/<case>_<kernel index>.comp. Every kernel is also compiled to validated SPIR-V, so
// every golden is known to be a valid shader.
//
// Regenerate after an intended codegen change, then review the diff:
//   UPDATE_GOLDENS=1 ./null_golden_test
// In that mode the files are rewritten (stale ones removed) and the test passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "null/graph_builders.h"

#ifndef KILN_GOLDEN_DIR
#error "KILN_GOLDEN_DIR must name tests/golden (set in tests/CMakeLists.txt)"
#endif

namespace kiln {
namespace {

using test::add;
using test::chain_graph;
using test::generic_options;

namespace fs = std::filesystem;

constexpr const char* kRegenerate =
    "If the change is intended, regenerate with\n"
    "  UPDATE_GOLDENS=1 ./null_golden_test   (or: UPDATE_GOLDENS=1 ctest -R null_golden_test)\n"
    "from the build directory, and review the diff of tests/golden/.";

bool updating() {
  const char* v = std::getenv("UPDATE_GOLDENS");
  return v != nullptr && std::string(v) == "1";
}

// --- The cases ----------------------------------------------------------------------------------

// tanh(expand(reshape(permute(x)))): views fold into the index math of one kernel.
Graph view_chain_graph() {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {2, 3, 4}});
  NodeId p = add(g, OpKind::Permute, {x}, Attrs{.dims = {2, 0, 1}});
  NodeId r = add(g, OpKind::Reshape, {p}, Attrs{.dims = {4, 6}});
  NodeId e = add(g, OpKind::Expand, {r}, Attrs{.dims = {3, 4, 6}});
  g.set_outputs({add(g, OpKind::Tanh, {e})});
  return g;
}

// sum(exp(x), axis 1): the exp is the reduction's prologue.
Graph reduce_exp_graph(Dim rows, Dim cols) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {rows, cols}});
  NodeId e = add(g, OpKind::Exp, {x});
  g.set_outputs({add(g, OpKind::Sum, {e}, Attrs{.dims = {1}})});
  return g;
}

// x - max(x, axis 1, keepdim): the reduction is a fusion boundary, so two kernels.
Graph max_keepdim_sub_graph() {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {5, 7}});
  NodeId mx = add(g, OpKind::Max, {x}, Attrs{.dims = {1}, .keepdim = true});
  g.set_outputs({add(g, OpKind::Sub, {x, mx})});
  return g;
}

// f16 storage, computed in float: sqrt(x * x + y), y broadcast.
Graph f16_graph() {
  Graph g;
  NodeId x = g.add_input({DType::kF16, {4, 8}});
  NodeId y = g.add_input({DType::kF16, {8}});
  NodeId xx = add(g, OpKind::Mul, {x, x});
  NodeId s = add(g, OpKind::Add, {xx, y});
  g.set_outputs({add(g, OpKind::Sqrt, {s})});
  return g;
}

// i64 and bool: c = x > t (bool output, stored as uint8), w = where(c, f32(x), 0.5) reads c
// back from its buffer.
Graph i64_bool_graph() {
  Graph g;
  NodeId x = g.add_input({DType::kI64, {6, 5}});
  NodeId t = g.add_input({DType::kI64, {5}});
  NodeId c = add(g, OpKind::Gt, {x, t});
  NodeId xf = add(g, OpKind::Cast, {x}, Attrs{.dtype = DType::kF32});
  NodeId half = add(g, OpKind::Full, {}, Attrs{.scalar = 0.5, .dtype = DType::kF32});
  NodeId w = add(g, OpKind::Where, {c, xf, half});
  g.set_outputs({c, w});
  return g;
}

struct GoldenCase {
  std::string name;
  std::function<Graph()> build;
  std::vector<KernelVariant> variants;  // one per kernel, in execution order
  std::vector<size_t> bindings;         // binding count per kernel (output + inputs)
};

// gtest prints a failing parameter with this (rather than as raw bytes).
void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<GoldenCase> golden_cases() {
  using V = KernelVariant;
  return {
      {"chain_vec4", [] { return chain_graph(4, 8); }, {V::kElementwiseVec4}, {6}},
      {"chain_scalar", [] { return chain_graph(3, 7); }, {V::kElementwise}, {6}},
      {"view_chain_tanh", view_chain_graph, {V::kElementwise}, {2}},
      {"reduce_exp_workgroup", [] { return reduce_exp_graph(4, 300); }, {V::kReduceWorkgroup}, {2}},
      {"reduce_exp_thread", [] { return reduce_exp_graph(16, 12); }, {V::kReduceThread}, {2}},
      {"max_keepdim_sub", max_keepdim_sub_graph, {V::kReduceThread, V::kElementwise}, {2, 3}},
      {"f16_sqrt", f16_graph, {V::kElementwise}, {3}},
      {"i64_bool_where", i64_bool_graph, {V::kElementwise, V::kElementwise}, {3, 3}},
  };
}

// --- Normalisation and comparison ----------------------------------------------------------------

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Drops `#line` directives and blank lines, strips trailing whitespace.
std::vector<std::string> normalize_glsl(const std::string& glsl) {
  std::vector<std::string> out;
  bool in_common = false;  // inside text from shaders/common/ (by the `#line N "file"` marks)
  for (std::string line : split_lines(glsl)) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line.compare(first, 5, "#line") == 0) {
      const size_t quote = line.find('"', first);
      if (quote != std::string::npos) in_common = line.compare(quote + 1, 7, "common/") == 0;
      continue;
    }
    if (!in_common) out.push_back(line);
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

fs::path golden_path(const std::string& case_name, size_t kernel) {
  return fs::path(KILN_GOLDEN_DIR) / (case_name + "_" + std::to_string(kernel) + ".comp");
}

/// Empty when equal; otherwise the first differing line with both versions.
std::string first_difference(const std::vector<std::string>& expected,
                             const std::vector<std::string>& actual) {
  size_t n = std::max(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string e = i < expected.size() ? expected[i] : "<end of file>";
    const std::string a = i < actual.size() ? actual[i] : "<end of file>";
    if (i < expected.size() && i < actual.size() && e == a) continue;
    return "first difference at line " + std::to_string(i + 1) + ":\n  golden:    " + e +
           "\n  generated: " + a + "\n";
  }
  return "";
}

void check_or_update(const fs::path& path, const std::vector<std::string>& actual) {
  if (updating()) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(out) << "cannot write " << path;
    out << join_lines(actual);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << "\n" << kRegenerate;
  std::stringstream buf;
  buf << in.rdbuf();
  std::string diff = first_difference(split_lines(buf.str()), actual);
  EXPECT_TRUE(diff.empty()) << "generated GLSL differs from " << path << "\n"
                            << diff << kRegenerate;
}

// --- Tests ---------------------------------------------------------------------------------------

class GoldenKernels : public testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenKernels, MatchGoldenAndCompile) {
  const GoldenCase& c = GetParam();
  Graph g = c.build();
  ASSERT_TRUE(g.verify().ok()) << g.verify().to_string();
  auto plan = plan_kernels(g, generic_options());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();

  // Narrow structural checks first, so a failure names the property rather than a text diff.
  ASSERT_EQ(plan->kernels.size(), c.variants.size()) << plan->fusion_log;
  for (size_t i = 0; i < plan->kernels.size(); ++i) {
    const Kernel& k = plan->kernels[i];
    EXPECT_EQ(k.variant, c.variants[i]) << k.name << " is " << kernel_variant_name(k.variant)
                                        << ", expected " << kernel_variant_name(c.variants[i]);
    EXPECT_EQ(k.bindings.size(), c.bindings[i]) << k.name;
  }

  // Planning is deterministic: a second plan gives the same source.
  auto again = plan_kernels(g, generic_options());
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->kernels.size(), plan->kernels.size());
  for (size_t i = 0; i < plan->kernels.size(); ++i)
    EXPECT_EQ(again->kernels[i].glsl, plan->kernels[i].glsl) << plan->kernels[i].name;

  Status st = compile_kernels(*plan, generic_options());
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (size_t i = 0; i < plan->kernels.size(); ++i) {
    const Kernel& k = plan->kernels[i];
    EXPECT_FALSE(k.spirv.empty()) << k.name;
    SCOPED_TRACE(k.name);
    check_or_update(golden_path(c.name, i), normalize_glsl(k.glsl));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenKernels, testing::ValuesIn(golden_cases()),
                         [](const testing::TestParamInfo<GoldenCase>& param_info) {
                           return param_info.param.name;
                         });

// Every .comp file in tests/golden/ belongs to a kernel of some case; when updating, stale
// files (a case renamed or a kernel gone) are removed.
TEST(Golden, NoStaleFiles) {
  std::set<fs::path> expected;
  for (const GoldenCase& c : golden_cases()) {
    Graph g = c.build();
    auto plan = plan_kernels(g, generic_options());
    ASSERT_TRUE(plan.ok()) << c.name << ": " << plan.status().to_string();
    for (size_t i = 0; i < plan->kernels.size(); ++i) expected.insert(golden_path(c.name, i));
  }
  if (!fs::is_directory(KILN_GOLDEN_DIR)) return;  // nothing stale; the cases report missing files
  for (const fs::directory_entry& e : fs::directory_iterator(KILN_GOLDEN_DIR)) {
    if (e.path().extension() != ".comp" || expected.count(e.path()) != 0) continue;
    if (updating()) {
      fs::remove(e.path());
      continue;
    }
    ADD_FAILURE() << "stale golden file " << e.path() << " (no case produces it)\n" << kRegenerate;
  }
}

TEST(Golden, NormalizationDropsLineDirectivesBlanksAndTrailingSpace) {
  std::vector<std::string> n =
      normalize_glsl("#line 1 \"x.comp\"\n\nvoid f() {  \n  \t\n  #line 7\n}\r\n");
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0], "void f() {");
  EXPECT_EQ(n[1], "}");
  // The shared helpers of shaders/common/ are left out (their own tests cover them).
  n = normalize_glsl(
      "#line 1 \"k.comp\"\nA\n#line 1 \"common/kiln_common.glsl\"\nfloat h();\n#line 2 "
      "\"k.comp\"\nB\n");
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0], "A");
  EXPECT_EQ(n[1], "B");
  EXPECT_EQ(first_difference({"a", "b"}, {"a", "b"}), "");
  EXPECT_NE(first_difference({"a", "b"}, {"a", "c"}).find("line 2"), std::string::npos);
  EXPECT_NE(first_difference({"a"}, {"a", "extra"}).find("<end of file>"), std::string::npos);
}

}  // namespace
}  // namespace kiln
