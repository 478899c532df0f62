// kiln bench: "start", cold against warm process start. A child process (this executable,
// `kiln bench --child first-call`) builds the seed encoder, calls it once and reports the
// first call's latency (trace, codegen, SPIR-V compile, pipeline creation, the driver's
// compile at first dispatch, and the run). Cold: empty Kiln and Mesa disk caches
// (KILN_CACHE_DIR, MESA_SHADER_CACHE_DIR, XDG_CACHE_HOME all point into a fresh directory).
// Warm: another child with the same directories, now populated by the cold one.
#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "bench/workloads.h"
#include "kiln/kiln.h"
#include "tools/bench.h"

extern char** environ;

namespace kiln::tools::bench {
namespace {

namespace fs = std::filesystem;

int64_t child_seq(const std::string& config) {
  return config == "small" ? 16 : 128;
}

struct ChildRun {
  nlohmann::json report;  // the child's JSON line
  double process_ms = kNaN;
};

/// Runs `exe bench --child first-call --child-config CONFIG` with the three cache variables
/// pointing into `dir`; returns its JSON report and the process's wall time.
ChildRun run_child(const std::string& exe, const std::string& config, const fs::path& dir,
                   const std::string& mode = "first-call", bool prewarm = false) {
  const std::map<std::string, std::string> vars = {
      {"KILN_CACHE_DIR", (dir / "kiln").string()},
      {"MESA_SHADER_CACHE_DIR", (dir / "mesa").string()},
      {"XDG_CACHE_HOME", (dir / "xdg").string()}};
  std::error_code made;
  fs::create_directories(dir, made);  // Mesa creates only the last component of its directory
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (vars.count(key) || key == "MESA_SHADER_CACHE_DISABLE" || key == "MESA_GLSL_CACHE_DISABLE" ||
        key == "KILN_PREWARM" || key == "KILN_BACKGROUND")
      continue;
    env.push_back(std::move(kv));
  }
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  if (prewarm) env.push_back("KILN_PREWARM=1");
  std::vector<std::string> args = {exe, "bench", "--child", mode, "--child-config", config};
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw Error(internal_error("pipe failed"));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  auto t0 = Clock::now();
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw Error(internal_error(fmt::format("cannot start {}: {}", exe, std::strerror(rc))));
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ChildRun run;
  run.process_ms = ms_since(t0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(internal_error(fmt::format("child process failed (status {}): {}", status, out)));
  run.report = nlohmann::json::parse(out.substr(0, out.find('\n')));
  return run;
}

double dir_bytes(const fs::path& dir) {
  std::error_code ec;
  double bytes = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->is_regular_file(ec)) bytes += static_cast<double>(it->file_size(ec));
  return bytes;
}

double num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNaN;
}

}  // namespace

