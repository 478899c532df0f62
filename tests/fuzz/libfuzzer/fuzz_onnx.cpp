// libFuzzer target for the ONNX model reader (runtime/onnx/): any bytes must end in an imported
// model or a clear error, never in a crash, a sanitizer report or an exception other than
// kiln::Error. The same bytes are also read as a TensorProto (.pb).
//
// With KILN_FUZZ_ONNX_RUN=1 a model that imports is also run once on the CPU interpreter with
// small inputs (named or unknown dims = 2), as tests/onnx/fuzz_test.cpp does; that run may only
// fail with kiln::Error. It reaches the per-op handlers, but mutated sizes and attributes make
// some runs take seconds, so it is off by default (docs/testing.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx.h"

namespace {

using namespace kiln;

bool g_run = false;

/// Inputs for the declared inputs; false when they would be large.
bool make_inputs(const onnx::Model& m, std::vector<Tensor>& inputs) {
  for (const onnx::ValueInfo& in : m.inputs()) {
    Shape shape;
    int64_t n = 1;
    for (int64_t d : in.dims) {
      shape.push_back(d < 0 ? 2 : d);
      n *= std::max<int64_t>(shape.back(), 1);
      if (n > 4096) return false;
    }
    if (!in.has_shape) shape = {2};
    inputs.push_back(Tensor::full(shape, 1.0, in.dtype));
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* run = std::getenv("KILN_FUZZ_ONNX_RUN");
  g_run = run && std::string_view(run) == "1";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  Expected<onnx::ProtoTensor> t = onnx::parse_tensor_proto(bytes);
  if (t.ok()) {
    (void)t->tensor.to_doubles();
  } else if (t.status().message().empty()) {
    __builtin_trap();
  }
  Expected<onnx::Model> m = onnx::Model::parse(bytes, Device::cpu(), "fuzz.onnx");
  if (!m.ok()) {
    if (m.status().message().empty()) __builtin_trap();
    return 0;
  }
  std::vector<Tensor> inputs;
  if (!g_run || !make_inputs(*m, inputs)) return 0;
  try {
    for (const Tensor& out : (*m)(inputs)) (void)out.to_doubles();
  } catch (const Error&) {
    // A failing op on a corrupt model is a clear error, as the contract says.
  }
  return 0;
}
