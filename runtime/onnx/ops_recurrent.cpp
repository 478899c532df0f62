// The recurrent layers RNN, GRU and LSTM (opsets 7 and 14), unrolled over the sequence into
// Tensor-API ops: one input projection for all steps, then per step a product with R, the
// gates and the state update. The sequence length is specialised (a guard); sequence_lens
// masks each batch row past its length (its state stays, its outputs are zero), and the reverse
// direction of a masked batch walks each row's own prefix backwards.
#include <string>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

enum class Cell { kRnn, kGru, kLstm };

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

Tensor lit(double v, const Tensor& like) {
  return scalar(v, like.dtype());
}

Tensor activate(const Activation& a, const Tensor& x) {
  const std::string& n = a.name;
  if (n == "Sigmoid") return sigmoid(x);
  if (n == "Tanh") return tanh(x);
  if (n == "Relu") return relu(x);
  if (n == "LeakyRelu") return where(ge(x, lit(0, x)), x, mul(x, lit(a.alpha, x)));
  if (n == "ThresholdedRelu") return where(gt(x, lit(a.alpha, x)), x, lit(0, x));
  if (n == "HardSigmoid")
    return maximum(minimum(add(mul(x, lit(a.alpha, x)), lit(a.beta, x)), lit(1, x)), lit(0, x));
  if (n == "Affine") return add(mul(x, lit(a.alpha, x)), lit(a.beta, x));
  if (n == "ScaledTanh") return mul(tanh(mul(x, lit(a.beta, x))), lit(a.alpha, x));
  if (n == "Elu") return where(ge(x, lit(0, x)), x, mul(sub(exp(x), lit(1, x)), lit(a.alpha, x)));
  if (n == "Softsign") return div(x, add(abs(x), lit(1, x)));
  // Softplus: log(1 + exp(x)), kept finite for large x.
  return add(relu(x), log(add(exp(neg(abs(x))), lit(1, x))));
}

/// The activations of every direction: the `activations` attribute (with alpha/beta consumed in
/// order by the functions that take them) or the cell's defaults.
std::vector<std::vector<Activation>> activations(NodeCtx& c, Cell cell, int64_t dirs) {
  const size_t per_dir = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
  std::vector<std::string> names = c.attr_strings("activations");
  if (names.empty()) {
    for (int64_t d = 0; d < dirs; ++d) {
      if (cell == Cell::kRnn) names.push_back("Tanh");
      if (cell != Cell::kRnn) names.push_back("Sigmoid");
      if (cell != Cell::kRnn) names.push_back("Tanh");
      if (cell == Cell::kLstm) names.push_back("Tanh");
    }
  }
  if (names.size() != per_dir * static_cast<size_t>(dirs))
    c.fail("activations must name " + std::to_string(per_dir * static_cast<size_t>(dirs)) +
           " functions");
  const std::vector<double> alphas = c.attr_floats("activation_alpha");
  const std::vector<double> betas = c.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<std::vector<Activation>> out(static_cast<size_t>(dirs));
  for (size_t i = 0; i < names.size(); ++i) {
    Activation a;
    a.name = names[i];
    const auto take = [&](const std::vector<double>& v, size_t& at, double dflt) {
      return at < v.size() ? v[at++] : dflt;
    };
    if (a.name == "LeakyRelu") {
      a.alpha = take(alphas, ai, 0.01);
    } else if (a.name == "ThresholdedRelu" || a.name == "Elu") {
      a.alpha = take(alphas, ai, 1.0);
    } else if (a.name == "HardSigmoid") {
      a.alpha = take(alphas, ai, 0.2);
      a.beta = take(betas, bi, 0.5);
    } else if (a.name == "Affine" || a.name == "ScaledTanh") {
      if (ai >= alphas.size() || bi >= betas.size())
        c.fail(a.name + " needs activation_alpha and activation_beta values");
      a.alpha = alphas[ai++];
      a.beta = betas[bi++];
    } else if (a.name != "Sigmoid" && a.name != "Tanh" && a.name != "Relu" &&
               a.name != "Softsign" && a.name != "Softplus") {
      c.unsupported("activation '" + a.name + "' is not an ONNX recurrent activation");
    }
    out[i / per_dir].push_back(a);
  }
  return out;
}

/// Row `d` of a [dirs, ...] tensor, without the leading dim.
Tensor dir_row(const Tensor& t, int64_t d) {
  return squeeze(slice(t, 0, d, d + 1), 0);
}

