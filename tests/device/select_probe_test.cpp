// Adversarial probes of masked_select and nonzero with data-dependent (unbacked) lengths:
// one compiled function called with new data and new shapes (lengths 0, 1, 2, all), results
// used by many later ops, several selections per function, outputs reordered / repeated /
// dropped, concurrent callers, background compilation, check mode, CPU tensors through
// compile, special values (NaN, -0.0, integer extremes, bool, f16), the length read as a
// number (specialised, checked at every replay), and shape decisions inside ops that need a
// guard on the length (a clear "data-dependent size" error, never a crash or a wrong answer). Every
// selection is compared bit for bit with the eager CPU result.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

class DeviceSelectProbe : public test::DeviceOpTest {};

std::vector<uint8_t> bytes_of(const Tensor& t) {
  Tensor c = t.to(Device::cpu());
  std::vector<uint8_t> b(c.meta().nbytes());
  if (!b.empty()) c.copy_to(b.data(), b.size());
  return b;
}

/// Same dtype, shape and bytes (NaN payloads and -0.0 included).
void expect_same(const Tensor& got, const Tensor& want, const std::string& label) {
  ASSERT_TRUE(got.defined()) << label;
  ASSERT_EQ(got.meta(), want.meta())
      << label << ": " << got.meta().str() << " vs " << want.meta().str();
  EXPECT_TRUE(bytes_of(got) == bytes_of(want)) << label << ": values differ";
}

void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                 const std::string& label) {
  ASSERT_EQ(got.size(), want.size()) << label;
  for (size_t i = 0; i < got.size(); ++i)
    expect_same(got[i], want[i], label + " output " + std::to_string(i));
}

/// A bool mask of `n` elements with exactly the positions in `on` set.
Tensor mask_of(const Shape& shape, const std::vector<int64_t>& on) {
  std::vector<uint8_t> v(static_cast<size_t>(numel(shape)), 0);
  for (int64_t i : on) v[static_cast<size_t>(i)] = 1;
  return Tensor::from_bytes(DType::kBool, shape, v.data(), v.size());
}

// ---- one function, new data and new shapes ---------------------------------------------------

TEST_F(DeviceSelectProbe, NewDataAndShapesEveryCall) {
  for (Dynamic dyn : {Dynamic::kTrue, Dynamic::kAuto, Dynamic::kFalse}) {
    auto fn = compile([](const Tensor& x, const Tensor& m) { return masked_select(x, m); },
                      {.name = "ms_dyn", .dynamic = dyn});
    struct Call {
      Shape shape;
      std::vector<int64_t> on;  // empty and all = -1: every element
      bool all = false;
    };
    const std::vector<Call> calls = {
        {{7}, {}},        {{7}, {3}},    {{7}, {0, 6}},     {{7}, {}, true},    {{13}, {1, 2, 12}},
        {{2}, {}},        {{2}, {1}},    {{2}, {}, true},   {{1}, {}},          {{1}, {0}},
        {{0}, {}},        {{100}, {99}}, {{5, 6}, {0, 29}}, {{5, 6}, {}, true}, {{3, 1, 4}, {5}},
        {{2049}, {2048}}, {{7}, {2, 3}},
    };
    int k = 0;
    for (const Call& c : calls) {
      const std::string at = "dynamic=" + std::to_string(static_cast<int>(dyn)) + " call " +
                             std::to_string(k++) + " " + shape_str(c.shape);
      Tensor x = rnd(DType::kF32, c.shape, Dist::uniform(-9, 9));
      std::vector<int64_t> on = c.on;
      if (c.all)
        for (int64_t i = 0; i < numel(c.shape); ++i) on.push_back(i);
      Tensor m = mask_of(c.shape, on);
      test::poison_device_memory(1 << 16);
      try {
        Tensor got = fn(x.to(Device::vulkan()), m.to(Device::vulkan()));
        expect_same(got, masked_select(x, m), at);
      } catch (const Error& e) {
        ADD_FAILURE() << at << " threw: " << e.what();
      }
    }
  }
}

