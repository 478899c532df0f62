#include "vk/device_limits.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace kiln::vk {
namespace {

constexpr const char* kKnownKeys =
    "invocations, shared, subgroup, texels, int64, float16, storage16, int8, storage8, unified";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<uint32_t> parse_u32(std::string_view s) {
  uint32_t v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

struct Field {
  const char* key;
  std::optional<uint32_t> DeviceLimits::*number = nullptr;
  std::optional<bool> DeviceLimits::*flag = nullptr;
};

constexpr Field kFields[] = {
    {"invocations", &DeviceLimits::invocations, nullptr},
    {"shared", &DeviceLimits::shared, nullptr},
    {"subgroup", &DeviceLimits::subgroup, nullptr},
    {"texels", &DeviceLimits::texels, nullptr},
    {"int64", nullptr, &DeviceLimits::int64},
    {"float16", nullptr, &DeviceLimits::float16},
    {"storage16", nullptr, &DeviceLimits::storage16},
    {"int8", nullptr, &DeviceLimits::int8},
    {"storage8", nullptr, &DeviceLimits::storage8},
    {"unified", nullptr, &DeviceLimits::unified},
};

Status bad(std::string_view source, std::string_view text, const std::string& why) {
  return invalid_argument(std::string(source) + "='" + std::string(text) + "': " + why);
}

/// Parses one `key=value` item into `out`.
Status parse_item(std::string_view item, std::string_view source, std::string_view text,
                  DeviceLimits& out) {
  const size_t eq = item.find('=');
  if (eq == std::string_view::npos)
    return bad(source, text,
               "'" + std::string(item) + "' is not key=value (known keys: " + kKnownKeys + ")");
  const std::string key(trim(item.substr(0, eq)));
  const std::string_view value = trim(item.substr(eq + 1));
  const Field* field = nullptr;
  for (const Field& f : kFields)
    if (key == f.key) field = &f;
  if (field == nullptr)
    return bad(source, text, "unknown key '" + key + "' (known keys: " + kKnownKeys + ")");
  const std::optional<uint32_t> number = parse_u32(value);
  if (field->flag != nullptr) {
    if ((out.*field->flag).has_value()) return bad(source, text, "key '" + key + "' repeats");
    if (!number || *number > 1)
      return bad(source, text, "key '" + key + "' takes 0 or 1, not '" + std::string(value) + "'");
    out.*field->flag = *number == 1;
    return Status::ok_status();
  }
  if ((out.*field->number).has_value()) return bad(source, text, "key '" + key + "' repeats");
  if (!number)
    return bad(source, text,
               "key '" + key + "' takes a non-negative integer, not '" + std::string(value) + "'");
  if (key == "subgroup" && (*number & (*number - 1)) != 0)
    return bad(source, text, "key 'subgroup' takes 0 or a power of two, not " + std::string(value));
  if (key != "subgroup" && *number == 0)
    return bad(source, text, "key '" + key + "' must be at least 1");
  out.*field->number = *number;
  return Status::ok_status();
}

template <typename T>
std::optional<T> lower_of(const std::optional<T>& a, const std::optional<T>& b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

bool DeviceLimits::empty() const {
  return str().empty();
}

std::string DeviceLimits::str() const {
  std::string out;
  for (const Field& f : kFields) {
    std::optional<uint32_t> v;
    if (f.number != nullptr) v = this->*f.number;
    if (f.flag != nullptr && (this->*f.flag).has_value()) v = *(this->*f.flag) ? 1 : 0;
    if (!v) continue;
    out += (out.empty() ? "" : ",") + std::string(f.key) + "=" + std::to_string(*v);
  }
  return out;
}

DeviceLimits DeviceLimits::merged(const DeviceLimits& other) const {
  DeviceLimits out;
  for (const Field& f : kFields) {
    if (f.number != nullptr) out.*f.number = lower_of(this->*f.number, other.*f.number);
    if (f.flag != nullptr) out.*f.flag = lower_of(this->*f.flag, other.*f.flag);
  }
  return out;
}

Expected<DeviceLimits> parse_device_limits(std::string_view text, std::string_view source) {
  DeviceLimits out;
  if (trim(text).empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = trim(text.substr(start, comma - start));
    if (item.empty()) return bad(source, text, "empty item (stray comma?)");
    KILN_RETURN_IF_ERROR(parse_item(item, source, text, out));
    start = comma + 1;
  }
  return out;
}

Expected<DeviceLimits> device_limits_from_env() {
  const char* env = std::getenv("KILN_DEVICE_LIMITS");
  return parse_device_limits(env == nullptr ? "" : env, "KILN_DEVICE_LIMITS");
}

void apply_device_limits(const DeviceLimits& limits, DeviceInfo& info) {
  if (limits.empty()) return;
  if (limits.invocations) {
    info.max_workgroup_invocations = std::min(info.max_workgroup_invocations, *limits.invocations);
    for (uint32_t& size : info.max_workgroup_size) size = std::min(size, *limits.invocations);
  }
  if (limits.shared) info.max_shared_memory = std::min(info.max_shared_memory, *limits.shared);
  if (limits.subgroup) {
    // Codegen takes the size as a lower bound of the real one (its kernels shuffle within
    // groups of 8 lanes), so a smaller size is sound on a device with larger subgroups.
    info.subgroup_size = std::min(info.subgroup_size, *limits.subgroup);
    if (*limits.subgroup == 0) {
      info.subgroup_basic = info.subgroup_arithmetic = info.subgroup_shuffle = false;
      info.subgroup_ballot = info.subgroup_vote = false;
    }
  }
  if (limits.texels)
    info.max_texel_buffer_elements =
        std::min<uint64_t>(info.max_texel_buffer_elements, *limits.texels);
  if (limits.int64 == false) info.shader_int64 = false;
  if (limits.float16 == false) info.shader_float16 = info.storage_buffer_16bit = false;
  if (limits.storage16 == false) info.storage_buffer_16bit = false;
  if (limits.int8 == false) info.shader_int8 = info.storage_buffer_8bit = false;
  if (limits.storage8 == false) info.storage_buffer_8bit = false;
  if (limits.unified == false) info.unified_memory = false;
  info.limits = info.limits.empty() ? limits.str() : info.limits + "," + limits.str();
}

Status apply_device_limits(const std::string& option_text, DeviceInfo& info) {
  KILN_ASSIGN_OR_RETURN(const DeviceLimits env, device_limits_from_env());
  KILN_ASSIGN_OR_RETURN(const DeviceLimits option,
                        parse_device_limits(option_text, "DeviceOpenOptions::limits"));
  apply_device_limits(env.merged(option), info);
  return Status::ok_status();
}

}  // namespace kiln::vk
