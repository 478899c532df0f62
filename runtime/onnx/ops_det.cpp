// Det (opsets 11, 22): the determinants of x [..., M, M] through the det kernel op (no graph
// break). Integer inputs are not in ONNX's type list; the importer's wider types (f32 for
// double) serve the rest.
#include "onnx/importer.h"

namespace kiln::onnx {

void register_det_ops(std::map<std::string, OpHandler>& t) {
  t["Det"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    if (x.dim() < 2) c.fail("the input must be [..., M, M]");
    if (!is_floating(x.dtype())) c.fail("the input must be a floating-point tensor");
    c.set(0, det(x));
  };
}

}  // namespace kiln::onnx
