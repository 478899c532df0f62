// Imports an ONNX model with kiln::onnx, runs it compiled on Vulkan when a device exists (else on
// the CPU interpreter) and compares each output with a reference .npy file.
//   onnx_example MODEL.onnx CASE_DIR
// CASE_DIR holds one `<name>.npy` per graph input and per graph output (the layout of
// tests/data/onnx/*/N/). Exits non-zero on a mismatch, an error, or a validation-layer error.
#include <kiln/io.h>
#include <kiln/kiln.h>
#include <kiln/onnx.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

int run(const std::string& model_path, const std::string& case_dir) {
  const kiln::Device device =
      kiln::vulkan_available() ? kiln::Device::vulkan() : kiln::Device::cpu();
  kiln::onnx::Model model = kiln::value_or_throw(kiln::onnx::Model::load(model_path, device));
  std::printf("%s: opset %ld on %s\n", model_path.c_str(), static_cast<long>(model.opset()),
              device.str().c_str());

  std::vector<kiln::Tensor> inputs;
  for (const kiln::onnx::ValueInfo& in : model.inputs()) {
    std::printf("  input  %s\n", in.str().c_str());
    inputs.push_back(kiln::value_or_throw(kiln::load_npy(case_dir + "/" + in.name + ".npy")));
  }
  kiln::onnx::CompiledModel compiled(model, {.name = "onnx_example"});
  const std::vector<kiln::Tensor> outputs = compiled(inputs);

  int bad = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const kiln::onnx::ValueInfo& info = model.outputs()[o];
    const kiln::Tensor want_t =
        kiln::value_or_throw(kiln::load_npy(case_dir + "/" + info.name + ".npy"));
    const std::vector<double> got = kiln::onnx::values_as(outputs[o], info.onnx_type);
    const std::vector<double> want = want_t.to_doubles();
    double worst = 0;
    int wrong = got.size() == want.size() ? 0 : 1;
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
      const double err = std::fabs(got[i] - want[i]);
      worst = std::max(worst, err);
      if (!(err <= 1e-4 * (1.0 + std::fabs(want[i])))) ++wrong;
    }
    std::printf("  output %s: %zu values, max abs error %g, %d mismatching\n", info.str().c_str(),
                got.size(), worst, wrong);
    bad += wrong;
  }
  const uint64_t validation_errors = kiln::runtime_counters().validation_errors;
  std::printf("validation errors %lu\n%s\n", static_cast<unsigned long>(validation_errors),
              bad == 0 && validation_errors == 0 ? "OK" : "FAILED");
  return bad == 0 && validation_errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx CASE_DIR\n", argv[0]);
    return 2;
  }
  try {
    return run(argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
