// Persistent cache across processes: a compiled function's first call in a child process with an
// empty cache directory compiles; in a second child it takes every SPIR-V module from disk
// (shader_compiles stays 0) and seeds the pipeline cache. Damaged and foreign files are rejected
// with the reason logged and rebuilt; children writing one directory at once leave it valid.
//
// Children are this binary run again with --gtest_filter=CacheChild.Run and
// KILN_CACHE_TEST_OUT=<file>: the child writes "key value" lines and its cache log there.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cache/disk_cache.h"
#include "device/test_util.h"
#include "kiln/kiln.h"

extern char** environ;

namespace kiln {
namespace {

namespace fs = std::filesystem;

Tensor model(const Tensor& x, const Tensor& w, const Tensor& b) {
  return softmax(relu(matmul(x, w) + b), 1);
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 37) % 17) - 0.3f;
  return v;
}

/// The child: one first call of a compiled function, its counters and cache log.
TEST(CacheChild, Run) {
  const char* out_path = std::getenv("KILN_CACHE_TEST_OUT");
  if (out_path == nullptr) GTEST_SKIP() << "runs only as a child of the cache tests";
  std::vector<std::string> logs;
  std::mutex mu;
  set_logs("cache");
  set_log_sink([&](LogTopic topic, std::string_view m) {
    std::lock_guard<std::mutex> lock(mu);
    if (topic == LogTopic::kCache) logs.emplace_back(m);
  });
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  const auto start = Clock::now();
  if (!vulkan_available()) GTEST_SKIP() << vulkan_status().to_string();
  Device dev = Device::vulkan();
  Tensor x = Tensor::from_vector(ramp(24 * 32, 0.05f), {24, 32}, dev);
  Tensor w = Tensor::from_vector(ramp(32 * 16, 0.02f), {32, 16}, dev);
  Tensor b = Tensor::from_vector(ramp(16, 0.1f), {16}, dev);
  const double device_ms = ms_since(start);
  const RuntimeCounters before = runtime_counters();
  const auto call_start = Clock::now();
  auto f = compile(model, {.name = "cache_model"});
  std::vector<float> got = f(x, w, b).to_vector<float>();
  const double first_call_ms = ms_since(call_start);
  const RuntimeCounters after = runtime_counters();
  std::vector<float> want =
      model(x.to(Device::cpu()), w.to(Device::cpu()), b.to(Device::cpu())).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f) << i;
  set_log_sink({});
  std::ofstream out(out_path);
  out << "shader_compiles " << after.shader_compiles - before.shader_compiles << "\n";
  out << "pipelines_created " << after.pipelines_created - before.pipelines_created << "\n";
  out << "kernels " << f.entries().at(0).kernels.size() << "\n";
  out << "first_call_ms " << first_call_ms << "\n";
  out << "device_ms " << device_ms << "\n";
  for (const std::string& l : logs) out << "log " << l << "\n";
}

struct ChildResult {
  int status = -1;
  std::map<std::string, double> values;
  std::string log;  // every "log" line, joined
};

class CacheDevice : public test::DeviceTest {
 protected:
  void SetUp() override {
    test::DeviceTest::SetUp();
    if (IsSkipped()) return;
    char tmpl[] = "/tmp/kiln_cache_dev_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
    test::DeviceTest::TearDown();
  }

