// Neural-network ops: normalisations, convolution, pooling; and Constant decoding.
#include <algorithm>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

Tensor lit(double v, const Tensor& like) {
  return scalar(v, like.dtype());
}

/// [C] -> [C, 1, ..., 1] to broadcast against [N, C, D1, ...].
Tensor per_channel(const Tensor& p, int64_t rank) {
  Sizes s = p.sizes();
  for (int64_t d = 2; d < rank; ++d) s.push_back(1);
  return reshape(p, s);
}

void layer_norm_op(NodeCtx& c) {
  Tensor x = c.in(0), scale = c.in(1);
  const int64_t rank = x.dim();
  const int64_t axis = axis_of(c, c.attr_i("axis", -1), rank);
  const double eps = c.attr_f("epsilon", 1e-5);
  const int64_t dims = rank - axis;
  const bool plain = !c.wants(1) && !c.wants(2) && c.has(2) && scale.dim() == dims &&
                     c.in(2).dim() == dims && x.dtype() == DType::kF32;
  if (plain) {
    c.set(0, layer_norm(x, scale, c.in(2), dims, eps));
    return;
  }
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  Tensor m = mean(x, axes, true);
  Tensor centred = sub(x, m);
  Tensor inv = rsqrt(add(mean(mul(centred, centred), axes, true), lit(eps, x)));
  Tensor y = mul(mul(centred, inv), scale);
  if (c.has(2)) y = add(y, c.in(2));
  c.set(0, y);
  c.set(1, m);
  c.set(2, inv);
}

void batch_norm_op(NodeCtx& c) {
  Tensor x = c.in(0);
  const int64_t rank = x.dim();
  if (rank < 2) c.fail("the input needs at least 2 dims");
  const double eps = c.attr_f("epsilon", 1e-5);
  Tensor scale = per_channel(c.in(1), rank), bias = per_channel(c.in(2), rank);
  const bool training = c.opset() >= 14 && c.attr_i("training_mode", 0) != 0;
  if (!training) {
    Tensor m = per_channel(c.in(3), rank), v = per_channel(c.in(4), rank);
    c.set(0, add(mul(div(sub(x, m), sqrt(add(v, lit(eps, v)))), scale), bias));
    return;
  }
  // Training mode: batch statistics (biased variance) and updated running statistics.
  const double momentum = c.attr_f("momentum", 0.9);
  std::vector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Tensor m = mean(x, axes, true);
  Tensor centred = sub(x, m);
  Tensor var = mean(mul(centred, centred), axes, true);
  c.set(0, add(mul(div(centred, sqrt(add(var, lit(eps, var)))), scale), bias));
  Tensor m1 = reshape(m, {-1}), v1 = reshape(var, {-1});
  Tensor rm = c.in(3), rv = c.in(4);
  c.set(1, add(mul(rm, lit(momentum, rm)), mul(m1, lit(1 - momentum, m1))));
  c.set(2, add(mul(rv, lit(momentum, rv)), mul(v1, lit(1 - momentum, v1))));
}

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

/// Kernel, strides, dilations and explicit pads of a Conv / pool node (auto_pad resolved).
Window window_of(NodeCtx& c, const Tensor& x, std::vector<int64_t> kernel) {
  const int64_t k = x.dim() - 2;
  if (k < 1) c.fail("the input needs spatial dims");
  Window w;
  w.kernel = std::move(kernel);
  w.strides = c.attr_ints("strides");
  w.dilations = c.attr_ints("dilations");
  w.pads = c.attr_ints("pads");
  if (w.strides.empty()) w.strides.assign(static_cast<size_t>(k), 1);
  if (w.dilations.empty()) w.dilations.assign(static_cast<size_t>(k), 1);
  if (w.pads.empty()) w.pads.assign(static_cast<size_t>(2 * k), 0);
  if (static_cast<int64_t>(w.kernel.size()) != k || static_cast<int64_t>(w.strides.size()) != k ||
      static_cast<int64_t>(w.dilations.size()) != k || static_cast<int64_t>(w.pads.size()) != 2 * k)
    c.fail("kernel_shape, strides, dilations or pads do not match " + std::to_string(k) +
           " spatial dims");
  const std::string pad = c.attr_s("auto_pad", "NOTSET");
  if (pad == "VALID") {
    w.pads.assign(static_cast<size_t>(2 * k), 0);
  } else if (pad == "SAME_UPPER" || pad == "SAME_LOWER") {
    for (int64_t d = 0; d < k; ++d) {
      const auto i = static_cast<size_t>(d);
      const int64_t in = x.sizes()[i + 2].value();
      const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
      const int64_t small = total / 2, big = total - small;
      w.pads[i] = pad == "SAME_UPPER" ? small : big;
      w.pads[i + static_cast<size_t>(k)] = pad == "SAME_UPPER" ? big : small;
    }
  } else if (pad != "NOTSET") {
    c.fail("auto_pad '" + pad + "' is not an ONNX value");
  }
  return w;
}

}  // namespace

