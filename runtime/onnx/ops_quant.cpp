// Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer
// products MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, composed from Tensor-API
// ops. 8-bit values are computed in i32 (docs/onnx.md); quantizing saturates to the range of the
// zero point's declared type (uint8 when there is none) and rounds half to even, as ONNX says.
#include <string>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

struct QRange {
  double lo, hi;
};

/// The saturation range of the quantized type input `i` (a zero point) is declared with.
QRange qrange(NodeCtx& c, size_t i) {
  const OnnxType t = c.has(i) ? c.declared_type(i) : OnnxType::kUint8;
  switch (t) {
    case OnnxType::kUint8:
    case OnnxType::kUndefined:
      return {0, 255};
    case OnnxType::kInt8:
      return {-128, 127};
    case OnnxType::kUint16:
      return {0, 65535};
    case OnnxType::kInt16:
      return {-32768, 32767};
    default:
      c.unsupported(std::string("quantizing to ") + onnx_type_name(t));
  }
}

/// A per-axis parameter (scale or zero point, 1-D over dim `axis` of x) shaped to broadcast
/// against x; a scalar stays as it is.
Tensor per_axis(NodeCtx& c, const Tensor& p, const Tensor& x) {
  if (p.dim() == 0 || (p.dim() == 1 && p.sizes()[0].value() == 1 && x.dim() != 1))
    return reshape(p, {});
  if (p.dim() != 1) c.fail("a scale or zero point must be a scalar or 1-D");
  const int64_t axis = axis_of(c, c.attr_i("axis", 1), x.dim());
  if (p.sizes()[0].value() != x.sizes()[static_cast<size_t>(axis)].value())
    c.fail("a 1-D scale or zero point must have one value per element of the axis");
  Sizes s(std::vector<SymSize>(static_cast<size_t>(x.dim()), SymSize(1)));
  s[static_cast<size_t>(axis)] = p.sizes()[0];
  return reshape(p, s);
}

Tensor f32(const Tensor& t) {
  return t.dtype() == DType::kF32 ? t : cast(t, DType::kF32);
}

/// saturate(round_half_even(x / scale) + zero_point), as the zero point's integer dtype.
Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor& zp, QRange r, DType out) {
  Tensor q = round(div(f32(x), f32(scale)));
  if (zp.defined()) q = add(q, f32(zp));
  q = maximum(minimum(q, scalar(r.hi, DType::kF32)), scalar(r.lo, DType::kF32));
  return cast(q, out);
}

DType int_dtype(NodeCtx& c, size_t zp) {
  return c.has(zp) ? c.in(zp).dtype() : DType::kI32;
}

/// x - zero_point in i32 (no zero point: x as i32). A 1-D zero point of an A operand is per
/// row ([M] against [..., M, K]); of a B operand per column.
Tensor centred(NodeCtx& c, const Tensor& x, size_t zp_input, bool rows) {
  Tensor v = cast(x, DType::kI32);
  if (!c.has(zp_input)) return v;
  Tensor zp = cast(c.in(zp_input), DType::kI32);
  if (zp.dim() == 1 && zp.sizes()[0].value() != 1 && rows) zp = reshape(zp, {zp.sizes()[0], 1});
  if (zp.dim() == 1 && zp.sizes()[0].value() == 1) zp = reshape(zp, {});
  return sub(v, zp);
}

/// An integer product computed in f32 is exact while every partial sum stays below 2^24.
void check_exact(NodeCtx& c, int64_t terms, double max_a, double max_b) {
  if (static_cast<double>(terms) * max_a * max_b >= 16777216.0)
    c.unsupported("an integer product with " + std::to_string(terms) +
                  " terms per output could exceed 2^24 (computed in f32)");
}

