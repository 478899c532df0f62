// The differential fuzzer: random well-typed programs (graph_gen.h) run on the CPU interpreter,
// eagerly on Vulkan and through kiln::compile on Vulkan, compared per dtype (docs/testing.md).
//
//   KILN_FUZZ_SEED=S       the seed (default 1); program i of the run is generate(S, i)
//   KILN_FUZZ_SCALE=N      N times the default slice's program count
//   KILN_FUZZ_COUNT=N      exactly N programs
//   KILN_FUZZ_FIRST=K      start at program K (programs K .. K+N-1; a long run in chunks)
//   KILN_FUZZ_ONLY=I       only program I (its listing is printed)
//   KILN_FUZZ_TRACE=1      print each program's index before running it (to find a crash)
//   KILN_FUZZ_KNOWN=1      also generate what known, separately tracked defects break
//   KILN_FUZZ_SHARD=I/N    only the programs whose index is I modulo N (run N processes with
//                          I = 0..N-1 side by side: each program is still generate(S, i))
//
// Every mismatch, crash, validation error or silent interpreter fallback fails the test, with
// the seed, the index, the program's op listing, the max error and the compiled graphs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "fuzz/differential.h"

namespace kiln::fuzz {
namespace {

constexpr uint64_t kDefaultPrograms = 1000;
constexpr int kMaxReports = 8;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

/// KILN_FUZZ_SHARD "I/N" (0 <= I < N): {I, N}; unset: {0, 1}. A malformed value fails.
bool parse_shard(uint64_t* index, uint64_t* count) {
  *index = 0, *count = 1;
  const char* v = std::getenv("KILN_FUZZ_SHARD");
  if (!v || !*v) return true;
  char* end = nullptr;
  *index = std::strtoull(v, &end, 10);
  if (end == v || *end != '/') return false;
  const char* n = end + 1;
  *count = std::strtoull(n, &end, 10);
  return end != n && *end == '\0' && *count > 0 && *index < *count;
}

class DifferentialFuzz : public test::DeviceTest {};

TEST_F(DifferentialFuzz, RandomPrograms) {
  const uint64_t seed = env_u64("KILN_FUZZ_SEED", 1);
  const uint64_t count =
      env_u64("KILN_FUZZ_COUNT", kDefaultPrograms * env_u64("KILN_FUZZ_SCALE", 1));
  const char* only = std::getenv("KILN_FUZZ_ONLY");
  const bool trace = env_u64("KILN_FUZZ_TRACE", 0) != 0;
  GenOptions options;
  options.known_defects = env_u64("KILN_FUZZ_KNOWN", 0) != 0;
  uint64_t first = env_u64("KILN_FUZZ_FIRST", 0), shard = 0, shards = 1;
  uint64_t last = first + count;
  ASSERT_TRUE(parse_shard(&shard, &shards)) << "KILN_FUZZ_SHARD must be I/N with 0 <= I < N, not '"
                                            << std::getenv("KILN_FUZZ_SHARD") << "'";
  if (only && *only) {
    first = std::strtoull(only, nullptr, 10);
    last = first + 1;
    shard = 0, shards = 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const RuntimeCounters c0 = runtime_counters();
  uint64_t programs = 0, calls = 0, with_breaks = 0, dynamic = 0;
  std::vector<uint64_t> failing;
  int reported = 0;
  for (uint64_t i = first; i < last; ++i) {
    if (i % shards != shard) continue;
    const Program p = generate(seed, i, options);
    if (only && *only) std::printf("%s\n", p.str().c_str());
    if (trace) std::fprintf(stderr, "program %llu\n", static_cast<unsigned long long>(i));
    const size_t warnings_before = warnings().size();
    const size_t validation_before = validation_messages().size();
    DiffResult d = check_program(p);
    ++programs;
    calls += static_cast<uint64_t>(d.calls);
    with_breaks += p.has_break ? 1 : 0;
    dynamic += p.sizes.size() > 1 ? 1 : 0;
    std::string why;
    const std::vector<std::string> w = warnings();
    for (size_t k = warnings_before; k < w.size(); ++k)
      if (w[k].find("no device lowering") != std::string::npos &&
          w[k].find("the device has no") == std::string::npos) {
        if (d.ok) why += p.str() + "\n";
        d.ok = false;
        why += "silent interpreter fallback: " + w[k] + "\n";
        break;
      }
    const std::vector<std::string> v = validation_messages();
    if (v.size() > validation_before) {
      if (d.ok) why += p.str() + "\n";
      d.ok = false;
      why += "validation error: " + v[validation_before] + "\n";
    }
    why += d.report;
    if (!d.ok) {
      failing.push_back(i);
      // One line per mismatch (what long runs grep for), the full report for the first few.
      std::printf("mismatch: seed %llu program %llu: %s\n", static_cast<unsigned long long>(seed),
                  static_cast<unsigned long long>(i), why.substr(0, why.find('\n')).c_str());
      std::fflush(stdout);
      if (reported++ < kMaxReports)
        ADD_FAILURE() << "program " << i << " of seed " << seed << ":\n" << why;
    }
    if (programs % 100 == 0) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("progress: %llu programs, %zu mismatching, %.0f s\n",
                  static_cast<unsigned long long>(programs), failing.size(), s);
      std::fflush(stdout);
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const RuntimeCounters c1 = runtime_counters();
  std::string list;
  for (uint64_t i : failing) list += " " + std::to_string(i);
  std::printf("differential fuzz: %llu shader compiles, %llu pipelines created, %llu dispatches\n",
              static_cast<unsigned long long>(c1.shader_compiles - c0.shader_compiles),
              static_cast<unsigned long long>(c1.pipelines_created - c0.pipelines_created),
              static_cast<unsigned long long>(c1.dispatches - c0.dispatches));
  std::printf(
      "differential fuzz: seed %llu, shard %llu/%llu, %llu programs (%llu multi-size, %llu with "
      "graph breaks), %llu compiled calls, %.1f s, %.1f programs/s, %zu mismatching%s\n",
      static_cast<unsigned long long>(seed), static_cast<unsigned long long>(shard),
      static_cast<unsigned long long>(shards), static_cast<unsigned long long>(programs),
      static_cast<unsigned long long>(dynamic), static_cast<unsigned long long>(with_breaks),
      static_cast<unsigned long long>(calls), secs, static_cast<double>(programs) / secs,
      failing.size(), failing.empty() ? "" : (":" + list).c_str());
  RecordProperty("programs", static_cast<int>(programs));
  EXPECT_TRUE(failing.empty()) << failing.size() << " of " << programs
                               << " programs mismatched (indices:" << list << ")";
}

}  // namespace
}  // namespace kiln::fuzz
