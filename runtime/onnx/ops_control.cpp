// Control flow: If, Loop and Scan, unrolled while tracing. If reads its condition and Loop its
// trip count and condition on the host when they are computed (graph breaks guarded by the
// value, as any host read); a condition the trace knows (a constant, or the body passing its
// input through) costs nothing. Scan unrolls over the scan axis's static length.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

constexpr int64_t kMaxIterations = 1 << 16;  // an unrolled loop longer than this is refused

/// A known scalar (no tensor, no host read) of dtype `dtype`.
Val known_scalar(int64_t v, DType dtype) {
  Val k;
  k.shape = std::vector<SymSize>{SymSize(v)};
  k.dtype = dtype;
  return k;
}

/// The truth of a scalar value: its known element, or a host read (a graph break).
bool truth(NodeCtx& c, const Val& v, const std::string& what) {
  if (v.shape) {
    if (v.shape->size() != 1) c.fail(what + " must hold one value");
    return v.shape->at(0).value() != 0;
  }
  if (v.t.numel() != 1) c.fail(what + " must hold one value");
  c.note_break(v.t, what + " is read on the host");
  return v.t.to_doubles().at(0) != 0;
}

/// Scan outputs stacked along `axis` (reversed first if asked).
Tensor stack(NodeCtx& c, std::vector<Tensor> parts, int64_t axis, bool reverse,
             const std::string& what) {
  if (parts.empty()) c.unsupported(what + " with no iterations (its shape is unknown)");
  if (reverse) std::reverse(parts.begin(), parts.end());
  const int64_t rank = parts[0].dim() + 1;
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) c.fail(what + ": axis out of range");
  for (Tensor& p : parts) p = unsqueeze(p, a);
  return concat(parts, a);
}

void if_op(NodeCtx& c) {
  const bool cond = truth(c, c.val(0), "the condition");
  const ::onnx::GraphProto& g = c.attr_graph(cond ? "then_branch" : "else_branch");
  std::vector<Val> out = c.model().run_subgraph(g, *c.scope, {});
  if (out.size() < c.outputs()) c.fail("the branch has fewer outputs than the node");
  for (size_t i = 0; i < c.outputs(); ++i) c.set_val(i, out[i]);
}

void loop_op(NodeCtx& c) {
  const ::onnx::GraphProto& body = c.attr_graph("body");
  const int64_t trips = c.has(0) ? c.ints(0).at(0).value() : std::numeric_limits<int64_t>::max();
  bool cond = c.has(1) ? truth(c, c.val(1), "the loop condition") : true;
  const size_t carried = c.inputs() > 2 ? c.inputs() - 2 : 0;
  const size_t scans = c.outputs() - carried;
  std::vector<Val> vals;
  for (size_t k = 0; k < carried; ++k) vals.push_back(c.val(2 + k));
  std::vector<std::vector<Tensor>> scanned(scans);
  int64_t i = 0;
  for (; i < trips && cond; ++i) {
    if (i >= kMaxIterations)
      c.unsupported("a loop of more than " + std::to_string(kMaxIterations) + " iterations");
    std::vector<Val> in = {known_scalar(i, DType::kI64), known_scalar(1, DType::kBool)};
    in.insert(in.end(), vals.begin(), vals.end());
    std::vector<Val> out = c.model().run_subgraph(body, *c.scope, std::move(in));
    if (out.size() != 1 + carried + scans) c.fail("the body's outputs do not match the node's");
    cond = truth(c, out[0], "the loop condition");
    for (size_t k = 0; k < carried; ++k) vals[k] = out[1 + k];
    for (size_t k = 0; k < scans; ++k) scanned[k].push_back(c.materialize(out[1 + carried + k]));
  }
  for (size_t k = 0; k < carried; ++k) c.set_val(k, vals[k]);
  for (size_t k = 0; k < scans; ++k)
    c.set(carried + k, stack(c, scanned[k], 0, false, "a Loop scan output"));
}

