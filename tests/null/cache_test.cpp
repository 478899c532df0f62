// Persistent cache without a device: the file format round trip, every kind of bad file rejected
// with its reason logged and then rebuilt, atomic writes, directory resolution, an unwritable
// directory, and SPIR-V served from disk with no compile.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/disk_cache.h"
#include "codegen/spirv.h"
#include "kiln/logging.h"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the build tree's temp area, removed afterwards.
class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kiln_cache_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    set_logs("cache");
    set_log_sink([this](LogTopic topic, std::string_view m) {
      std::lock_guard<std::mutex> lock(mu_);
      if (topic == LogTopic::kCache) logs_.emplace_back(m);
    });
  }
  void TearDown() override {
    set_log_sink({});
    set_logs("");
    ::chmod(dir_.c_str(), 0755);
    fs::remove_all(dir_);
  }
  std::string all_logs() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string s;
    for (const std::string& l : logs_) s += l + "\n";
    return s;
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  static void spit(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  /// Corrupts a stored file with `damage`, then checks the next load rejects it with `reason`
  /// in the log, and that storing again (the rebuild) makes it load.
  void expect_rejected_then_rebuilt(const std::function<void(std::string&)>& damage,
                                    const std::string& reason,
                                    const std::string& identity = "dev A") {
    DiskCache cache(dir_);
    ASSERT_TRUE(cache.store(EntryKind::kSpirv, "k1", "dev A", "k1_add", "payload bytes"));
    const fs::path path = cache.path_for(EntryKind::kSpirv, "k1");
    std::string bytes = slurp(path);
    damage(bytes);
    spit(path, bytes);
    EXPECT_FALSE(cache.load(EntryKind::kSpirv, "k1", identity, "k1_add").has_value());
    EXPECT_NE(all_logs().find("spirv k1_add: rejected (" + reason), std::string::npos)
        << all_logs();
    EXPECT_EQ(cache.counters().rejected, 1u);
    ASSERT_TRUE(cache.store(EntryKind::kSpirv, "k1", identity, "k1_add", "rebuilt"));
    EXPECT_EQ(cache.load(EntryKind::kSpirv, "k1", identity, "k1_add"), "rebuilt");
  }

  fs::path dir_;
  std::mutex mu_;
  std::vector<std::string> logs_;
};

TEST_F(CacheTest, RoundTripAndMissReason) {
  DiskCache cache(dir_);
  EXPECT_FALSE(cache.load(EntryKind::kSpirv, "abc", "dev", "k0_relu").has_value());
  EXPECT_NE(all_logs().find("spirv k0_relu: miss (no file)"), std::string::npos) << all_logs();
  std::string payload("\0\1\2binary\xff", 10);
  ASSERT_TRUE(cache.store(EntryKind::kSpirv, "abc", "dev", "k0_relu", payload));
  EXPECT_EQ(cache.load(EntryKind::kSpirv, "abc", "dev", "k0_relu"), payload);
  EXPECT_EQ(cache.path_for(EntryKind::kSpirv, "abc"), dir_ / "spirv" / "abc.kc");
  const CacheCounters c = cache.counters();
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.writes, 1u);
  // Kinds are separate files; an odd key is hashed into a safe name.
  EXPECT_FALSE(cache.load(EntryKind::kEntry, "abc", "dev", "").has_value());
  EXPECT_EQ(cache.path_for(EntryKind::kEntry, "../x y").parent_path(), dir_ / "entries");
}

TEST_F(CacheTest, DecodeNamesEveryMismatch) {
  const std::string good =
      encode_cache_file({.kind = EntryKind::kEntry, .identity = "gpu 1", .key = "key"}, "data");
  const FileFields want{.kind = EntryKind::kEntry, .identity = "gpu 1", .key = "key"};
  EXPECT_EQ(decode_cache_file(good, want).value(), "data");
  auto reason = [&](const FileFields& w) { return decode_cache_file(good, w).status().message(); };
  EXPECT_EQ(reason({.kind = EntryKind::kSpirv, .identity = "gpu 1", .key = "key"}),
            "wrong kind (entry, expected spirv)");
  EXPECT_EQ(reason({.kind = EntryKind::kEntry, .identity = "gpu 1", .key = "other"}),
            "key mismatch (file holds key)");
  EXPECT_EQ(
      reason(
          {.kind = EntryKind::kEntry, .identity = "gpu 1", .key = "key", .kiln_version = "9.9.9"}),
      "written by Kiln " + std::string(kiln_version()) + ", this is Kiln 9.9.9");
  EXPECT_EQ(reason({.kind = EntryKind::kEntry, .identity = "gpu 2", .key = "key"}),
            "foreign driver: file is for 'gpu 1', device is 'gpu 2'");
  EXPECT_EQ(decode_cache_file("KILNCACH", want).status().message(),
            "truncated (8 bytes, the header alone needs 48)");
  EXPECT_EQ(decode_cache_file(good + "x", want).status().message().substr(0, 14), "trailing bytes");
  EXPECT_EQ(decode_cache_file(std::string(64, 'z'), want).status().message(),
            "not a Kiln cache file (bad magic)");
}

