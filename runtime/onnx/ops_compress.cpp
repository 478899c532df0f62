// Compress: the slices (or elements) whose condition is true, through nonzero, a device
// kernel with a data-dependent length (no graph break), and index_select.
#include <map>
#include <string>

#include "onnx/importer.h"

namespace kiln::onnx {
namespace {

void compress(NodeCtx& c) {
  Tensor x = c.in(0), cond = c.in(1);
  if (cond.dim() != 1) c.fail("condition must be 1-D");
  int64_t axis = 0;
  if (c.has_attr("axis")) {
    axis = axis_of(c, c.attr_i("axis", 0), x.dim());
  } else {
    x = reshape(x, {-1});
  }
  const int64_t n = x.sizes()[static_cast<size_t>(axis)].value();
  if (cond.sizes()[0].value() > n) cond = slice(cond, 0, 0, n);
  Tensor idx = reshape(nonzero(cond), {-1});
  c.set(0, index_select(x, axis, idx));
}

}  // namespace

void register_compress_ops(std::map<std::string, OpHandler>& t) {
  t["Compress"] = compress;
}

}  // namespace kiln::onnx
