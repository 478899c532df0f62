// Many threads using Kiln at once (docs/runtime.md, "Threads"): eager ops, compiled functions
// of their own, the SAME compiled functions from every thread (new shapes, recompiles, replays,
// a graph break), and tensors made in one thread consumed in another. Every result is checked
// exactly against a plain C++ reference: the data are small integers held in f32, so every op
// below is exact. The validation layer's messages (KILN_VALIDATE=1, among them its threading
// checks) fail the test through the DeviceTest fixture.
//
// KILN_STRESS_CALLS sets the calls per thread (default kDefaultCalls; the long run uses 1000).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "device/test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

constexpr int kThreads = 8;
constexpr int kDefaultCalls = 40;

/// A persistent cache of this process's own, empty at the start (inside KILN_CACHE_DIR, or the
/// temporary directory; left alone when KILN_CACHE_DIR disables the cache): every kernel is
/// compiled by glslang and the driver on some thread and stored while others read the cache.
/// Set before any Kiln call (the cache directory is read once), removed at exit after the
/// default device (a later static) has saved its pipeline cache into it.
class FreshCache {
 public:
  FreshCache() {
    const char* base = std::getenv("KILN_CACHE_DIR");
    if (base != nullptr && !std::filesystem::path(base).is_absolute()) return;  // "off", ...
    const std::filesystem::path root =
        base != nullptr ? std::filesystem::path(base) : std::filesystem::temp_directory_path();
    dir_ = root / ("threads_test_" + std::to_string(::getpid()));
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    ::setenv("KILN_CACHE_DIR", dir_.c_str(), 1);
  }
  ~FreshCache() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::filesystem::path dir_;
};
const FreshCache fresh_cache;

int calls_per_thread() {
  const char* v = std::getenv("KILN_STRESS_CALLS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : kDefaultCalls;
}

/// A host matrix of small integers, row-major.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;
  float at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

Mat random_mat(std::mt19937& rng, int64_t rows, int64_t cols, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  Mat m{rows, cols, std::vector<float>(static_cast<size_t>(rows * cols))};
  for (float& x : m.v) x = static_cast<float>(d(rng));
  return m;
}

Tensor on_device(const Mat& m) {
  return Tensor::from_vector(m.v, {m.rows, m.cols}, Device::vulkan());
}

// ---- the functions, and their references in plain C++ ---------------------------------------

/// Shared by every thread; Dynamic::kAuto: a static compile, then a symbolic recompile.
Tensor mlp(const Tensor& x, const Tensor& w, const Tensor& b) {
  return relu(matmul(x, w) + b) - 1.0;
}
std::vector<float> mlp_ref(const Mat& x, const Mat& w, const Mat& b) {
  std::vector<float> out;
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t c = 0; c < w.cols; ++c) {
      float acc = 0;
      for (int64_t k = 0; k < x.cols; ++k) acc += x.at(r, k) * w.at(k, c);
      out.push_back(std::max(acc + b.at(0, c), 0.f) - 1.f);
    }
  return out;
}

/// Shared, Dynamic::kFalse: every new shape is a recompile.
Tensor rowsq(const Tensor& x) {
  return sum(x * x, {-1}, true) + x;
}
std::vector<float> rowsq_ref(const Mat& x) {
  std::vector<float> out;
  for (int64_t r = 0; r < x.rows; ++r) {
    float s = 0;
    for (int64_t c = 0; c < x.cols; ++c) s += x.at(r, c) * x.at(r, c);
    for (int64_t c = 0; c < x.cols; ++c) out.push_back(s + x.at(r, c));
  }
  return out;
}

/// Shared, with a graph break: the sign of the sum steers host control flow (a guarded read).
Tensor branchy(const Tensor& x) {
  Tensor s = sum(x, {0, 1});
  if (s > 0.0) return x * 3.0 - s;
  return x * -1.0 + s;
}
std::vector<float> branchy_ref(const Mat& x) {
  float s = 0;
  for (float v : x.v) s += v;
  std::vector<float> out;
  for (float v : x.v) out.push_back(s > 0 ? v * 3.f - s : -v + s);
  return out;
}

/// Each thread compiles its own.
Tensor own_fn(const Tensor& x, const Tensor& y) {
  return maximum(x, y) * 2.0 - y;
}
std::vector<float> own_ref(const Mat& x, const Mat& y) {
  std::vector<float> out;
  for (size_t i = 0; i < x.v.size(); ++i) out.push_back(std::max(x.v[i], y.v[i]) * 2.f - y.v[i]);
  return out;
}