TEST_F(CacheTest, TruncatedFileRejectedAndRebuilt) {
  expect_rejected_then_rebuilt([](std::string& b) { b.resize(b.size() - 3); }, "truncated");
}

TEST_F(CacheTest, TruncatedHeaderRejectedAndRebuilt) {
  expect_rejected_then_rebuilt([](std::string& b) { b.resize(20); }, "truncated");
}

TEST_F(CacheTest, FlippedPayloadByteRejectedAndRebuilt) {
  expect_rejected_then_rebuilt([](std::string& b) { b.back() ^= 0x10; }, "checksum mismatch");
}

TEST_F(CacheTest, FlippedHeaderByteRejectedAndRebuilt) {
  // A byte of the identity string: caught by the header checksum.
  expect_rejected_then_rebuilt([](std::string& b) { b[kFixedHeaderBytes + 2] ^= 1; },
                               "header checksum mismatch");
}

TEST_F(CacheTest, WrongFormatVersionRejectedAndRebuilt) {
  expect_rejected_then_rebuilt(
      [](std::string& b) { b[8] = 7; },
      "format version 7, expected " + std::to_string(cache::kFormatVersion));
}

TEST_F(CacheTest, ForeignDriverRejectedAndRebuilt) {
  expect_rejected_then_rebuilt([](std::string&) {},
                               "foreign driver: file is for 'dev A', device is 'dev B'", "dev B");
}

TEST_F(CacheTest, EmptyFileRejected) {
  expect_rejected_then_rebuilt([](std::string& b) { b.clear(); }, "truncated (0 bytes");
}

TEST_F(CacheTest, AtomicWriteLeavesNoTemporaryFiles) {
  DiskCache cache(dir_);
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(cache.store(EntryKind::kSpirv, "same", "dev", "", std::string(1000 + i, 'x')));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_ / "spirv"))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"same.kc"});
  EXPECT_EQ(cache.load(EntryKind::kSpirv, "same", "dev", "")->size(), 1019u);
}

TEST_F(CacheTest, UnwritableDirectoryNeitherCrashesNorRetries) {
  // A regular file where the cache directory should be: not writable, even for root.
  spit(dir_ / "file", "x");
  DiskCache cache(dir_ / "file" / "cache");
  EXPECT_FALSE(cache.store(EntryKind::kSpirv, "k", "dev", "k0", "data"));
  EXPECT_FALSE(cache.store(EntryKind::kSpirv, "k2", "dev", "k1", "data"));
  EXPECT_FALSE(cache.load(EntryKind::kSpirv, "k", "dev", "k0").has_value());
  EXPECT_EQ(cache.counters().write_failures, 1u);  // the second store was not attempted
  EXPECT_NE(all_logs().find("k0: cannot write"), std::string::npos) << all_logs();
  if (::geteuid() != 0) {  // a read-only directory (root ignores the mode)
    ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
    DiskCache ro(dir_ / "sub");
    EXPECT_FALSE(ro.store(EntryKind::kSpirv, "k", "dev", "k0", "data"));
  }
}

TEST_F(CacheTest, UnreadableFileIsRejectedNotFatal) {
  DiskCache cache(dir_);
  fs::create_directories(dir_ / "spirv" / "k.kc");  // a directory where the file should be
  EXPECT_FALSE(cache.load(EntryKind::kSpirv, "k", "dev", "k0").has_value());
  EXPECT_NE(all_logs().find("rejected"), std::string::npos) << all_logs();
}

TEST_F(CacheTest, DisabledCacheDoesNothing) {
  DiskCache cache{fs::path()};
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(cache.store(EntryKind::kSpirv, "k", "dev", "", "x"));
  EXPECT_FALSE(cache.load(EntryKind::kSpirv, "k", "dev", "").has_value());
}

