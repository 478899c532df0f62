// Explicit devices (docs/runtime.md, "Devices"): Device::list / open / close, two Vulkan devices
// used at once, compiled functions per device, and an application's own VkInstance + VkDevice
// adopted with kiln::vulkan::adopt, then destroyed by the application after Kiln releases it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "cache/disk_cache.h"
#include "device/test_util.h"
#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "kiln/vulkan_interop.h"
#include "vk/device.h"

namespace kiln {
namespace {

using test::DeviceTest;

std::vector<float> iota_f32(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
  return v;
}

Tensor act(const Tensor& x, const Tensor& w) {
  return relu(matmul(x, w) + 1.0) * 0.5;
}

class Devices : public DeviceTest {};

TEST_F(Devices, ListNamesTheDefault) {
  auto list = Device::list();
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  ASSERT_FALSE(list->empty());
  int defaults = 0;
  for (const DeviceDescription& d : *list) {
    EXPECT_FALSE(d.name.empty());
    defaults += d.is_default;
    if (d.is_default) {
      EXPECT_EQ(d.name, Device::vulkan().name());
    }
  }
  EXPECT_EQ(defaults, 1);
}

TEST_F(Devices, BestIsTheDefaultGpuOrElseTheInterpreterAndSaysWhy) {
  auto list = Device::list();
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  std::string type;
  for (const DeviceDescription& d : *list)
    if (d.is_default) type = d.type;
  const char* env = std::getenv("KILN_DEVICE");
  const bool chosen_by_env = env != nullptr && *env != '\0';
  std::string why;
  const Device best = Device::best(&why);
  EXPECT_FALSE(why.empty());
  if (type == "cpu" && !chosen_by_env) {
    EXPECT_TRUE(best.is_cpu()) << why;
    EXPECT_NE(why.find("run on the CPU"), std::string::npos) << why;
  } else {
    EXPECT_EQ(best, Device::vulkan()) << why;
  }
  // KILN_DEVICE is a choice: it keeps the Vulkan device whatever its type.
  const std::string saved = chosen_by_env ? env : "";
  ASSERT_EQ(setenv("KILN_DEVICE", std::to_string(list->front().index).c_str(), 1), 0);
  const bool default_is_first = list->front().is_default;
  const Device picked = Device::best(&why);
  if (chosen_by_env) {
    ASSERT_EQ(setenv("KILN_DEVICE", saved.c_str(), 1), 0);
  } else {
    ASSERT_EQ(unsetenv("KILN_DEVICE"), 0);
  }
  if (default_is_first) {
    EXPECT_EQ(picked, Device::vulkan()) << why;
    EXPECT_NE(why.find("KILN_DEVICE"), std::string::npos) << why;
  }
  EXPECT_TRUE(Device::best().is_cpu() == best.is_cpu());  // no reason asked: the same choice
}

TEST_F(Devices, OpenByIndexAndNameAndRejectUnknown) {
  auto list = value_or_throw(Device::list());
  Device a = value_or_throw(Device::open(std::to_string(list[0].index)));
  EXPECT_EQ(a.kind(), Device::Kind::kVulkan);
  EXPECT_EQ(a.name(), list[0].name);
  EXPECT_FALSE(a == Device::vulkan());  // a device of its own
  EXPECT_NE(a.id(), Device::vulkan().id());
  EXPECT_EQ(a.str(), "vulkan:" + std::to_string(a.id()));
  EXPECT_EQ(Device::vulkan().str(), "vulkan");
  EXPECT_TRUE(a == a);

  // A name substring, case-insensitive.
  std::string part = list[0].name.substr(0, 4);
  for (char& c : part) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  Device b = value_or_throw(Device::open(part));
  EXPECT_EQ(b.name(), list[0].name);
  EXPECT_FALSE(a == b);

  auto none = Device::open("no-such-device-anywhere");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find(list[0].name), std::string::npos)
      << none.status().message();
}

TEST_F(Devices, TwoDevicesAtOnceWithCompiledFunctions) {
  Device other = value_or_throw(Device::open(""));
  const Device def = Device::vulkan();
  const std::vector<float> xs = iota_f32(7 * 5, 0.25f), ws = iota_f32(5 * 3, 0.5f);
  const Tensor x_cpu = Tensor::from_vector(xs, {7, 5}), w_cpu = Tensor::from_vector(ws, {5, 3});
  const std::vector<float> want = act(x_cpu, w_cpu).to_vector<float>();

  // Eager ops on both devices.
  Tensor x1 = x_cpu.to(def), w1 = w_cpu.to(def);
  Tensor x2 = x_cpu.to(other), w2 = w_cpu.to(other);
  EXPECT_TRUE(x2.device() == other);
  EXPECT_EQ(act(x1, w1).to_vector<float>(), want);
  Tensor y2 = act(x2, w2);
  EXPECT_TRUE(y2.device() == other);
  EXPECT_EQ(y2.to_vector<float>(), want);

  // Mixing them is an error naming both; .to() moves data between them.
  try {
    (void)(x1 + x2);
    FAIL() << "mixed devices were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different devices"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(other.str()), std::string::npos) << e.what();
  }
  EXPECT_EQ((x1 + x2.to(def)).to_vector<float>(), (x_cpu + x_cpu).to_vector<float>());

