#include "kiln/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace kiln {
namespace {

constexpr const char* kTopicNames[] = {
#define KILN_LOG_NAME(e, s) s,
    KILN_LOG_TOPICS(KILN_LOG_NAME)
#undef KILN_LOG_NAME
};
constexpr size_t kTopicCount = std::size(kTopicNames);

struct LogState {
  std::mutex mu;
  std::atomic<uint32_t> mask{0};
  LogSink sink;
};

uint32_t parse_spec(std::string_view spec) {
  uint32_t mask = 0;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view name = spec.substr(pos, end - pos);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) {
      bool found = false;
      if (name == "all") {
        mask = ~0u;
        found = true;
      }
      for (size_t i = 0; i < kTopicCount && !found; ++i) {
        if (name == kTopicNames[i]) {
          mask |= 1u << i;
          found = true;
        }
      }
      if (!found) {
        std::fprintf(stderr, "[kiln:warning] unknown log topic '%.*s' in KILN_LOGS\n",
                     static_cast<int>(name.size()), name.data());
      }
    }
    pos = end + 1;
  }
  return mask | (1u << static_cast<uint32_t>(LogTopic::kWarning));
}

LogState& state() {
  static LogState* s = [] {
    auto* st = new LogState;
    const char* env = std::getenv("KILN_LOGS");
    st->mask = parse_spec(env ? env : "");
    return st;
  }();
  return *s;
}

}  // namespace

const char* log_topic_name(LogTopic topic) {
  return kTopicNames[static_cast<size_t>(topic)];
}

void set_logs(std::string_view spec) {
  state().mask = parse_spec(spec);
}

bool log_enabled(LogTopic topic) {
  return (state().mask.load(std::memory_order_relaxed) >> static_cast<uint32_t>(topic)) & 1u;
}

void log(LogTopic topic, std::string_view message) {
  if (!log_enabled(topic)) return;
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.sink) {
    s.sink(topic, message);
    return;
  }
  std::fprintf(stderr, "[kiln:%s] %.*s\n", log_topic_name(topic), static_cast<int>(message.size()),
               message.data());
}

void set_log_sink(LogSink sink) {
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.sink = std::move(sink);
}

}  // namespace kiln