TEST_F(DeviceSelectProbe, ThresholdScalarAndNonzeroNewShapes) {
  auto fn = compile(
      [](const Tensor& x) {
        Tensor s = masked_select(x, x > 0.5);
        return std::vector<Tensor>{s, nonzero(x > 0.5), s * 2};
      },
      {.name = "ms_nz_dyn", .dynamic = Dynamic::kTrue});
  auto ref = [](const Tensor& x) {
    Tensor s = masked_select(x, x > 0.5);
    return std::vector<Tensor>{s, nonzero(x > 0.5), s * 2};
  };
  for (const Shape& shape :
       std::vector<Shape>{{4, 5}, {4, 5}, {9, 3}, {2, 2}, {3, 7}, {40, 41}, {6, 2}}) {
    for (double lo : {-1.0, 0.0, 0.6}) {  // some, many, all selected
      Tensor x = rnd(DType::kF32, shape, Dist::uniform(lo, 1));
      const std::string at = shape_str(shape) + " lo=" + std::to_string(lo);
      try {
        expect_same(fn(x.to(Device::vulkan())), ref(x), at);
      } catch (const Error& e) {
        ADD_FAILURE() << at << " threw: " << e.what();
      }
    }
    // Exactly one and none selected.
    Tensor one = Tensor::full(shape, 0.0, DType::kF32);
    std::vector<float> v = one.to_vector<float>();
    v.back() = 1;
    one = Tensor::from_vector(v, shape);
    expect_same(fn(one.to(Device::vulkan())), ref(one), shape_str(shape) + " one");
    Tensor none = Tensor::full(shape, 0.0, DType::kF32);
    expect_same(fn(none.to(Device::vulkan())), ref(none), shape_str(shape) + " none");
  }
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
}

// ---- the result used by later ops -------------------------------------------------------------

std::vector<Tensor> later_ops(const Tensor& x, const Tensor& y, const Tensor& w) {
  Tensor s = masked_select(x, x > 0);
  Tensor col = reshape(s, {-1, 1});
  Tensor nz = nonzero(x > 0);
  return {
      reshape(s, {-1}),                               // 0
      unsqueeze(s, 0),                                // 1
      matmul(col, w),                                 // 2: [u, 1] x [1, 3], exact
      concat({s, y}, 0),                              // 3
      concat({y, s, s}, 0),                           // 4
      s > 0.5,                                        // 5
      masked_select(s, s > 0.5),                      // 6: a selection of a selection
      nonzero(s > 0.5),                               // 7
      masked_select(nz, nz > 0),                      // 8: of nonzero's coordinates
      cast(s, DType::kI32),                           // 9
      where(s > 1, s, -s),                            // 10
      arange(s.size(0), DType::kI64, Device::cpu()),  // 11: arange of the length (cpu device arg)
      expand(unsqueeze(s, 0), {2, s.size(0)}),        // 12
      permute(expand(unsqueeze(s, 0), {3, s.size(0)}), {1, 0}),  // 13
  };
}

std::vector<Tensor> later_reductions(const Tensor& x) {
  Tensor s = masked_select(x, x > 0);
  return {sum(s, {0}), mean(s, {0}), max(concat({s, scalar(-100.0) * ones({1})}, 0), {0}),
          matmul(unsqueeze(s, 0), unsqueeze(s, 1)), cumsum(s, 0)};
}

TEST_F(DeviceSelectProbe, ResultUsedByLaterOps) {
  auto fn = compile(later_ops, {.name = "later_ops"});
  auto fn_dyn = compile(later_ops, {.name = "later_ops_dyn", .dynamic = Dynamic::kTrue});
  auto fn_red = compile(later_reductions, {.name = "later_red"});
  for (int call = 0; call < 6; ++call) {
    // Lengths: many, then 0, 1, 2 and all.
    double lo = call == 1 ? -2 : call == 4 ? 0.01 : -1;
    Tensor x = rnd(DType::kF32, {6, 7}, Dist::uniform(lo, 1));
    if (call == 2 || call == 3) {
      std::vector<float> v(42, -1.0f);
      v[5] = 0.75f;
      if (call == 3) v[40] = 0.25f;
      x = Tensor::from_vector(v, {6, 7});
    }
    Tensor y = rnd(DType::kF32, {5}, Dist::uniform(-1, 1));
    Tensor w = rnd(DType::kF32, {1, 3}, Dist::uniform(-1, 1));
    const std::string at = "call " + std::to_string(call);
    std::vector<Tensor> want;
    try {
      want = later_ops(x, y, w);
    } catch (const Error& e) {
      ADD_FAILURE() << at << " [cpu] threw: " << e.what();
      continue;
    }
    for (auto* f : {&fn, &fn_dyn}) {
      try {
        std::vector<Tensor> got =
            (*f)(x.to(Device::vulkan()), y.to(Device::vulkan()), w.to(Device::vulkan()));
        // arange's device: a traced arange of a symbolic length on the cpu; compare values.
        got[11] = got[11].to(Device::cpu());
        expect_same(got, want, at);
      } catch (const Error& e) {
        ADD_FAILURE() << at << " threw: " << e.what();
      }
    }
    try {
      std::vector<Tensor> want_r = later_reductions(x);
      std::vector<Tensor> got_r = fn_red(x.to(Device::vulkan()));
      ASSERT_EQ(got_r.size(), want_r.size());
      for (size_t i = 0; i < got_r.size(); ++i)
        test::expect_close(got_r[i], want_r[i], Tol{1e-5, 1e-5},
                           at + " reduction " + std::to_string(i));
    } catch (const Error& e) {
      ADD_FAILURE() << at << " reductions threw: " << e.what();
    }
  }
  EXPECT_EQ(fn.stats().compiles, 1u);
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
}

