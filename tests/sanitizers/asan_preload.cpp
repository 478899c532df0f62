// LD_PRELOADed into every test process of a KILN_ASAN build (tests/CMakeLists.txt), built without
// sanitizers so that it can also load into the uninstrumented python of the tool tests. Two jobs:
//
// 1. dlclose() does nothing. The Vulkan loader unloads the driver (lavapipe, with LLVM) when the
//    last VkInstance is destroyed, which happens in static destructors, before LeakSanitizer
//    reports at exit. A leak inside an unloaded library is then shown as `<unknown module>`, and
//    a suppression by library name (tests/sanitizers/lsan.supp) cannot match it. Kept mapped,
//    every frame names its library.
//
// 2. Every Vulkan object Kiln creates on a device must be destroyed before that device. The
//    suppressions hide every leak allocated inside the driver, and a VkPipeline (or any other
//    object) that Kiln forgot would leak only driver memory, so lsan.supp alone would hide it.
//    This counts, per VkDevice, the objects created and destroyed through the loader's exported
//    functions (the ones Kiln calls) and aborts in vkDestroyDevice, naming the objects still
//    alive, when any is left.
#include <dlfcn.h>
#include <pthread.h>
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstdlib>

namespace {

enum Kind {
  kBuffer,
  kBufferView,
  kDeviceMemory,
  kShaderModule,
  kDescriptorSetLayout,
  kPipelineLayout,
  kPipeline,
  kPipelineCache,
  kDescriptorPool,
  kCommandPool,
  kFence,
  kQueryPool,
  kKinds
};
const char* const kKindNames[kKinds] = {"VkBuffer",
                                        "VkBufferView",
                                        "VkDeviceMemory",
                                        "VkShaderModule",
                                        "VkDescriptorSetLayout",
                                        "VkPipelineLayout",
                                        "VkPipeline",
                                        "VkPipelineCache",
                                        "VkDescriptorPool",
                                        "VkCommandPool",
                                        "VkFence",
                                        "VkQueryPool"};

struct DeviceObjects {
  VkDevice device;
  long live[kKinds];
};
constexpr int kMaxDevices = 64;  // devices alive at once; more are not counted
DeviceObjects g_devices[kMaxDevices];
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;

// The entry for `device`, created on first use; null when the table is full.
DeviceObjects* objects_of(VkDevice device) {
  DeviceObjects* free_slot = nullptr;
  for (DeviceObjects& d : g_devices) {
    if (d.device == device) return &d;
    if (d.device == VK_NULL_HANDLE && free_slot == nullptr) free_slot = &d;
  }
  if (free_slot != nullptr) *free_slot = DeviceObjects{device, {}};
  return free_slot;
}

void count(VkDevice device, Kind kind, long delta) {
  pthread_mutex_lock(&g_mutex);
  if (DeviceObjects* d = objects_of(device)) d->live[kind] += delta;
  pthread_mutex_unlock(&g_mutex);
}

template <typename Fn>
Fn next(const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "asan_preload: %s not found\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int dlclose(void*) {
  return 0;
}

// vkCreateX / vkDestroyX pairs: the created handle is counted when the call succeeds.
#define KILN_COUNT_CREATE(Name, Info, Object, kind)                                             \
  __attribute__((visibility("default"))) VkResult vk##Name(                                     \
      VkDevice device, const Info* info, const VkAllocationCallbacks* allocator, Object* out) { \
    static const auto real = next<PFN_vk##Name>("vk" #Name);                                    \
    const VkResult result = real(device, info, allocator, out);                                 \
    if (result == VK_SUCCESS) count(device, kind, 1);                                           \
    return result;                                                                              \
  }
#define KILN_COUNT_DESTROY(Name, Object, kind)                                                   \
  __attribute__((visibility("default"))) void vk##Name(VkDevice device, Object object,           \
                                                       const VkAllocationCallbacks* allocator) { \
    static const auto real = next<PFN_vk##Name>("vk" #Name);                                     \
    if (object != VK_NULL_HANDLE) count(device, kind, -1);                                       \
    real(device, object, allocator);                                                             \
  }

