// A fixture for capture tests built twice: on CPU tensors (label null) and, with
// KILN_TEST_ON_DEVICE, on Vulkan (label device). It captures the log topics a test asks for
// into logs_ and, on Vulkan, fails the test on any new validation-layer message.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "kiln/kiln.h"

namespace kiln::test {

#ifdef KILN_TEST_ON_DEVICE
inline constexpr bool kOnDevice = true;
#else
inline constexpr bool kOnDevice = false;
#endif

class CaptureTest : public ::testing::Test {
 protected:
  explicit CaptureTest(std::string topics) : topics_(std::move(topics)) {}
  void SetUp() override {
    if (kOnDevice && !vulkan_available()) {
      GTEST_SKIP() << "no Vulkan device: " << vulkan_status().to_string();
    }
    if (kOnDevice) validation_before_ = validation_messages().size();
    set_logs(topics_);
    set_log_sink([this](LogTopic t, std::string_view m) {
      logs_ += std::string(log_topic_name(t)) + ": " + std::string(m) + "\n";
    });
  }
  void TearDown() override {
    set_log_sink({});
    set_logs("");
    if (kOnDevice && vulkan_available()) {
      EXPECT_EQ(validation_messages().size(), validation_before_);
    }
  }
  static Device dev() { return kOnDevice ? Device::vulkan() : Device::cpu(); }

  std::string logs_;

 private:
  std::string topics_;
  size_t validation_before_ = 0;
};

}  // namespace kiln::test
