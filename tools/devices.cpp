// `kiln devices`: lists the Vulkan devices with the limits and features codegen reads and the
// measured kernel rates (calibrating a device without a stored record), and marks the one Kiln
// would use by default.
#include <fmt/core.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "exec/calibration.h"
#include "kiln/device.h"
#include "tools/commands.h"
#include "vk/device.h"

namespace {

using kiln::vk::DeviceInfo;

const char* yes_no(bool value) {
  return value ? "yes" : "no";
}

/// "32 KiB", "128 MiB", or plain bytes when not a whole number of KiB.
std::string bytes_text(uint64_t bytes) {
  constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  uint64_t value = bytes;
  while (unit < 4 && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0 && bytes >= 1024 * 1024) {  // e.g. 4294967295: show an approximate size too
    return fmt::format("{} bytes (~{:.1f} GiB)", bytes, static_cast<double>(bytes) / (1ull << 30));
  }
  return fmt::format("{} {}", value, kUnits[unit]);
}

void print_row(const char* key, const std::string& value) {
  fmt::print("      {:<22} {}\n", key, value);
}

/// The device's measured kernel rates (exec/calibration.h) and the matmul kernel they make the
/// default for large products.
void print_calibration(const DeviceInfo& d) {
  kiln::Expected<kiln::Device> device = kiln::Device::open(std::to_string(d.index));
  if (!device.ok()) {
    print_row("kernel rates", "device not opened: " + device.status().to_string());
    return;
  }
  const kiln::Calibration c = kiln::calibrate_device(device->vulkan_device());
  std::string source;
  switch (c.source) {
    case kiln::Calibration::Source::kMeasured:
      source = fmt::format("measured now, {:.0f} ms", c.ms);
      break;
    case kiln::Calibration::Source::kCache:
      source = "from the cache";
      break;
    case kiln::Calibration::Source::kDisabled:
      source = "KILN_CALIBRATE=0";
      break;
    case kiln::Calibration::Source::kFailed:
      source = "calibration failed: " + c.message;
      break;
  }
  print_row("kernel rates", kiln::rates_text(c.rates) + " (" + source + ")");
  const bool rowblock = kiln::has_rowblock_kernel(d);
  print_row("large matmuls", std::string(kiln::large_matmul_kernel(c.rates, rowblock)) + " kernel" +
                                 (c.rates.measured ? "" : " (structural rule, no measured rates)"));
}

void print_device(const DeviceInfo& d, bool is_default) {
  fmt::print("{} [{}] {}\n", is_default ? "*" : " ", d.index, d.name);
  if (!d.limits.empty()) print_row("limits", "overridden by KILN_DEVICE_LIMITS: " + d.limits);
  print_row("vendor", fmt::format("{} (vendor 0x{:04X}, device 0x{:04X})", d.vendor, d.vendor_id,
                                  d.device_id));
  print_row("type", d.type);
  std::string driver = d.driver_name.empty() ? "?" : d.driver_name;
  if (!d.driver_info.empty()) driver += " — " + d.driver_info;
  print_row("driver", driver);
  print_row("Vulkan API", d.api_version);
  print_row("subgroup size", std::to_string(d.subgroup_size));
  print_row("shared memory", bytes_text(d.max_shared_memory) + " per workgroup");
  print_row(
      "max workgroup size",
      fmt::format("{} x {} x {}, {} invocations", d.max_workgroup_size[0], d.max_workgroup_size[1],
                  d.max_workgroup_size[2], d.max_workgroup_invocations));
  print_row("max workgroup count", fmt::format("{} x {} x {}", d.max_workgroup_count[0],
                                               d.max_workgroup_count[1], d.max_workgroup_count[2]));
  print_row("max storage buffer", bytes_text(d.max_storage_buffer_range));
  print_row("push constants", bytes_text(d.max_push_constants_size));
  print_row("unified memory", yes_no(d.unified_memory));
  print_row("timestamps", d.timestamp_period_ns > 0
                              ? fmt::format("yes ({} ns per tick)", d.timestamp_period_ns)
                              : std::string("no"));
  print_row("arithmetic types",
            fmt::format("fp16 {:<4} int8 {:<4} int16 {:<4} int64 {}", yes_no(d.shader_float16),
                        yes_no(d.shader_int8), yes_no(d.shader_int16), yes_no(d.shader_int64)));
  print_row("storage access", fmt::format("16-bit {:<4} 8-bit {}", yes_no(d.storage_buffer_16bit),
                                          yes_no(d.storage_buffer_8bit)));
  print_row("float controls", fmt::format("SignedZeroInfNanPreserve (f32) {}",
                                          yes_no(d.signed_zero_inf_nan_preserve_f32)));
  print_row(
      "subgroup ops",
      fmt::format("basic {:<4} arithmetic {:<4} shuffle {:<4} ballot {:<4} vote {}",
                  yes_no(d.subgroup_basic), yes_no(d.subgroup_arithmetic),
                  yes_no(d.subgroup_shuffle), yes_no(d.subgroup_ballot), yes_no(d.subgroup_vote)));
  print_calibration(d);
}

}  // namespace

int kiln_devices_main() {
  kiln::Expected<std::vector<DeviceInfo>> devices = kiln::vk::VulkanDevice::enumerate();
  if (!devices.ok()) {
    fmt::print(stderr, "kiln devices: {}\n", devices.status().to_string());
    return 1;
  }
  // The values below are those Kiln uses: KILN_DEVICE_LIMITS lowered, as when a device opens.
  for (DeviceInfo& d : *devices) {
    if (kiln::Status st = kiln::vk::apply_device_limits("", d); !st.ok()) {
      fmt::print(stderr, "kiln devices: {}\n", st.to_string());
      return 1;
    }
  }
  // The device create() and default_device() would pick (honours KILN_DEVICE).
  const kiln::Expected<uint32_t> chosen = kiln::vk::VulkanDevice::select_device(*devices);
  fmt::print("Vulkan devices ({}):\n", devices->size());
  for (const DeviceInfo& d : *devices) {
    fmt::print("\n");
    print_device(d, chosen.ok() && *chosen == d.index);
  }
  fmt::print("\n");
  const char* env = std::getenv("KILN_DEVICE");
  if (chosen.ok()) {
    fmt::print("* = the device Kiln uses{}\n",
               env != nullptr && env[0] != '\0' ? fmt::format(" (KILN_DEVICE={})", env)
                                                : std::string(" (set KILN_DEVICE to change it)"));
    return 0;
  }
  fmt::print(stderr, "kiln devices: no default device: {}\n", chosen.status().to_string());
  return 1;
}
