// The optimizer steps of domain ai.onnx.preview.training (Adagrad, Momentum, Adam), composed
// from elementwise ops as the operator definitions write them. The step count T is a tensor
// (decisions on it are `where`s, not host reads).
#include <string>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

Tensor lit(double v, const Tensor& like) {
  return scalar(v, like.dtype());
}

/// The inputs after R and T split into `groups` equal lists (X..., G..., and the states).
std::vector<std::vector<Tensor>> groups_of(NodeCtx& c, size_t groups) {
  const size_t rest = c.inputs() - 2;
  if (rest == 0 || rest % groups != 0)
    c.fail("expects R, T and " + std::to_string(groups) + " lists of equal length");
  const size_t n = rest / groups;
  std::vector<std::vector<Tensor>> out(groups);
  for (size_t g = 0; g < groups; ++g)
    for (size_t i = 0; i < n; ++i) out[g].push_back(c.in(2 + g * n + i));
  return out;
}

/// T as a float scalar of X's dtype.
Tensor step_count(NodeCtx& c, const Tensor& like) {
  return cast(reshape(c.in(1), {}), like.dtype());
}

void adagrad(NodeCtx& c) {
  auto in = groups_of(c, 3);  // X, G, H
  const double decay = c.attr_f("decay_factor", 0), eps = c.attr_f("epsilon", 0);
  const double norm = c.attr_f("norm_coefficient", 0);
  const size_t n = in[0].size();
  for (size_t i = 0; i < n; ++i) {
    const Tensor &x = in[0][i], &g = in[1][i], &h = in[2][i];
    Tensor r = div(cast(reshape(c.in(0), {}), x.dtype()),
                   add(lit(1, x), mul(step_count(c, x), lit(decay, x))));
    Tensor greg = add(mul(x, lit(norm, x)), g);
    Tensor hn = add(h, mul(greg, greg));
    Tensor ha = add(sqrt(hn), lit(eps, x));
    c.set(i, sub(x, div(mul(r, greg), ha)));
    c.set(n + i, hn);
  }
}

void momentum(NodeCtx& c) {
  auto in = groups_of(c, 3);  // X, G, V
  const double alpha = c.attr_f("alpha", 0), beta = c.attr_f("beta", 0);
  const double norm = c.attr_f("norm_coefficient", 0);
  const std::string mode = c.attr_s("mode", "standard");
  if (mode != "standard" && mode != "nesterov") c.fail("mode must be standard or nesterov");
  const size_t n = in[0].size();
  for (size_t i = 0; i < n; ++i) {
    const Tensor &x = in[0][i], &g = in[1][i], &v = in[2][i];
    Tensor r = cast(reshape(c.in(0), {}), x.dtype());
    Tensor greg = add(mul(x, lit(norm, x)), g);
    // The first step (T = 0) takes the gradient whole.
    Tensor b = where(gt(step_count(c, x), lit(0, x)), lit(beta, x), lit(1, x));
    Tensor vn = add(mul(v, lit(alpha, x)), mul(b, greg));
    Tensor xn =
        mode == "standard" ? sub(x, mul(r, vn)) : sub(x, mul(r, add(greg, mul(vn, lit(alpha, x)))));
    c.set(i, xn);
    c.set(n + i, vn);
  }
}

void adam(NodeCtx& c) {
  auto in = groups_of(c, 4);  // X, G, V, H
  const double alpha = c.attr_f("alpha", 0.9), beta = c.attr_f("beta", 0.999);
  const double eps = c.attr_f("epsilon", 1e-6), norm = c.attr_f("norm_coefficient", 0);
  const double post = c.attr_f("norm_coefficient_post", 0);
  const size_t n = in[0].size();
  for (size_t i = 0; i < n; ++i) {
    const Tensor &x = in[0][i], &g = in[1][i], &v = in[2][i], &h = in[3][i];
    Tensor r = cast(reshape(c.in(0), {}), x.dtype());
    Tensor t = step_count(c, x);
    Tensor greg = add(mul(x, lit(norm, x)), g);
    Tensor vn = add(mul(v, lit(alpha, x)), mul(greg, lit(1 - alpha, x)));
    Tensor hn = add(mul(h, lit(beta, x)), mul(mul(greg, greg), lit(1 - beta, x)));
    Tensor hs = add(sqrt(hn), lit(eps, x));
    // Bias correction from the second step on: R * sqrt(1 - beta^T) / (1 - alpha^T).
    Tensor corrected = div(mul(r, sqrt(sub(lit(1, x), pow(lit(beta, x), t)))),
                           sub(lit(1, x), pow(lit(alpha, x), t)));
    Tensor ra = where(gt(t, lit(0, x)), corrected, r);
    Tensor xn = sub(x, mul(ra, div(vn, hs)));
    c.set(i, mul(xn, lit(1 - post, x)));
    c.set(n + i, vn);
    c.set(2 * n + i, hn);
  }
}

}  // namespace

void register_training_ops(std::map<std::string, OpHandler>& t) {
  const std::string d = "ai.onnx.preview.training.";
  t[d + "Adagrad"] = adagrad;
  t[d + "Momentum"] = momentum;
  t[d + "Adam"] = adam;
}

}  // namespace kiln::onnx
