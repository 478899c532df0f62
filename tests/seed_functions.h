// The seed article's example functions, written with Kiln's API, shared by the null and
// device tests.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::test {

/// Every axis of `x`: a reduction over all of them.
inline std::vector<int64_t> all_axes(const Tensor& x) {
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
  return axes;
}

/// good_fn_1: x[x > x.mean()], a selection of data-dependent length.
inline Tensor good_fn_1(const Tensor& x) {
  return masked_select(x, x > mean(x, all_axes(x)));
}

}  // namespace kiln::test
