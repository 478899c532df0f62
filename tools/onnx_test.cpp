// kiln onnx-test: runs ONNX backend test directories (model.onnx + test_data_set_*/input_N.pb,
// output_N.pb) on the interpreter and on Vulkan; pass / fail / unsupported per case.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "tools/commands.h"
#include "tools/onnx_test_random.h"

namespace fs = std::filesystem;

namespace kiln::tools {

namespace {

// The ops the conformance bar is measured on (docs/conformance.md): a case is "in the list"
// when every op of its model is one of these.

// kRandom: a case with random ops, whose reference values no runtime reproduces; it is checked
// instead (onnx_test_random.h) and counted apart, neither a pass nor a failure.
enum class Outcome { kPass, kFail, kUnsupported, kBadReference, kRandom };

/// Cases whose reference outputs contradict their own model: a mismatch there is reported as
/// BADREF with the reason (not a failure, not a pass); a match is a pass.
const std::map<std::string, std::string>& bad_references() {
  static const std::map<std::string, std::string> cases = {
      {"test_adam_multiple",
       "the reference outputs use epsilon 1e-2 but the node leaves epsilon at its default 1e-6 "
       "(onnx 1.12's adam.py): the update with epsilon 1e-2 gives the reference values"},
      {"test_maxunpool_export_with_output_shape",
       "the reference places the indices in the 4x4 unpooled shape and pads it to output_shape "
       "5x5, but MaxPool's indices are flat positions in its input, which output_shape gives "
       "(onnx/onnx#2398; PyTorch's max_unpool2d and onnxruntime unpool into output_shape)"},
  };
  return cases;
}

struct CaseResult {
  Outcome outcome = Outcome::kPass;
  std::string reason;
  std::vector<std::string> breaks;  // the compiled model's graph breaks (host reads or steps)
};

/// input_0.pb, input_1.pb, ... in numeric order.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

CaseResult from_status(const Status& s) {
  return {s.code() == StatusCode::kUnimplemented ? Outcome::kUnsupported : Outcome::kFail,
          s.to_string()};
}

/// Compares with ONNX's backend-test tolerance (numpy.testing.assert_allclose(rtol=1e-3,
/// atol=1e-7)); NaN matches NaN.
std::string compare(const Tensor& got, const onnx::ProtoTensor& want, double rtol, double atol) {
  if (got.shape() != want.tensor.shape())
    return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.tensor.shape());
  const std::vector<double> g = onnx::values_as(got, want.onnx_type);
  const std::vector<double> w = onnx::values_as(want.tensor, want.onnx_type);
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool ok = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                    std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]);
    if (!ok) {
      if (bad++ == 0) first = i;
      worst = std::max(worst, std::abs(g[i] - w[i]));
    }
  }
  if (bad == 0) return "";
  return fmt::format("{} of {} elements differ (first at {}: {} vs {}; max abs diff {:.3g})", bad,
                     g.size(), first, g[first], w[first], worst);
}

/// ONNX 1.12's test data stores bfloat16 values as UINT16 bit patterns.
void bfloat16_from_bits(onnx::ProtoTensor& p, Device device) {
  std::vector<float> v;
  for (double bits : p.tensor.to_doubles()) {
    const uint32_t b = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    v.push_back(f);
  }
  p.tensor = Tensor::from_vector(v, p.tensor.shape(), device);
  p.onnx_type = onnx::OnnxType::kBfloat16;
}

/// Compares a value of any kind (onnx::Value: tensors, strings, sequences, optionals) with the
/// reference; "" when equal within the tolerance.
std::string compare_value(const onnx::Value& got, const onnx::Value& want) {
  using Kind = onnx::Value::Kind;
  if (got.kind != want.kind) return "a value of another kind (tensor, strings, sequence, optional)";
  switch (want.kind) {
    case Kind::kTensor:
      return compare(got.tensor, onnx::ProtoTensor{"", want.onnx_type, want.tensor}, 1e-3, 1e-7);
    case Kind::kStrings:
      if (got.shape != want.shape)
        return "shape " + shape_str(got.shape) + ", expected " + shape_str(want.shape);
      for (size_t i = 0; i < want.strings.size(); ++i)
        if (got.strings[i] != want.strings[i])
          return fmt::format("string {} is '{}', expected '{}'", i, got.strings[i],
                             want.strings[i]);
      return "";
    case Kind::kSequence:
    case Kind::kOptional:
      if (got.elements.size() != want.elements.size())
        return fmt::format("{} elements, expected {}", got.elements.size(), want.elements.size());
      for (size_t i = 0; i < want.elements.size(); ++i) {
        std::string d = compare_value(got.elements[i], want.elements[i]);
        if (!d.empty()) return fmt::format("element {}: {}", i, d);
      }
      return "";
  }
  return "unknown kind";
}

