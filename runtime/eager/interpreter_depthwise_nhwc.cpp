// depthwise_nhwc (graph/ops.def): each output the bias, then the window's taps inside the input
// added in row-major order, in float, as the interpreter's NCHW depthwise conv sums them
// (interpreter_window.cpp). The interpreter runs it only where a device-lowered graph is
// interpreted (`kiln check`, tests).
#include "eager/interpreter_ops.h"
#include "graph/window_size.h"

namespace kiln::eager {

Status eval_depthwise_nhwc(const Node& node, std::span<const HostTensor* const> ins,
                           HostTensor& out) {
  const HostTensor& x = *ins[0];
  const Attrs::Window& w = node.attrs.window;
  const int64_t n = x.meta.shape[0], h = x.meta.shape[1], wd = x.meta.shape[2],
                c = x.meta.shape[3];
  const int64_t kh = w.kernel[0], kw = w.kernel[1];
  const int64_t oh = out.meta.shape[1], ow = out.meta.shape[2];
  const float* src = x.ptr<float>();
  const float* wt = ins[1]->ptr<float>();
  const float* bias = ins.size() == 3 ? ins[2]->ptr<float>() : nullptr;
  float* dst = out.ptr<float>();
  for (int64_t img = 0; img < n; ++img)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        float* y = dst + ((img * oh + oy) * ow + ox) * c;
        for (int64_t ch = 0; ch < c; ++ch) y[ch] = bias ? bias[ch] : 0.0f;
        for (int64_t ky = 0; ky < kh; ++ky) {
          const int64_t iy = oy * w.strides[0] - w.pads[0] + ky * w.dilations[0];
          if (iy < 0 || iy >= h) continue;
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t ix = ox * w.strides[1] - w.pads[1] + kx * w.dilations[1];
            if (ix < 0 || ix >= wd) continue;
            const float* xp = src + ((img * h + iy) * wd + ix) * c;
            for (int64_t ch = 0; ch < c; ++ch) y[ch] += wt[(ch * kh + ky) * kw + kx] * xp[ch];
          }
        }
      }
  return {};
}

}  // namespace kiln::eager