TEST_F(DeviceSelectProbe, NonzeroCoordinatesIndexTheData) {
  // index_select / gather_nd with nonzero's coordinates give the selected elements again.
  auto via_index = [](const Tensor& x) {
    Tensor nz = nonzero(x);                           // [u, 2]
    Tensor rows = reshape(slice(nz, 1, 0, 1), {-1});  // [u]
    Tensor cols = reshape(slice(nz, 1, 1, 2), {-1});
    Tensor picked_rows = index_select(x, 0, rows);  // [u, C]
    Tensor values = gather_nd(x, nz);               // [u]
    Tensor flat = reshape(x, {-1});
    Tensor lin = rows * x.size(1) + cols;
    return std::vector<Tensor>{picked_rows, values, index_select(flat, 0, lin),
                               masked_select(x, ne(x, scalar(0.0)))};
  };
  auto fn = compile(via_index, {.name = "nz_index"});
  auto fn_dyn = compile(via_index, {.name = "nz_index_dyn", .dynamic = Dynamic::kTrue});
  for (const Shape& shape : std::vector<Shape>{{5, 4}, {3, 9}}) {
    for (double keep : {0.0, 0.05, 0.5, 1.0}) {
      Tensor k = rnd(DType::kF32, shape, Dist::uniform(0, 1)) < keep;
      Tensor x = where(k, rnd(DType::kF32, shape, Dist::uniform(1, 2)), zeros(shape));
      const std::string at = shape_str(shape) + " keep=" + std::to_string(keep);
      std::vector<Tensor> want = via_index(x);
      expect_same(want[1], want[3], at + " cpu: gather_nd vs masked_select");
      for (auto* f : {&fn, &fn_dyn}) {
        try {
          expect_same((*f)(x.to(Device::vulkan())), want, at);
        } catch (const Error& e) {
          ADD_FAILURE() << at << " threw: " << e.what();
        }
      }
    }
  }
}

// ---- decisions that need a guard on the length ------------------------------------------------

void expect_data_dependent(const std::function<Tensor(const Tensor&, const Tensor&)>& f,
                           const std::string& label) {
  Tensor a = Tensor::from_vector(std::vector<float>{1, -2, 3, 4, -5, 6}, {6}).to(Device::vulkan());
  Tensor b = Tensor::from_vector(std::vector<float>{-1, 2, 3, -4, 5, 6}, {6}).to(Device::vulkan());
  auto fn = compile(f, {.name = "guard_" + label});
  for (int call = 0; call < 2; ++call) {
    try {
      Tensor r = fn(a, b);
      ADD_FAILURE() << label << " call " << call << ": no error, got " << r.str();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("data-dependent size"), std::string::npos)
          << label << " call " << call << ": " << e.what();
    }
  }
}

TEST_F(DeviceSelectProbe, GuardsOnTheLengthAreErrors) {
  expect_data_dependent(
      [](const Tensor& a, const Tensor& b) {
        return masked_select(a, a > 0) + masked_select(b, b > 0);  // lengths equal?
      },
      "add");
  expect_data_dependent(
      [](const Tensor& a, const Tensor& b) {
        Tensor s = masked_select(a, a > 0);
        return masked_select(s, masked_select(b, b > 0) > 0);  // mask of another length
      },
      "mask_len");
  expect_data_dependent(
      [](const Tensor& a, const Tensor&) {
        Tensor s = masked_select(a, a > 0);
        return reshape(s, {2, -1});  // u % 2 == 0?
      },
      "reshape2");
  expect_data_dependent(
      [](const Tensor& a, const Tensor& b) {
        Tensor s = masked_select(a, a > 0);
        return matmul(unsqueeze(s, 0), unsqueeze(masked_select(b, b > 0), 1));
      },
      "matmul_k");
}

