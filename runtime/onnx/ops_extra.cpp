// Ops composed from several Tensor-API calls: losses, Tile, Dropout (inference), depth/space
// rearrangements, InstanceNormalization, Hardmax, and a few activations.
#include <numeric>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

Tensor lit(double v, const Tensor& like) {
  return scalar(v, like.dtype());
}

/// NegativeLogLikelihoodLoss over log-probabilities x [N, C, d...] and targets [N, d...].
Tensor nll_loss(NodeCtx& c, const Tensor& x, const Tensor& target, const Tensor& weight) {
  if (x.dim() < 2 || target.dim() != x.dim() - 1)
    c.fail("input must be [N, C, ...] and target [N, ...]");
  const std::string reduction = c.attr_s("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    c.fail("reduction '" + reduction + "' is not an ONNX value");
  const bool has_ignore = c.has_attr("ignore_index");
  const int64_t ignore = c.attr_i("ignore_index", 0);
  Tensor t = target;
  Tensor keep;  // bool: the target is not ignored
  if (has_ignore) {
    keep = ne(t, scalar(static_cast<double>(ignore), t.dtype()));
    t = where(keep, t, scalar(0, t.dtype()));
  }
  Tensor picked = squeeze(gather(x, 1, unsqueeze(t, 1)), 1);
  Tensor w;
  if (weight.defined()) {
    w = reshape(index_select(weight, 0, reshape(t, {-1})), t.sizes());
  } else {
    w = full(t.sizes(), 1.0, x.dtype(), c.device());
  }
  if (has_ignore) w = where(keep, w, lit(0, w));
  Tensor loss = neg(mul(picked, w));
  if (reduction == "none") return loss;
  std::vector<int64_t> all(static_cast<size_t>(loss.dim()));
  std::iota(all.begin(), all.end(), 0);
  Tensor total = sum(loss, all);
  return reduction == "sum" ? total : div(total, sum(w, all));
}

Tensor flip(NodeCtx& c, const Tensor& x, int64_t axis) {
  const int64_t n = x.sizes()[static_cast<size_t>(axis)].value();
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = n - 1 - i;
  return index_select(x, axis, c.constant_i64(idx, {n}));
}

void arg_op(NodeCtx& c, bool is_max) {
  Tensor x = c.in(0);
  const int64_t axis = axis_of(c, c.attr_i("axis", 0), x.dim());
  const bool keep = c.attr_i("keepdims", 1) != 0;
  if (c.attr_i("select_last_index", 0) == 0) {
    c.set(0, is_max ? argmax(x, axis, keep) : argmin(x, axis, keep));
    return;
  }
  // The last extreme: the first one of the reversed axis, counted from the end.
  const int64_t n = x.sizes()[static_cast<size_t>(axis)].value();
  Tensor r = flip(c, x, axis);
  Tensor i = is_max ? argmax(r, axis, keep) : argmin(r, axis, keep);
  c.set(0, sub(scalar(static_cast<double>(n - 1), DType::kI64), i));
}

/// [N, C, H, W] rearrangements through a 6-D view and a permutation.
void depth_space(NodeCtx& c, bool to_space) {
  Tensor x = c.in(0);
  if (x.dim() != 4) c.fail("the input must be 4-D");
  const int64_t b = c.attr_i("blocksize", 0);
  if (b <= 0) c.fail("blocksize must be positive");
  const Sizes s = x.sizes();
  const SymSize n = s[0], ch = s[1], h = s[2], w = s[3];
  if (to_space) {
    const bool crd = c.attr_s("mode", "DCR") == "CRD";
    Tensor v =
        crd ? reshape(x, {n, ch / (b * b), b, b, h, w}) : reshape(x, {n, b, b, ch / (b * b), h, w});
    Tensor p = crd ? permute(v, {0, 1, 4, 2, 5, 3}) : permute(v, {0, 3, 4, 1, 5, 2});
    c.set(0, reshape(p, {n, ch / (b * b), h * b, w * b}));
  } else {
    Tensor v = reshape(x, {n, ch, h / b, b, w / b, b});
    c.set(0, reshape(permute(v, {0, 3, 5, 1, 2, 4}), {n, ch * b * b, h / b, w / b}));
  }
}

}  // namespace

/// EyeLike: ones where column - row == k, in `dtype` (default: the input's).
void eye_like(NodeCtx& c) {
  Tensor x = c.in(0);
  if (x.dim() != 2) c.fail("input must be 2-D, got rank " + std::to_string(x.dim()));
  DType dt = x.dtype();
  if (c.has_attr("dtype")) {
    auto d = kiln_dtype(static_cast<OnnxType>(c.attr_i("dtype", 0)));
    if (!d.ok()) c.unsupported(d.status().message());
    dt = *d;
  }
  const int64_t k = c.attr_i("k", 0);
  Tensor rows = unsqueeze(arange(x.sizes()[0], DType::kI64, c.device()), 1);
  Tensor cols = unsqueeze(arange(x.sizes()[1], DType::kI64, c.device()), 0);
  c.set(0, cast(eq(add(rows, scalar(static_cast<double>(k), DType::kI64)), cols), dt));
}

