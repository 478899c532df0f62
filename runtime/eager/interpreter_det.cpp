// det: each [M, M] matrix of x's last two dims reduced by LU with partial pivoting in double
// (the pivot is the first largest |a[r][c]| for r >= c; an exact zero pivot ends with 0; a row
// swap flips the sign), the product of the pivots rounded once to x's dtype. M = 0 gives 1.
#include <cmath>
#include <utility>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {

namespace {

/// The determinant of the row-major m x m matrix `a` (overwritten by its elimination).
double lu_determinant(std::vector<double>& a, int64_t m) {
  double d = 1;
  for (int64_t c = 0; c < m; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[static_cast<size_t>(r * m + c)]) >
          std::fabs(a[static_cast<size_t>(p * m + c)]))
        p = r;
    const double piv = a[static_cast<size_t>(p * m + c)];
    if (piv == 0) return 0;
    if (p != c) {
      for (int64_t j = c; j < m; ++j)
        std::swap(a[static_cast<size_t>(p * m + j)], a[static_cast<size_t>(c * m + j)]);
      d = -d;
    }
    d *= piv;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[static_cast<size_t>(r * m + c)] / piv;
      for (int64_t j = c + 1; j < m; ++j)
        a[static_cast<size_t>(r * m + j)] -= f * a[static_cast<size_t>(c * m + j)];
    }
  }
  return d;
}

}  // namespace

Status eval_det(const Node& /*node*/, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& x = *ins[0];
  const int64_t m = x.meta.shape.back();
  const int64_t count = out.meta.numel();
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t j = 0; j < m * m; ++j) a[static_cast<size_t>(j)] = x.get(k * m * m + j);
    out.set(k, lu_determinant(a, m));
  }
  return {};
}

}  // namespace kiln::eager
