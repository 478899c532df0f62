/// \file calibration.h
/// Kernel calibration: the measured speeds of one Vulkan device's matmul kernels (row-block
/// and tiled) and of an elementwise copy (MatmulRates), which the matmul kernel choice weighs
/// (codegen/matmul_choice.h). Measured once per device, the first time a compile needs them (a
/// graph with an f32 MatMul on a device that has both kernels) or `kiln devices` asks, on a
/// small problem grown until each run takes a few milliseconds; stored in the device's
/// persistent cache (EntryKind::kCalibration, keyed by the device identity and checked against
/// Kiln's version) so that later processes on the same device and driver read them.
/// KILN_CALIBRATE=0 measures nothing: the choice then follows the structural rule.
/// Thread-safe: concurrent callers for one device wait for one measurement.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "codegen/kernel.h"

namespace kiln {
namespace vk {
class VulkanDevice;
struct DeviceInfo;
}  // namespace vk

/// The capabilities codegen targets on a device (exec/executable.cpp), without rates.
TargetCaps caps_of(const vk::DeviceInfo& info);
/// Whether codegen has the row-block matmul kernel on the device (codegen/lower_internal.h).
bool has_rowblock_kernel(const vk::DeviceInfo& info);

struct Calibration {
  enum class Source : uint8_t {
    kMeasured,  // measured by this process
    kCache,     // read from the device's persistent cache
    kDisabled,  // KILN_CALIBRATE=0
    kFailed,    // the measurement failed (logged as a warning): no rates
  };
  MatmulRates rates;  // measured == false unless kMeasured or kCache
  Source source = Source::kDisabled;
  double ms = 0;        // time the measurement took (kMeasured)
  std::string message;  // why it failed (kFailed)
};

/// The calibration of `device`: from this process's memo, else the device's cache, else
/// measured now (unless KILN_CALIBRATE=0).
Calibration calibrate_device(const std::shared_ptr<vk::VulkanDevice>& device);

/// "row-block 41 GFLOP/s, tiled 3.9 GFLOP/s, copy 2.6 GB/s"
std::string rates_text(const MatmulRates& rates);
/// Which kernel the rates make the default for large products: "row-block" or "tiled".
const char* large_matmul_kernel(const MatmulRates& rates, bool rowblock_supported);

/// Measurements made by this process (every device), for tests.
uint64_t calibration_measurements();

/// Internal (calibration and its tests): while alive, executables this thread compiles run
/// their matmuls on the given kernel and skip calibration.
class ForcedMatmulKernel {
 public:
  explicit ForcedMatmulKernel(MatmulRates::Force force);
  ~ForcedMatmulKernel();
  ForcedMatmulKernel(const ForcedMatmulKernel&) = delete;
  ForcedMatmulKernel& operator=(const ForcedMatmulKernel&) = delete;
  /// The kernel forced on this thread (kNone: none).
  static MatmulRates::Force current();

 private:
  MatmulRates::Force previous_;
};

/// The rates a compile of `graph` on `device` uses: forced on this thread, calibrated when the
/// graph has an f32 MatMul and the device both kernels, else none (structural rule).
MatmulRates rates_for_compile(const Graph& graph, const std::shared_ptr<vk::VulkanDevice>& device,
                              const TargetCaps& caps);

}  // namespace kiln
