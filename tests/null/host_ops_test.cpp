// The host forms of nonzero (the interpreter's; a rank-0 nonzero runs it) and topk (no device
// lowering): known values, edge cases, errors, and their eager use on CPU and Vulkan tensors
// (topk always runs on the CPU; nonzero on a Vulkan tensor runs its kernel).
#include <gtest/gtest.h>

#include "eager/host_ops.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

HostTensor host_floats(std::vector<float> v, Shape s) {
  HostTensor h(TensorMeta{DType::kF32, std::move(s)});
  for (size_t i = 0; i < v.size(); ++i) h.set(static_cast<int64_t>(i), v[i]);
  return h;
}

std::vector<int64_t> i64s(const HostTensor& h) {
  return std::vector<int64_t>(h.ptr<int64_t>(), h.ptr<int64_t>() + h.meta.numel());
}

TEST(HostOps, NonzeroIndicesAreRowMajor) {
  HostTensor x = host_floats({0, 1, 0, 2, 3, 0}, {2, 3});
  HostTensor idx = host_nonzero(x);
  EXPECT_EQ(idx.meta.str(), "i64[3, 2]");
  EXPECT_EQ(i64s(idx), (std::vector<int64_t>{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(host_nonzero(host_floats({}, {0, 4})).meta.str(), "i64[0, 2]");
  EXPECT_EQ(host_nonzero(host_floats({5}, {})).meta.str(), "i64[1, 0]");
}

TEST(HostOps, TopkLargestSmallestAndTies) {
  HostTensor x = host_floats({3, 1, 3, 2, 9, 8, 7, 9}, {2, 4});
  auto r = host_topk(x, 2, true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first.meta.str(), "f32[2, 2]");
  EXPECT_EQ(r->first.get(0), 3);
  EXPECT_EQ(r->first.get(1), 3);
  EXPECT_EQ(i64s(r->second), (std::vector<int64_t>{0, 2, 0, 3}));  // ties keep index order
  auto s = host_topk(x, 1, false);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->first.get(0), 1);
  EXPECT_EQ(s->first.get(1), 7);
  auto none = host_topk(x, 0, true);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->first.meta.str(), "f32[2, 0]");
}

TEST(HostOps, TopkErrors) {
  HostTensor x = host_floats({1, 2, 3}, {3});
  EXPECT_FALSE(host_topk(x, 4, true).ok());
  EXPECT_FALSE(host_topk(x, -1, true).ok());
  EXPECT_FALSE(host_topk(host_floats({1}, {}), 1, true).ok());
  EXPECT_THROW(topk(Tensor::from_vector(std::vector<float>{1, 2}, {2}), 3), Error);
}

TEST(HostOps, EagerOnEachDevice) {
  std::vector<Device> devices = {Device::cpu()};
  if (vulkan_available()) devices.push_back(Device::vulkan());
  for (Device d : devices) {
    Tensor x = Tensor::from_vector(std::vector<float>{0, -2, 5, 1}, {4}, d);
    Tensor idx = nonzero(x);
    EXPECT_EQ(idx.device(), d);
    EXPECT_EQ(idx.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
    auto [v, i] = topk(x, 2);
    EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{5, 1}));
    EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
  }
}

}  // namespace
}  // namespace kiln
