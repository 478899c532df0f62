#version 450
// Resize and GridSample: one invocation per output element (grid-stride) gathering its input
// taps with weights, the same float operations in the same order as the interpreter
// (runtime/eager/interpreter_resize.cpp; `precise` keeps the driver from contracting them).
// Codegen supplies kiln_extensions.glsl and kiln_kernel.glsl with the bindings and
//   Resize:     void kiln_resample(uint o)  output element o, generated for the op's rank: per
//               axis kiln_coord and kiln_taps (below), then the loop over the taps of every
//               resized axis reading kiln_x(i0, ..., ik) (the input's fused prologue)
//   GridSample: float kiln_x(uint n, uint c, uint y, uint x)   the input (fused prologue)
//               float kiln_grid(uint n, uint h, uint w, uint k)  the grid
//               void kiln_store(uint o, float v)
// and the macros KILN_LOCAL_SIZE, KILN_OUTPUTS, KILN_GRID (0 Resize, 1 GridSample), KILN_MODE
// (0 nearest, 1 linear, 2 cubic), KILN_TAPS (1, 2, 4); Resize: KILN_COORD (ResizeCoord),
// KILN_NEAREST (NearestMode), KILN_CUBIC_A, KILN_EXCLUDE_OUTSIDE; GridSample: KILN_C, KILN_H,
// KILN_W, KILN_HO, KILN_WO, KILN_PADDING (0 zeros, 1 border, 2 reflection), KILN_ALIGN, and
// KILN_GRID_N/C/I/J(o), an output index's (n, c, i, j).
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

// Keys' cubic convolution coefficients of the taps j - 1 .. j + 2 at fraction t.
void kiln_cubic(float a, float t, out float c[4]) {
  precise float t1 = t + 1.0, u = 1.0 - t, u1 = 2.0 - t;
  precise float c0 = ((a * t1 - 5.0 * a) * t1 + 8.0 * a) * t1 - 4.0 * a;
  precise float c1 = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  precise float c2 = ((a + 2.0) * u - (a + 3.0)) * u * u + 1.0;
  precise float c3 = ((a * u1 - 5.0 * a) * u1 + 8.0 * a) * u1 - 4.0 * a;
  c[0] = c0;
  c[1] = c1;
  c[2] = c2;
  c[3] = c3;
}

#if KILN_GRID == 0
// Input coordinate of output index q on one axis: scale s, input size n, len (the unfloored
// output length for a scale, else the output size), output size m, roi [r0, r1].
float kiln_coord(float q, float s, float n, float len, float m, float r0, float r1) {
  precise float x;
#if KILN_COORD == 0  // half_pixel
  x = (q + 0.5) / s - 0.5;
#elif KILN_COORD == 1  // pytorch_half_pixel
  x = len > 1.0 ? (q + 0.5) / s - 0.5 : 0.0;
#elif KILN_COORD == 2  // align_corners
  x = len == 1.0 ? 0.0 : q * (n - 1.0) / (len - 1.0);
#elif KILN_COORD == 3  // asymmetric
  x = q / s;
#elif KILN_COORD == 4  // tf_half_pixel_for_nn
  x = (q + 0.5) / s;
#else  // tf_crop_and_resize
  x = m > 1.0 ? r0 * (n - 1.0) + q * (r1 - r0) * (n - 1.0) / (m - 1.0) : 0.5 * (r0 + r1) * (n - 1.0);
#endif
  return x;
}

