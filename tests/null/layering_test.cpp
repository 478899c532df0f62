// The layer rules of docs/architecture.md, checked on the source tree: every quoted #include of
// a library source file names a public header (kiln/...) or a header of a layer its folder may
// use. A folder without a rule fails too, so that a new folder states its place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// What the sources of one folder may include besides public headers: folder prefixes ("graph/")
/// or single headers ("tensor/tensor_impl.h").
const std::map<std::string, std::vector<std::string>>& rules() {
  static const std::map<std::string, std::vector<std::string>> r = {
      {"include/kiln", {}},  // public headers include public headers only
      {"runtime/core", {"core/"}},
      {"runtime/graph", {"core/", "graph/"}},
      {"runtime/cache", {"core/", "graph/", "cache/"}},
      {"runtime/eager", {"core/", "graph/", "eager/"}},        // never codegen, vk or above
      {"codegen", {"core/", "graph/", "cache/", "codegen/"}},  // never eager, vk or above
      {"runtime/vk", {"core/", "graph/", "cache/", "vk/"}},
      // Execution compiles and runs programs; it knows nothing of tracing or the Tensor API
      // beyond the storage behind a Tensor.
      {"runtime/exec",
       {"core/", "graph/", "cache/", "eager/", "codegen/", "vk/", "exec/", "tensor/tensor_impl.h"}},
      {"runtime/capture",
       {"core/", "graph/", "eager/", "exec/", "capture/", "tensor/tensor_impl.h"}},
      {"runtime/tensor",
       {"core/", "graph/", "eager/", "codegen/", "vk/", "exec/", "capture/", "tensor/"}},
      {"runtime/device", {"core/", "cache/", "vk/", "exec/executable_cache.h", "device/"}},
      // The front ends and tools above the public API: public headers, their own folder, and
      // no private header of capture or of the Tensor API's storage.
      {"runtime/nn", {"nn/"}},
      {"runtime/io", {"io/"}},
      // The importer's one internal header is tensor/apply_op.h (ops without a public function);
      // it reads the op table (graph/ops.def) to register the kernel ops' handlers.
      {"runtime/onnx", {"onnx/", "tensor/apply_op.h", "graph/ops.def"}},
      {"runtime/c_api", {}},
      {"tools",
       {"tools/", "bench/workloads.h", "exec/check.h", "exec/calibration.h", "vk/device.h"}},
  };
  return r;
}

bool allowed(const std::string& header, const std::vector<std::string>& rule) {
  if (header.rfind("kiln/", 0) == 0) return true;
  for (const std::string& a : rule)
    if (a.back() == '/' ? header.rfind(a, 0) == 0 : header == a) return true;
  return false;
}

/// "file: #include "x"" for every include of `text` its folder's rule does not allow.
std::vector<std::string> violations(const std::string& file, const std::string& text,
                                    const std::vector<std::string>& rule) {
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, include) && !allowed(m[1].str(), rule))
      out.push_back(file + ": #include \"" + m[1].str() + "\"");
  }
  return out;
}

TEST(Layering, TheCheckerFindsAViolation) {
  const auto& r = rules();
  EXPECT_EQ(violations("runtime/onnx/x.cpp", "#include \"capture/trace.h\"\n", r.at("runtime/onnx"))
                .size(),
            1u);
  EXPECT_EQ(
      violations("runtime/io/x.cpp", "  #  include \"tensor/tensor_impl.h\"\n", r.at("runtime/io"))
          .size(),
      1u);
  EXPECT_EQ(violations("runtime/exec/x.cpp",
                       "#include \"capture/host_memo.h\"\n#include \"tensor/ops.h\"\n",
                       r.at("runtime/exec"))
                .size(),
            2u);
  EXPECT_TRUE(violations("runtime/exec/x.cpp",
                         "#include \"kiln/tensor.h\"\n#include \"tensor/tensor_impl.h\"\n"
                         "#include <vector>\n",
                         r.at("runtime/exec"))
                  .empty());
}

TEST(Layering, EverySourceFolderKeepsItsLayerRule) {
  const fs::path root = KILN_SOURCE_DIR;
  std::vector<std::string> bad;
  int files = 0;
  for (const fs::path& top : {root / "runtime", root / "codegen", root / "tools", root / "include"})
    for (const auto& entry : fs::recursive_directory_iterator(top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      const std::string folder = fs::relative(entry.path().parent_path(), root).generic_string();
      const std::string file = fs::relative(entry.path(), root).generic_string();
      auto rule = rules().find(folder);
      if (rule == rules().end()) {
        bad.push_back(file + ": its folder " + folder + " has no layer rule (layering_test.cpp)");
        continue;
      }
      std::ifstream in(entry.path());
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      for (std::string& v : violations(file, text, rule->second)) bad.push_back(std::move(v));
      ++files;
    }
  EXPECT_GT(files, 100) << "the scan found too few sources under " << root;
  for (const std::string& b : bad) ADD_FAILURE() << b;
}

}  // namespace
