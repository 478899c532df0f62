// VulkanDevice::pipeline: SPIR-V checks, pipeline construction, and the in-memory pipeline map.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "kiln/logging.h"
#include "vk/vk_check.h"
#include "vk/vulkan_device.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kExecutionModelGLCompute = 5;

/// The literal string starting at `words[first]` (nul-terminated, packed little-endian).
std::string spirv_string(const std::vector<uint32_t>& words, size_t first, size_t end) {
  std::string out;
  for (size_t i = first; i < end; ++i) {
    for (int byte = 0; byte < 4; ++byte) {
      const char c = static_cast<char>((words[i] >> (8 * byte)) & 0xFF);
      if (c == '\0') return out;
      out += c;
    }
  }
  return out;
}

/// Structural checks that keep malformed modules away from the driver (which may crash on
/// them): header, instruction framing, and a GLCompute entry point named `entry`. Full
/// validation (spirv-val) is codegen's job.
Status check_spirv(const std::vector<uint32_t>& words, const std::string& entry,
                   uint32_t device_api_version) {
  if (words.size() < 5) {
    return invalid_argument("SPIR-V module has " + std::to_string(words.size()) +
                            " words; the header alone has 5");
  }
  if (words[0] != kSpirvMagic) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "not SPIR-V: magic number 0x%08X, expected 0x%08X", words[0],
                  kSpirvMagic);
    return invalid_argument(buf);
  }
  const uint32_t major = (words[1] >> 16) & 0xFF;
  const uint32_t minor = (words[1] >> 8) & 0xFF;
  // Vulkan 1.2 consumes SPIR-V up to 1.5, Vulkan 1.3 up to 1.6.
  const uint32_t max_minor = VK_API_VERSION_MINOR(device_api_version) >= 3 ? 6 : 5;
  if (major != 1 || minor > max_minor) {
    return invalid_argument("SPIR-V version " + std::to_string(major) + "." +
                            std::to_string(minor) + " is not supported by this device (max 1." +
                            std::to_string(max_minor) + ")");
  }
  if (words[3] == 0) return invalid_argument("SPIR-V id bound is 0");
  bool found = false;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16;
    const uint32_t opcode = words[i] & 0xFFFF;
    if (count == 0 || i + count > words.size()) {
      return invalid_argument("malformed SPIR-V: instruction at word " + std::to_string(i) +
                              " has word count " + std::to_string(count));
    }
    if (opcode == kOpEntryPoint && count >= 4 && words[i + 1] == kExecutionModelGLCompute &&
        spirv_string(words, i + 3, i + count) == entry) {
      found = true;
    }
    i += count;
  }
  if (!found) {
    return invalid_argument("SPIR-V module has no GLCompute entry point named '" + entry + "'");
  }
  return Status::ok_status();
}

/// FNV-1a over the parts of a PipelineDesc that define the pipeline; used when the caller
/// gives no cache_key.
std::string content_key(const PipelineDesc& desc) {
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&](const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  };
  mix(desc.spirv.data(), desc.spirv.size() * sizeof(uint32_t));
  mix(desc.entry.data(), desc.entry.size());
  mix(&desc.num_bindings, sizeof(desc.num_bindings));
  mix(&desc.push_constant_bytes, sizeof(desc.push_constant_bytes));
  for (const auto& [id, value] : desc.spec_constants) {
    mix(&id, sizeof(id));
    mix(&value, sizeof(value));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "content:%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

std::string hex(const std::array<uint8_t, 16>& bytes) {
  std::string out;
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

}  // namespace

Status VulkanDeviceImpl::check_pipeline_desc(const PipelineDesc& desc) const {
  const PhysicalDevice& pd = core_->physical;
  if (desc.entry.empty()) return invalid_argument("pipeline entry point name is empty");
  if (desc.num_bindings > pd.max_storage_buffers_per_stage) {
    return invalid_argument(std::to_string(desc.num_bindings) +
                            " storage-buffer bindings exceed the device limit of " +
                            std::to_string(pd.max_storage_buffers_per_stage));
  }
  if (desc.push_constant_bytes % 4 != 0 ||
      desc.push_constant_bytes > pd.info.max_push_constants_size) {
    return invalid_argument("push constants of " + std::to_string(desc.push_constant_bytes) +
                            " bytes: must be a multiple of 4 and at most " +
                            std::to_string(pd.info.max_push_constants_size));
  }
  return check_spirv(desc.spirv, desc.entry, pd.api_version);
}

std::string VulkanDeviceImpl::pipeline_key(const PipelineDesc& desc) const {
  const DeviceInfo& info = core_->physical.info;
  std::string binding_kinds;
  for (uint32_t b : desc.texel_bindings) binding_kinds += "t" + std::to_string(b);
  for (uint32_t b : desc.texel_r32f_bindings) binding_kinds += "s" + std::to_string(b);
  for (uint32_t b : desc.uniform_bindings) binding_kinds += "u" + std::to_string(b);
  return (desc.cache_key.empty() ? content_key(desc) : desc.cache_key) + "|" + binding_kinds + "|" +
         hex(info.device_uuid) + hex(info.driver_uuid);
}

Expected<const Pipeline*> VulkanDeviceImpl::find_pipeline_locked(const std::string& key,
                                                                 const PipelineDesc& desc) {
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) return static_cast<const Pipeline*>(nullptr);
  const Pipeline& cached = *it->second;
  if (cached.num_bindings != desc.num_bindings ||
      cached.push_constant_bytes != desc.push_constant_bytes) {
    return invalid_argument("pipeline cache_key '" + desc.cache_key +
                            "' was first used with a different interface (bindings or push "
                            "constants): cache keys must identify interchangeable pipelines");
  }
  ++stats_.pipeline_cache_hits;
  return &cached;
}

