// Ops whose output size depends on the data, or that have no kernel: Compress (through nonzero,
// a device kernel with a data-dependent length: no graph break), and Unique, NonMaxSuppression
// and Det, computed on the host with call_host. Inside a compiled model each of those three is
// a graph break (named in explain()), run again on every replay.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

/// A host tensor of `dtype` from doubles (floats computed as f32, then cast).
Tensor host_tensor(const std::vector<double>& v, const Shape& shape, DType dtype) {
  if (is_floating(dtype)) {
    std::vector<float> f(v.begin(), v.end());
    Tensor t = Tensor::from_vector(f, shape);
    return dtype == DType::kF32 ? t : cast(t, dtype);
  }
  std::vector<int64_t> i(v.size());
  for (size_t k = 0; k < v.size(); ++k) i[k] = static_cast<int64_t>(v[k]);
  Tensor t = Tensor::from_vector(i, shape);
  return dtype == DType::kI64 ? t : cast(t, dtype);
}

void compress(NodeCtx& c) {
  Tensor x = c.in(0), cond = c.in(1);
  if (cond.dim() != 1) c.fail("condition must be 1-D");
  int64_t axis = 0;
  if (c.has_attr("axis")) {
    axis = axis_of(c, c.attr_i("axis", 0), x.dim());
  } else {
    x = reshape(x, {-1});
  }
  const int64_t n = x.sizes()[static_cast<size_t>(axis)].value();
  if (cond.sizes()[0].value() > n) cond = slice(cond, 0, 0, n);
  Tensor idx = reshape(nonzero(cond), {-1});
  c.set(0, index_select(x, axis, idx));
}

/// np.unique: sorted (or first-occurrence order) unique elements, or slices along `axis`, with
/// first indices, inverse indices and counts.
std::vector<Tensor> unique_host(const Tensor& x, bool has_axis, int64_t axis, bool sorted) {
  const std::vector<double> v = x.to_doubles();
  Shape shape = x.shape();
  if (!has_axis) {
    shape = {static_cast<int64_t>(v.size())};
    axis = 0;
  }
  const auto ax = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < ax) outer *= shape[d];
    if (d > ax) inner *= shape[d];
  }
  const int64_t n = shape[ax];
  // Slice s: the elements (o, s, i) for every o and i, in order.
  auto slice_of = [&](int64_t s) {
    std::vector<double> out;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        out.push_back(v[static_cast<size_t>((o * n + s) * inner + i)]);
    return out;
  };
  std::vector<std::vector<double>> slices;
  for (int64_t s = 0; s < n; ++s) slices.push_back(slice_of(s));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return slices[static_cast<size_t>(a)] < slices[static_cast<size_t>(b)];
    });
  std::vector<int64_t> first, counts, inverse(static_cast<size_t>(n));
  std::vector<size_t> reps;                    // the slice index of each unique value
  std::map<std::vector<double>, size_t> seen;  // unsorted: slice -> unique index
  for (int64_t s : order) {
    const auto& sl = slices[static_cast<size_t>(s)];
    size_t u = reps.size();
    if (sorted) {  // equal slices are adjacent
      if (!reps.empty() && slices[reps.back()] == sl) u = reps.size() - 1;
    } else if (auto it = seen.find(sl); it != seen.end()) {
      u = it->second;
    } else {
      seen.emplace(sl, u);
    }
    if (u == reps.size()) {
      reps.push_back(static_cast<size_t>(s));
      first.push_back(s);
      counts.push_back(0);
    }
    first[u] = std::min(first[u], s);
    ++counts[u];
    inverse[static_cast<size_t>(s)] = static_cast<int64_t>(u);
  }
  // Y: the unique slices along `axis`, in order.
  const auto k = static_cast<int64_t>(reps.size());
  std::vector<double> y(static_cast<size_t>(outer * k * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < k; ++u)
      for (int64_t i = 0; i < inner; ++i)
        y[static_cast<size_t>((o * k + u) * inner + i)] =
            v[static_cast<size_t>((o * n + first[static_cast<size_t>(u)]) * inner + i)];
  Shape ys = shape;
  ys[ax] = k;
  const auto ints = [](const std::vector<int64_t>& a) {
    return Tensor::from_vector(a, {static_cast<int64_t>(a.size())});
  };
  return {host_tensor(y, ys, x.dtype()), ints(first), ints(inverse), ints(counts)};
}

struct Box {
  double y1, x1, y2, x2;
};

double iou(const Box& a, const Box& b) {
  const double area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return 0;
  const double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const double inter = h * w;
  return inter / (area_a + area_b - inter);
}

