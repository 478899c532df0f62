// TopK (opsets 1, 10, 11): k as an attribute (opset 1) or a constant input, on any axis
// (moved last and back), largest (default) or smallest. Both outputs stay in the graph: the
// topk_indices kernel op ranks each row and a gather reads the values (kiln::topk). `sorted`
// = 0 lets any order through, so the sorted order serves it too.
#include <numeric>
#include <utility>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx {

void register_topk_ops(std::map<std::string, OpHandler>& t) {
  t["TopK"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    const int64_t rank = x.dim();
    const int64_t axis = axis_of(c, c.attr_i("axis", -1), rank);
    const int64_t k = c.opset() >= 10 ? c.scalar_int(1) : c.attr_i("k", 0);
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[static_cast<size_t>(axis)], perm.back());
    const bool moved = axis != rank - 1;
    auto [values, indices] = topk(moved ? permute(x, perm) : x, k, c.attr_i("largest", 1) != 0);
    c.set(0, moved ? permute(values, perm) : values);
    c.set(1, moved ? permute(indices, perm) : indices);
  };
}

}  // namespace kiln::onnx
