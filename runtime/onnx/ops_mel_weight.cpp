// MelWeightMatrix (opset 17): the [dft_length / 2 + 1, num_mel_bins] matrix of triangular mel
// filters, a constant of its five scalar inputs. It is computed on the host as ONNX's reference
// computes it (the edges' mels in float from float inputs, the rest in double, bin edges
// floored to integers) and becomes a constant of output_datatype. Inputs the trace does not
// know are read on the host: a graph break guarded by their values.
#include <cmath>
#include <string>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 26;

/// Hertz to mel in float (ONNX's function body and reference on float inputs).
float to_mel(float hz) {
  return 2595.0f * std::log10(1.0f + hz / 700.0f);
}

void mel_weight_matrix(NodeCtx& c) {
  for (size_t i = 0; i < 5; ++i)
    if (!c.has(i))
      c.fail(
          "needs num_mel_bins, dft_length, sample_rate, lower_edge_hertz and "
          "upper_edge_hertz");
  const int64_t mels = c.scalar_int(0), dft = c.scalar_int(1), rate = c.scalar_int(2);
  const auto low = static_cast<float>(c.scalar_double(3)),
             high = static_cast<float>(c.scalar_double(4));
  if (mels < 1) c.fail("num_mel_bins must be positive, not " + std::to_string(mels));
  if (dft < 1) c.fail("dft_length must be positive, not " + std::to_string(dft));
  if (rate < 1) c.fail("sample_rate must be positive, not " + std::to_string(rate));
  if (!std::isfinite(low) || !std::isfinite(high) || low < 0 || high < low)
    c.fail("the edges must be finite with 0 <= lower_edge_hertz <= upper_edge_hertz");
  const int64_t bins = dft / 2 + 1;
  if (mels > kMaxElements || bins > kMaxElements / mels)
    c.fail("a matrix of " + std::to_string(bins) + " x " + std::to_string(mels) +
           " is above 2^26 elements");
  auto dtype = kiln_dtype(static_cast<OnnxType>(c.attr_i("output_datatype", 1)));
  if (!dtype.ok()) throw Error(dtype.status());

  // The mel_bins + 2 filter edges as spectrogram bins.
  const float low_mel = to_mel(low), high_mel = to_mel(high);
  const double step = static_cast<double>(high_mel - low_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edge;
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double mel = static_cast<double>(i) * step + static_cast<double>(low_mel);
    const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    const double at = std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate));
    edge.push_back(static_cast<int64_t>(at));
  }
  std::vector<double> out(static_cast<size_t>(bins * mels), 0.0);
  const auto put = [&](int64_t j, int64_t i, double v) {
    if (j < 0 || j >= bins)
      c.fail("filter " + std::to_string(i) + " reaches bin " + std::to_string(j) + ", past the " +
             std::to_string(bins) +
             " bins of the spectrogram "
             "(upper_edge_hertz above the Nyquist frequency)");
    out[static_cast<size_t>(j * mels + i)] = v;
  };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = edge[static_cast<size_t>(i)], centre = edge[static_cast<size_t>(i + 1)],
                  right = edge[static_cast<size_t>(i + 2)];
    const int64_t rise = centre - left, fall = right - centre;
    if (rise == 0)
      put(centre, i, 1.0);
    else
      for (int64_t j = left; j <= centre; ++j)
        put(j, i, static_cast<double>(j - left) / static_cast<double>(rise));
    for (int64_t j = centre; fall > 0 && j < right; ++j)
      put(j, i, static_cast<double>(right - j) / static_cast<double>(fall));
  }
  c.set(0, c.constant(*dtype, {bins, mels}, out));
}

}  // namespace

void register_mel_weight_ops(std::map<std::string, OpHandler>& t) {
  t["MelWeightMatrix"] = mel_weight_matrix;
}

}  // namespace kiln::onnx