Tensor conv_node(NodeCtx& c, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.empty())
    for (int64_t d = 2; d < weight.dim(); ++d)
      kernel.push_back(weight.sizes()[static_cast<size_t>(d)].value());
  Window w = window_of(c, x, kernel);
  return conv(x, weight, bias, w.strides, w.pads, w.dilations, c.attr_i("group", 1));
}

namespace {

void conv_op(NodeCtx& c) {
  c.set(0, conv_node(c, c.in(0), c.in(1), c.has(2) ? c.in(2) : Tensor()));
}

/// Floor division (Python's //), for ONNX's output_shape padding rule.
int64_t floor_div(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/// ConvTranspose. With output_shape (or auto_pad SAME_*, whose output is input * stride) the
/// pads come from the total padding full - output_shape: split in half, the odd one at the end
/// for SAME_UPPER and at the start otherwise (Python floor division, so an output larger than
/// the full one extends the end: negative pads).
void conv_transpose_op(NodeCtx& c) {
  Tensor x = c.in(0), weight = c.in(1);
  const int64_t k = x.dim() - 2;
  if (k < 1 || weight.dim() != x.dim()) c.fail("the input and weight need matching spatial dims");
  const auto ku = static_cast<size_t>(k);
  std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  for (size_t i = 0; i < kernel.size() && i < ku; ++i)
    if (kernel[i] != weight.sizes()[i + 2].value())
      c.fail("kernel_shape " + shape_str(kernel) + " differs from the weight's spatial dims");
  std::vector<int64_t> strides = c.attr_ints("strides"), dilations = c.attr_ints("dilations"),
                       pads = c.attr_ints("pads"), out_pad = c.attr_ints("output_padding"),
                       out_shape = c.attr_ints("output_shape");
  if (strides.empty()) strides.assign(ku, 1);
  if (dilations.empty()) dilations.assign(ku, 1);
  if (pads.empty()) pads.assign(2 * ku, 0);
  if (out_pad.empty()) out_pad.assign(ku, 0);
  if (out_shape.size() == ku + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (strides.size() != ku || dilations.size() != ku || pads.size() != 2 * ku ||
      out_pad.size() != ku || (!out_shape.empty() && out_shape.size() != ku))
    c.fail("strides, dilations, pads, output_padding or output_shape do not match " +
           std::to_string(k) + " spatial dims");
  const std::string auto_pad = c.attr_s("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    c.fail("auto_pad '" + auto_pad + "' is not an ONNX value");
  if (auto_pad == "VALID") pads.assign(2 * ku, 0);
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (out_shape.empty() && same)
    for (size_t i = 0; i < ku; ++i) out_shape.push_back(x.sizes()[i + 2].value() * strides[i]);
  for (size_t i = 0; i < out_shape.size(); ++i) {
    const int64_t full = strides[i] * (x.sizes()[i + 2].value() - 1) + out_pad[i] +
                         dilations[i] * (weight.sizes()[i + 2].value() - 1) + 1;
    const int64_t total = full - out_shape[i];
    const int64_t half = floor_div(total, 2);
    pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
    pads[i + ku] = total - pads[i];
  }
  c.set(0, conv_transpose(x, weight, c.has(2) ? c.in(2) : Tensor(), strides, pads, dilations,
                          c.attr_i("group", 1), out_pad));
}

void pool_op(NodeCtx& c, bool is_max) {
  Tensor x = c.in(0);
  Window w = window_of(c, x, c.attr_ints("kernel_shape"));
  const bool ceil_mode = c.attr_i("ceil_mode", 0) != 0;
  Tensor y = is_max ? max_pool(x, w.kernel, w.strides, w.pads, w.dilations, ceil_mode)
                    : avg_pool(x, w.kernel, w.strides, w.pads, w.dilations, ceil_mode,
                               c.attr_i("count_include_pad", 0) != 0);
  c.set(0, y);
  if (is_max && c.wants(1))
    c.set(1, max_pool_indices(x, w.kernel, w.strides, w.pads, w.dilations, ceil_mode,
                              c.attr_i("storage_order", 0)));
}

std::vector<int64_t> spatial_axes(const Tensor& x) {
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < x.dim(); ++d) axes.push_back(d);
  return axes;
}

/// Pad, constant mode: zeros (or the constant) concatenated before and after each padded axis;
/// negative pads slice.
void pad_op(NodeCtx& c) {
  Tensor x = c.in(0);
  const int64_t rank = x.dim();
  const std::string mode = c.attr_s("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    c.unsupported("mode '" + mode + "' is not supported (constant, reflect, edge are)");
  std::vector<int64_t> pads = c.opset() >= 11 ? c.int_values(1) : c.attr_ints("pads");
  double value = c.opset() >= 11 ? (c.has(2) ? c.scalar_double(2) : 0.0) : c.attr_f("value", 0.0);
  std::vector<int64_t> axes;
  if (c.opset() >= 18 && c.has(3)) {
    for (int64_t a : c.int_values(3)) axes.push_back(axis_of(c, a, rank));
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n) c.fail("pads needs " + std::to_string(2 * n) + " values");
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = axes[k];
    const int64_t before = pads[k], after = pads[k + n];
    if (before < 0 || after < 0) {
      const int64_t size = x.sizes()[static_cast<size_t>(axis)].value();
      if (before < -size || after < -size)
        c.fail("pads " + std::to_string(before) + ", " + std::to_string(after) +
               " remove more than axis " + std::to_string(axis) + "'s " + std::to_string(size) +
               " elements");
      x = slice(x, axis, before < 0 ? -before : 0, after < 0 ? size + after : size);
    }
    if (mode != "constant" && (before > 0 || after > 0)) {
      // reflect / edge: one index_select along the axis with host-computed source indices.
      const SymSize dim = x.sizes()[static_cast<size_t>(axis)];
      if (dim.is_symbolic()) c.unsupported("mode '" + mode + "' over a symbolic size");
      const int64_t size = dim.value(), b = std::max<int64_t>(before, 0);
      const int64_t a = std::max<int64_t>(after, 0);
      if (size == 0) c.fail("mode '" + mode + "' cannot pad an empty axis");
      if (mode == "reflect" && (b > size - 1 || a > size - 1))
        c.fail("reflect pads must be below the axis size " + std::to_string(size));
      Sizes s = x.sizes();
      s[static_cast<size_t>(axis)] = b + size + a;
      check_size(c, s);
      std::vector<int64_t> idx;
      for (int64_t p = -b; p < size + a; ++p) {
        if (mode == "edge")
          idx.push_back(std::clamp<int64_t>(p, 0, size - 1));
        else
          idx.push_back(p < 0 ? -p : (p >= size ? 2 * (size - 1) - p : p));
      }
      x = index_select(x, axis, c.constant_i64(idx, {static_cast<int64_t>(idx.size())}));
      continue;
    }
    std::vector<Tensor> parts;
    auto block = [&](int64_t len) {
      Sizes s = x.sizes();
      s[static_cast<size_t>(axis)] = len;
      check_size(c, s);  // corrupt or hostile pads
      return full(s, value, x.dtype(), c.device());
    };
    if (before > 0) parts.push_back(block(before));
    parts.push_back(x);
    if (after > 0) parts.push_back(block(after));
    if (parts.size() > 1) x = concat(parts, axis);
  }
  c.set(0, x);
}

}  // namespace

Expected<Tensor> decode_constant_node(const ::onnx::NodeProto& node, Device device) {
  if (node.attribute_size() != 1)
    return invalid_argument("Constant node '" + node.name() + "' needs exactly one attribute");
  const auto& a = node.attribute(0);
  const std::string what = "Constant node '" + node.name() + "'";
  if (a.name() == "value") {
    auto p = decode_tensor(a.t(), device, what);
    if (!p.ok()) return p.status();
    return p->tensor;
  }
  if (a.name() == "value_float") return Tensor::from_vector(std::vector<float>{a.f()}, {}, device);
  if (a.name() == "value_floats")
    return Tensor::from_vector(std::vector<float>(a.floats().begin(), a.floats().end()),
                               {static_cast<int64_t>(a.floats_size())}, device);
  if (a.name() == "value_int") return Tensor::from_vector(std::vector<int64_t>{a.i()}, {}, device);
  if (a.name() == "value_ints")
    return Tensor::from_vector(std::vector<int64_t>(a.ints().begin(), a.ints().end()),
                               {static_cast<int64_t>(a.ints_size())}, device);
  return unimplemented(what + ": attribute '" + a.name() + "' is not supported");
}

void register_nn_ops(std::map<std::string, OpHandler>& t) {
  t["LayerNormalization"] = layer_norm_op;
  t["BatchNormalization"] = batch_norm_op;
  t["Conv"] = conv_op;
  t["ConvTranspose"] = conv_transpose_op;
  t["Pad"] = pad_op;
  t["MaxPool"] = [](NodeCtx& c) { pool_op(c, true); };
  t["AveragePool"] = [](NodeCtx& c) { pool_op(c, false); };
  t["GlobalAveragePool"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    c.set(0, mean(x, spatial_axes(x), true));
  };
  t["GlobalMaxPool"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    c.set(0, max(x, spatial_axes(x), true));
  };
}

}  // namespace kiln::onnx
