// The CPU interpreter's ConvTranspose (reference semantics, ONNX's):
//   out[n, co, o..] = bias[co] + sum over ci < C / groups, window taps k.. and input positions
//     i.. with i * stride - pad_begin + k * dilation == o (per spatial dim) of
//     x[n, g * C / groups + ci, i..] * w[g * C / groups + ci, co - g * C_out / groups, k..],
//   g = co / (C_out / groups). Output positions that no tap reaches (output_padding, strides
//   larger than the window) hold the bias. Products are summed in double per output element
//   and rounded once to the output dtype.
// Computed by scattering each input element's products into a double accumulator per output
// element; spatial dims are handled as three, missing ones having size 1 and a trivial window.
#include <array>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {

Status conv_transpose(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const Attrs::Window& at = node.attrs.window;
  const Shape &xs = ins[0]->meta.shape, &ws = ins[1]->meta.shape, &os = out.meta.shape;
  const size_t k = xs.size() - 2, lead = 3 - k;
  std::array<int64_t, 3> in{1, 1, 1}, o{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0},
      dil{1, 1, 1};
  for (size_t i = 0; i < k; ++i) {
    in[lead + i] = xs[2 + i];
    o[lead + i] = os[2 + i];
    kernel[lead + i] = ws[2 + i];
    stride[lead + i] = at.strides[i];
    pad[lead + i] = at.pads[i];
    dil[lead + i] = at.dilations[i];
  }
  const int64_t n_count = xs[0], c = xs[1], c_out = os[1], groups = at.groups;
  const int64_t cg = c / groups, og = c_out / groups;
  const int64_t in_plane = in[0] * in[1] * in[2], out_plane = o[0] * o[1] * o[2];
  const int64_t taps = kernel[0] * kernel[1] * kernel[2];
  Reader<double> x = reader<double>(*ins[0]);
  Reader<double> w = reader<double>(*ins[1]);
  std::vector<double> acc(static_cast<size_t>(out.meta.numel()), 0.0);
  if (ins.size() == 3) {
    Reader<double> bias = reader<double>(*ins[2]);
    for (int64_t n = 0; n < n_count; ++n)
      for (int64_t co = 0; co < c_out; ++co)
        for (int64_t p = 0; p < out_plane; ++p)
          acc[static_cast<size_t>((n * c_out + co) * out_plane + p)] = bias(co);
  }
  // Output offset (within a plane) of each input position and tap, or -1 outside the output.
  std::vector<int64_t> target(static_cast<size_t>(in_plane * taps), -1);
  for (int64_t a = 0; a < in[0]; ++a)
    for (int64_t b = 0; b < in[1]; ++b)
      for (int64_t d = 0; d < in[2]; ++d)
        for (int64_t ka = 0; ka < kernel[0]; ++ka)
          for (int64_t kb = 0; kb < kernel[1]; ++kb)
            for (int64_t kd = 0; kd < kernel[2]; ++kd) {
              const int64_t p0 = a * stride[0] - pad[0] + ka * dil[0];
              const int64_t p1 = b * stride[1] - pad[1] + kb * dil[1];
              const int64_t p2 = d * stride[2] - pad[2] + kd * dil[2];
              if (p0 < 0 || p0 >= o[0] || p1 < 0 || p1 >= o[1] || p2 < 0 || p2 >= o[2]) continue;
              const int64_t ip = (a * in[1] + b) * in[2] + d,
                            t = (ka * kernel[1] + kb) * kernel[2] + kd;
              target[static_cast<size_t>(ip * taps + t)] = (p0 * o[1] + p1) * o[2] + p2;
            }
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t ci = 0; ci < c; ++ci) {
      const int64_t g = ci / cg;
      for (int64_t ip = 0; ip < in_plane; ++ip) {
        const double xv = x((n * c + ci) * in_plane + ip);
        const int64_t* tgt = target.data() + ip * taps;
        for (int64_t j = 0; j < og; ++j) {
          const int64_t co = g * og + j;
          double* dst = acc.data() + (n * c_out + co) * out_plane;
          const int64_t wbase = (ci * og + j) * taps;
          for (int64_t t = 0; t < taps; ++t)
            if (tgt[t] >= 0) dst[tgt[t]] += xv * w(wbase + t);
        }
      }
    }
  Writer<double> wr = writer<double>(out);
  for (size_t i = 0; i < acc.size(); ++i) wr(static_cast<int64_t>(i), acc[i]);
  return {};
}

}  // namespace kiln::eager