// Reading the length as a number (size(), numel(), shape() in a branch) runs the graph that
// computes it and specialises the rest of the trace on the value read, with a guard that every
// replay checks at that point: the same length replays, another one traces again.
TEST_F(DeviceSelectProbe, ReadingTheLengthSpecialisesWithAReplayGuard) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> bodies = {
      {"size_int",
       [](const Tensor& a) {
         Tensor s = masked_select(a, a > 0);
         return s * static_cast<double>(s.size(0));
       }},
      {"numel",
       [](const Tensor& a) {
         Tensor s = masked_select(a, a > 0);
         return s * static_cast<double>(s.numel());
       }},
      {"shape_branch", [](const Tensor& a) {
         Tensor s = masked_select(a, a > 0);
         return s.shape()[0] > 3 ? s : -s;
       }}};
  for (const auto& [label, body] : bodies) {
    auto fn = compile(body, {.name = "read_" + label});
    size_t calls = 0;
    for (int len : {4, 4, 2, 4, 0, 2, 6}) {
      std::vector<float> v(6, -1.0f);
      for (int i = 0; i < len; ++i) v[static_cast<size_t>(i)] = 0.5f + static_cast<float>(i);
      const Tensor a = Tensor::from_vector(v, {6});
      expect_same(fn(a.to(Device::vulkan())), body(a), label + " length " + std::to_string(len));
      ++calls;
    }
    const CompileStats st = fn.stats();
    EXPECT_EQ(st.calls, calls) << label;
    EXPECT_EQ(st.compiles, 4u) << label;  // lengths 4, 2, 0, 6; the repeats replay
    EXPECT_EQ(st.graph_breaks, 0u) << label;
  }
}

TEST_F(DeviceSelectProbe, SliceOfTheLength) {
  // slice(s, 0, 0, 2) is s[:2]: min(u, 2) elements, whatever the length.
  auto body = [](const Tensor& a) {
    Tensor s = masked_select(a, a > 0);
    return std::vector<Tensor>{slice(s, 0, 0, 2), slice(s, 0, 1, 3), slice(s, 0, -2, 1000)};
  };
  for (Dynamic dyn : {Dynamic::kAuto, Dynamic::kTrue}) {
    auto fn = compile(body, {.name = "slice_len", .dynamic = dyn});
    for (int len : {4, 1, 0, 2, 3, 6}) {
      std::vector<float> v(6, -1.0f);
      for (int i = 0; i < len; ++i) v[static_cast<size_t>(i)] = 1.0f + static_cast<float>(i);
      Tensor a = Tensor::from_vector(v, {6});
      const std::string at =
          "dynamic " + std::to_string(static_cast<int>(dyn)) + " length " + std::to_string(len);
      std::vector<Tensor> want = body(a);
      try {
        expect_same(fn(a.to(Device::vulkan())), want, at);
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("data-dependent size"), std::string::npos)
            << at << ": " << e.what();
      }
    }
  }
}

// ---- several selections; outputs reordered, repeated, dropped ---------------------------------

std::vector<Tensor> several(const Tensor& x, const Tensor& y) {
  Tensor a = masked_select(x, x > 0);
  Tensor b = masked_select(y, y < 0);
  Tensor c = masked_select(x * y, x * y > 0.25);  // not returned itself
  Tensor d = nonzero(y > 0.5);
  Tensor unused = masked_select(y, y > 0.9);  // never used
  (void)unused;
  return {b, a, a, sum(c, {0}) * 0 + scalar(3.0) * ones({}), d, concat({b, a}, 0), x, b, y * 2};
}

TEST_F(DeviceSelectProbe, SeveralSelectionsReorderedRepeatedDropped) {
  auto fn = compile(several, {.name = "several"});
  auto fn_dyn = compile(several, {.name = "several_dyn", .dynamic = Dynamic::kTrue});
  for (int call = 0; call < 6; ++call) {
    const int64_t n = call < 3 ? 33 : 17 + call;
    double lo = call == 1 ? 0.01 : -1, hi = call == 2 ? -0.01 : 1;
    Tensor x = rnd(DType::kF32, {n}, Dist::uniform(lo, hi));
    Tensor y = rnd(DType::kF32, {n}, Dist::uniform(-1, 1));
    const std::string at = "call " + std::to_string(call);
    std::vector<Tensor> want = several(x, y);
    for (auto* f : {&fn, &fn_dyn}) {
      try {
        std::vector<Tensor> got = (*f)(x.to(Device::vulkan()), y.to(Device::vulkan()));
        expect_same(got, want, at);
        // The two returns of `a` are usable independently.
        if (got.size() == want.size() && got[1].numel() > 0) {
          Tensor a2 = got[2] + 1;
          expect_same(got[1], want[1], at + " a after use");
          expect_same(a2, want[2] + 1, at + " a + 1");
        }
      } catch (const Error& e) {
        ADD_FAILURE() << at << " threw: " << e.what();
      }
    }
  }
}