/// Greedy non-maximum suppression per batch and class: boxes by descending score (ties by
/// index), above score_threshold, dropped when their IoU with a kept box exceeds iou_threshold.
std::vector<Tensor> nms_host(const std::vector<Tensor>& in, bool center, int64_t max_out,
                             double iou_threshold, bool has_score_threshold,
                             double score_threshold) {
  const Shape bs = in[0].shape(), ss = in[1].shape();
  const std::vector<double> boxes = in[0].to_doubles(), scores = in[1].to_doubles();
  const int64_t batches = bs[0], n = bs[1], classes = ss[1];
  std::vector<double> out;
  int64_t rows = 0;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<Box> bx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const double* p = &boxes[static_cast<size_t>((b * n + i) * 4)];
      Box r = center ? Box{p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2}
                     : Box{p[0], p[1], p[2], p[3]};
      if (r.y1 > r.y2) std::swap(r.y1, r.y2);
      if (r.x1 > r.x2) std::swap(r.x1, r.x2);
      bx[static_cast<size_t>(i)] = r;
    }
    for (int64_t cl = 0; cl < classes; ++cl) {
      const double* sc = &scores[static_cast<size_t>((b * classes + cl) * n)];
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i)
        if (!has_score_threshold || sc[i] > score_threshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t c2) { return sc[a] > sc[c2]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool keep = true;
        for (int64_t k : kept)
          keep = keep &&
                 !(iou(bx[static_cast<size_t>(i)], bx[static_cast<size_t>(k)]) > iou_threshold);
        if (!keep) continue;
        kept.push_back(i);
        out.insert(out.end(),
                   {static_cast<double>(b), static_cast<double>(cl), static_cast<double>(i)});
        ++rows;
      }
    }
  }
  return {host_tensor(out, {rows, 3}, DType::kI64)};
}

/// Determinants of [..., M, M] by LU with partial pivoting, in double.
std::vector<Tensor> det_host(const Tensor& x) {
  const Shape s = x.shape();
  const int64_t m = s[s.size() - 1];
  const std::vector<double> v = x.to_doubles();
  const int64_t count = m == 0 ? 1 : static_cast<int64_t>(v.size()) / (m * m);
  std::vector<double> out;
  for (int64_t k = 0; k < count; ++k) {
    std::vector<double> a(v.begin() + k * m * m, v.begin() + (k + 1) * m * m);
    double d = 1;
    for (int64_t col = 0; col < m && d != 0; ++col) {
      int64_t p = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::fabs(a[static_cast<size_t>(r * m + col)]) >
            std::fabs(a[static_cast<size_t>(p * m + col)]))
          p = r;
      if (a[static_cast<size_t>(p * m + col)] == 0) {
        d = 0;
        break;
      }
      if (p != col) {
        for (int64_t j = 0; j < m; ++j)
          std::swap(a[static_cast<size_t>(p * m + j)], a[static_cast<size_t>(col * m + j)]);
        d = -d;
      }
      const double piv = a[static_cast<size_t>(col * m + col)];
      d *= piv;
      for (int64_t r = col + 1; r < m; ++r) {
        const double f = a[static_cast<size_t>(r * m + col)] / piv;
        for (int64_t j = col; j < m; ++j)
          a[static_cast<size_t>(r * m + j)] -= f * a[static_cast<size_t>(col * m + j)];
      }
    }
    out.push_back(d);
  }
  return {host_tensor(out, Shape(s.begin(), s.end() - 2), x.dtype())};
}

}  // namespace

void register_host_ops(std::map<std::string, OpHandler>& t) {
  t["Compress"] = compress;
  t["Unique"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    const bool has_axis = c.has_attr("axis");
    const int64_t axis = has_axis ? axis_of(c, c.attr_i("axis", 0), x.dim()) : 0;
    const bool sorted = c.attr_i("sorted", 1) != 0;
    c.note_break(x, "unique has no device lowering (its size depends on the data)");
    auto out = call_host(
        "Unique",
        [=](const std::vector<Tensor>& a) { return unique_host(a[0], has_axis, axis, sorted); },
        {x});
    for (size_t i = 0; i < out.size(); ++i)
      if (c.wants(i)) c.set(i, out[i]);
  };
  t["NonMaxSuppression"] = [](NodeCtx& c) {
    Tensor boxes = c.in(0), scores = c.in(1);
    if (boxes.dim() != 3 || scores.dim() != 3 || boxes.sizes()[2].value() != 4 ||
        boxes.sizes()[0].value() != scores.sizes()[0].value() ||
        boxes.sizes()[1].value() != scores.sizes()[2].value())
      c.fail("boxes must be [batch, N, 4] and scores [batch, classes, N]");
    // The thresholds and the per-class limit are small host values: read (value-guarded).
    const int64_t max_out = c.has(2) ? c.scalar_int(2) : 0;
    const double iou_threshold = c.has(3) ? c.scalar_double(3) : 0.0;
    const bool has_score = c.has(4);
    const double score_threshold = has_score ? c.scalar_double(4) : 0.0;
    const bool center = c.attr_i("center_point_box", 0) != 0;
    c.note_break(scores,
                 "non-maximum suppression has no device lowering (its size depends on the data)");
    c.set(0, call_host("NonMaxSuppression",
                       [=](const std::vector<Tensor>& a) {
                         return nms_host(a, center, max_out, iou_threshold, has_score,
                                         score_threshold);
                       },
                       {boxes, scores})[0]);
  };
  t["Det"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    if (x.dim() < 2 || x.sizes()[static_cast<size_t>(x.dim() - 1)].value() !=
                           x.sizes()[static_cast<size_t>(x.dim() - 2)].value())
      c.fail("the input must be [..., M, M]");
    c.note_break(x, "det has no device lowering");
    c.set(0, call_host("Det", [](const std::vector<Tensor>& a) { return det_host(a[0]); }, {x})[0]);
  };
}

}  // namespace kiln::onnx
