// One program, three backends: the interpreter, eager Vulkan and compiled Vulkan.
#include "fuzz/differential.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kiln::fuzz {
namespace {

constexpr int kArity = 6;  // the compiled function's tensor arguments (unused ones get a dummy)

struct Compare {
  bool ok = true;
  double max_err = 0;
  std::string detail;
};

/// got vs want (both of one output); `scale` as in FloatTol.
Compare compare(const Tensor& got, const Tensor& want, double scale, bool lowp) {
  Compare c;
  std::ostringstream o;
  o.precision(9);
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    c.ok = false;
    o << "meta " << got.meta().str() << " vs " << want.meta().str();
    c.detail = o.str();
    return c;
  }
  int shown = 0;
  if (want.dtype() == DType::kI64) {
    const std::vector<int64_t> g = got.to_vector<int64_t>(), w = want.to_vector<int64_t>();
    for (size_t i = 0; i < w.size(); ++i) {
      if (g[i] == w[i]) continue;
      c.ok = false;
      c.max_err =
          std::max(c.max_err, std::fabs(static_cast<double>(g[i]) - static_cast<double>(w[i])));
      if (shown++ < 4) o << "\n    [" << i << "] got " << g[i] << ", want " << w[i];
    }
  } else {
    const std::vector<double> g = got.to_doubles(), w = want.to_doubles();
    const bool fp = is_floating(want.dtype());
    const FloatTol tol = tolerance(lowp ? DType::kF16 : want.dtype());
    for (size_t i = 0; i < w.size(); ++i) {
      const double a = g[i], e = w[i];
      bool ok;
      double err = 0;
      if (!fp) {
        ok = a == e;
        err = std::fabs(a - e);
      } else if (std::isnan(a) || std::isnan(e)) {
        ok = std::isnan(a) && std::isnan(e);
        err = ok ? 0 : INFINITY;
      } else if (std::isinf(a) || std::isinf(e)) {
        ok = a == e;
        err = ok ? 0 : INFINITY;
      } else {
        err = std::fabs(a - e);
        ok = err <= tol.abs * scale + tol.rel * std::fabs(e);
      }
      if (!ok) {
        c.ok = false;
        if (shown++ < 4) o << "\n    [" << i << "] got " << a << ", want " << e;
      }
      c.max_err = std::max(c.max_err, err);
    }
  }
  if (!c.ok) c.detail = o.str();
  return c;
}

/// The largest finite magnitude among the floating values (at least 1).
double magnitude(const std::vector<Tensor>& values) {
  double m = 1;
  for (const Tensor& t : values) {
    if (!t.defined() || !is_floating(t.dtype())) continue;
    for (double v : t.to_doubles())
      if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  }
  return m;
}

std::string where_str(const Program& p, size_t call) {
  return "seed " + std::to_string(p.seed) + " index " + std::to_string(p.index) + " call " +
         std::to_string(call) + " (n = " + std::to_string(p.sizes[call]) + ")";
}

}  // namespace

FloatTol tolerance(DType dtype) {
  if (dtype == DType::kF16) return {1e-2, 1e-2};
  return {2e-4, 2e-5};
}

DiffResult check_program(const Program& p) {
  DiffResult r;
  std::ostringstream report;
  auto fail = [&](const std::string& what) {
    r.ok = false;
    report << what << "\n";
  };
  // Captured constants live on the device for the compiled and eager runs (and on the CPU for
  // the reference); inputs are drawn per call.
  std::vector<size_t> input_leaves;
  std::vector<Tensor> const_dev(p.leaves.size());
  for (size_t i = 0; i < p.leaves.size(); ++i) {
    if (p.leaves[i].captured)
      const_dev[i] = make_leaf(p, i, 0, 0).to(Device::vulkan());
    else
      input_leaves.push_back(i);
  }
  if (input_leaves.size() > kArity) {
    fail("generator produced " + std::to_string(input_leaves.size()) + " inputs");
    r.report = report.str();
    return r;
  }
  auto fn = [&p, &const_dev, &input_leaves](const Tensor& a0, const Tensor& a1, const Tensor& a2,
                                            const Tensor& a3, const Tensor& a4,
                                            const Tensor& a5) -> std::vector<Tensor> {
    const Tensor* args[kArity] = {&a0, &a1, &a2, &a3, &a4, &a5};
    std::vector<Tensor> leaves = const_dev;
    for (size_t i = 0; i < input_leaves.size(); ++i) leaves[input_leaves[i]] = *args[i];
    return run_program(p, leaves, Device::vulkan());
  };
  auto compiled = compile(fn, {.name = "fuzz", .dynamic = p.dynamic});
  const Tensor dummy = Tensor::full({1}, 0.0, DType::kF32, Device::vulkan());

  for (size_t call = 0; call < p.sizes.size() && r.ok; ++call) {
    const int64_t n = p.sizes[call];
    std::vector<Tensor> cpu(p.leaves.size()), dev(p.leaves.size());
    for (size_t i = 0; i < p.leaves.size(); ++i) {
      cpu[i] = make_leaf(p, i, n, static_cast<int>(call));
      dev[i] = p.leaves[i].captured ? const_dev[i] : cpu[i].to(Device::vulkan());
    }
    std::vector<Tensor> want, values;
    try {
      want = run_program(p, cpu, Device::cpu(), &values);
    } catch (const std::exception& e) {
      fail(where_str(p, call) + ": the interpreter reference threw: " + e.what());
      break;
    }
    const double scale = magnitude(values);
    auto check = [&](const std::vector<Tensor>& got, const std::vector<Tensor>& ref,
                     const std::string& what) {
      if (got.size() != ref.size()) {
        fail(where_str(p, call) + " " + what + ": " + std::to_string(got.size()) +
             " outputs, want " + std::to_string(ref.size()));
        return;
      }
      for (size_t k = 0; k < ref.size(); ++k) {
        Compare c = compare(got[k], ref[k], scale, p.output_lowp[k]);
        if (c.ok) continue;
        std::ostringstream o;
        o.precision(9);
        o << where_str(p, call) << " " << what << ", output " << k << " (v" << p.outputs[k] << ", "
          << ref[k].meta().str() << "): max error " << c.max_err << " (scale " << scale << ")"
          << c.detail;
        fail(o.str());
      }
    };
    // Eager Vulkan, one dispatch per op (first call only: every op is a kernel of its own
    // shapes, so later sizes would mostly measure pipeline compiles).
    std::vector<Tensor> eager;
    if (call == 0) try {
        eager = run_program(p, dev, Device::vulkan());
        check(eager, want, "eager vulkan vs interpreter");
      } catch (const std::exception& e) {
        fail(where_str(p, call) + " eager vulkan threw: " + e.what());
      }
    // Compiled, on the same device.
    std::vector<Tensor> args;
    for (size_t i : input_leaves) args.push_back(dev[i]);
    while (args.size() < kArity) args.push_back(dummy);
    try {
      std::vector<Tensor> got = compiled(args[0], args[1], args[2], args[3], args[4], args[5]);
      ++r.calls;
      check(got, want, "compiled vulkan vs interpreter");
      if (!eager.empty()) check(got, eager, "compiled vs eager vulkan");
    } catch (const std::exception& e) {
      fail(where_str(p, call) + " compiled threw: " + e.what());
    }
  }
  if (!r.ok) {
    report << p.str() << "\n";
    try {
      report << compiled.explain().to_string();
    } catch (const std::exception& e) {
      report << "(explain threw: " << e.what() << ")";
    }
  }
  r.report = report.str();
  return r;
}

}  // namespace kiln::fuzz
