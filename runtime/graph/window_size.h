/// \file window_size.h
/// The output size of one spatial dim of a window (no ceil mode) over a symbolic input size, as
/// the conv's shape rule writes it (graph/sym_rules.cpp): a constant for a constant input,
/// floor((in + pad_begin + pad_end - extent) / stride) + 1 otherwise. im2col's shape rule and its
/// kernel (codegen/lower_im2col.cpp) use it, so that the two and the conv agree structurally.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph/op.h"
#include "graph/symbolic.h"

namespace kiln {

/// Spatial dim `dim` (0 or 1) of a 2-D window `w` (kernel, strides, pads, dilations) over `in`.
SymInt window_output_sym(const SymInt& in, const Attrs::Window& w, size_t dim);

/// The length of an im2col row holding `taps` taps: `taps` rounded up to a multiple of 4, the
/// extra entries 0 (graph/ops.def, im2col).
constexpr int64_t im2col_row_length(int64_t taps) {
  return (taps + 3) / 4 * 4;
}

}  // namespace kiln