  // One compiled function, called on each device: an entry per device, each output on the
  // device of its inputs, and the later calls replay.
  auto f = compile(act, {.name = "act_two_devices"});
  EXPECT_EQ(f(x1, w1).to_vector<float>(), want);
  Tensor out2 = f(x2, w2);
  EXPECT_TRUE(out2.device() == other);
  EXPECT_EQ(out2.to_vector<float>(), want);
  EXPECT_TRUE(f(x1, w1).device() == def);
  EXPECT_EQ(f(x2, w2).to_vector<float>(), want);
  EXPECT_EQ(f.stats().compiles, 2);
}

// Every Vulkan device the process sees (two drivers when VK_ICD_FILENAMES lists lavapipe and
// SwiftShader: scripts/run.sh swiftshader sets KILN_TEST_TWO_DRIVERS=1, and then fewer than two
// devices is a failure), each running one compiled function with float, int64 and bool work at
// once, every result equal to the interpreter's.
TEST_F(Devices, EveryDriverInOneProcess) {
  const std::vector<DeviceDescription> list = value_or_throw(Device::list());
  const char* two = std::getenv("KILN_TEST_TWO_DRIVERS");
  if (two != nullptr && std::string(two) == "1") {
    ASSERT_GE(list.size(), 2u) << "KILN_TEST_TWO_DRIVERS=1 but one Vulkan device is visible";
    EXPECT_NE(list[0].name, list[1].name);
  }
  auto fn = [](const Tensor& x, const Tensor& ids) {
    const Tensor rows = index_select(x, 0, ids);
    return relu(rows) * 0.5 + cast(sum(ids * ids, {0}), DType::kF32) +
           cast(gt(rows, scalar(0.0)), DType::kF32);
  };
  const Tensor x = Tensor::from_vector(iota_f32(9 * 4, 0.25f), {9, 4});
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{8, 0, 3, 3, 7}, {5});
  const std::vector<float> want = fn(x, ids).to_vector<float>();
  std::vector<Device> devices;
  for (const DeviceDescription& d : list)
    devices.push_back(value_or_throw(Device::open(std::to_string(d.index))));
  auto f = compile(fn, {.name = "every_driver"});
  for (const Device& dev : devices) {
    SCOPED_TRACE(dev.name());
    allow_cpu_fallback_ = true;  // a driver without 8-bit storage runs the bool part on the CPU
    const Tensor got = f(x.to(dev), ids.to(dev));
    EXPECT_TRUE(got.device() == dev);
    EXPECT_EQ(got.to_vector<float>(), want);
  }
  EXPECT_EQ(f.stats().compiles, static_cast<uint64_t>(devices.size()));
}