void conv_integer(NodeCtx& c, const Tensor& x, const Tensor& w, size_t x_zp, size_t w_zp,
                  Tensor* out) {
  Tensor xs = f32(centred(c, x, x_zp, false));
  Tensor ws = cast(w, DType::kI32);
  if (c.has(w_zp)) {  // per tensor, or per output channel ([M] against [M, C, k...])
    Tensor zp = cast(c.in(w_zp), DType::kI32);
    if (zp.numel() == 1) {
      zp = reshape(zp, {});
    } else {
      Sizes s(std::vector<SymSize>(static_cast<size_t>(w.dim()), SymSize(1)));
      s[0] = zp.sizes()[0];
      zp = reshape(zp, s);
    }
    ws = sub(ws, zp);
  }
  ws = f32(ws);
  int64_t terms = 1;
  for (int64_t d = 1; d < w.dim(); ++d) terms *= w.sizes()[static_cast<size_t>(d)].value();
  check_exact(c, terms, 255, 255);
  *out = conv_node(c, xs, ws, Tensor());
}

}  // namespace

void register_quant_ops(std::map<std::string, OpHandler>& t) {
  t["QuantizeLinear"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    Tensor zp = c.has(2) ? per_axis(c, c.in(2), x) : Tensor();
    c.set(0, quantize(x, per_axis(c, c.in(1), x), zp, qrange(c, 2), int_dtype(c, 2)));
  };
  t["DequantizeLinear"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    Tensor v = f32(x);
    if (c.has(2)) v = sub(v, f32(per_axis(c, c.in(2), x)));
    c.set(0, mul(v, f32(per_axis(c, c.in(1), x))));
  };
  t["DynamicQuantizeLinear"] = [](NodeCtx& c) {
    // uint8: scale = (max(x, 0) - min(x, 0)) / 255, zero point = saturate(round(-min / scale)).
    Tensor x = f32(c.in(0));
    std::vector<int64_t> all;
    for (int64_t d = 0; d < x.dim(); ++d) all.push_back(d);
    Tensor zero = scalar(0, DType::kF32);
    Tensor lo = minimum(min(x, all), zero), hi = maximum(max(x, all), zero);
    Tensor scale = div(sub(hi, lo), scalar(255, DType::kF32));
    Tensor zp = maximum(minimum(round(sub(zero, div(lo, scale))), scalar(255, DType::kF32)), zero);
    c.set(0, quantize(x, scale, zp, {0, 255}, DType::kI32));
    c.set(1, scale);
    c.set(2, cast(zp, DType::kI32));
  };
  t["MatMulInteger"] = [](NodeCtx& c) {
    c.set(0, matmul(centred(c, c.in(0), 2, true), centred(c, c.in(1), 3, false)));
  };
  t["ConvInteger"] = [](NodeCtx& c) {
    Tensor y;
    conv_integer(c, c.in(0), c.in(1), 2, 3, &y);
    c.set(0, cast(y, DType::kI32));
  };
  t["QLinearMatMul"] = [](NodeCtx& c) {
    // a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
    Tensor acc = f32(matmul(centred(c, c.in(0), 2, true), centred(c, c.in(3), 5, false)));
    Tensor real = mul(acc, mul(f32(c.in(1)), f32(c.in(4))));
    c.set(0, quantize(real, c.in(6), c.in(7), qrange(c, 7), int_dtype(c, 7)));
  };
  t["QLinearConv"] = [](NodeCtx& c) {
    // x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (i32, scale x_scale * w_scale).
    Tensor acc;
    conv_integer(c, c.in(0), c.in(3), 2, 5, &acc);
    Tensor w = c.in(3);
    Tensor ws = f32(c.in(4));
    if (ws.dim() == 1 && ws.sizes()[0].value() != 1) {
      Sizes s(std::vector<SymSize>(static_cast<size_t>(acc.dim()), SymSize(1)));
      s[1] = ws.sizes()[0];
      ws = reshape(ws, s);
    } else {
      ws = reshape(ws, {});
    }
    Tensor scale = mul(reshape(f32(c.in(1)), {}), ws);
    if (c.has(8)) {
      Sizes s(std::vector<SymSize>(static_cast<size_t>(acc.dim()), SymSize(1)));
      s[1] = w.sizes()[0];
      acc = add(acc, reshape(f32(c.in(8)), s));
    }
    Tensor real = mul(acc, scale);
    c.set(0, quantize(real, reshape(c.in(6), {}), reshape(c.in(7), {}), qrange(c, 7),
                      int_dtype(c, 7)));
  };
}

}  // namespace kiln::onnx
