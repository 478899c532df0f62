/// \file logging.h
/// Structured logs by topic, selected with KILN_LOGS=topic,topic (or set_logs from C++).
/// Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kiln {

#define KILN_LOG_TOPICS(X)                    \
  X(kGraphBreaks, "graph_breaks")             \
  X(kRecompiles, "recompiles")                \
  X(kRecompilesVerbose, "recompiles_verbose") \
  X(kGuards, "guards")                        \
  X(kDynamic, "dynamic")                      \
  X(kGraph, "graph")                          \
  X(kFusion, "fusion")                        \
  X(kOutputCode, "output_code")               \
  X(kCache, "cache")                          \
  X(kPerf, "perf")                            \
  X(kCompile, "compile")                      \
  X(kWarning, "warning")

enum class LogTopic {
#define KILN_LOG_ENUM(e, s) e,
  KILN_LOG_TOPICS(KILN_LOG_ENUM)
#undef KILN_LOG_ENUM
};

const char* log_topic_name(LogTopic topic);

/// Enables exactly the topics in `spec` ("recompiles,graph", "all", or "" for none). Warnings are
/// always on. Unknown names are reported once on stderr and ignored. Replaces KILN_LOGS.
void set_logs(std::string_view spec);
bool log_enabled(LogTopic topic);
/// Emits `message` under `topic` if enabled: to the sink if one is set, else to stderr as
/// "[kiln:topic] message".
void log(LogTopic topic, std::string_view message);

using LogSink = std::function<void(LogTopic, std::string_view)>;
/// Redirects log output (tests capture it); an empty function restores stderr.
void set_log_sink(LogSink sink);

}  // namespace kiln