TEST_F(Devices, CloseWaitsForEveryUser) {
  Device d = value_or_throw(Device::open(""));
  Tensor t = Tensor::from_vector(iota_f32(9, 1.0f), {9}, d);
  Tensor u = exp(t);  // an eager kernel cached for `d`
  Status busy = d.close();
  EXPECT_EQ(busy.code(), StatusCode::kFailedPrecondition) << busy.to_string();
  EXPECT_EQ(d.kind(), Device::Kind::kVulkan);  // unchanged
  EXPECT_EQ(u.to_vector<float>().size(), 9u);
  t = Tensor();
  u = Tensor();
  Status closed = d.close();
  EXPECT_TRUE(closed.ok()) << closed.to_string();
  EXPECT_TRUE(d.is_cpu());
  EXPECT_EQ(Device::vulkan().close().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Device::cpu().close().code(), StatusCode::kInvalidArgument);
}

TEST_F(Devices, ADeviceWithACacheOfItsOwn) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln_device_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::vector<float> xs = iota_f32(6 * 4, 0.5f), ws = iota_f32(4 * 2, 0.25f);
  const Tensor x = Tensor::from_vector(xs, {6, 4}), w = Tensor::from_vector(ws, {4, 2});
  const std::vector<float> want = act(x, w).to_vector<float>();
  {
    Device dev = value_or_throw(Device::open("", {.cache_dir = dir.string()}));
    cache::DiskCache* disk = dev.vulkan_device()->disk_cache();
    ASSERT_NE(disk, nullptr);
    EXPECT_EQ(disk->dir(), dir);
    // A kernel no other test compiles (its constant), so it is written here, not found.
    auto f = compile(
        [](const Tensor& a, const Tensor& b) { return relu(matmul(a, b) + 1.0) * 0.5 - 0.0078125; },
        {.name = "own_cache"});
    std::vector<float> got = f(x.to(dev), w.to(dev)).to_vector<float>();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i] - 0.0078125f);
    EXPECT_GT(disk->counters().writes, 0u);
  }
  // Kernels and compiled-graph records went to the device's directory.
  EXPECT_TRUE(std::filesystem::exists(dir / "spirv")) << dir;
  EXPECT_TRUE(std::filesystem::exists(dir / "entries")) << dir;
  // "off": no persistent cache at all for this device.
  Device off = value_or_throw(Device::open("", {.cache_dir = "off"}));
  EXPECT_FALSE(off.vulkan_device()->disk_cache()->enabled());
  EXPECT_EQ(act(x.to(off), w.to(off)).to_vector<float>(), want);
  std::filesystem::remove_all(dir);
}

// --- an application's own Vulkan ----------------------------------------------------------------

/// What the application's own debug messenger saw.
struct AppMessages {
  std::mutex mu;
  std::vector<std::string> errors;
};

VKAPI_ATTR VkBool32 VKAPI_CALL app_messenger(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                             VkDebugUtilsMessageTypeFlagsEXT,
                                             const VkDebugUtilsMessengerCallbackDataEXT* data,
                                             void* user) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    auto* m = static_cast<AppMessages*>(user);
    std::lock_guard<std::mutex> lock(m->mu);
    m->errors.emplace_back(data->pMessage ? data->pMessage : "");
  }
  return VK_FALSE;
}