// ---- concurrency, background compilation, check mode, CPU tensors -------------------------------

TEST_F(DeviceSelectProbe, ConcurrentCallers) {
  auto body = [](const Tensor& x, const Tensor& t) {
    Tensor s = masked_select(x, x > t);
    return std::vector<Tensor>{s, nonzero(x > t), s + 1};
  };
  for (Dynamic dyn : {Dynamic::kAuto, Dynamic::kTrue}) {
    auto fn = compile(body, {.name = "concurrent", .dynamic = dyn});
    // Warm up (one compile), then 4 threads x 50 calls with their own data.
    Tensor x0 = rnd(DType::kF32, {9, 10}, Dist::uniform(-1, 1));
    Tensor t0 = Tensor::full({}, 0.0, DType::kF32);
    expect_same(fn(x0.to(Device::vulkan()), t0.to(Device::vulkan())), body(x0, t0), "warm");
    std::vector<std::vector<Tensor>> xs(4), ts(4);
    std::vector<Shape> shapes = {{9, 10}, {9, 10}, {9, 10}, {9, 10}};
    if (dyn == Dynamic::kTrue) shapes = {{9, 10}, {3, 10}, {9, 10}, {20, 10}};
    for (int th = 0; th < 4; ++th)
      for (int c = 0; c < 50; ++c) {
        xs[th].push_back(rnd(DType::kF32, shapes[th], Dist::uniform(-1, 1)));
        const double t = c % 5 == 0 ? 2.0 : c % 7 == 0 ? -2.0 : (c % 10) / 10.0 - 0.5;
        ts[th].push_back(Tensor::full({}, t, DType::kF32));
      }
    std::atomic<int> bad{0}, threw{0};
    std::vector<std::string> first_error(4);
    std::vector<std::thread> threads;
    for (int th = 0; th < 4; ++th)
      threads.emplace_back([&, th] {
        for (int c = 0; c < 50; ++c) {
          try {
            std::vector<Tensor> got =
                fn(xs[th][c].to(Device::vulkan()), ts[th][c].to(Device::vulkan()));
            std::vector<Tensor> want = body(xs[th][c], ts[th][c]);
            bool ok = got.size() == want.size();
            for (size_t i = 0; ok && i < got.size(); ++i)
              ok = got[i].meta() == want[i].meta() && bytes_of(got[i]) == bytes_of(want[i]);
            if (!ok && bad.fetch_add(1) == 0)
              first_error[th] = "thread " + std::to_string(th) + " call " + std::to_string(c);
          } catch (const Error& e) {
            if (threw.fetch_add(1) == 0) first_error[th] = e.what();
          }
        }
      });
    for (std::thread& t : threads) t.join();
    std::string errs;
    for (const std::string& e : first_error) errs += e + " | ";
    EXPECT_EQ(bad.load(), 0) << "dynamic " << static_cast<int>(dyn) << ": " << errs;
    EXPECT_EQ(threw.load(), 0) << "dynamic " << static_cast<int>(dyn) << ": " << errs;
    EXPECT_EQ(fn.stats().compiles, 1u) << static_cast<int>(dyn);
  }
}

