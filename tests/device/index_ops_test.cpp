// Slice, index_select/embedding, gather, concat, triu/tril, arange and min on Vulkan against
// the interpreter: fused into their consumers through computed indices, never copied first.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

class DeviceIndexOps : public test::DeviceOpTest {
 protected:
  Tensor ids(std::vector<int64_t> v, DType dt) {
    Tensor t = Tensor::from_vector(v, {static_cast<Dim>(v.size())});
    return dt == DType::kI64 ? t : cast(t, dt);
  }
};

TEST_F(DeviceIndexOps, Slice) {
  Tensor x = rnd(DType::kF32, {5, 13, 3});
  struct Case {
    int64_t axis, start, end, step;
  };
  for (const Case& c : std::vector<Case>{{1, 2, 11, 3},
                                         {0, -3, 100, 1},
                                         {2, 1, 2, 1},
                                         {1, 0, 13, 4},
                                         {1, 5, 5, 1},
                                         {-1, -2, -1, 1}}) {
    check(
        "slice axis " + std::to_string(c.axis) + " [" + std::to_string(c.start) + ":" +
            std::to_string(c.end) + ":" + std::to_string(c.step) + "]",
        Tol::exact(),
        [c](const Tensor& t) { return slice(t, c.axis, c.start, c.end, c.step) * 2.0; }, x);
  }
}

TEST_F(DeviceIndexOps, IndexSelectEmbeddingAndGather) {
  Tensor w = rnd(DType::kF32, {10, 7});
  for (DType dt : {DType::kI32, DType::kI64}) {
    Tensor i = ids({3, 0, 9, 3, 5}, dt);
    check(
        std::string("index_select dim 0 ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& a, const Tensor& b) { return index_select(a, 0, b); }, w, i);
    check(
        std::string("index_select dim 1 ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& a, const Tensor& b) { return index_select(a, 1, b) + 1.0; }, w,
        ids({6, 1, 1}, dt));
  }
  Tensor tokens = Tensor::from_vector<int64_t>({1, 4, 4, 9, 0, 2}, {2, 3});
  check(
      "embedding", Tol::exact(), [](const Tensor& a, const Tensor& b) { return embedding(a, b); },
      w, tokens);
  Tensor g = Tensor::from_vector<int64_t>({0, 6, 2, 1, 1, 5, 3, 0, 4, 2, 6, 6}, {4, 3});
  Tensor x = rnd(DType::kF32, {4, 7});
  check(
      "gather axis 1", Tol::exact(),
      [](const Tensor& a, const Tensor& b) { return gather(a, 1, b); }, x, g);
}

TEST_F(DeviceIndexOps, Concat) {
  Tensor a = rnd(DType::kF32, {2, 3, 4}), b = rnd(DType::kF32, {2, 5, 4});
  Tensor c = rnd(DType::kF32, {2, 0, 4}), d = rnd(DType::kI32, {2, 1, 4}, Dist{-9, 9});
  check(
      "concat axis 1", Tol::exact(),
      [](const Tensor& p, const Tensor& q, const Tensor& r, const Tensor& s) {
        return concat({p, q, r, s}, 1);
      },
      a, b, c, d);
  check(
      "concat axis -1 then tanh", Tol{2e-6, 1e-6},
      [](const Tensor& p, const Tensor& q) {
        return tanh(concat({p, q}, -1));
      },
      a, rnd(DType::kF32, {2, 3, 9}));
  // Parts whose widths are multiples of 4 (one exactly 4): in a vec4 kernel each group of four
  // lies in one part and is read as one vec4 of it (codegen/emit_index.cpp, concat_vec4).
  check(
      "concat of 4, 12 and 4 wide parts along the last dim, then relu", Tol::exact(),
      [](const Tensor& p, const Tensor& q, const Tensor& r) {
        return relu(concat({p, q, r}, -1));
      },
      rnd(DType::kF32, {3, 5, 4}), rnd(DType::kF32, {3, 5, 12}), rnd(DType::kF32, {3, 5, 4}));
}

TEST_F(DeviceIndexOps, TriangularAndArange) {
  Tensor x = rnd(DType::kF32, {3, 6, 5});
  for (int64_t k : {-2, 0, 1, 7}) {
    check(
        "triu k=" + std::to_string(k), Tol::exact(), [k](const Tensor& t) { return triu(t, k); },
        x);
    check(
        "tril k=" + std::to_string(k), Tol::exact(), [k](const Tensor& t) { return tril(t, k); },
        x);
  }
  // Tensors made inside the function (arange, ones) live on the CPU when run eagerly, so these
  // cases run compiled only: there they are graph nodes computed in the kernel.
  CheckOptions compiled_only;
  compiled_only.eager = false;
  Tensor z = rnd(DType::kF32, {12}, Dist{0, 0});
  check_with(
      "arange f32", Tol::exact(), compiled_only,
      [](const Tensor& t) { return t + arange(-3, 3, 0.5, DType::kF32); }, z);
  Tensor zi = rnd(DType::kI64, {7}, Dist{0, 0});
  check_with(
      "arange i64", Tol::exact(), compiled_only,
      [](const Tensor& t) { return t + arange(2, 16, 2); }, zi);
  // The causal mask of an attention block, built in the kernel from indices.
  Tensor scores = rnd(DType::kF32, {2, 8, 8});
  check_with(
      "causal masked softmax", Tol{2e-6, 1e-7}, compiled_only,
      [](const Tensor& s) {
        Tensor mask = gt(triu(ones({8, 8}), 1), scalar(0));
        return softmax(masked_fill(s, mask, -INFINITY), -1);
      },
      scores);
}

TEST_F(DeviceIndexOps, MinReduction) {
  for (const Shape& s : std::vector<Shape>{{7}, {4, 300}, {3, 5, 2}}) {
    Tensor x = rnd(DType::kF32, s);
    check(
        "min" + shape_str(s), Tol::exact(),
        [](const Tensor& t) { return min(t, {static_cast<int64_t>(t.dim() - 1)}); }, x);
    Tensor xi = rnd(DType::kI32, s, Dist{-100, 100});
    check(
        "min i32" + shape_str(s), Tol::exact(), [](const Tensor& t) { return min(t, {0}, true); },
        xi);
  }
}

}  // namespace
}  // namespace kiln