/// Eager: one dispatch per op.
Tensor eager_ops(const Tensor& x, const Tensor& y) {
  return (x + y) * 2.0 - relu(y);
}
std::vector<float> eager_ref(const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<float> out;
  for (size_t i = 0; i < x.size(); ++i) out.push_back((x[i] + y[i]) * 2.f - std::max(y[i], 0.f));
  return out;
}

// ---- bookkeeping -----------------------------------------------------------------------------

/// A device tensor and the values it must hold for as long as it lives.
struct Known {
  Tensor t;
  std::vector<float> want;
  Shape shape;
};

/// Results passed between threads: one thread's outputs become another's inputs.
class Mailbox {
 public:
  void put(Known k) {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(std::move(k));
    if (items_.size() > 32) items_.pop_front();
  }
  bool take(Known* out) {
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.empty()) return false;
    *out = std::move(items_.front());
    items_.pop_front();
    return true;
  }

 private:
  std::mutex mu_;
  std::deque<Known> items_;
};

class Failures {
 public:
  void add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (messages_.size() < 10) messages_.push_back(what);
    ++count_;
  }
  int count() {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }
  std::string report() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string s;
    for (const std::string& m : messages_) s += "\n  " + m;
    return s;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> messages_;
  int count_ = 0;
};

/// "" when `got` equals `want` exactly, else the first difference.
std::string diff(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "[" + std::to_string(i) + "] is " + std::to_string(got[i]) + ", expected " +
             std::to_string(want[i]);
  return "";
}

class Threads : public test::DeviceTest {};

