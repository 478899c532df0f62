// random_uniform: element i of the output (row-major) is philox_uniform(seed, stream, i), a
// float in [0, 1) with 24 random bits (eager/philox.h); the input gives only the shape.
#include "eager/interpreter_ops.h"
#include "eager/philox.h"

namespace kiln::eager {

Status eval_random(const Node& node, std::span<const HostTensor* const> /*ins*/, HostTensor& out) {
  const auto seed = static_cast<uint64_t>(node.attrs.scalar_int);
  const auto stream = static_cast<uint32_t>(node.attrs.index);
  float* y = out.ptr<float>();
  const int64_t n = out.meta.numel();
  for (int64_t i = 0; i < n; ++i) y[i] = philox_uniform(seed, stream, static_cast<uint64_t>(i));
  return {};
}

}  // namespace kiln::eager