Result bench_start(const Context& ctx, const std::string& self_exe) {
  const std::string config = ctx.quick ? "small" : "full";
  const kiln::bench::EncoderSetup setup =
      ctx.quick ? kiln::bench::small_encoder() : kiln::bench::full_encoder();
  const int rounds = ctx.reps(2, 1);
  Result r{.name = "start",
           .title = fmt::format("the seed encoder's first call in a new process ({} config, "
                                "batch {}, S={}): empty disk caches (cold) vs populated (warm)",
                                config, setup.batch, child_seq(config))};
  r.figure = {"cold_over_warm", "cold / warm first call", kNaN, "x", ">=", 20};
  std::vector<double> cold_first, warm_first, cold_proc, warm_proc, cold_second, warm_second;
  std::vector<double> bg_first, bg_steady, bg_ready, warm_bg_first, prewarm_first, prewarm_steady;
  double kiln_cache = 0, mesa_cache = 0;
  try {
    for (int round = 0; round < rounds; ++round) {
      char tmpl[] = "/tmp/kiln-bench-start-XXXXXX";
      if (!mkdtemp(tmpl)) throw Error(internal_error("mkdtemp failed"));
      const fs::path dir = tmpl;
      try {
        ctx.show(fmt::format("start: cold child process ({}/{}) ...", round + 1, rounds));
        ChildRun cold = run_child(self_exe, config, dir);
        kiln_cache = dir_bytes(dir / "kiln");
        mesa_cache = dir_bytes(dir / "mesa") + dir_bytes(dir / "xdg");
        ctx.show(fmt::format("start: warm child process ({}/{}) ...", round + 1, rounds));
        ChildRun warm = run_child(self_exe, config, dir);
        cold_first.push_back(num(cold.report, "first_call_ms"));
        warm_first.push_back(num(warm.report, "first_call_ms"));
        cold_second.push_back(num(cold.report, "second_call_ms"));
        warm_second.push_back(num(warm.report, "second_call_ms"));
        cold_proc.push_back(cold.process_ms);
        warm_proc.push_back(warm.process_ms);
        ctx.show(
            fmt::format("start: warm child process, background ({}/{}) ...", round + 1, rounds));
        ChildRun warm_bg = run_child(self_exe, config, dir, "first-call-background");
        ctx.show(fmt::format("start: warm child process, prewarmed pipelines ({}/{}) ...",
                             round + 1, rounds));
        ChildRun prewarmed = run_child(self_exe, config, dir, "first-call", true);
        prewarm_first.push_back(num(prewarmed.report, "first_call_ms"));
        prewarm_steady.push_back(num(prewarmed.report, "steady_call_ms"));
        warm_bg_first.push_back(num(warm_bg.report, "first_call_ms"));
        // Background compilation from empty caches, in a directory of its own.
        const fs::path bg_dir = dir / "background";
        ctx.show(
            fmt::format("start: cold child process, background ({}/{}) ...", round + 1, rounds));
        ChildRun bg = run_child(self_exe, config, bg_dir, "first-call-background");
        bg_first.push_back(num(bg.report, "first_call_ms"));
        bg_steady.push_back(num(bg.report, "steady_call_ms"));
        bg_ready.push_back(num(bg.report, "ready_ms"));
        if (round + 1 == rounds) {
          r.add("cold_shader_compiles", "SPIR-V compiles, cold",
                num(cold.report, "shader_compiles"), "");
          r.add("warm_shader_compiles", "SPIR-V compiles, warm",
                num(warm.report, "shader_compiles"), "");
          r.add("kernels", "kernels", num(cold.report, "kernels"), "");
        }
      } catch (...) {
        fs::remove_all(dir);
        throw;
      }
      fs::remove_all(dir);
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  const double cold = median(cold_first), warm = median(warm_first);
  r.add("cold_first_call_ms", "first call, cold", cold, "ms");
  r.add("warm_first_call_ms", "first call, warm", warm, "ms");
  r.add("steady_call_ms", "second call (no compile), warm", median(warm_second), "ms");
  const double bg = median(bg_first), bg_steady_ms = median(bg_steady);
  r.add("background_first_call_ms", "first call, cold, background compilation", bg, "ms");
  r.add("background_ready_ms", "kernels swapped in after (cold, background)", median(bg_ready),
        "ms");
  r.add("background_steady_call_ms", "steady call once swapped in (background run)", bg_steady_ms,
        "ms");
  r.add("background_first_over_steady", "first / steady call, cold, background", bg / bg_steady_ms,
        "x");
  r.add("cold_first_over_steady", "first / steady call, cold", cold / median(warm_second), "x");
  r.add("warm_first_over_steady", "first / steady call, precompiled cache",
        warm / median(warm_second), "x");
  r.add("prewarm_first_call_ms", "first call, precompiled cache, KILN_PREWARM=1",
        median(prewarm_first), "ms");
  r.add("prewarm_first_over_steady", "first / steady call, precompiled, prewarmed",
        median(prewarm_first) / median(prewarm_steady), "x");
  r.add("warm_background_first_call_ms", "first call, precompiled cache, background",
        median(warm_bg_first), "ms");
  r.add("warm_background_first_over_steady", "first / steady call, precompiled, background",
        median(warm_bg_first) / median(warm_second), "x");
  // The first call's cost above a cached call: what the disk caches can remove.
  const double cold_extra = cold - median(cold_second), warm_extra = warm - median(warm_second);
  r.add("cold_extra_ms", "first - second call, cold", cold_extra, "ms");
  r.add("warm_extra_ms", "first - second call, warm", warm_extra, "ms");
  r.add("cold_over_warm_extra", "cold / warm, first - second call", cold_extra / warm_extra, "x");
  r.add("cold_process_ms", "whole child process, cold", median(cold_proc), "ms");
  r.add("warm_process_ms", "whole child process, warm", median(warm_proc), "ms");
  r.add("kiln_cache_mib", "Kiln disk cache after the cold run", kiln_cache / (1024.0 * 1024.0),
        "MiB");
  r.add("mesa_cache_mib", "Mesa shader cache after the cold run", mesa_cache / (1024.0 * 1024.0),
        "MiB");
  r.figure.value = cold / warm;
  return r;
}

int child_main(const std::string& mode, const std::string& config) {
  const bool background = mode == "first-call-background";
  if ((mode != "first-call" && !background) || (config != "full" && config != "small")) {
    fmt::print(stderr, "kiln bench --child: unknown mode '{}' / config '{}'\n", mode, config);
    return 1;
  }
  try {
    if (!vulkan_available()) {
      fmt::print(stderr, "kiln bench --child: no Vulkan device: {}\n", vulkan_status().to_string());
      return 1;
    }
    const kiln::bench::EncoderSetup setup =
        config == "small" ? kiln::bench::small_encoder() : kiln::bench::full_encoder();
    const nn::TextEncoder model = kiln::bench::make_encoder(setup);
    Tensor ids = kiln::bench::encoder_ids(setup, child_seq(config));
    auto f =
        compile([&model](const Tensor& t) { return model(t); },
                {.name = "bench_first_call", .dynamic = Dynamic::kFalse, .background = background});
    const RuntimeCounters before = runtime_counters();
    auto t0 = Clock::now();
    (void)f(ids);
    const double first_ms = ms_since(t0);
    const bool served_by_interpreter = f.stats().calls_while_compiling > 0;
    f.wait_ready();  // the background compile's end (at once without one)
    const double ready_ms = ms_since(t0);
    const RuntimeCounters after = runtime_counters();
    t0 = Clock::now();
    (void)f(ids);
    const double second_ms = ms_since(t0);
    std::vector<double> steady;
    for (int i = 0; i < 3; ++i) {
      t0 = Clock::now();
      (void)f(ids);
      steady.push_back(ms_since(t0));
    }
    nlohmann::json j = {{"first_call_ms", first_ms},
                        {"second_call_ms", second_ms},
                        {"steady_call_ms", median(steady)},
                        {"ready_ms", ready_ms},
                        {"first_served_by_interpreter", served_by_interpreter},
                        {"compiles", f.stats().compiles},
                        {"kernels", f.entries().at(0).kernels.size()},
                        {"shader_compiles", after.shader_compiles - before.shader_compiles},
                        {"pipelines_created", after.pipelines_created - before.pipelines_created}};
    fmt::print("{}\n", j.dump());
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "kiln bench --child: {}\n", e.what());
    return 1;
  }
}

}  // namespace kiln::tools::bench