TEST_F(Threads, ManyThreadsCompileReplayAndRunEagerOpsAtOnce) {
  const int calls = calls_per_thread();
  std::mt19937 setup(7);
  // Made here, used by every thread.
  const Mat w = random_mat(setup, 8, 5, -2, 2), b = random_mat(setup, 1, 5, -3, 3);
  const Tensor wd = on_device(w), bd = Tensor::from_vector(b.v, {5}, Device::vulkan());

  auto shared_mlp = compile(mlp, {.name = "shared_mlp"});
  auto shared_rowsq =
      compile(rowsq, {.name = "shared_rowsq", .recompile_limit = 16, .dynamic = Dynamic::kFalse});
  auto shared_branchy = compile(branchy, {.name = "shared_branchy", .dynamic = Dynamic::kFalse});
  const std::vector<int64_t> mlp_rows = {1, 2, 3, 5, 8, 13, 21, 34};
  const std::vector<Shape> rowsq_shapes = {{2, 3}, {4, 3}, {3, 7}, {1, 5}, {6, 6}, {9, 2}};

  Mailbox mailbox;
  Failures failures;
  std::atomic<uint64_t> mlp_calls{0}, rowsq_calls{0}, branchy_calls{0};
  std::atomic<uint64_t> own_calls{0}, eager_calls{0}, received{0};

  auto worker = [&](int id) {
    std::mt19937 rng(1000 + static_cast<uint32_t>(id));
    auto own = compile(own_fn, {.name = "own_" + std::to_string(id)});
    std::deque<Known> held;  // this thread's recent results, checked again later
    auto check = [&](const char* what, int call, const Tensor& t, const std::vector<float>& want,
                     const Shape& shape) {
      std::string why;
      if (t.shape() != shape) {
        why = "shape " + shape_str(t.shape()) + ", expected " + shape_str(shape);
      } else {
        why = diff(t.to_vector<float>(), want);
      }
      if (!why.empty())
        failures.add("thread " + std::to_string(id) + " call " + std::to_string(call) + " " + what +
                     ": " + why);
      return why.empty();
    };
    for (int call = 0; call < calls && failures.count() == 0; ++call) {
      try {
        const int kind = std::uniform_int_distribution<int>(0, 6)(rng);
        switch (kind) {
          case 0: {  // the shared function: new shapes, its symbolic recompile, replays
            const int64_t rows = mlp_rows[rng() % mlp_rows.size()];
            const Mat x = random_mat(rng, rows, 8, -3, 3);
            Tensor y = shared_mlp(on_device(x), wd, bd);
            ++mlp_calls;
            std::vector<float> want = mlp_ref(x, w, b);
            if (check("shared_mlp", call, y, want, {rows, 5}))
              held.push_back({y, std::move(want), {rows, 5}});
            break;
          }
          case 1: {  // the shared static function: each new shape recompiles
            const Shape shape = rowsq_shapes[rng() % rowsq_shapes.size()];
            const Mat x = random_mat(rng, shape[0], shape[1], -4, 4);
            Tensor y = shared_rowsq(on_device(x));
            ++rowsq_calls;
            std::vector<float> want = rowsq_ref(x);
            if (check("shared_rowsq", call, y, want, shape))
              mailbox.put({y, std::move(want), shape});
            break;
          }
          case 2: {  // the graph break: a guarded host read picks the branch
            const Mat x = random_mat(rng, 3, 4, -2, 2);
            Tensor y = shared_branchy(on_device(x));
            ++branchy_calls;
            check("shared_branchy", call, y, branchy_ref(x), {3, 4});
            break;
          }
          case 3: {  // this thread's own compiled function, at a few shapes
            const int64_t n = 2 + static_cast<int64_t>(rng() % 3);
            const Mat x = random_mat(rng, n, 4, -5, 5), y = random_mat(rng, n, 4, -5, 5);
            Tensor r = own(on_device(x), on_device(y));
            ++own_calls;
            std::vector<float> want = own_ref(x, y);
            if (check("own", call, r, want, {n, 4})) mailbox.put({r, std::move(want), {n, 4}});
            break;
          }
          case 4: {  // eager ops on fresh data
            const Mat x = random_mat(rng, 4, 6, -6, 6), y = random_mat(rng, 4, 6, -6, 6);
            Tensor r = eager_ops(on_device(x), on_device(y));
            ++eager_calls;
            std::vector<float> want = eager_ref(x.v, y.v);
            if (check("eager", call, r, want, {4, 6})) held.push_back({r, std::move(want), {4, 6}});
            break;
          }
          default: {  // another thread's result: still intact, and usable here
            Known k;
            if (!mailbox.take(&k)) break;
            ++received;
            if (!check("received", call, k.t, k.want, k.shape)) break;
            const Mat y = random_mat(rng, k.shape[0], k.shape[1], -3, 3);
            Tensor r = eager_ops(k.t, on_device(y));
            check("eager on received", call, r, eager_ref(k.want, y.v), k.shape);
            Mat as_mat{k.shape[0], k.shape[1], k.want};
            Tensor q = own(k.t, on_device(y));
            check("own on received", call, q, own_ref(as_mat, y), k.shape);
            break;
          }
        }
        // Results held across later calls (of this and other threads) keep their values.
        while (held.size() > 4) {
          const Known& k = held.front();
          check("held result", call, k.t, k.want, k.shape);
          held.pop_front();
        }
      } catch (const std::exception& e) {
        failures.add("thread " + std::to_string(id) + " call " + std::to_string(call) +
                     " threw: " + e.what());
      }
    }
    for (const Known& k : held) check("held result at the end", calls, k.t, k.want, k.shape);
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(failures.count(), 0) << failures.report();
  std::printf(
      "%d threads x %d calls: shared_mlp %llu, shared_rowsq %llu, shared_branchy %llu, "
      "own %llu, eager %llu, received from another thread %llu\n",
      kThreads, calls, static_cast<unsigned long long>(mlp_calls.load()),
      static_cast<unsigned long long>(rowsq_calls.load()),
      static_cast<unsigned long long>(branchy_calls.load()),
      static_cast<unsigned long long>(own_calls.load()),
      static_cast<unsigned long long>(eager_calls.load()),
      static_cast<unsigned long long>(received.load()));
  for (const auto* n :
       {&mlp_calls, &rowsq_calls, &branchy_calls, &own_calls, &eager_calls, &received})
    EXPECT_GT(n->load(), 0u);

  // Every call is counted once, as a cache hit, a compile or an eager call.
  auto consistent = [](const CompileStats& s, uint64_t made, const char* name) {
    EXPECT_EQ(s.calls, made) << name;
    EXPECT_EQ(s.cache_hits + s.compiles + s.eager_calls, s.calls) << name;
  };
  consistent(shared_mlp.stats(), mlp_calls, "shared_mlp");
  consistent(shared_rowsq.stats(), rowsq_calls, "shared_rowsq");
  consistent(shared_branchy.stats(), branchy_calls, "shared_branchy");
  // Each distinct shape of the static function compiles once, however many threads met it at
  // the same time; the branchy function has one entry per branch.
  EXPECT_LE(shared_rowsq.stats().compiles, rowsq_shapes.size());
  EXPECT_GT(shared_rowsq.stats().recompiles, 0u);
  EXPECT_LE(shared_branchy.stats().compiles, 2u);
  EXPECT_EQ(shared_rowsq.stats().eager_calls, 0u);
  EXPECT_EQ(shared_branchy.stats().eager_calls, 0u);
  EXPECT_GT(shared_branchy.stats().graph_breaks, 0u);
}

}  // namespace
}  // namespace kiln
