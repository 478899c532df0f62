// kiln onnx-test: the RANDOM verdict (onnx_test_random.h).
#include "tools/onnx_test_random.h"

#include <fmt/core.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx.h"

namespace fs = std::filesystem;

namespace kiln::tools {

namespace {

constexpr uint64_t kSeed = 0x6b696c6eull;

/// Resets the default seed however the check ends.
struct SeedScope {
  SeedScope() { onnx::set_default_seed(kSeed); }
  ~SeedScope() { onnx::set_default_seed(std::nullopt); }
  SeedScope(const SeedScope&) = delete;
  SeedScope& operator=(const SeedScope&) = delete;
};

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0; fs::exists(dir / (prefix + std::to_string(i) + ".pb")); ++i)
    out.push_back(dir / (prefix + std::to_string(i) + ".pb"));
  return out;
}

/// The outputs of `dir`'s model on `device` for one data set's inputs.
std::vector<Tensor> run(const fs::path& dir, const fs::path& set, Device device) {
  auto model = onnx::Model::load((dir / "model.onnx").string(), device);
  if (!model.ok()) throw Error(model.status());
  onnx::CompiledModel compiled(*model, {.name = dir.filename().string()});
  std::vector<Tensor> inputs;
  for (const fs::path& p : numbered(set, "input_")) {
    auto t = onnx::load_tensor_proto(p.string(), device);
    if (!t.ok()) throw Error(t.status());
    inputs.push_back(t->tensor);
  }
  return compiled(inputs);
}

bool same_bits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

namespace {

/// A random node in `g` or its subgraphs: a random op, or a Dropout given a training_mode input
/// (an inference Dropout is the identity and is compared by value like any op).
bool random_node(const ::onnx::GraphProto& g) {
  static const std::set<std::string> random = {"Bernoulli",         "RandomUniform",
                                               "RandomUniformLike", "RandomNormal",
                                               "RandomNormalLike",  "Multinomial"};
  for (const auto& n : g.node()) {
    if (random.count(n.op_type())) return true;
    if (n.op_type() == "Dropout" && n.input_size() >= 3 && !n.input(2).empty()) return true;
    for (const auto& a : n.attribute())
      if (a.has_g() && random_node(a.g())) return true;
  }
  return false;
}

}  // namespace

bool has_random_op(const std::string& case_dir) {
  std::ifstream in(fs::path(case_dir) / "model.onnx", std::ios::binary);
  ::onnx::ModelProto m;
  return in && m.ParseFromIstream(&in) && random_node(m.graph());
}

std::string check_random_case(const std::string& case_dir, Device device) {
  const fs::path dir(case_dir);
  SeedScope seed;
  try {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_directory() || e.path().filename().string().rfind("test_data_set_", 0) != 0)
        continue;
      const std::vector<Tensor> got = run(dir, e.path(), device);
      const std::vector<Tensor> cpu =
          device.is_cpu() ? run(dir, e.path(), device) : run(dir, e.path(), Device::cpu());
      const std::vector<fs::path> refs = numbered(e.path(), "output_");
      if (got.size() != refs.size()) return "the outputs do not match the reference's count";
      for (size_t i = 0; i < refs.size(); ++i) {
        auto want = onnx::load_tensor_proto(refs[i].string());
        if (!want.ok()) return want.status().to_string();
        if (got[i].shape() != want->tensor.shape())
          return fmt::format("output {} has shape {}, the reference {}", i,
                             shape_str(got[i].shape()), shape_str(want->tensor.shape()));
        const std::vector<double> g = got[i].to_doubles(), c = cpu[i].to_doubles();
        bool binary = true;
        for (double w : want->tensor.to_doubles()) binary = binary && (w == 0 || w == 1);
        for (size_t k = 0; k < g.size(); ++k) {
          if (binary && g[k] != 0 && g[k] != 1)
            return fmt::format("output {} element {} is {}, the reference holds only 0 and 1", i, k,
                               g[k]);
          if (!same_bits(g[k], c[k]))
            return fmt::format("output {} element {} is {} here and {} on the interpreter", i, k,
                               g[k], c[k]);
        }
      }
    }
  } catch (const Error& e) {
    return e.status().to_string();
  }
  return "";
}

}  // namespace kiln::tools