/// A model that takes or returns sequences, optionals or strings runs eagerly on values
/// (Model::run_values: one op at a time, on Vulkan one dispatch per op).
CaseResult run_values_case(const onnx::Model& model, const std::vector<fs::path>& sets,
                           Device device) {
  for (const fs::path& set : sets) {
    std::vector<onnx::Value> inputs, expected;
    const std::vector<fs::path> in = numbered(set, "input_"), out = numbered(set, "output_");
    if (in.size() != model.inputs().size() || out.size() != model.outputs().size())
      return {Outcome::kFail, "the data set's inputs or outputs do not match the model's"};
    for (size_t k = 0; k < in.size(); ++k) {
      auto v = onnx::load_value_proto(in[k].string(), model.inputs()[k].kind, device);
      if (!v.ok()) return from_status(v.status());
      inputs.push_back(std::move(*v));
    }
    for (size_t k = 0; k < out.size(); ++k) {
      auto v = onnx::load_value_proto(out[k].string(), model.outputs()[k].kind, Device::cpu());
      if (!v.ok()) return from_status(v.status());
      expected.push_back(std::move(*v));
    }
    std::vector<onnx::Value> got = model.run_values(inputs);
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string diff = compare_value(got.at(i), expected[i]);
      if (!diff.empty())
        return {Outcome::kFail, fmt::format("{} output {}: {}", set.filename().string(), i, diff)};
    }
  }
  return {};
}

CaseResult run_case(const fs::path& dir, Device device) {
  auto model = onnx::Model::load((dir / "model.onnx").string(), device);
  if (!model.ok()) return from_status(model.status());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Outcome::kFail, "no test_data_set_* directory"};
  const size_t validation_before = device.is_cpu() ? 0 : validation_messages().size();
  if (!model->tensors_only()) {
    CaseResult r = run_values_case(*model, sets, device);
    if (r.outcome == Outcome::kPass && !device.is_cpu() &&
        validation_messages().size() != validation_before)
      return {Outcome::kFail, "validation-layer errors: " + validation_messages().back()};
    return r;
  }
  onnx::CompiledModel compiled(*model, {.name = dir.filename().string()});
  for (const fs::path& set : sets) {
    std::vector<Tensor> inputs;
    for (const fs::path& p : numbered(set, "input_")) {
      auto t = onnx::load_tensor_proto(p.string(), device);
      if (!t.ok()) return from_status(t.status());
      const size_t k = inputs.size();
      if (k < model->inputs().size() && model->inputs()[k].onnx_type == onnx::OnnxType::kBfloat16 &&
          t->onnx_type == onnx::OnnxType::kUint16)
        bfloat16_from_bits(*t, device);
      inputs.push_back(t->tensor);
    }
    std::vector<onnx::ProtoTensor> expected;
    for (const fs::path& p : numbered(set, "output_")) {
      auto t = onnx::load_tensor_proto(p.string(), Device::cpu());
      if (!t.ok()) return from_status(t.status());
      const size_t k = expected.size();
      if (k < model->outputs().size() &&
          model->outputs()[k].onnx_type == onnx::OnnxType::kBfloat16 &&
          t->onnx_type == onnx::OnnxType::kUint16)
        bfloat16_from_bits(*t, Device::cpu());
      expected.push_back(std::move(*t));
    }
    auto outputs = compiled.run(inputs);
    if (!outputs.ok()) return from_status(outputs.status());
    if (outputs->size() != expected.size())
      return {Outcome::kFail,
              fmt::format("{} outputs, expected {}", outputs->size(), expected.size())};
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string diff;
      try {
        diff = compare((*outputs)[i], expected[i], 1e-3, 1e-7);
      } catch (const Error& e) {
        return from_status(e.status());
      }
      if (!diff.empty())
        return {Outcome::kFail, fmt::format("{} output {}: {}", set.filename().string(), i, diff)};
    }
  }
  if (!device.is_cpu() && validation_messages().size() != validation_before)
    return {Outcome::kFail, "validation-layer errors: " + validation_messages().back()};
  return {Outcome::kPass, "", compiled.explain().break_reasons};
}

