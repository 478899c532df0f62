// im2col (graph/ops.def): every element of the output written, taps in the padding as 0. The
// interpreter runs it only where a device-lowered graph is interpreted (`kiln check`, tests);
// its own conv builds the same matrix internally (interpreter_window.cpp).
#include "eager/interpreter_ops.h"
#include "graph/window_size.h"

namespace kiln::eager {

Status eval_im2col(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& x = *ins[0];
  const Attrs::Window& w = node.attrs.window;
  const int64_t n = x.meta.shape[0], channels = x.meta.shape[1], h = x.meta.shape[2],
                wd = x.meta.shape[3];
  const int64_t kh = w.kernel[0], kw = w.kernel[1];
  const int64_t oh =
      window_output_size(h, kh, w.strides[0], w.pads[0], w.pads[2], w.dilations[0], false);
  const int64_t ow =
      window_output_size(wd, kw, w.strides[1], w.pads[1], w.pads[3], w.dilations[1], false);
  const int64_t positions = n * oh * ow, taps = channels * kh * kw;
  const int64_t row = im2col_row_length(taps);
  const float* src = x.ptr<float>();
  float* dst = out.ptr<float>();
  for (int64_t p = 0; p < positions; ++p) {
    const int64_t img = p / (oh * ow), oy = p / ow % oh, ox = p % ow;
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t c = t / (kh * kw), ky = t / kw % kh, kx = t % kw;
      const int64_t iy = oy * w.strides[0] - w.pads[0] + ky * w.dilations[0];
      const int64_t ix = ox * w.strides[1] - w.pads[1] + kx * w.dilations[1];
      const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < wd;
      dst[p * row + t] = inside ? src[((img * channels + c) * h + iy) * wd + ix] : 0.0f;
    }
    for (int64_t t = taps; t < row; ++t) dst[p * row + t] = 0.0f;
  }
  return {};
}

}  // namespace kiln::eager
