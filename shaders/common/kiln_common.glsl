// Shared helpers for every generated kernel: numerically safe activations and erf.

// erf from the Chebyshev-fitted erfc approximation of Numerical Recipes (erfcc; fractional
// error below 1.2e-7 everywhere), with odd symmetry.
float kiln_erf(float x) {
  float t = 1.0 / (1.0 + 0.5 * abs(x));
  float y = 1.0 - t * exp(-x * x - 1.26551223 +
                          t * (1.00002368 +
                          t * (0.37409196 +
                          t * (0.09678418 +
                          t * (-0.18628806 +
                          t * (0.27886807 +
                          t * (-1.13520398 +
                          t * (1.48851587 +
                          t * (-0.82215223 +
                          t * 0.17087277)))))))));
  return x >= 0.0 ? y : -y;
}
vec4 kiln_erf(vec4 x) { return vec4(kiln_erf(x.x), kiln_erf(x.y), kiln_erf(x.z), kiln_erf(x.w)); }

// tanh without the overflow of (e^2x - 1) / (e^2x + 1) for large |x|.
float kiln_tanh(float x) {
  float e = exp(-2.0 * abs(x));
  float y = (1.0 - e) / (1.0 + e);
  return x >= 0.0 ? y : -y;
}
vec4 kiln_tanh(vec4 x) { return vec4(kiln_tanh(x.x), kiln_tanh(x.y), kiln_tanh(x.z), kiln_tanh(x.w)); }

float kiln_sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }
vec4 kiln_sigmoid(vec4 x) { return 1.0 / (1.0 + exp(-x)); }

// GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)).
float kiln_gelu(float x) { return 0.5 * x * (1.0 + kiln_erf(x * 0.70710678118654752)); }
vec4 kiln_gelu(vec4 x) { return 0.5 * x * (1.0 + kiln_erf(x * 0.70710678118654752)); }

#define KILN_INF uintBitsToFloat(0x7f800000u)

// maximum / minimum that propagate NaN from either operand (GLSL max/min leave it undefined),
// matching the interpreter and PyTorch.
float kiln_maximum(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : max(a, b)); }
vec4 kiln_maximum(vec4 a, vec4 b) { return mix(mix(max(a, b), b, isnan(b)), a, isnan(a)); }
float kiln_minimum(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : min(a, b)); }
vec4 kiln_minimum(vec4 a, vec4 b) { return mix(mix(min(a, b), b, isnan(b)), a, isnan(a)); }
// relu that keeps NaN (x < 0 is false for NaN).
float kiln_relu(float x) { return x < 0.0 ? 0.0 : x; }
vec4 kiln_relu(vec4 x) { return mix(x, vec4(0.0), lessThan(x, vec4(0.0))); }