/// Every directory holding a model.onnx under the given roots, at any depth (a root may be a
/// case itself, or the suite's parent folder: onnx-node-tests/ as well as onnx-node-tests/node/).
std::vector<fs::path> find_cases(const std::vector<std::string>& roots) {
  std::vector<fs::path> cases;
  for (const std::string& r : roots) {
    if (fs::exists(fs::path(r) / "model.onnx")) {
      cases.emplace_back(r);
      continue;
    }
    std::error_code ec;
    fs::recursive_directory_iterator it(r, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (!it->is_directory() || !fs::exists(it->path() / "model.onnx")) continue;
      cases.push_back(it->path());
      it.disable_recursion_pending();  // a case's own folders hold its data sets
    }
    if (ec) fmt::print(stderr, "onnx-test: cannot read {}: {}\n", r, ec.message());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

struct Tally {
  int pass = 0, fail = 0, unsupported = 0, bad_reference = 0, random = 0;
  int fallback_pass = 0;  // passed with a graph on the interpreter (no device lowering)
  std::vector<std::string> break_cases;  // passed with graph breaks: the case and its first
  std::set<std::string> fallback_ops;
  std::vector<std::string> failures;  // FAIL: an error or a wrong value
  std::vector<std::string> unsupported_cases;
  std::vector<std::string> bad_reference_cases;
  std::vector<std::string> random_cases;
  std::vector<std::string> fallback_cases;
};

}  // namespace

int onnx_test_main(const OnnxTestOptions& options) {
  const std::vector<fs::path> cases = find_cases(options.dirs);
  if (cases.empty()) {
    fmt::print(stderr, "onnx-test: no test cases (directories with a model.onnx) found\n");
    return 2;
  }
  std::regex filter(options.filter.empty() ? ".*" : options.filter);
  std::vector<std::pair<std::string, Device>> devices;
  for (const std::string& d : options.devices) {
    if (d == "cpu") {
      devices.emplace_back("cpu", Device::cpu());
    } else if (vulkan_available()) {
      devices.emplace_back("vulkan", Device::vulkan());
    } else {
      fmt::print("onnx-test: no Vulkan device ({}); vulkan skipped\n", vulkan_status().to_string());
    }
  }
  std::map<std::string, Tally> tallies;
  const auto start = std::chrono::steady_clock::now();
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    if (!std::regex_search(name, filter)) continue;
    for (const auto& [dname, device] : devices) {
      CaseResult r;
      // A graph with an op that has no Vulkan kernel runs on the interpreter (a warning): note it.
      std::vector<std::string> fallbacks;
      set_log_sink([&](LogTopic topic, std::string_view m) {
        if (topic == LogTopic::kWarning && m.find("no device lowering") != std::string_view::npos) {
          fallbacks.emplace_back(m);
        } else {
          fmt::print(stderr, "[kiln:{}] {}\n", log_topic_name(topic), m);
        }
      });
      try {
        r = run_case(dir, device);
      } catch (const Error& e) {
        r = from_status(e.status());
      } catch (const std::exception& e) {
        r = {Outcome::kFail, std::string("exception: ") + e.what()};
      }
      set_log_sink({});
      if (r.outcome == Outcome::kFail && bad_references().count(name))
        r = {Outcome::kBadReference, bad_references().at(name) + " (" + r.reason + ")"};
      if (r.outcome == Outcome::kFail && has_random_op(dir.string())) {
        const std::string why = check_random_case(dir.string(), device);
        r = why.empty() ? CaseResult{Outcome::kRandom,
                                     "random values (not comparable): the reference's shapes, 0 or "
                                     "1 where it "
                                     "holds only those, the interpreter's bits under a fixed seed"}
                        : CaseResult{Outcome::kFail, "random case: " + why};
      }
      Tally& t = tallies[dname];
      if (r.outcome == Outcome::kPass && !r.breaks.empty())
        t.break_cases.push_back(
            fmt::format("{}: {} break(s), the first: {}", name, r.breaks.size(), r.breaks[0]));
      if (r.outcome == Outcome::kPass && !fallbacks.empty()) {
        ++t.fallback_pass;
        t.fallback_cases.push_back(name);
        for (const std::string& m : fallbacks) {
          const size_t at = m.find("lowering (");
          if (at != std::string::npos)
            t.fallback_ops.insert(m.substr(at + 10, m.find(' ', at + 10) - at - 10));
        }
      }
      const char* tag = r.outcome == Outcome::kPass           ? "PASS  "
                        : r.outcome == Outcome::kFail         ? "FAIL  "
                        : r.outcome == Outcome::kBadReference ? "BADREF"
                        : r.outcome == Outcome::kRandom       ? "RANDOM"
                                                              : "UNSUP ";
      (r.outcome == Outcome::kPass           ? t.pass
       : r.outcome == Outcome::kFail         ? t.fail
       : r.outcome == Outcome::kBadReference ? t.bad_reference
       : r.outcome == Outcome::kRandom       ? t.random
                                             : t.unsupported)++;
      std::string reason = r.reason;
      std::replace(reason.begin(), reason.end(), '\n', ' ');
      for (const std::string& prefix : {(dir / "model.onnx").string() + ": ", dir.string() + "/"})
        for (size_t at; (at = reason.find(prefix)) != std::string::npos;)
          reason.erase(at, prefix.size());
      if (r.outcome != Outcome::kPass)
        (r.outcome == Outcome::kFail           ? t.failures
         : r.outcome == Outcome::kBadReference ? t.bad_reference_cases
         : r.outcome == Outcome::kRandom       ? t.random_cases
                                               : t.unsupported_cases)
            .push_back(fmt::format("{}: {}", name, reason));
      if (!options.quiet || r.outcome != Outcome::kPass)
        fmt::print("{} {:<6} {}{}\n", tag, dname, name, reason.empty() ? "" : ": " + reason);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int rc = 0;
  std::string report = "";
  for (const auto& [dname, t] : tallies) {
    const int total = t.pass + t.fail + t.unsupported + t.bad_reference + t.random;
    const double rate = total ? 100.0 * t.pass / total : 0.0;
    const std::string line = fmt::format(
        "summary {}: {} pass, {} fail, {} unsupported{}{} of {} cases ({:.1f}% pass)", dname,
        t.pass, t.fail, t.unsupported,
        t.bad_reference ? fmt::format(", {} with a wrong reference", t.bad_reference) : "",
        t.random ? fmt::format(", {} random (checked, not comparable)", t.random) : "", total,
        rate);
    fmt::print("{}\n", line);
    report += "    " + line + "\n";
    if (t.fallback_pass > 0) {
      std::string ops;
      for (const std::string& op : t.fallback_ops) ops += (ops.empty() ? "" : " ") + op;
      const std::string note = fmt::format(
          "  {} of the {} passing cases ran a graph on the interpreter: no Vulkan kernel for {}",
          t.fallback_pass, t.pass, ops);
      fmt::print("{}\n", note);
      report += "    " + note + "\n";
    }
    if (!t.break_cases.empty()) {
      const std::string note = fmt::format(
          "  {} of the {} passing cases had graph breaks (a value read on the host, "
          "or a host step): --report lists them",
          t.break_cases.size(), t.pass);
      fmt::print("{}\n", note);
      report += "    " + note + "\n";
    }
    if (options.min_pass > 0 && rate < 100.0 * options.min_pass) {
      fmt::print("onnx-test: {} pass rate {:.1f}% is below the threshold {:.1f}%\n", dname, rate,
                 100.0 * options.min_pass);
      rc = 1;
    }
    if (options.strict && t.fail > 0) {
      fmt::print("onnx-test: {} has {} failing cases (--strict)\n", dname, t.fail);
      rc = 1;
    }
    if (options.strict && t.fallback_pass > 0) {
      fmt::print(
          "onnx-test: {} has {} passing cases that ran a graph on the interpreter (--strict)\n",
          dname, t.fallback_pass);
      rc = 1;
    }
  }
  fmt::print("onnx-test: {:.1f} s\n", seconds);
  if (!options.report.empty()) {
    std::ofstream out(options.report);
    out << "Summary:\n\n" << report << "\n";
    for (const auto& [dname, t] : tallies) {
      const auto list = [&](const char* what, const std::vector<std::string>& rows) {
        out << what << " on " << dname << " (" << rows.size() << "):\n\n";
        for (const std::string& c : rows) out << "- " << c << "\n";
        out << "\n";
      };
      list("Failing cases", t.failures);
      list("Passing cases that ran a graph on the interpreter", t.fallback_cases);
      list("Passing cases with graph breaks", t.break_cases);
      list("Cases with a wrong reference", t.bad_reference_cases);
      list("Random cases (checked, not compared with the reference)", t.random_cases);
      list("Unsupported cases", t.unsupported_cases);
    }
  }
  return rc;
}

}  // namespace kiln::tools