/// OneHot: `on` where the position along the new `axis` equals the index (negative indices
/// count from depth; out-of-range ones match nothing), else `off`.
void one_hot(NodeCtx& c) {
  Tensor indices = c.in(0);
  const double depth_value = c.scalar_double(1);
  const auto depth = static_cast<int64_t>(depth_value);
  if (!(depth_value >= 1) || depth > (int64_t(1) << 31)) c.fail("depth must be at least 1");
  const std::vector<double> values = c.doubles(2);
  if (values.size() != 2) c.fail("values must hold [off, on]");
  const DType dt = c.in(2).dtype();
  const int64_t rank = indices.dim() + 1;
  const int64_t axis = axis_of(c, c.attr_i("axis", -1), rank);
  Tensor idx = cast(indices, DType::kI64);
  const Tensor d = scalar(static_cast<double>(depth), DType::kI64);
  idx = unsqueeze(where(lt(idx, scalar(0, DType::kI64)), add(idx, d), idx), axis);
  Sizes pos_shape(Shape(static_cast<size_t>(rank), 1));
  pos_shape[static_cast<size_t>(axis)] = depth;
  check_size(c, pos_shape);
  Tensor pos =
      reshape(arange(0, static_cast<double>(depth), 1, DType::kI64, c.device()), pos_shape);
  c.set(0, where(eq(idx, pos), scalar(values[1], dt), scalar(values[0], dt)));
}

void register_extra_ops(std::map<std::string, OpHandler>& t) {
  t["Einsum"] = [](NodeCtx& c) {
    std::vector<Tensor> operands;
    for (size_t i = 0; i < c.inputs(); ++i) operands.push_back(c.in(i));
    c.set(0, einsum(c.attr_s("equation", ""), operands));
  };
  t["EyeLike"] = eye_like;
  t["OneHot"] = one_hot;
  t["ArgMax"] = [](NodeCtx& c) { arg_op(c, true); };
  t["ArgMin"] = [](NodeCtx& c) { arg_op(c, false); };
  t["NegativeLogLikelihoodLoss"] = [](NodeCtx& c) {
    c.set(0, nll_loss(c, c.in(0), c.in(1), c.has(2) ? c.in(2) : Tensor()));
  };
  t["SoftmaxCrossEntropyLoss"] = [](NodeCtx& c) {
    Tensor log_prob = log_softmax(c.in(0), 1);
    c.set(0, nll_loss(c, log_prob, c.in(1), c.has(2) ? c.in(2) : Tensor()));
    c.set(1, log_prob);
  };
  t["Dropout"] = [](NodeCtx& c) {
    // Inference, or training with ratio 0: the identity and an all-true mask.
    const bool training = c.has(2) && c.scalar_int(2) != 0;
    const double ratio = c.has(1) ? c.scalar_double(1) : c.attr_f("ratio", 0.5);
    if (training && ratio != 0) c.unsupported("training-mode dropout (random) is not supported");
    Tensor x = c.in(0);
    c.set(0, x);
    if (c.wants(1)) c.set(1, full(x.sizes(), 1, DType::kBool, c.device()));
  };
  t["Tile"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    const std::vector<SymSize> reps = c.ints(1);
    const Sizes s = x.sizes();
    if (reps.size() != s.size()) c.fail("repeats must have one value per dim");
    // [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0 * d0, r1 * d1].
    Sizes view, big, out;
    for (size_t d = 0; d < s.size(); ++d) {
      view.push_back(1);
      view.push_back(s[d]);
      big.push_back(reps[d]);
      big.push_back(s[d]);
      out.push_back(reps[d] * s[d]);
    }
    check_size(c, out);
    c.set(0, reshape(expand(reshape(x, view), big), out));
  };
  t["DepthToSpace"] = [](NodeCtx& c) { depth_space(c, true); };
  t["SpaceToDepth"] = [](NodeCtx& c) { depth_space(c, false); };
  t["InstanceNormalization"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    if (x.dim() < 3) c.fail("the input must be [N, C, D1, ...]");
    std::vector<int64_t> axes;
    for (int64_t d = 2; d < x.dim(); ++d) axes.push_back(d);
    Tensor m = mean(x, axes, true);
    Tensor centred = sub(x, m);
    Tensor inv =
        rsqrt(add(mean(mul(centred, centred), axes, true), lit(c.attr_f("epsilon", 1e-5), x)));
    Sizes ps = c.in(1).sizes();
    for (int64_t d = 2; d < x.dim(); ++d) ps.push_back(1);
    c.set(0, add(mul(mul(centred, inv), reshape(c.in(1), ps)), reshape(c.in(2), ps)));
  };
  t["Hardmax"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    const int64_t axis = axis_of(c, c.attr_i("axis", -1), x.dim());
    if (c.opset() < 13) c.unsupported("Hardmax before opset 13 (2-D coercion) is not supported");
    const SymSize n = x.sizes()[static_cast<size_t>(axis)];
    Sizes ps;
    for (int64_t d = 0; d < x.dim(); ++d) ps.push_back(d == axis ? n : SymSize(1));
    Tensor pos = reshape(arange(n, DType::kI64, c.device()), ps);
    c.set(0, cast(eq(pos, argmax(x, axis, true)), x.dtype()));
  };
  t["Selu"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    const double alpha = c.attr_f("alpha", 1.67326319217681884765625);
    const double gamma = c.attr_f("gamma", 1.05070102214813232421875);
    Tensor neg_part = mul(sub(exp(x), lit(1, x)), lit(alpha, x));
    c.set(0, mul(where(gt(x, lit(0, x)), x, neg_part), lit(gamma, x)));
  };
  t["ThresholdedRelu"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    c.set(0, where(gt(x, lit(c.attr_f("alpha", 1.0), x)), x, lit(0, x)));
  };
}

}  // namespace kiln::onnx