/// A VkInstance (with the validation layer and a messenger when installed), a VkDevice with one
/// compute queue, and the features a renderer might enable; destroyed by its destructor.
class AppVulkan {
 public:
  AppVulkan() {
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> layers(n);
    vkEnumerateInstanceLayerProperties(&n, layers.data());
    for (const VkLayerProperties& l : layers)
      validation_ = validation_ || std::string(l.layerName) == "VK_LAYER_KHRONOS_validation";
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT mi{};
    mi.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    mi.pfnUserCallback = app_messenger;
    mi.pUserData = &messages;
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "renderer";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ii{};
    ii.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ii.pApplicationInfo = &app;
    if (validation_) {
      ii.pNext = &mi;
      ii.enabledLayerCount = 1;
      ii.ppEnabledLayerNames = &layer;
      ii.enabledExtensionCount = 1;
      ii.ppEnabledExtensionNames = &ext;
    }
    if (vkCreateInstance(&ii, nullptr, &instance) != VK_SUCCESS) return;
    if (validation_) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
      create(instance, &mi, nullptr, &messenger_);
    }
    uint32_t count = 1;
    vkEnumeratePhysicalDevices(instance, &count, &physical);
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, props.data());
    for (uint32_t i = 0; i < families; ++i)
      if (props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        family = i;
        break;
      }
    // Enable what the device supports of what Kiln can use, as the application's own choice.
    VkPhysicalDeviceVulkan12Features s12{};
    s12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    VkPhysicalDeviceVulkan11Features s11{};
    s11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    s11.pNext = &s12;
    VkPhysicalDeviceFeatures2 supported{};
    supported.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    supported.pNext = &s11;
    vkGetPhysicalDeviceFeatures2(physical, &supported);
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.shaderFloat16 = s12.shaderFloat16;
    f12.storageBuffer8BitAccess = s12.storageBuffer8BitAccess;
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f11.pNext = &f12;
    f11.storageBuffer16BitAccess = s11.storageBuffer16BitAccess;
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &f11;
    features.features.shaderInt64 = supported.features.shaderInt64;
    features.features.shaderInt16 = supported.features.shaderInt16;
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkDeviceCreateInfo di{};
    di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    di.pNext = &features;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    if (vkCreateDevice(physical, &di, nullptr, &device) != VK_SUCCESS) device = VK_NULL_HANDLE;
  }
  ~AppVulkan() {
    if (device != VK_NULL_HANDLE) vkDestroyDevice(device, nullptr);
    if (messenger_ != VK_NULL_HANDLE) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance, messenger_, nullptr);
    }
    if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
  }
  vulkan::Handles handles() const {
    vulkan::Handles h;
    h.instance = instance;
    h.physical_device = physical;
    h.device = device;
    h.queue_family = family;
    h.enabled_features = &features;
    return h;
  }
  /// Destroys the device now (as the application would, once Kiln has let go of it).
  void destroy_device() {
    vkDestroyDevice(device, nullptr);
    device = VK_NULL_HANDLE;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> lock(messages.mu);
    return messages.errors;
  }

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkPhysicalDeviceFeatures2 features{};
  VkPhysicalDeviceVulkan11Features f11{};
  VkPhysicalDeviceVulkan12Features f12{};
  AppMessages messages;

 private:
  bool validation_ = false;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

/// The application's lock around its queue; Kiln must take it for each of its submissions.
struct CountingLock {
  std::mutex mu;
  int locks = 0;
  static void lock(void* self) {
    auto* l = static_cast<CountingLock*>(self);
    l->mu.lock();
    ++l->locks;
  }
  static void unlock(void* self) { static_cast<CountingLock*>(self)->mu.unlock(); }
};