void scan_op(NodeCtx& c) {
  const ::onnx::GraphProto& body = c.attr_graph("body");
  const auto n_scan = static_cast<size_t>(c.attr_i("num_scan_inputs", 0));
  const bool batched = c.opset() < 9;  // opset 8: sequence_lens first, then a batch dim 0
  const size_t first = batched ? 1 : 0;
  if (batched && c.has(0)) c.unsupported("Scan-8 sequence_lens");
  if (n_scan < 1 || c.inputs() < first + n_scan) c.fail("num_scan_inputs does not fit the inputs");
  const size_t states = c.inputs() - first - n_scan;
  const size_t scan_out = c.outputs() - states;
  std::vector<int64_t> in_axes = c.attr_ints("scan_input_axes"),
                       out_axes = c.attr_ints("scan_output_axes");
  std::vector<int64_t> in_dirs = c.attr_ints(batched ? "directions" : "scan_input_directions"),
                       out_dirs = c.attr_ints("scan_output_directions");
  in_axes.resize(n_scan, 0), in_dirs.resize(n_scan, 0);
  out_axes.resize(scan_out, 0), out_dirs.resize(scan_out, 0);
  // One run of the body over the scan inputs xs (no batch dim), from the states given.
  const auto run = [&](std::vector<Tensor> st, const std::vector<Tensor>& xs,
                       std::vector<Tensor>* finals, std::vector<Tensor>* outs) {
    std::vector<int64_t> axes(n_scan);
    int64_t len = -1;
    for (size_t k = 0; k < n_scan; ++k) {
      axes[k] = axis_of(c, in_axes[k], xs[k].dim());
      const int64_t l = xs[k].sizes()[static_cast<size_t>(axes[k])].value();
      if (len >= 0 && l != len) c.fail("the scan inputs differ in length");
      len = l;
    }
    std::vector<std::vector<Tensor>> scanned(scan_out);
    for (int64_t t = 0; t < len; ++t) {
      std::vector<Val> in;
      for (Tensor& s : st) in.push_back(Val{s});
      for (size_t k = 0; k < n_scan; ++k) {
        const int64_t at = in_dirs[k] != 0 ? len - 1 - t : t;
        in.push_back(Val{squeeze(slice(xs[k], axes[k], at, at + 1), axes[k])});
      }
      std::vector<Val> out = c.model().run_subgraph(body, *c.scope, std::move(in));
      if (out.size() != states + scan_out) c.fail("the body's outputs do not match the node's");
      for (size_t k = 0; k < states; ++k) st[k] = c.materialize(out[k]);
      for (size_t k = 0; k < scan_out; ++k) scanned[k].push_back(c.materialize(out[states + k]));
    }
    *finals = st;
    for (size_t k = 0; k < scan_out; ++k)
      outs->push_back(stack(c, scanned[k], out_axes[k], out_dirs[k] != 0, "a Scan output"));
  };
  std::vector<Tensor> st, xs;
  for (size_t k = 0; k < states; ++k) st.push_back(c.in(first + k));
  for (size_t k = 0; k < n_scan; ++k) xs.push_back(c.in(first + states + k));
  std::vector<Tensor> finals, outs;
  if (!batched) {
    run(st, xs, &finals, &outs);
  } else {  // each batch row on its own, stacked back on dim 0
    const int64_t batch = st.empty() ? xs[0].sizes()[0].value() : st[0].sizes()[0].value();
    std::vector<std::vector<Tensor>> f(states), o(scan_out);
    for (int64_t b = 0; b < batch; ++b) {
      const auto row = [b](const Tensor& t) { return squeeze(slice(t, 0, b, b + 1), 0); };
      std::vector<Tensor> sb, xb, fb, ob;
      for (const Tensor& s : st) sb.push_back(row(s));
      for (const Tensor& x : xs) xb.push_back(row(x));
      run(sb, xb, &fb, &ob);
      for (size_t k = 0; k < states; ++k) f[k].push_back(fb[k]);
      for (size_t k = 0; k < scan_out; ++k) o[k].push_back(ob[k]);
    }
    for (size_t k = 0; k < states; ++k) finals.push_back(stack(c, f[k], 0, false, "a state"));
    for (size_t k = 0; k < scan_out; ++k) outs.push_back(stack(c, o[k], 0, false, "an output"));
  }
  for (size_t k = 0; k < states; ++k) c.set(k, finals[k]);
  for (size_t k = 0; k < scan_out; ++k) c.set(states + k, outs[k]);
}

}  // namespace

void register_control_ops(std::map<std::string, OpHandler>& t) {
  t["If"] = if_op;
  t["Loop"] = loop_op;
  t["Scan"] = scan_op;
}

}  // namespace kiln::onnx