TEST_F(DeviceSelectProbe, BackgroundCompilation) {
  auto body = [](const Tensor& x) {
    Tensor s = masked_select(x, x > 0.25);
    return std::vector<Tensor>{s, nonzero(x < -0.25), sum(s, {0})};
  };
  auto fn = compile(body, {.name = "bg_select", .background = true});
  bool saw_ready = false;
  for (int call = 0; call < 400 && !(saw_ready && call > 30); ++call) {
    const Shape shape = call % 3 == 2 ? Shape{5, 8} : Shape{4, 8};
    Tensor x = rnd(DType::kF32, shape, Dist::uniform(call % 4 == 3 ? 0.5 : -1, 1));
    std::vector<Tensor> want = body(x), got;
    try {
      got = fn(x.to(Device::vulkan()));
    } catch (const Error& e) {
      ADD_FAILURE() << "call " << call << " threw: " << e.what();
      break;
    }
    ASSERT_EQ(got.size(), 3u);
    expect_same(got[0], want[0], "bg call " + std::to_string(call) + " s");
    expect_same(got[1], want[1], "bg call " + std::to_string(call) + " nonzero");
    test::expect_close(got[2], want[2], Tol{1e-5, 1e-5}, "bg sum");
    bool ready = true;
    for (const EntryInfo& e : fn.entries()) ready = ready && e.ready;
    saw_ready = saw_ready || ready;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A slow driver under load (SwiftShader at ctest -j2) may still be compiling: wait for it
  // rather than for a fixed time, then the compiled kernels must serve a call exactly.
  if (!saw_ready) {
    fn.wait_ready();
    Tensor x = rnd(DType::kF32, {4, 8}, Dist::uniform(-1, 1));
    std::vector<Tensor> want = body(x), got = fn(x.to(Device::vulkan()));
    ASSERT_EQ(got.size(), 3u);
    expect_same(got[0], want[0], "bg call after wait_ready s");
    expect_same(got[1], want[1], "bg call after wait_ready nonzero");
    for (const EntryInfo& e : fn.entries()) saw_ready = saw_ready || e.ready;
  }
  EXPECT_TRUE(saw_ready);
  for (const EntryInfo& e : fn.entries())
    EXPECT_TRUE(e.background_error.empty()) << e.background_error;
}

TEST_F(DeviceSelectProbe, BackgroundFirstTraceOfLengthOne) {
  // The trace sees a selection of length 1 (then 0): the next graph's warm-up and later calls
  // must not run kernels at a size the kernels do not take; every call exact.
  auto body = [](const Tensor& x) {
    Tensor s = masked_select(x, x > 0);
    Tensor col = reshape(s, {-1, 1});
    return std::vector<Tensor>{s * 3 + 1, concat({s, s}, 0), col * col, exp(s)};
  };
  for (int first : {1, 0}) {
    auto fn = compile(body, {.name = "bg_len" + std::to_string(first), .background = true});
    for (int call = 0; call < 60; ++call) {
      std::vector<float> v(40, -1.0f);
      const int len = call == 0 ? first : call % 5;
      for (int i = 0; i < len; ++i)
        v[static_cast<size_t>(7 * i + 3)] = 0.5f + static_cast<float>(i);
      Tensor x = Tensor::from_vector(v, {40});
      std::vector<Tensor> got = fn(x.to(Device::vulkan())), want = body(x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        test::expect_close(got[i], want[i], Tol{1e-6, 1e-6},
                           "first " + std::to_string(first) + " call " + std::to_string(call) +
                               " output " + std::to_string(i));
      bool ready = true;
      for (const EntryInfo& e : fn.entries()) ready = ready && e.ready;
      if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

TEST_F(DeviceSelectProbe, CheckModeAndUnfused) {
  auto body = [](const Tensor& x) {
    Tensor s = masked_select(exp(x), abs(x) > 0.5);
    return std::vector<Tensor>{s, nonzero(x > 0), s * s};
  };
  for (bool check : {true, false}) {
    auto fn = compile(body, {.name = "check_select", .fuse = !check, .check = check});
    for (int call = 0; call < 3; ++call) {
      Tensor x = rnd(DType::kF32, {7, 11}, Dist::uniform(-1, 1));
      std::vector<Tensor> want = body(x);
      std::vector<Tensor> got = fn(x.to(Device::vulkan()));
      ASSERT_EQ(got.size(), 3u);
      for (size_t i = 0; i < 3; ++i)
        test::expect_close(got[i], want[i], Tol{1e-6, 1e-6}, "check " + std::to_string(check));
    }
  }
  for (const std::string& w : warnings())
    EXPECT_EQ(w.find("check"), std::string::npos) << "check mode warned: " << w;
}

TEST_F(DeviceSelectProbe, CpuTensorsThroughCompile) {
  auto fn = compile(several, {.name = "several_cpu"});
  auto fn_dyn = compile(later_ops, {.name = "later_cpu", .dynamic = Dynamic::kTrue});
  for (int call = 0; call < 4; ++call) {
    const int64_t n = call < 2 ? 20 : 7 + call;
    Tensor x = rnd(DType::kF32, {n}, Dist::uniform(call == 1 ? 0.1 : -1, 1));
    Tensor y = rnd(DType::kF32, {n}, Dist::uniform(-1, 1));
    expect_same(fn(x, y), several(x, y), "cpu several " + std::to_string(call));
    Tensor x2 = rnd(DType::kF32, {3, n}, Dist::uniform(-1, 1));
    Tensor w = rnd(DType::kF32, {1, 3}, Dist::uniform(-1, 1));
    expect_same(fn_dyn(x2, y, w), later_ops(x2, y, w), "cpu later " + std::to_string(call));
  }
}

TEST_F(DeviceSelectProbe, EagerDeviceNewShapes) {
  for (const Shape& shape : std::vector<Shape>{{3}, {1}, {0}, {2, 3}, {3}, {1025}}) {
    Tensor x = rnd(DType::kI64, shape, Dist::uniform(-3, 3));
    Tensor xv = x.to(Device::vulkan());
    expect_same(masked_select(xv, xv > 0), masked_select(x, x > 0), "eager " + shape_str(shape));
    expect_same(nonzero(xv), nonzero(x), "eager nonzero " + shape_str(shape));
  }
}

TEST_F(DeviceSelectProbe, EarlierResultsSurviveLaterCalls) {
  // Results handed out by earlier calls keep their values while later calls run (the bank
  // they view is not reused), and feed another compiled function as inputs.
  auto fn = compile(
      [](const Tensor& x) {
        Tensor s = masked_select(x, x > 0);
        return std::vector<Tensor>{s, s * 2, nonzero(x > 0)};
      },
      {.name = "keep_results"});
  auto next = compile(
      [](const Tensor& s, const Tensor& nz) {
        return std::vector<Tensor>{masked_select(s, s > 0.5), s + 1,
                                   sum(cast(nz, DType::kF32), {0})};
      },
      {.name = "next_fn"});
  std::vector<Tensor> xs;
  std::vector<std::vector<Tensor>> kept;
  for (int call = 0; call < 8; ++call) {
    xs.push_back(rnd(DType::kF32, {50}, Dist::uniform(call == 3 ? -2 : -1, call == 3 ? -1 : 1)));
    kept.push_back(fn(xs.back().to(Device::vulkan())));
  }
  for (size_t c = 0; c < xs.size(); ++c) {
    Tensor s = masked_select(xs[c], xs[c] > 0);
    Tensor nz = nonzero(xs[c] > 0);
    expect_same(kept[c], {s, s * 2, nz}, "kept call " + std::to_string(c));
    std::vector<Tensor> got = next(kept[c][0], kept[c][2]);
    expect_same(got[0], masked_select(s, s > 0.5), "next select " + std::to_string(c));
    expect_same(got[1], s + 1, "next add " + std::to_string(c));
  }
}

TEST_F(DeviceSelectProbe, BroadcastSymbolicAndCaptured) {
  // Symbolic dims broadcast between data and mask; a captured device tensor as the data.
  auto bc = [](const Tensor& x, const Tensor& m) { return masked_select(x, m); };
  auto fn = compile(bc, {.name = "bc_dyn", .dynamic = Dynamic::kTrue});
  for (const auto& [xs, ms] : std::vector<std::pair<Shape, Shape>>{
           {{3, 1}, {1, 4}}, {{5, 1}, {1, 7}}, {{2, 1}, {1, 2}}, {{6, 1}, {1, 3}}}) {
    Tensor x = rnd(DType::kF32, xs, Dist::uniform(-1, 1));
    Tensor m = rnd(DType::kBool, ms);
    expect_same(fn(x.to(Device::vulkan()), m.to(Device::vulkan())), bc(x, m),
                shape_str(xs) + " vs " + shape_str(ms));
  }
  Tensor w = rnd(DType::kI32, {4, 6}, Dist::uniform(-50, 50));
  Tensor wv = w.to(Device::vulkan());
  auto cap =
      compile([&wv](const Tensor& t) { return masked_select(wv, wv > t); }, {.name = "captured"});
  for (double t : {-60.0, 0.0, 20.0, 60.0}) {
    Tensor th = Tensor::full({}, t, DType::kI32);
    expect_same(cap(th.to(Device::vulkan())), masked_select(w, w > th),
                "captured t=" + std::to_string(t));
  }
  auto nz3 = compile([](const Tensor& x) { return nonzero(x); },
                     {.name = "nz3", .dynamic = Dynamic::kTrue});
  for (const Shape& sh : std::vector<Shape>{{2, 3, 4}, {3, 2, 5}, {4, 4, 2}}) {
    Tensor x = rnd(DType::kI32, sh, Dist::uniform(-1, 1));
    expect_same(nz3(x.to(Device::vulkan())), nonzero(x), "nz3 " + shape_str(sh));
  }
}

TEST_F(DeviceSelectProbe, HostReadsOfTheSelection) {
  // A value read of the selection (a break) and ops after it; the read value is guarded, so
  // new data retraces, and every answer is right.
  auto body = [](const Tensor& x) {
    Tensor s = masked_select(x, x > 0);
    const double total = sum(s, {0}).item<double>();
    Tensor t = masked_select(s, s > total / 100.0);
    return std::vector<Tensor>{t, s * 2};
  };
  auto fn = compile(body, {.name = "host_read"});
  for (int call = 0; call < 3; ++call) {
    Tensor x = rnd(DType::kF32, {30}, Dist::uniform(-1, 1));
    expect_same(fn(x.to(Device::vulkan())), body(x), "host read " + std::to_string(call));
  }
}

// ---- special values ---------------------------------------------------------------------------

TEST_F(DeviceSelectProbe, SpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor f =
      Tensor::from_vector(std::vector<float>{nan, -0.0f, 0.0f, inf, -inf, 1e-45f, -nan, 3}, {8});
  Tensor pick = mask_of({8}, {0, 1, 3, 5, 6});
  auto sel = [](const Tensor& v, const Tensor& k) { return masked_select(v, k); };
  // A device that flushes subnormals (SwiftShader) sees 1e-45 as zero.
  auto nz = [](const Tensor& v) { return nonzero(test::flush_subnormals_like_the_device(v)); };
  auto self_eq = [](const Tensor& v) { return masked_select(v, eq(v, v)); };  // drops NaN
  auto neg_zero = [](const Tensor& v) { return masked_select(v, v >= 0); };
  check("f32 nan/-0 picked", Tol{0, 0}, sel, f, pick);
  check("f32 nonzero (nan counts, -0 does not)", Tol{0, 0}, nz, f);
  check("f32 v == v", Tol{0, 0}, self_eq, f);
  check("f32 v >= 0", Tol{0, 0}, neg_zero, f);
  Tensor h = cast(f, DType::kF16);
  check("f16 picked", Tol{0, 0}, sel, h, pick);
  check("f16 nonzero", Tol{0, 0}, nz, h);
  Tensor i64 = Tensor::from_vector(
      std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0,
                           std::numeric_limits<int64_t>::max(), int64_t(1) << 32,
                           (int64_t(1) << 32) + 1, -(int64_t(1) << 32), 0},
      {8});
  check("i64 picked", Tol{0, 0}, sel, i64, pick);
  check("i64 nonzero", Tol{0, 0}, nz, i64);  // 1 << 32: low word 0, still non-zero
  check(
      "i64 > 0", Tol{0, 0}, [](const Tensor& v) { return masked_select(v, v > 0); }, i64);
  Tensor i32 =
      Tensor::from_vector(std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 0,
                                               std::numeric_limits<int32_t>::max(), 7, 0, 0, 1},
                          {8});
  check("i32 picked", Tol{0, 0}, sel, i32, pick);
  check("i32 nonzero", Tol{0, 0}, nz, i32);
  Tensor b = mask_of({8}, {1, 2, 7});
  check("bool data", Tol{0, 0}, sel, b, pick);
  check("bool nonzero", Tol{0, 0}, nz, b);
  check(
      "bool self", Tol{0, 0}, [](const Tensor& v) { return masked_select(v, v); }, b);
  // Odd lengths of 1- and 2-byte data (the count's 4-byte slot after them).
  for (int64_t n : {3, 6}) {
    check(
        "bool n=" + std::to_string(n), Tol{0, 0},
        [](const Tensor& v) { return masked_select(v, cast(v, DType::kF32) < 0.5); },
        rnd(DType::kBool, {n}));
    check(
        "f16 n=" + std::to_string(n), Tol{0, 0},
        [](const Tensor& v) { return masked_select(v, v < 0); },
        rnd(DType::kF16, {n}, Dist::uniform(-1, 1)));
  }
}

TEST_F(DeviceSelectProbe, SpecialValuesCompiledRepeatedly) {
  // i64 extremes and NaN through one compiled function, later ops of the selection included.
  auto body = [](const Tensor& v, const Tensor& k) {
    Tensor s = masked_select(v, k);
    return std::vector<Tensor>{s, concat({s, s}, 0), nonzero(v)};
  };
  auto fn = compile(body, {.name = "special_i64", .dynamic = Dynamic::kTrue});
  std::mt19937 rng(7);
  for (int call = 0; call < 6; ++call) {
    const int64_t n = 5 + call * 3;
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t& e : v) {
      switch (rng() % 5) {
        case 0:
          e = std::numeric_limits<int64_t>::min();
          break;
        case 1:
          e = std::numeric_limits<int64_t>::max();
          break;
        case 2:
          e = 0;
          break;
        case 3:
          e = int64_t(1) << 40;
          break;
        default:
          e = -static_cast<int64_t>(rng());
      }
    }
    Tensor x = Tensor::from_vector(v, {n});
    Tensor k = rnd(DType::kBool, {n});
    expect_same(fn(x.to(Device::vulkan()), k.to(Device::vulkan())), body(x, k),
                "i64 call " + std::to_string(call));
  }
}

}  // namespace
}  // namespace kiln