Expected<std::vector<const Pipeline*>> VulkanDeviceImpl::pipelines(
    std::span<const PipelineDesc> descs) {
  // Misses (first occurrence of each key) are built concurrently, without holding the map's
  // lock: pipeline creation is the driver's compile (vkCreateComputePipelines may be called
  // from several threads; the VkPipelineCache is internally synchronised). Two callers that
  // miss the same key both build it; the first to store it wins and the other's is destroyed.
  std::vector<std::string> keys;
  std::vector<size_t> misses;
  {
    std::lock_guard<std::mutex> lock(pipelines_mu_);
    for (size_t i = 0; i < descs.size(); ++i) {
      keys.push_back(pipeline_key(descs[i]));
      if (pipelines_.count(keys[i]) != 0) continue;
      if (std::find_if(misses.begin(), misses.end(),
                       [&](size_t m) { return keys[m] == keys[i]; }) != misses.end())
        continue;
      misses.push_back(i);
    }
  }
  if (!misses.empty() && wait_for_prewarm()) return pipelines(descs);  // it may have built them
  for (size_t m : misses)
    KILN_RETURN_IF_ERROR(
        check_pipeline_desc(descs[m]).with_context("creating pipeline '" + descs[m].label + "'"));
  std::vector<std::unique_ptr<Pipeline>> built(misses.size());
  std::vector<Status> status(misses.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t m = next++; m < misses.size(); m = next++) {
      built[m] = std::make_unique<Pipeline>();
      const auto t0 = std::chrono::steady_clock::now();
      status[m] = build_pipeline(descs[misses[m]], *built[m]);
      if (log_enabled(LogTopic::kCompile))  // a slow driver compile names its kernel
        log(LogTopic::kCompile,
            "pipeline '" + descs[misses[m]].label + "': created by the driver in " +
                std::to_string(
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count()) +
                " ms" + (status[m].ok() ? "" : " (failed)"));
    }
  };
  const size_t threads =
      std::min<size_t>({misses.size(), std::max(1u, std::thread::hardware_concurrency()), 8});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  Status first_error;
  for (size_t m = 0; m < misses.size(); ++m) {
    if (!status[m].ok() && first_error.ok())
      first_error = status[m].with_context("creating pipeline '" + descs[misses[m]].label + "'");
  }
  if (!first_error.ok()) {
    for (std::unique_ptr<Pipeline>& p : built)
      if (p) destroy_pipeline(*p);
    return first_error;
  }
  std::vector<std::unique_ptr<Pipeline>> duplicates;  // built by another caller meanwhile
  std::vector<const Pipeline*> out;
  {
    std::lock_guard<std::mutex> lock(pipelines_mu_);
    for (size_t m = 0; m < misses.size(); ++m) {
      auto [it, added] = pipelines_.try_emplace(keys[misses[m]]);
      if (!added) {
        duplicates.push_back(std::move(built[m]));
        continue;
      }
      it->second = std::move(built[m]);
      ++stats_.pipelines_created;
      remember_created(descs[misses[m]]);
    }
    for (size_t i = 0; i < descs.size(); ++i) {
      // A fresh one (unless another caller stored a different interface first) is not a hit;
      // the rest are looked up as pipeline() would, with its interface check.
      const bool fresh = std::find(misses.begin(), misses.end(), i) != misses.end();
      const Pipeline* stored = pipelines_.at(keys[i]).get();
      if (fresh && stored->num_bindings == descs[i].num_bindings &&
          stored->push_constant_bytes == descs[i].push_constant_bytes) {
        out.push_back(stored);
        continue;
      }
      Expected<const Pipeline*> p = find_pipeline_locked(keys[i], descs[i]);
      if (!p.ok()) {
        for (std::unique_ptr<Pipeline>& d : duplicates) destroy_pipeline(*d);
        return p.status();
      }
      out.push_back(*p);
    }
  }
  for (std::unique_ptr<Pipeline>& d : duplicates) destroy_pipeline(*d);
  return out;
}

