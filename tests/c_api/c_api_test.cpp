// The C API (include/kiln/kiln_c.h) against the C++ API: the same ONNX model run through both
// gives the same outputs, on the CPU and on Vulkan; bad calls return error codes with messages
// and write no outputs; one model runs from several threads at once.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/kiln_c.h"
#include "kiln/onnx.h"

namespace {

const std::string kDir = std::string(KILN_TEST_DATA) + "/onnx/mlp";

/// The model's input (f32) and what the C++ API computes from it on `device`.
struct Reference {
  kiln::Tensor x;
  std::vector<float> want;
  std::vector<int64_t> shape;
};

Reference reference(kiln::Device device) {
  Reference r;
  r.x = kiln::value_or_throw(kiln::load_npy(kDir + "/0/x.npy"));
  kiln::onnx::Model m = kiln::value_or_throw(kiln::onnx::Model::load(kDir + "/model.onnx", device));
  kiln::onnx::CompiledModel compiled(m);
  kiln::Tensor y = compiled({r.x}).at(0);
  r.want = y.to_vector<float>();
  r.shape = y.shape();
  return r;
}

/// Runs the model through the C API on `selector`'s device; returns the output values.
std::vector<float> run_c(const char* selector, const kiln::Tensor& x, std::vector<int64_t>* shape) {
  kiln_device* dev = nullptr;
  EXPECT_EQ(kiln_device_open(selector, &dev), KILN_OK) << kiln_last_error();
  kiln_model* model = nullptr;
  EXPECT_EQ(kiln_model_load(dev, (kDir + "/model.onnx").c_str(), &model), KILN_OK)
      << kiln_last_error();
  EXPECT_EQ(kiln_model_input_count(model), 1u);
  EXPECT_EQ(kiln_model_output_count(model), 1u);
  EXPECT_STREQ(
      kiln_model_input_name(model, 0),
      kiln::value_or_throw(kiln::onnx::Model::load(kDir + "/model.onnx")).inputs()[0].name.c_str());
  EXPECT_EQ(kiln_model_input_name(model, 1), nullptr);

  std::vector<float> xs = x.to_vector<float>();
  kiln_tensor* in = nullptr;
  EXPECT_EQ(kiln_tensor_create(KILN_F32, x.shape().data(), x.shape().size(), xs.data(),
                               xs.size() * sizeof(float), &in),
            KILN_OK)
      << kiln_last_error();
  std::vector<float> out_values;
  for (int call = 0; call < 2; ++call) {  // compile, then replay
    kiln_tensor* out = nullptr;
    EXPECT_EQ(kiln_model_run(model, &in, 1, &out, 1), KILN_OK) << kiln_last_error();
    EXPECT_EQ(kiln_tensor_dtype(out), KILN_F32);
    shape->clear();
    for (size_t d = 0; d < kiln_tensor_rank(out); ++d) shape->push_back(kiln_tensor_dim(out, d));
    out_values.assign(kiln_tensor_nbytes(out) / sizeof(float), 0.0f);
    EXPECT_EQ(kiln_tensor_read(out, out_values.data(), out_values.size() * sizeof(float)), KILN_OK)
        << kiln_last_error();
    kiln_tensor_release(out);
  }
  kiln_tensor_release(in);
  kiln_model_release(model);  // in any order: the model keeps what it needs
  kiln_device_release(dev);
  return out_values;
}

TEST(CApi, MatchesTheCppApiOnTheCpu) {
  Reference r = reference(kiln::Device::cpu());
  std::vector<int64_t> shape;
  EXPECT_EQ(run_c("cpu", r.x, &shape), r.want);
  EXPECT_EQ(shape, r.shape);
}

TEST(CApi, MatchesTheCppApiOnVulkan) {
  if (!kiln::vulkan_available()) GTEST_SKIP() << kiln::vulkan_status().to_string();
  const size_t validation_before = kiln::validation_messages().size();
  Reference r = reference(kiln::Device::vulkan());
  std::vector<int64_t> shape;
  // Same device, same kernels: the outputs are bit-identical.
  EXPECT_EQ(run_c("", r.x, &shape), r.want);
  EXPECT_EQ(shape, r.shape);
  // A device of its own, opened by index.
  EXPECT_EQ(run_c("0", r.x, &shape), r.want);
  EXPECT_EQ(kiln::validation_messages().size(), validation_before);
}

TEST(CApi, ErrorsAreCodesWithMessages) {
  kiln_device* dev = nullptr;
  EXPECT_EQ(kiln_device_open("no-such-device-anywhere", &dev), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dev, nullptr);
  EXPECT_NE(std::string(kiln_last_error()).find("no-such-device-anywhere"), std::string::npos)
      << kiln_last_error();
  ASSERT_EQ(kiln_device_open("cpu", &dev), KILN_OK);
  EXPECT_STREQ(kiln_device_name(dev), "cpu");
  EXPECT_STREQ(kiln_last_error(), "");  // a successful call clears it

  kiln_model* model = nullptr;
  EXPECT_EQ(kiln_model_load(dev, "/nonexistent/model.onnx", &model), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(model, nullptr);
  const char garbage[] = "not a protobuf at all";
  EXPECT_EQ(kiln_model_load_bytes(dev, garbage, sizeof garbage, &model),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(model, nullptr);
  EXPECT_EQ(kiln_model_load(nullptr, "x.onnx", &model), KILN_ERROR_INVALID_ARGUMENT);

  const int64_t shape[2] = {2, 3};
  float data[6] = {1, 2, 3, 4, 5, 6};
  kiln_tensor* t = nullptr;
  EXPECT_EQ(kiln_tensor_create(KILN_F32, shape, 2, data, 5 * sizeof(float), &t),
            KILN_ERROR_INVALID_ARGUMENT);  // bytes do not match the shape
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(kiln_tensor_create(static_cast<kiln_dtype>(42), shape, 2, data, sizeof data, &t),
            KILN_ERROR_INVALID_ARGUMENT);
  const int64_t negative[1] = {-6};
  EXPECT_EQ(kiln_tensor_create(KILN_F32, negative, 1, data, sizeof data, &t),
            KILN_ERROR_INVALID_ARGUMENT);
  // Element or byte counts past int64 (numel would wrap to 0): refused, not a 0-byte tensor.
  const int64_t huge[2] = {int64_t{1} << 62, 16};
  EXPECT_EQ(kiln_tensor_create(KILN_F32, huge, 2, data, 0, &t), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
  EXPECT_NE(std::string(kiln_last_error()).find("more than 2^63 elements"), std::string::npos)
      << kiln_last_error();
  const int64_t huge_bytes[2] = {int64_t{1} << 61, 2};
  EXPECT_EQ(kiln_tensor_create(KILN_F32, huge_bytes, 2, data, 0, &t), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_last_error()).find("more than 2^63 bytes"), std::string::npos)
      << kiln_last_error();

  // A model run with the wrong input: an error, and no output written.
  ASSERT_EQ(kiln_model_load(dev, (kDir + "/model.onnx").c_str(), &model), KILN_OK);
  ASSERT_EQ(kiln_tensor_create(KILN_F32, shape, 2, data, sizeof data, &t), KILN_OK);
  kiln_tensor* out = reinterpret_cast<kiln_tensor*>(&data);  // must stay untouched
  kiln_tensor* const before = out;
  EXPECT_NE(kiln_model_run(model, &t, 1, &out, 1), KILN_OK);
  EXPECT_EQ(out, before);
  EXPECT_STRNE(kiln_last_error(), "");
  EXPECT_EQ(kiln_model_run(model, &t, 1, &out, 2), KILN_ERROR_INVALID_ARGUMENT);
  const kiln_tensor* null_input = nullptr;
  EXPECT_EQ(kiln_model_run(model, &null_input, 1, &out, 1), KILN_ERROR_INVALID_ARGUMENT);
  float small[2];
  EXPECT_EQ(kiln_tensor_read(t, small, sizeof small), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_UNAVAILABLE), "unavailable");
  EXPECT_EQ(kiln_dtype_size(KILN_I64), 8u);
  EXPECT_EQ(kiln_dtype_size(static_cast<kiln_dtype>(42)), 0u);

  kiln_tensor_release(t);
  kiln_model_release(model);
  kiln_device_release(dev);
  kiln_tensor_release(nullptr);  // no-ops
  kiln_model_release(nullptr);
  kiln_device_release(nullptr);
}

TEST(CApi, OneModelFromSeveralThreads) {
  const char* selector = kiln::vulkan_available() ? "" : "cpu";
  Reference r = reference(kiln::vulkan_available() ? kiln::Device::vulkan() : kiln::Device::cpu());
  kiln_device* dev = nullptr;
  ASSERT_EQ(kiln_device_open(selector, &dev), KILN_OK) << kiln_last_error();
  kiln_model* model = nullptr;
  ASSERT_EQ(kiln_model_load(dev, (kDir + "/model.onnx").c_str(), &model), KILN_OK);
  std::vector<float> xs = r.x.to_vector<float>();
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int call = 0; call < 5; ++call) {
        kiln_tensor* in = nullptr;
        kiln_tensor* out = nullptr;
        if (kiln_tensor_create(KILN_F32, r.x.shape().data(), r.x.shape().size(), xs.data(),
                               xs.size() * sizeof(float), &in) != KILN_OK ||
            kiln_model_run(model, &in, 1, &out, 1) != KILN_OK) {
          failures[i] = kiln_last_error();
          kiln_tensor_release(in);
          return;
        }
        std::vector<float> got(r.want.size());
        if (kiln_tensor_read(out, got.data(), got.size() * sizeof(float)) != KILN_OK)
          failures[i] = kiln_last_error();
        else if (got != r.want)
          failures[i] =
              "thread " + std::to_string(i) + " call " + std::to_string(call) + ": output differs";
        kiln_tensor_release(out);
        kiln_tensor_release(in);
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
  kiln_model_release(model);
  kiln_device_release(dev);
}

}  // namespace
