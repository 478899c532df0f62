// The Tensor op functions an ONNX front end needs beyond the transformer set: pow, abs, sign,
// gather_nd, conv, conv_transpose and the pools. Window attributes are completed here (empty
// vectors take their defaults), so a graph's attributes, and with them its structural key, are
// canonical.
#include <string>

#include "capture/trace.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

/// Fills defaulted window vectors for `k` spatial dims of `x` (checked by the shape rule).
Attrs::Window window_attrs(const Tensor& x, std::vector<int64_t> kernel,
                           std::vector<int64_t> strides, std::vector<int64_t> pads,
                           std::vector<int64_t> dilations) {
  const size_t k = x.defined() && x.dim() > 2 ? static_cast<size_t>(x.dim() - 2) : 0;
  Attrs::Window w;
  w.kernel = std::move(kernel);
  w.strides = strides.empty() ? std::vector<int64_t>(k, 1) : std::move(strides);
  w.pads = pads.empty() ? std::vector<int64_t>(2 * k, 0) : std::move(pads);
  w.dilations = dilations.empty() ? std::vector<int64_t>(k, 1) : std::move(dilations);
  return w;
}

}  // namespace

Tensor gather_nd(const Tensor& data, const Tensor& indices, int64_t batch_dims, Loc loc) {
  Attrs attrs;
  attrs.index = batch_dims;
  return apply_op(OpKind::GatherND, {data, indices}, std::move(attrs), loc);
}

Tensor conv(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> strides,
            std::vector<int64_t> pads, std::vector<int64_t> dilations, int64_t groups, Loc loc) {
  Attrs attrs;
  attrs.window = window_attrs(x, {}, std::move(strides), std::move(pads), std::move(dilations));
  attrs.window.groups = groups;
  std::vector<Tensor> ins = {x, weight};
  if (bias.defined()) ins.push_back(bias);
  return apply_op(OpKind::Conv, ins, std::move(attrs), loc);
}

Tensor conv_transpose(const Tensor& x, const Tensor& weight, const Tensor& bias,
                      std::vector<int64_t> strides, std::vector<int64_t> pads,
                      std::vector<int64_t> dilations, int64_t groups,
                      std::vector<int64_t> output_padding, Loc loc) {
  Attrs attrs;
  attrs.window = window_attrs(x, {}, std::move(strides), std::move(pads), std::move(dilations));
  attrs.window.groups = groups;
  attrs.window.output_padding = output_padding.empty()
                                    ? std::vector<int64_t>(attrs.window.strides.size(), 0)
                                    : std::move(output_padding);
  std::vector<Tensor> ins = {x, weight};
  if (bias.defined()) ins.push_back(bias);
  return apply_op(OpKind::ConvTranspose, ins, std::move(attrs), loc);
}

Tensor max_pool(const Tensor& x, std::vector<int64_t> kernel_shape, std::vector<int64_t> strides,
                std::vector<int64_t> pads, std::vector<int64_t> dilations, bool ceil_mode,
                Loc loc) {
  Attrs attrs;
  attrs.window = window_attrs(x, std::move(kernel_shape), std::move(strides), std::move(pads),
                              std::move(dilations));
  attrs.window.ceil_mode = ceil_mode;
  return apply_op(OpKind::MaxPool, {x}, std::move(attrs), loc);
}

Tensor max_pool_indices(const Tensor& x, std::vector<int64_t> kernel_shape,
                        std::vector<int64_t> strides, std::vector<int64_t> pads,
                        std::vector<int64_t> dilations, bool ceil_mode, int64_t storage_order,
                        Loc loc) {
  Attrs attrs;
  attrs.window = window_attrs(x, std::move(kernel_shape), std::move(strides), std::move(pads),
                              std::move(dilations));
  attrs.window.ceil_mode = ceil_mode;
  attrs.window.storage_order = storage_order;
  return apply_op(OpKind::MaxPoolIndices, {x}, std::move(attrs), loc);
}

Tensor avg_pool(const Tensor& x, std::vector<int64_t> kernel_shape, std::vector<int64_t> strides,
                std::vector<int64_t> pads, std::vector<int64_t> dilations, bool ceil_mode,
                bool count_include_pad, Loc loc) {
  Attrs attrs;
  attrs.window = window_attrs(x, std::move(kernel_shape), std::move(strides), std::move(pads),
                              std::move(dilations));
  attrs.window.ceil_mode = ceil_mode;
  attrs.window.count_include_pad = count_include_pad;
  return apply_op(OpKind::AvgPool, {x}, std::move(attrs), loc);
}

}  // namespace kiln