/// Gate k of G from [batch, G * hidden].
Tensor gate(const Tensor& t, int64_t k, int64_t hidden) {
  return slice(t, 1, k * hidden, (k + 1) * hidden);
}

void recurrent(NodeCtx& c, Cell cell) {
  const int64_t gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  const int64_t layout = c.attr_i("layout", 0);
  if (layout != 0 && layout != 1) c.fail("layout must be 0 or 1");
  const std::string direction = c.attr_s("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.fail("direction '" + direction + "' is not forward, reverse or bidirectional");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (cell == Cell::kLstm && c.attr_i("input_forget", 0) != 0)
    c.unsupported("LSTM input_forget = 1 (coupled input and forget gates) is not supported");
  const bool has_clip = c.has_attr("clip");
  const double clip = c.attr_f("clip", 0);
  const bool linear_before_reset = c.attr_i("linear_before_reset", 0) != 0;

  Tensor x = c.in(0);
  if (x.dim() != 3) c.fail("X must be 3-D");
  if (layout == 1) x = permute(x, {1, 0, 2});  // [seq, batch, input]
  if (!is_floating(x.dtype())) c.fail("X must be a float tensor");
  const int64_t seq = x.sizes()[0].value();
  const SymSize batch = x.sizes()[1];
  Tensor w = c.in(1), r = c.in(2);
  if (w.dim() != 3 || r.dim() != 3) c.fail("W and R must be 3-D");
  const int64_t hidden =
      c.has_attr("hidden_size") ? c.attr_i("hidden_size", 0) : r.sizes()[2].value();
  if (hidden <= 0) c.fail("hidden_size must be positive");
  if (w.sizes()[0].value() != dirs || w.sizes()[1].value() != gates * hidden ||
      r.sizes()[0].value() != dirs || r.sizes()[1].value() != gates * hidden ||
      r.sizes()[2].value() != hidden || w.sizes()[2].value() != x.sizes()[2].value())
    c.fail("W must be [num_directions, " + std::to_string(gates) +
           " * hidden_size, input_size] and R [num_directions, " + std::to_string(gates) +
           " * hidden_size, hidden_size]");
  Tensor b = c.has(3) ? c.in(3) : Tensor();
  if (b.defined() &&
      (b.dim() != 2 || b.sizes()[0].value() != dirs || b.sizes()[1].value() != 2 * gates * hidden))
    c.fail("B must be [num_directions, " + std::to_string(2 * gates) + " * hidden_size]");
  Tensor lens = c.has(4) ? cast(c.in(4), DType::kI64) : Tensor();
  const auto state = [&](size_t i) {
    if (!c.has(i)) return full({dirs, batch, hidden}, 0, x.dtype(), c.device());
    Tensor s = c.in(i);
    if (s.dim() != 3) c.fail("initial states must be 3-D");
    return layout == 1 ? permute(s, {1, 0, 2}) : s;
  };
  Tensor h0 = state(5);
  Tensor c0 = cell == Cell::kLstm ? state(6) : Tensor();
  Tensor peep = cell == Cell::kLstm && c.has(7) ? c.in(7) : Tensor();
  const std::vector<std::vector<Activation>> acts = activations(c, cell, dirs);

  std::vector<Tensor> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const std::vector<Activation>& f = acts[static_cast<size_t>(d)];
    const auto act = [&](size_t k, Tensor v) {
      if (has_clip) v = maximum(minimum(v, lit(clip, v)), lit(-clip, v));
      return activate(f[k], v);
    };
    // A reversed walk of a masked batch: row b reads step L_b - 1 - t for t < L_b (an
    // involution, so the same gather puts the outputs back).
    Tensor xd = x, order;
    if (reverse && lens.defined()) {
      Tensor t = reshape(arange(seq, DType::kI64, c.device()), {seq, 1});
      Tensor l = reshape(lens, {1, batch});
      order = expand(where(lt(t, l), sub(sub(l, scalar(1, DType::kI64)), t), t), {seq, batch});
      xd = gather(x, 0, expand(unsqueeze(order, 2), x.sizes()));
    }
    Tensor wd = dir_row(w, d), rd = dir_row(r, d);
    Tensor xw = matmul(xd, wd, false, true);  // [seq, batch, G * hidden]
    Tensor rb;
    if (b.defined()) {
      Tensor bd = dir_row(b, d);
      xw = add(xw, slice(bd, 0, 0, gates * hidden));
      rb = slice(bd, 0, gates * hidden, 2 * gates * hidden);
    }
    Tensor h = dir_row(h0, d), cst = c0.defined() ? dir_row(c0, d) : Tensor();
    Tensor pi, po, pf;
    if (peep.defined()) {
      Tensor pd = dir_row(peep, d);
      pi = slice(pd, 0, 0, hidden), po = slice(pd, 0, hidden, 2 * hidden);
      pf = slice(pd, 0, 2 * hidden, 3 * hidden);
    }
    std::vector<Tensor> steps(static_cast<size_t>(seq));
    for (int64_t i = 0; i < seq; ++i) {
      const int64_t t = reverse && !lens.defined() ? seq - 1 - i : i;
      Tensor xt = squeeze(slice(xw, 0, t, t + 1), 0);  // [batch, G * hidden]
      Tensor hr = matmul(h, rd, false, true);
      if (rb.defined()) hr = add(hr, rb);
      Tensor hn, cn;
      if (cell == Cell::kRnn) {
        hn = act(0, add(xt, hr));
      } else if (cell == Cell::kGru) {
        Tensor z = act(0, add(gate(xt, 0, hidden), gate(hr, 0, hidden)));
        Tensor rg = act(0, add(gate(xt, 1, hidden), gate(hr, 1, hidden)));
        Tensor pre;
        if (linear_before_reset) {
          pre = add(gate(xt, 2, hidden), mul(rg, gate(hr, 2, hidden)));
        } else {
          Tensor rh = matmul(mul(rg, h), slice(rd, 0, 2 * hidden, 3 * hidden), false, true);
          if (rb.defined()) rh = add(rh, slice(rb, 0, 2 * hidden, 3 * hidden));
          pre = add(gate(xt, 2, hidden), rh);
        }
        Tensor hh = act(1, pre);
        hn = add(mul(sub(lit(1, z), z), hh), mul(z, h));
      } else {
        Tensor gi = add(gate(xt, 0, hidden), gate(hr, 0, hidden));
        Tensor go = add(gate(xt, 1, hidden), gate(hr, 1, hidden));
        Tensor gf = add(gate(xt, 2, hidden), gate(hr, 2, hidden));
        Tensor gc = add(gate(xt, 3, hidden), gate(hr, 3, hidden));
        if (pi.defined()) gi = add(gi, mul(pi, cst));
        if (pf.defined()) gf = add(gf, mul(pf, cst));
        Tensor it = act(0, gi), ft = act(0, gf), ct = act(1, gc);
        cn = add(mul(ft, cst), mul(it, ct));
        if (po.defined()) go = add(go, mul(po, cn));
        hn = mul(act(0, go), act(2, cn));
      }
      Tensor y = hn;
      if (lens.defined()) {
        Tensor live = unsqueeze(lt(scalar(i, DType::kI64), lens), 1);  // [batch, 1]
        hn = where(live, hn, h);
        if (cn.defined()) cn = where(live, cn, cst);
        y = where(live, y, lit(0, y));
      }
      h = hn;
      if (cn.defined()) cst = cn;
      steps[static_cast<size_t>(t)] = unsqueeze(y, 0);
    }
    Tensor yd = concat(steps, 0);  // [seq, batch, hidden]
    if (order.defined()) yd = gather(yd, 0, expand(unsqueeze(order, 2), yd.sizes()));
    ys.push_back(unsqueeze(yd, 1));
    hs.push_back(unsqueeze(h, 0));
    if (cst.defined()) cs.push_back(unsqueeze(cst, 0));
  }
  Tensor y = concat(ys, 1);  // [seq, dirs, batch, hidden]
  Tensor yh = concat(hs, 0);
  if (layout == 1) {
    y = permute(y, {2, 0, 1, 3});
    yh = permute(yh, {1, 0, 2});
  }
  if (c.wants(0)) c.set(0, y);
  if (c.wants(1)) c.set(1, yh);
  if (cell == Cell::kLstm && c.wants(2)) {
    Tensor yc = concat(cs, 0);
    c.set(2, layout == 1 ? permute(yc, {1, 0, 2}) : yc);
  }
}

}  // namespace

void register_recurrent_ops(std::map<std::string, OpHandler>& t) {
  t["RNN"] = [](NodeCtx& c) { recurrent(c, Cell::kRnn); };
  t["GRU"] = [](NodeCtx& c) { recurrent(c, Cell::kGru); };
  t["LSTM"] = [](NodeCtx& c) { recurrent(c, Cell::kLstm); };
}

}  // namespace kiln::onnx