Expected<const Pipeline*> VulkanDeviceImpl::pipeline(const PipelineDesc& desc) {
  const std::string key = pipeline_key(desc);
  {
    std::lock_guard<std::mutex> lock(pipelines_mu_);
    KILN_ASSIGN_OR_RETURN(const Pipeline* cached, find_pipeline_locked(key, desc));
    if (cached != nullptr) return cached;
  }
  if (wait_for_prewarm()) return pipeline(desc);  // it may have built this one
  const std::string what = "creating pipeline '" + desc.label + "'";
  KILN_RETURN_IF_ERROR(check_pipeline_desc(desc).with_context(what));
  auto created = std::make_unique<Pipeline>();
  const Status status = build_pipeline(desc, *created);
  if (!status.ok()) {
    destroy_pipeline(*created);
    return status.with_context(what);
  }
  std::lock_guard<std::mutex> lock(pipelines_mu_);
  auto [it, added] = pipelines_.try_emplace(key);
  if (!added) {  // another thread stored one first: use it
    destroy_pipeline(*created);
    return find_pipeline_locked(key, desc);
  }
  it->second = std::move(created);
  ++stats_.pipelines_created;
  remember_created(desc);
  return it->second.get();
}

Status VulkanDeviceImpl::build_pipeline(const PipelineDesc& desc, Pipeline& out) const {
  out.device = device();
  out.num_bindings = desc.num_bindings;
  out.push_constant_bytes = desc.push_constant_bytes;
  out.label = desc.label;
  out.texel.assign(desc.num_bindings, false);
  out.r32f.assign(desc.num_bindings, false);
  out.uniform.assign(desc.num_bindings, false);
  for (uint32_t b : desc.uniform_bindings) {
    if (b >= desc.num_bindings)
      return invalid_argument(desc.label + ": uniform binding out of range");
    out.uniform[b] = true;
  }
  for (uint32_t b : desc.texel_bindings) {
    if (b >= desc.num_bindings)
      return invalid_argument(desc.label + ": texel binding out of range");
    if (!core_->physical.info.texel_rgba32f)
      return unimplemented(desc.label + ": the device has no rgba32f storage texel buffers");
    out.texel[b] = true;
  }
  for (uint32_t b : desc.texel_r32f_bindings) {
    if (b >= desc.num_bindings || out.texel[b])
      return invalid_argument(desc.label + ": r32f texel binding out of range or twice");
    if (!core_->physical.info.texel_r32f)
      return unimplemented(desc.label + ": the device has no r32f storage texel buffers");
    out.texel[b] = out.r32f[b] = true;
  }

  VkShaderModuleCreateInfo module{};
  module.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module.codeSize = desc.spirv.size() * sizeof(uint32_t);
  module.pCode = desc.spirv.data();
  KILN_VK_RETURN_IF_ERROR(vkCreateShaderModule(device(), &module, nullptr, &out.module));

  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.num_bindings);
  for (uint32_t i = 0; i < desc.num_bindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = out.texel[i]     ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER
                                 : out.uniform[i] ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                  : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_layout{};
  set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set_layout.bindingCount = desc.num_bindings;
  set_layout.pBindings = bindings.data();
  KILN_VK_RETURN_IF_ERROR(
      vkCreateDescriptorSetLayout(device(), &set_layout, nullptr, &out.set_layout));

  VkPushConstantRange push{};
  push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  push.offset = 0;
  push.size = desc.push_constant_bytes;
  VkPipelineLayoutCreateInfo layout{};
  layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &out.set_layout;
  layout.pushConstantRangeCount = desc.push_constant_bytes > 0 ? 1 : 0;
  layout.pPushConstantRanges = &push;
  KILN_VK_RETURN_IF_ERROR(vkCreatePipelineLayout(device(), &layout, nullptr, &out.layout));

  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> values;
  for (const auto& [id, value] : desc.spec_constants) {
    entries.push_back(
        {id, static_cast<uint32_t>(values.size() * sizeof(uint32_t)), sizeof(uint32_t)});
    values.push_back(value);
  }
  VkSpecializationInfo specialization{};
  specialization.mapEntryCount = static_cast<uint32_t>(entries.size());
  specialization.pMapEntries = entries.data();
  specialization.dataSize = values.size() * sizeof(uint32_t);
  specialization.pData = values.data();

  VkComputePipelineCreateInfo pipeline{};
  pipeline.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline.stage.module = out.module;
  pipeline.stage.pName = desc.entry.c_str();
  pipeline.stage.pSpecializationInfo = entries.empty() ? nullptr : &specialization;
  pipeline.layout = out.layout;
  KILN_VK_RETURN_IF_ERROR(
      vkCreateComputePipelines(device(), pipeline_cache_, 1, &pipeline, nullptr, &out.pipeline));
  return Status::ok_status();
}

void VulkanDeviceImpl::destroy_pipeline(Pipeline& p) const {
  if (p.pipeline != VK_NULL_HANDLE) vkDestroyPipeline(device(), p.pipeline, nullptr);
  if (p.layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(device(), p.layout, nullptr);
  if (p.set_layout != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device(), p.set_layout, nullptr);
  if (p.module != VK_NULL_HANDLE) vkDestroyShaderModule(device(), p.module, nullptr);
  p = Pipeline{};
}

}  // namespace kiln::vk
