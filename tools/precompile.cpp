// kiln precompile: compiles an ONNX model for given input shapes into a cache directory that an
// application can ship (docs/cache.md, "Shipping a warm cache").
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "tools/commands.h"

namespace fs = std::filesystem;

namespace kiln::tools {
namespace {

int fail(const std::string& message) {
  fmt::print(stderr, "kiln precompile: {}\n", message);
  return 1;
}

/// "2x128" -> {2, 128}; "" (a scalar input) -> {}.
Expected<std::vector<int64_t>> parse_shape(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty() || text == "scalar") return dims;
  size_t at = 0;
  for (;;) {
    const size_t next = text.find('x', at);
    const std::string part = text.substr(at, next - at);
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 0)
      return invalid_argument("bad shape '" + text + "' (expected sizes joined by x: 2x128)");
    dims.push_back(v);
    if (next == std::string::npos) return dims;
    at = next + 1;
  }
}

uint64_t dir_bytes(const fs::path& dir) {
  std::error_code ec;
  uint64_t bytes = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  return bytes;
}

}  // namespace

int precompile_main(const PrecompileOptions& options) {
  // NAME=SHAPE, repeatable: the k-th shape of every input makes the k-th call.
  std::map<std::string, std::vector<std::vector<int64_t>>> shapes;
  for (const std::string& spec : options.shapes) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("--shape expects NAME=SHAPE (e.g. input_ids=1x128), got '" + spec + "'");
    auto dims = parse_shape(spec.substr(eq + 1));
    if (!dims.ok()) return fail(dims.status().message());
    shapes[spec.substr(0, eq)].push_back(*dims);
  }
  const char* selector = std::getenv("KILN_DEVICE");
  auto device =
      Device::open(selector && *selector ? selector : "0", {.cache_dir = options.cache_dir});
  if (!device.ok()) return fail("no Vulkan device: " + device.status().to_string());
  {
    auto model = onnx::Model::load(options.model, *device);
    if (!model.ok()) return fail(model.status().to_string());
    size_t calls = 0;
    for (const auto& [name, list] : shapes) {
      bool known = false;
      for (const onnx::ValueInfo& in : model->inputs()) known |= in.name == name;
      if (!known) return fail("the model has no input '" + name + "'");
      calls = std::max(calls, list.size());
    }
    if (calls == 0) calls = 1;
    CompileOptions copts{.name = fs::path(options.model).stem().string()};
    if (options.dynamic) copts.dynamic = Dynamic::kTrue;
    onnx::CompiledModel compiled(*model, copts);
    const auto start = std::chrono::steady_clock::now();
    for (size_t c = 0; c < calls; ++c) {
      std::vector<std::vector<int64_t>> call;
      std::string text;
      for (const onnx::ValueInfo& in : model->inputs()) {
        auto it = shapes.find(in.name);
        if (it != shapes.end()) {
          call.push_back(it->second[std::min(c, it->second.size() - 1)]);
        } else {  // a declared static shape
          std::vector<int64_t> dims;
          for (size_t d = 0; d < in.dims.size(); ++d) {
            if (in.dims[d] < 0)
              return fail("input '" + in.name + "' has a symbolic dim ('" +
                          (d < in.dim_params.size() ? in.dim_params[d] : std::string()) +
                          "'): give its shape with --shape " + in.name + "=...");
            dims.push_back(in.dims[d]);
          }
          call.push_back(dims);
        }
        text += fmt::format("{}{}={}", text.empty() ? "" : " ", in.name, shape_str(call.back()));
      }
      const Status st = compiled.precompile(call);
      if (!st.ok()) return fail(st.to_string());
      fmt::print("compiled {}\n", text);
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const CompileStats st = compiled.stats();
    fmt::print("{} call(s), {} compile(s) ({} symbolic), {:.0f} ms\n", st.calls, st.compiles,
               st.dynamic_compiles, ms);
  }
  if (const Status st = device->close(); !st.ok())
    fmt::print(stderr, "kiln precompile: {}\n", st.to_string());
  if (!options.cache_dir.empty() && options.cache_dir != "off")
    fmt::print("cache {}: {:.1f} MiB\n", options.cache_dir,
               static_cast<double>(dir_bytes(options.cache_dir)) / (1024.0 * 1024.0));
  return 0;
}

}  // namespace kiln::tools