KILN_COUNT_CREATE(CreateBuffer, VkBufferCreateInfo, VkBuffer, kBuffer)
KILN_COUNT_DESTROY(DestroyBuffer, VkBuffer, kBuffer)
KILN_COUNT_CREATE(CreateBufferView, VkBufferViewCreateInfo, VkBufferView, kBufferView)
KILN_COUNT_DESTROY(DestroyBufferView, VkBufferView, kBufferView)
KILN_COUNT_CREATE(AllocateMemory, VkMemoryAllocateInfo, VkDeviceMemory, kDeviceMemory)
KILN_COUNT_DESTROY(FreeMemory, VkDeviceMemory, kDeviceMemory)
KILN_COUNT_CREATE(CreateShaderModule, VkShaderModuleCreateInfo, VkShaderModule, kShaderModule)
KILN_COUNT_DESTROY(DestroyShaderModule, VkShaderModule, kShaderModule)
KILN_COUNT_CREATE(CreateDescriptorSetLayout, VkDescriptorSetLayoutCreateInfo, VkDescriptorSetLayout,
                  kDescriptorSetLayout)
KILN_COUNT_DESTROY(DestroyDescriptorSetLayout, VkDescriptorSetLayout, kDescriptorSetLayout)
KILN_COUNT_CREATE(CreatePipelineLayout, VkPipelineLayoutCreateInfo, VkPipelineLayout,
                  kPipelineLayout)
KILN_COUNT_DESTROY(DestroyPipelineLayout, VkPipelineLayout, kPipelineLayout)
KILN_COUNT_DESTROY(DestroyPipeline, VkPipeline, kPipeline)
KILN_COUNT_CREATE(CreatePipelineCache, VkPipelineCacheCreateInfo, VkPipelineCache, kPipelineCache)
KILN_COUNT_DESTROY(DestroyPipelineCache, VkPipelineCache, kPipelineCache)
KILN_COUNT_CREATE(CreateDescriptorPool, VkDescriptorPoolCreateInfo, VkDescriptorPool,
                  kDescriptorPool)
KILN_COUNT_DESTROY(DestroyDescriptorPool, VkDescriptorPool, kDescriptorPool)
KILN_COUNT_CREATE(CreateCommandPool, VkCommandPoolCreateInfo, VkCommandPool, kCommandPool)
KILN_COUNT_DESTROY(DestroyCommandPool, VkCommandPool, kCommandPool)
KILN_COUNT_CREATE(CreateFence, VkFenceCreateInfo, VkFence, kFence)
KILN_COUNT_DESTROY(DestroyFence, VkFence, kFence)
KILN_COUNT_CREATE(CreateQueryPool, VkQueryPoolCreateInfo, VkQueryPool, kQueryPool)
KILN_COUNT_DESTROY(DestroyQueryPool, VkQueryPool, kQueryPool)

__attribute__((visibility("default"))) VkResult vkCreateComputePipelines(
    VkDevice device, VkPipelineCache cache, uint32_t n, const VkComputePipelineCreateInfo* infos,
    const VkAllocationCallbacks* allocator, VkPipeline* out) {
  static const auto real = next<PFN_vkCreateComputePipelines>("vkCreateComputePipelines");
  const VkResult result = real(device, cache, n, infos, allocator, out);
  long created = 0;  // on failure the handles that were created are still valid
  for (uint32_t i = 0; i < n; ++i) created += out[i] != VK_NULL_HANDLE ? 1 : 0;
  count(device, kPipeline, created);
  return result;
}

__attribute__((visibility("default"))) void vkDestroyDevice(
    VkDevice device, const VkAllocationCallbacks* allocator) {
  static const auto real = next<PFN_vkDestroyDevice>("vkDestroyDevice");
  if (device != VK_NULL_HANDLE) {
    pthread_mutex_lock(&g_mutex);
    DeviceObjects* d = objects_of(device);
    bool leaked = false;
    for (int k = 0; d != nullptr && k < kKinds; ++k) {
      if (d->live[k] == 0) continue;
      std::fprintf(stderr, "asan_preload: vkDestroyDevice with %ld %s not destroyed\n", d->live[k],
                   kKindNames[k]);
      leaked = true;
    }
    if (d != nullptr) d->device = VK_NULL_HANDLE;  // the slot is free again
    pthread_mutex_unlock(&g_mutex);
    if (leaked) std::abort();
  }
  real(device, allocator);
}

}  // extern "C"