// The taps of one axis at coordinate x: indices clamped into [0, len) and weights.
void kiln_taps(float x, int len, out uint idx[KILN_TAPS], out float w[KILN_TAPS]) {
  precise float f = floor(x);
  precise float t = x - f;
  const int j = int(clamp(f, -4.0, float(len) + 4.0));
#if KILN_MODE == 0
  int k = j;
#if KILN_NEAREST == 0
  k += t > 0.5 ? 1 : 0;
#elif KILN_NEAREST == 1
  k += t >= 0.5 ? 1 : 0;
#elif KILN_NEAREST == 3
  k += t > 0.0 ? 1 : 0;
#endif
  idx[0] = uint(clamp(k, 0, len - 1));
  w[0] = 1.0;
#elif KILN_MODE == 1
  idx[0] = uint(clamp(j, 0, len - 1));
  idx[1] = uint(clamp(j + 1, 0, len - 1));
  precise float u = 1.0 - t;
  w[0] = u;
  w[1] = t;
#else
  float c[4];
  kiln_cubic(KILN_CUBIC_A, t, c);
  for (int i = 0; i < 4; ++i) idx[i] = uint(clamp(j - 1 + i, 0, len - 1));
#if KILN_EXCLUDE_OUTSIDE
  for (int i = 0; i < 4; ++i)
    if (j - 1 + i < 0 || j - 1 + i >= len) c[i] = 0.0;
  precise float sum = c[0] + c[1] + c[2] + c[3];
  for (int i = 0; i < 4; ++i) {
    precise float v = c[i] / sum;
    c[i] = v;
  }
#endif
  for (int i = 0; i < 4; ++i) w[i] = c[i];
#endif
}
#else
// x clamped into [lo, hi], NaN kept (GLSL's clamp leaves NaN undefined).
float kiln_clampf(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

float kiln_unnormalize(float g, float size) {
  precise float x;
#if KILN_ALIGN
  x = ((g + 1.0) / 2.0) * (size - 1.0);
#else
  x = ((g + 1.0) * size - 1.0) / 2.0;
#endif
  return x;
}

// PyTorch's reflect_coordinates over [lo2 / 2, hi2 / 2].
float kiln_reflect(float x, float lo2, float hi2) {
  if (lo2 == hi2) return 0.0;
  precise float mn = lo2 / 2.0, span = (hi2 - lo2) / 2.0;
  precise float ax = abs(x - mn);
  precise float flips = floor(ax / span);
  precise float extra = ax - span * flips;
  precise float parity = flips - 2.0 * floor(flips / 2.0);
  precise float r = parity == 0.0 ? extra + mn : span - extra + mn;
  return r;
}

// The padding mode applied to a coordinate (PyTorch's compute_coordinates).
float kiln_pad(float x, float size) {
#if KILN_PADDING == 1
  return kiln_clampf(x, 0.0, size - 1.0);
#elif KILN_PADDING == 2
#if KILN_ALIGN
  return kiln_clampf(kiln_reflect(x, 0.0, 2.0 * (size - 1.0)), 0.0, size - 1.0);
#else
  return kiln_clampf(kiln_reflect(x, -1.0, 2.0 * size - 1.0), 0.0, size - 1.0);
#endif
#else
  return x;
#endif
}
#endif

#include "kiln_kernel.glsl"

#if KILN_GRID
// A tap at float position (y, x): 0 outside the input.
float kiln_read(uint n, uint c, float y, float x) {
  if (!(x >= 0.0 && x <= float(KILN_W) - 1.0 && y >= 0.0 && y <= float(KILN_H) - 1.0)) return 0.0;
  return kiln_x(n, c, uint(y), uint(x));
}

void kiln_resample(uint o) {
  const uint j = KILN_GRID_J(o), i = KILN_GRID_I(o);
  const uint c = KILN_GRID_C(o), n = KILN_GRID_N(o);
  const float fh = float(KILN_H), fw = float(KILN_W);
  precise float ix = kiln_unnormalize(kiln_grid(n, i, j, 0u), fw);
  precise float iy = kiln_unnormalize(kiln_grid(n, i, j, 1u), fh);
  precise float v = 0.0;
#if KILN_MODE == 2
  precise float x0 = floor(ix), y0 = floor(iy);
  float cx[4], cy[4];
  kiln_cubic(-0.75, ix - x0, cx);
  kiln_cubic(-0.75, iy - y0, cy);
  for (int a = 0; a < 4; ++a) {
    const float yy = kiln_pad(y0 - 1.0 + float(a), fh);
    precise float row = 0.0;
    for (int b = 0; b < 4; ++b) {
      const float xx = kiln_pad(x0 - 1.0 + float(b), fw);
      row = row + kiln_read(n, c, yy, xx) * cx[b];
    }
    v = v + row * cy[a];
  }
#else
  ix = kiln_pad(ix, fw);
  iy = kiln_pad(iy, fh);
#if KILN_MODE == 0
  v = kiln_read(n, c, roundEven(iy), roundEven(ix));
#else
  precise float x0 = floor(ix), y0 = floor(iy);
  precise float x1 = x0 + 1.0, y1 = y0 + 1.0;
  v = kiln_read(n, c, y0, x0) * ((x1 - ix) * (y1 - iy));
  v = v + kiln_read(n, c, y0, x1) * ((ix - x0) * (y1 - iy));
  v = v + kiln_read(n, c, y1, x0) * ((x1 - ix) * (iy - y0));
  v = v + kiln_read(n, c, y1, x1) * ((ix - x0) * (iy - y0));
#endif
#endif
  kiln_store(o, v);
}
#endif

void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  for (uint o = gl_GlobalInvocationID.x; o < KILN_OUTPUTS; o += stride) kiln_resample(o);
}