TEST_F(CacheTest, DirectoryResolution) {
  struct SavedEnv {
    const char* name;
    std::optional<std::string> value;
    explicit SavedEnv(const char* n) : name(n) {
      if (const char* v = std::getenv(n)) value = v;
    }
    ~SavedEnv() {
      if (value)
        ::setenv(name, value->c_str(), 1);
      else
        ::unsetenv(name);
    }
  } saved[] = {SavedEnv("KILN_CACHE_DIR"), SavedEnv("XDG_CACHE_HOME"), SavedEnv("HOME")};
  ::setenv("KILN_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(resolve_cache_dir().dir, fs::path("/some/where"));
  for (const char* off : {"off", "OFF", "0", "none", ""}) {
    ::setenv("KILN_CACHE_DIR", off, 1);
    EXPECT_TRUE(resolve_cache_dir().dir.empty()) << off;
  }
  ::unsetenv("KILN_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(resolve_cache_dir().dir, fs::path("/xdg/kiln"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // ignored, as the XDG spec says
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(resolve_cache_dir().dir, fs::path("/home/u/.cache/kiln"));
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  EXPECT_TRUE(resolve_cache_dir().dir.empty());
  EXPECT_NE(resolve_cache_dir().source.find("disabled"), std::string::npos);
}

/// compile_glsl with a persistent key: the first call compiles and writes the file; with the
/// in-process memo bypassed (a source differing only in a comment maps to the same key here),
/// the module comes from disk with no compile.
TEST_F(CacheTest, SpirvFromDiskSkipsTheCompiler) {
  // The global cache is what compile_glsl uses: this test only runs when ctest points it at a
  // scratch directory.
  DiskCache& global = DiskCache::global();
  if (!global.enabled()) GTEST_SKIP() << "KILN_CACHE_DIR disables the cache";
  const std::string key = "nulltest" + std::to_string(::getpid());
  const std::string src =
      "#version 450\nlayout(local_size_x = 1) in;\nlayout(set = 0, binding = 0) buffer B { "
      "float v[]; };\nvoid main() { v[0] = 1.0; }\n";
  auto first = compile_glsl(src, "k0_test", {key, "null device"});
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  const ShaderCompileStats before = shader_compile_stats();
  auto second = compile_glsl(src + "// other\n", "k0_test", {key, "null device"});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(shader_compile_stats().compiles, before.compiles);
  EXPECT_EQ(shader_compile_stats().disk_hits, before.disk_hits + 1);
  // A flipped byte in the file: rejected, compiled again, rewritten.
  const fs::path path = global.path_for(EntryKind::kSpirv, key);
  std::string bytes = slurp(path);
  bytes[bytes.size() - 5] ^= 0x40;
  spit(path, bytes);
  auto third = compile_glsl(src + "// third\n", "k0_test", {key, "null device"});
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*third, *first);
  EXPECT_EQ(shader_compile_stats().compiles, before.compiles + 1);
  EXPECT_NE(all_logs().find("spirv k0_test: rejected (checksum mismatch)"), std::string::npos)
      << all_logs();
  EXPECT_EQ(slurp(path).size(), bytes.size());  // rebuilt file
  fs::remove(path);
}

}  // namespace
}  // namespace kiln::cache

namespace kiln::cache {
namespace {

TEST(CacheSweep, ParsesSizes) {
  EXPECT_EQ(parse_size("1024"), 1024u);
  EXPECT_EQ(parse_size("3K"), 3u << 10);
  EXPECT_EQ(parse_size("512M"), 512ull << 20);
  EXPECT_EQ(parse_size("2gib"), 2ull << 30);
  EXPECT_FALSE(parse_size("").has_value());
  EXPECT_FALSE(parse_size("M").has_value());
  EXPECT_FALSE(parse_size("12 apples").has_value());
  EXPECT_FALSE(parse_size("99999999999999999999").has_value());
}

TEST(CacheSweep, RemovesStaleTemporariesAndEvictsLeastRecentlyUsed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kiln-sweep-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  DiskCache cache(dir);
  const std::string payload(1000, 'x');
  for (const char* key : {"a", "b", "c", "d"})
    ASSERT_TRUE(cache.store(EntryKind::kSpirv, key, "dev", key, payload));
  // Ages: a oldest ... d newest; then a hit on `a` makes it the most recently used.
  const auto now = fs::file_time_type::clock::now();
  int age = 40;
  for (const char* key : {"a", "b", "c", "d"})
    fs::last_write_time(cache.path_for(EntryKind::kSpirv, key), now - std::chrono::minutes(age--));
  ASSERT_TRUE(cache.load(EntryKind::kSpirv, "a", "dev", "a").has_value());
  const fs::path stale = dir / "spirv" / ".x.kc.tmp.1.0.0",
                 fresh = dir / "spirv" / ".y.kc.tmp.2.0.0";
  std::ofstream(stale) << "partial";
  std::ofstream(fresh) << "partial";
  fs::last_write_time(stale, now - std::chrono::hours(2));
  const uint64_t file_bytes = fs::file_size(cache.path_for(EntryKind::kSpirv, "a"));

  const SweepReport r = cache.sweep(2 * file_bytes, std::chrono::hours(1));
  EXPECT_EQ(r.temp_removed, 1u);
  EXPECT_EQ(r.evicted, 2u);
  EXPECT_EQ(r.bytes, 2 * file_bytes);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));  // may belong to a writer still running
  EXPECT_FALSE(fs::exists(cache.path_for(EntryKind::kSpirv, "b")));
  EXPECT_FALSE(fs::exists(cache.path_for(EntryKind::kSpirv, "c")));
  EXPECT_TRUE(cache.load(EntryKind::kSpirv, "a", "dev", "a").has_value());
  EXPECT_TRUE(cache.load(EntryKind::kSpirv, "d", "dev", "d").has_value());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::cache
