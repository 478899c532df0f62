// The pipeline set: every pipeline a device created (its PipelineDesc, SPIR-V included) is kept
// in one persistent-cache file per device (EntryKind::kPipelineSet), merged with what an earlier
// process stored. With KILN_PREWARM=1 a device opening on that cache recreates the whole set on
// a thread of its own, while the application loads its model, so that a process running from
// a warm (or shipped, `kiln precompile`) cache does not create pipelines inside its first call:
// drivers whose VkPipelineCache holds nothing (lavapipe) otherwise translate every kernel again
// in every process (docs/cache.md, "Shipping a warm cache").
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_set>

#include "kiln/logging.h"
#include "vk/vulkan_device.h"

namespace kiln::vk {
namespace {

/// Pipelines kept in the set (the most recently created win).
constexpr size_t kMaxSetPipelines = 1024;

class Writer {
 public:
  void u32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    out_ += s;
  }
  void words(const std::vector<uint32_t>& w) {
    u32(static_cast<uint32_t>(w.size()));
    if (!w.empty())
      out_.append(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(uint32_t));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  bool u32(uint32_t& v) {
    if (in_.size() - at_ < sizeof v) return false;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  bool str(std::string& s) {
    uint32_t n = 0;
    if (!u32(n) || in_.size() - at_ < n) return false;
    s.assign(in_, at_, n);
    at_ += n;
    return true;
  }
  bool words(std::vector<uint32_t>& w) {
    uint32_t n = 0;
    if (!u32(n) || (in_.size() - at_) / sizeof(uint32_t) < n) return false;
    w.resize(n);
    if (n != 0) std::memcpy(w.data(), in_.data() + at_, size_t{n} * sizeof(uint32_t));
    at_ += size_t{n} * sizeof(uint32_t);
    return true;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  const std::string& in_;
  size_t at_ = 0;
};

std::string encode_set(const std::vector<PipelineDesc>& descs) {
  Writer w;
  w.u32(static_cast<uint32_t>(descs.size()));
  for (const PipelineDesc& d : descs) {
    w.str(d.label);
    w.str(d.cache_key);
    w.str(d.entry);
    w.u32(d.num_bindings);
    w.u32(d.push_constant_bytes);
    w.words(d.texel_bindings);
    w.words(d.texel_r32f_bindings);
    w.words(d.uniform_bindings);
    w.u32(static_cast<uint32_t>(d.spec_constants.size()));
    for (const auto& [id, value] : d.spec_constants) {
      w.u32(id);
      w.u32(value);
    }
    w.words(d.spirv);
  }
  return w.take();
}

/// nullopt when the payload is malformed (the file's checksum passed, so only a writer bug or
/// a crafted file gets here).
std::optional<std::vector<PipelineDesc>> decode_set(const std::string& payload) {
  Reader r(payload);
  uint32_t count = 0;
  if (!r.u32(count) || count > kMaxSetPipelines) return std::nullopt;
  std::vector<PipelineDesc> descs(count);
  for (PipelineDesc& d : descs) {
    uint32_t specs = 0;
    if (!r.str(d.label) || !r.str(d.cache_key) || !r.str(d.entry) || !r.u32(d.num_bindings) ||
        !r.u32(d.push_constant_bytes) || !r.words(d.texel_bindings) ||
        !r.words(d.texel_r32f_bindings) || !r.words(d.uniform_bindings) || !r.u32(specs) ||
        specs > 64)
      return std::nullopt;
    for (uint32_t i = 0; i < specs; ++i) {
      uint32_t id = 0, value = 0;
      if (!r.u32(id) || !r.u32(value)) return std::nullopt;
      d.spec_constants.emplace_back(id, value);
    }
    if (!r.words(d.spirv)) return std::nullopt;
  }
  if (!r.done()) return std::nullopt;
  return descs;
}

thread_local bool t_prewarming = false;  // this thread recreates the stored set

bool prewarm_requested() {
  const char* v = std::getenv("KILN_PREWARM");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

}  // namespace

void VulkanDeviceImpl::start_prewarm() {
  if (!(core_->prewarm || prewarm_requested()) || !core_->disk || !core_->disk->enabled()) return;
  prewarming_.store(true);
  prewarm_ = std::thread([this] {
    t_prewarming = true;
    struct Done {
      VulkanDeviceImpl* device;
      ~Done() {
        {
          std::lock_guard<std::mutex> lock(device->prewarm_mu_);
          device->prewarming_.store(false);
        }
        device->prewarm_cv_.notify_all();
      }
    } done{this};
    const auto start = std::chrono::steady_clock::now();
    std::optional<std::string> payload =
        core_->disk->load(cache::EntryKind::kPipelineSet, pipeline_cache_key(),
                          pipeline_cache_identity(), "pipeline set");
    if (!payload) return;
    std::optional<std::vector<PipelineDesc>> descs = decode_set(*payload);
    if (!descs) {
      log(LogTopic::kCache, "pipeline set: malformed payload - ignored");
      return;
    }
    // One at a time, so that a bad entry costs only itself; pipeline() checks each desc
    // (SPIR-V included) as for any caller.
    std::vector<const Pipeline*> made;
    for (const PipelineDesc& d : *descs) {
      Expected<const Pipeline*> p = pipeline(d);
      if (p.ok()) {
        made.push_back(*p);
      } else {
        log(LogTopic::kCache,
            "pipeline set: " + d.label + " skipped (" + p.status().message() + ")");
      }
    }
    const Status warmed = warm_pipelines(made);
    if (!warmed.ok())
      log(LogTopic::kCache, "pipeline set: warm-up dispatch failed (" + warmed.message() + ")");
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log(LogTopic::kCache, "pipeline set: " + std::to_string(made.size()) + " of " +
                              std::to_string(descs->size()) + " pipelines created ahead" +
                              (warmed.ok() ? " and warmed" : "") + " in " + std::to_string(ms) +
                              " ms");
  });
}

Status VulkanDeviceImpl::warm_pipelines(std::span<const Pipeline* const> pipelines) {
  if (pipelines.empty()) return Status::ok_status();
  // Every binding reads the same scratch buffer: the grid is empty, so nothing is read or
  // written, but the descriptors must be valid. 16 KiB fits the smallest uniform range limit.
  KILN_ASSIGN_OR_RETURN(BufferRef scratch, allocate(16384, MemoryUse::kDevice));
  std::vector<Dispatch> dispatches;
  for (const Pipeline* p : pipelines) {
    Dispatch d;
    d.pipeline = p;
    d.bindings.assign(p->num_bindings, scratch);
    d.push_constants.assign(p->push_constant_bytes, 0);
    d.groups = {0, 0, 0};
    dispatches.push_back(std::move(d));
  }
  return run_dispatches(dispatches, nullptr, true);
}

bool VulkanDeviceImpl::wait_for_prewarm() {
  if (t_prewarming || !prewarming_.load()) return false;
  std::unique_lock<std::mutex> lock(prewarm_mu_);
  prewarm_cv_.wait(lock, [this] { return !prewarming_.load(); });
  return true;
}

void VulkanDeviceImpl::remember_created(const PipelineDesc& desc) {
  if (t_prewarming || !core_->disk || !core_->disk->enabled()) return;
  if (created_descs_.size() >= kMaxSetPipelines) created_descs_.erase(created_descs_.begin());
  created_descs_.push_back(desc);
}

void VulkanDeviceImpl::save_pipeline_set() {
  std::vector<PipelineDesc> fresh;
  {
    std::lock_guard<std::mutex> lock(pipelines_mu_);
    fresh.swap(created_descs_);
  }
  if (fresh.empty() || !core_->disk || !core_->disk->enabled()) return;
  // The stored set first, then this process's pipelines; a key met again keeps its newest
  // desc, and only the last kMaxSetPipelines stay.
  std::vector<PipelineDesc> merged;
  if (std::optional<std::string> payload =
          core_->disk->load(cache::EntryKind::kPipelineSet, pipeline_cache_key(),
                            pipeline_cache_identity(), "pipeline set")) {
    if (std::optional<std::vector<PipelineDesc>> stored = decode_set(*payload))
      merged = std::move(*stored);
  }
  std::unordered_set<std::string> stored_keys;
  for (const PipelineDesc& d : merged) stored_keys.insert(pipeline_key(d));
  bool news = false;
  for (const PipelineDesc& d : fresh) news |= stored_keys.count(pipeline_key(d)) == 0;
  if (!news) return;  // every pipeline made here is in the stored set already
  for (PipelineDesc& d : fresh) merged.push_back(std::move(d));
  std::vector<PipelineDesc> kept;
  std::unordered_set<std::string> seen;
  for (auto it = merged.rbegin(); it != merged.rend() && kept.size() < kMaxSetPipelines; ++it)
    if (seen.insert(pipeline_key(*it)).second) kept.push_back(std::move(*it));
  std::reverse(kept.begin(), kept.end());
  core_->disk->store(cache::EntryKind::kPipelineSet, pipeline_cache_key(),
                     pipeline_cache_identity(), "pipeline set", encode_set(kept));
}

}  // namespace kiln::vk