  /// Starts this binary as a child on cache directory `cache_dir`; returns its pid.
  pid_t spawn_child(const fs::path& cache_dir, const fs::path& out) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view v(*e);
      if (v.starts_with("KILN_CACHE_DIR=") || v.starts_with("MESA_SHADER_CACHE_DIR=") ||
          v.starts_with("KILN_CACHE_TEST_OUT=") || v.starts_with("KILN_LOGS=") ||
          v.starts_with("KILN_CALIBRATE="))
        continue;
      env.emplace_back(v);
    }
    // The counts below are the child's graph's: no kernel calibration (exec/calibration.h)
    // compiles or stores kernels of its own.
    env.push_back("KILN_CALIBRATE=0");
    env.push_back("KILN_CACHE_DIR=" + cache_dir.string());
    env.push_back("KILN_CACHE_TEST_OUT=" + out.string());
    std::vector<char*> envp;
    for (std::string& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--gtest_filter=CacheChild.Run";
    char* argv[] = {self.data(), filter.data(), nullptr};
    pid_t pid = -1;
    EXPECT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    return pid;
  }

  ChildResult wait_child(pid_t pid, const fs::path& out) {
    ChildResult r;
    ::waitpid(pid, &r.status, 0);
    std::ifstream in(out);
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("log ")) {
        r.log += line.substr(4) + "\n";
        continue;
      }
      std::istringstream ss(line);
      std::string key;
      double v = 0;
      if (ss >> key >> v) r.values[key] = v;
    }
    return r;
  }

  ChildResult run_child(const fs::path& cache_dir) {
    const fs::path out = dir_ / ("out" + std::to_string(children_++));
    return wait_child(spawn_child(cache_dir, out), out);
  }

  static std::vector<fs::path> files_under(const fs::path& dir, const std::string& sub) {
    std::vector<fs::path> files;
    if (!fs::exists(dir / sub)) return files;
    for (const auto& e : fs::directory_iterator(dir / sub)) files.push_back(e.path());
    return files;
  }
  static void corrupt(const fs::path& file, const std::function<void(std::string&)>& damage) {
    std::string bytes;
    {
      std::ifstream f(file, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), {});
    }
    damage(bytes);
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f << bytes;
  }

  fs::path dir_;
  int children_ = 0;
};

#define EXPECT_CHILD_OK(r) \
  ASSERT_TRUE(WIFEXITED((r).status) && WEXITSTATUS((r).status) == 0) << (r).log

TEST_F(CacheDevice, WarmProcessCompilesNothing) {
  const fs::path cache = dir_ / "cache";
  ChildResult cold = run_child(cache);
  EXPECT_CHILD_OK(cold);
  const double kernels = cold.values["kernels"];
  ASSERT_GT(kernels, 0);
  EXPECT_EQ(cold.values["shader_compiles"], kernels) << cold.log;
  EXPECT_NE(cold.log.find("entry graph"), std::string::npos) << cold.log;
  EXPECT_NE(cold.log.find("miss (no file)"), std::string::npos) << cold.log;
  EXPECT_EQ(files_under(cache, "spirv").size(), static_cast<size_t>(kernels));
  EXPECT_EQ(files_under(cache, "entries").size(), 1u);
  EXPECT_EQ(files_under(cache, "pipeline").size(), 1u);

  ChildResult warm = run_child(cache);
  EXPECT_CHILD_OK(warm);
  EXPECT_EQ(warm.values["shader_compiles"], 0) << warm.log;
  EXPECT_NE(
      warm.log.find("hit, no kernel compiled (" + std::to_string(int(kernels)) + " from disk"),
      std::string::npos)
      << warm.log;
  EXPECT_NE(warm.log.find("pipeline cache: hit"), std::string::npos) << warm.log;
  EXPECT_EQ(warm.log.find("rejected"), std::string::npos) << warm.log;
  EXPECT_EQ(warm.log.find(": miss"), std::string::npos) << warm.log;  // glsl, spirv, entry, ...
  EXPECT_NE(warm.log.find("glsl "), std::string::npos) << warm.log;
  std::printf(
      "[ cache    ] first call: cold %.1f ms, warm %.1f ms; device creation: cold %.1f "
      "ms, warm %.1f ms (child processes, KILN_VALIDATE=%s)\n",
      cold.values["first_call_ms"], warm.values["first_call_ms"], cold.values["device_ms"],
      warm.values["device_ms"], std::getenv("KILN_VALIDATE") ? std::getenv("KILN_VALIDATE") : "");
}

