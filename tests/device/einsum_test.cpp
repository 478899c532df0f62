// einsum on Vulkan against the interpreter, on fresh random data into poisoned memory, eagerly
// and compiled: the ops it lowers onto (permute, reshape, sum, index_select for diagonals,
// batched matmul) for transposes, sums, diagonals, inner/outer/batched products, three
// operands and broadcast ellipsis dims, with odd and size-1 dims.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Tol;

class DeviceEinsum : public test::DeviceOpTest {};

TEST_F(DeviceEinsum, AgainstInterpreter) {
  const Tol tol{1e-4, 1e-5};
  auto one = [&](const std::string& eq, const Shape& s) {
    check(
        eq, tol, [eq](const Tensor& a) { return einsum(eq, {a}); }, rnd(DType::kF32, s));
  };
  auto two = [&](const std::string& eq, const Shape& s, const Shape& t) {
    check(
        eq, tol,
        [eq](const Tensor& a, const Tensor& b) {
          return einsum(eq, {a, b});
        },
        rnd(DType::kF32, s), rnd(DType::kF32, t));
  };
  one("ij->ji", {5, 7});
  one("ij->i", {3, 9});
  one("ii->i", {6, 6});
  one("bii->bi", {3, 5, 5});
  one("...ii->...i", {2, 1, 4, 4});
  two("i,i", {7}, {7});
  two("i,j->ij", {3}, {5});
  two("ij,jk->ik", {5, 7}, {7, 3});
  two("bij,bjk->bik", {3, 5, 7}, {3, 7, 1});
  two("bij,bkj->bki", {2, 3, 4}, {2, 5, 4});
  two("...ij,...jk->...ik", {2, 3, 4, 5}, {3, 5, 2});
  two("ijk,k->ji", {2, 3, 4}, {4});
  check(
      "ij,jk,kl->il", tol,
      [](const Tensor& a, const Tensor& b, const Tensor& c) {
        return einsum("ij,jk,kl->il", {a, b, c});
      },
      rnd(DType::kF32, {3, 4}), rnd(DType::kF32, {4, 5}), rnd(DType::kF32, {5, 2}));
}

}  // namespace
}  // namespace kiln