TEST_F(Devices, AdoptedDeviceRunsAModelAndIsReleasedBeforeTheAppDestroysIt) {
  AppVulkan app;
  ASSERT_NE(app.device, VK_NULL_HANDLE);
  CountingLock queue_lock;
  vulkan::Handles h = app.handles();
  h.queue_lock = {&CountingLock::lock, &CountingLock::unlock, &queue_lock};
  Device dev = value_or_throw(vulkan::adopt(h));
  EXPECT_EQ(dev.kind(), Device::Kind::kVulkan);
  EXPECT_FALSE(dev == Device::vulkan());

  const std::string dir = std::string(KILN_TEST_DATA) + "/onnx/mlp";
  {
    onnx::Model cpu_model = value_or_throw(onnx::Model::load(dir + "/model.onnx"));
    onnx::Model model = value_or_throw(onnx::Model::load(dir + "/model.onnx", dev));
    const Tensor x = value_or_throw(load_npy(dir + "/0/x.npy"));
    onnx::CompiledModel compiled(model, {.name = "adopted_mlp"});
    for (int call = 0; call < 2; ++call) {  // trace + compile, then replay
      std::vector<Tensor> out = compiled({x});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_TRUE(out[0].device() == dev);
      test::expect_close(out[0], cpu_model({x}).at(0), {1e-5, 1e-5}, "adopted mlp");
    }
    EXPECT_EQ(compiled.stats().compiles, 1);
    Tensor eager = relu(x.to(dev));  // an eager kernel on the adopted device too
    EXPECT_EQ(eager.to_vector<float>(), relu(x).to_vector<float>());
    EXPECT_GT(queue_lock.locks, 0);  // every submission went through the application's lock
    EXPECT_EQ(dev.close().code(), StatusCode::kFailedPrecondition);  // still in use here
  }
  Status closed = dev.close();
  ASSERT_TRUE(closed.ok()) << closed.to_string();
  app.destroy_device();  // validation reports any Kiln object still alive on it
  EXPECT_TRUE(app.errors().empty()) << app.errors().front();
}

TEST_F(Devices, AdoptRejectsBadHandles) {
  AppVulkan app;
  ASSERT_NE(app.device, VK_NULL_HANDLE);
  vulkan::Handles h = app.handles();
  h.device = VK_NULL_HANDLE;
  EXPECT_EQ(vulkan::adopt(h).status().code(), StatusCode::kInvalidArgument);
  h = app.handles();
  h.queue_family = 99;
  EXPECT_EQ(vulkan::adopt(h).status().code(), StatusCode::kInvalidArgument);
  h = app.handles();
  h.queue_index = 5;
  EXPECT_EQ(vulkan::adopt(h).status().code(), StatusCode::kInvalidArgument);
  h = app.handles();
  h.instance_api_version = VK_API_VERSION_1_0;
  EXPECT_EQ(vulkan::adopt(h).status().code(), StatusCode::kUnavailable);
  h = app.handles();
  h.queue_lock.lock = &CountingLock::lock;  // without unlock
  EXPECT_EQ(vulkan::adopt(h).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(app.errors().empty()) << app.errors().front();
}

TEST_F(Devices, AdoptedWithoutOptionalFeaturesRunsI64AsWordPairs) {
  AppVulkan app;
  ASSERT_NE(app.device, VK_NULL_HANDLE);
  vulkan::Handles h = app.handles();
  h.enabled_features = nullptr;  // nothing optional enabled as far as Kiln is told
  Device dev = value_or_throw(vulkan::adopt(h));
  // i64 arithmetic without shaderInt64: pairs of 32-bit words, on the device (no fallback).
  std::vector<int64_t> v = {1, -2, 3, (int64_t{1} << 40) + 7};
  Tensor a = Tensor::from_vector(v, {4}, dev);
  std::vector<int64_t> got = (a * 3 + 1).to_vector<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(got[i], v[i] * 3 + 1);
  std::vector<float> f = iota_f32(10, 0.5f);
  test::expect_close(exp(Tensor::from_vector(f, {10}, dev)), exp(Tensor::from_vector(f, {10})),
                     test::Tol::for_dtype(DType::kF32), "exp on the adopted device");
  a = Tensor();
  ASSERT_TRUE(dev.close().ok());
  app.destroy_device();
  EXPECT_TRUE(app.errors().empty()) << app.errors().front();
}

}  // namespace
}  // namespace kiln