TEST_F(CacheDevice, DamagedAndForeignFilesAreRejectedAndRebuilt) {
  const fs::path cache = dir_ / "cache";
  const ChildResult first = run_child(cache);
  EXPECT_CHILD_OK(first);
  const std::vector<fs::path> spirv = files_under(cache, "spirv");
  const std::vector<fs::path> pipeline = files_under(cache, "pipeline");
  ASSERT_FALSE(spirv.empty());
  ASSERT_EQ(pipeline.size(), 1u);

  // A truncated SPIR-V file and a flipped byte in the pipeline cache.
  corrupt(spirv[0], [](std::string& b) { b.resize(b.size() / 2); });
  corrupt(pipeline[0], [](std::string& b) { b[b.size() - 1] ^= 0x5a; });
  ChildResult r = run_child(cache);
  EXPECT_CHILD_OK(r);
  EXPECT_EQ(r.values["shader_compiles"], 1) << r.log;
  EXPECT_NE(r.log.find(": rejected (truncated"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("pipeline cache: rejected (checksum mismatch) - rebuilding"),
            std::string::npos)
      << r.log;

  // Rebuilt: the next process hits everything.
  ChildResult again = run_child(cache);
  EXPECT_CHILD_OK(again);
  EXPECT_EQ(again.values["shader_compiles"], 0) << again.log;
  EXPECT_EQ(again.log.find("rejected"), std::string::npos) << again.log;

  // A pipeline cache written for another driver (valid file, other identity).
  const std::string key = pipeline[0].stem().string();
  {
    const std::string bytes = cache::encode_cache_file({.kind = cache::EntryKind::kPipelineCache,
                                                        .identity = "Other GPU; other driver 1.0",
                                                        .key = key},
                                                       std::string(64, '\0'));
    std::ofstream f(pipeline[0], std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  ChildResult foreign = run_child(cache);
  EXPECT_CHILD_OK(foreign);
  const std::string marker =
      "foreign driver: file is for 'Other GPU; other driver 1.0', device is '";
  const size_t at = foreign.log.find(marker);
  ASSERT_NE(at, std::string::npos) << foreign.log;
  const size_t id_start = at + marker.size();
  const std::string identity =
      foreign.log.substr(id_start, foreign.log.find("'", id_start) - id_start);

  // Kiln's header right, Vulkan's own header for another device: rejected by the second check.
  {
    std::string vk_data(64, '\0');
    const uint32_t header[4] = {32, 1, 0xdead, 0xbeef};
    std::memcpy(vk_data.data(), header, sizeof header);
    const std::string bytes = cache::encode_cache_file(
        {.kind = cache::EntryKind::kPipelineCache, .identity = identity, .key = key}, vk_data);
    std::ofstream f(pipeline[0], std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  ChildResult vk_mismatch = run_child(cache);
  EXPECT_CHILD_OK(vk_mismatch);
  EXPECT_NE(vk_mismatch.log.find("pipeline cache: rejected (Vulkan header is for vendor/device"),
            std::string::npos)
      << vk_mismatch.log;
  ChildResult healed = run_child(cache);
  EXPECT_CHILD_OK(healed);
  EXPECT_NE(healed.log.find("pipeline cache: hit"), std::string::npos) << healed.log;
}

TEST_F(CacheDevice, ConcurrentWritersLeaveEveryFileValid) {
  const fs::path cache = dir_ / "cache";
  constexpr int kChildren = 3;
  std::vector<std::pair<pid_t, fs::path>> children;
  for (int i = 0; i < kChildren; ++i) {
    const fs::path out = dir_ / ("concurrent" + std::to_string(i));
    children.emplace_back(spawn_child(cache, out), out);
  }
  for (auto& [pid, out] : children) {
    const ChildResult r = wait_child(pid, out);
    EXPECT_CHILD_OK(r);
  }
  // No temporary file survives, and a later process finds every file valid.
  for (const char* sub : {"spirv", "entries", "pipeline"})
    for (const fs::path& p : files_under(cache, sub))
      EXPECT_EQ(p.filename().string().find(".tmp."), std::string::npos) << p;
  ChildResult after = run_child(cache);
  EXPECT_CHILD_OK(after);
  EXPECT_EQ(after.values["shader_compiles"], 0) << after.log;
  EXPECT_EQ(after.log.find("rejected"), std::string::npos) << after.log;
  EXPECT_NE(after.log.find("pipeline cache: hit"), std::string::npos) << after.log;
}

}  // namespace
}  // namespace kiln
