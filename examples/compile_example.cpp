// Compiles a small tensor function with kiln::compile, runs it on Vulkan when a device exists
// (else on the CPU interpreter), and checks every element against plain C++. Exits non-zero on
// a mismatch, on a call that was not served from the compile cache, or on a validation-layer
// error (run with KILN_VALIDATE=1).
#include <kiln/kiln.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

kiln::Tensor scale_shift_relu(const kiln::Tensor& x, const kiln::Tensor& a, const kiln::Tensor& b) {
  return kiln::relu(x * a + b) * 0.5f - 1.0f;
}

float reference(float x, float a, float b) {
  return std::max(x * a + b, 0.0f) * 0.5f - 1.0f;
}

int run() {
  const bool on_vulkan = kiln::vulkan_available();
  const kiln::Device device = on_vulkan ? kiln::Device::vulkan() : kiln::Device::cpu();
  std::printf("device: %s\n", device.str().c_str());

  const int64_t rows = 37, cols = 53;  // odd sizes: no kernel gets a multiple of its group size
  std::vector<float> x(rows * cols), a(cols), b(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i * 7919 % 201) - 100) / 25.0f;
    b[i] = static_cast<float>(static_cast<int>(i * 104729 % 97) - 48) / 16.0f;
  }
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.25f + static_cast<float>(i % 9) * 0.125f;

  auto f = kiln::compile(scale_shift_relu, {.name = "scale_shift_relu"});
  const kiln::Tensor tx = kiln::Tensor::from_vector(x, {rows, cols}, device);
  const kiln::Tensor ta = kiln::Tensor::from_vector(a, {cols}, device);  // broadcast over rows
  const kiln::Tensor tb = kiln::Tensor::from_vector(b, {rows, cols}, device);
  f(tx, ta, tb);                                                  // trace, fuse, compile
  const std::vector<float> y = f(tx, ta, tb).to_vector<float>();  // guards pass: replay

  int bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      const float want = reference(x[i], a[static_cast<size_t>(c)], b[i]);
      if (std::fabs(y[i] - want) > 1e-5f * (1.0f + std::fabs(want))) {
        if (bad++ < 5) std::printf("mismatch at [%ld, %ld]: %g, want %g\n", r, c, y[i], want);
      }
    }
  }
  const kiln::CompileStats stats = f.stats();
  const auto entries = f.entries();
  const uint64_t validation_errors = kiln::runtime_counters().validation_errors;
  std::printf(
      "%ld elements, %d mismatching; compiles %lu, cache hits %lu, kernels %zu, "
      "validation errors %lu\n",
      rows * cols, bad, static_cast<unsigned long>(stats.compiles),
      static_cast<unsigned long>(stats.cache_hits),
      entries.empty() ? size_t{0} : entries[0].kernels.size(),
      static_cast<unsigned long>(validation_errors));
  const bool ok =
      bad == 0 && stats.compiles == 1 && stats.cache_hits == 1 && validation_errors == 0;
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
