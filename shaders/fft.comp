#version 450
// The Spectral ops. KILN_FFT 0: real / imag / abs of complex64, view_as_real,
// view_as_complex, one invocation per output element (grid-stride over KILN_OUTPUTS); codegen
// supplies
//   void kiln_element(uint o)   computes and stores output element o.
// KILN_FFT 1: fft / ifft / rfft / irfft over KILN_ROWS rows of KILN_N points (paths 1 and 2:
// one workgroup per row, grid-stride); codegen supplies
//   vec2 kiln_load(uint row, uint j)          input element j < KILN_M of the row, as complex
//   void kiln_store(uint row, uint k, vec2 v) output element k < KILN_OUT (irfft: v.x)
// and KILN_SIGN (-1.0 forward, 1.0 inverse), KILN_SCALE (the norm's factor), KILN_HERMITIAN
// (irfft: point j > N / 2 is conj(point N - j)) and KILN_PATH: 0 a direct DFT reading the
// input from the buffer, one invocation per output element (rows too long for shared memory),
// 1 a direct DFT over the row and a twiddle table in shared memory, 2 a radix-2 Stockham FFT
// in shared memory (N a power of two). Twiddles e^(2 pi i t / N) reduce t exactly in integers
// to an angle in [0, pi / 4] before sin / cos; the direct DFT steps t = j k mod N exactly.
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

#if KILN_FFT == 0

void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  for (uint o = gl_GlobalInvocationID.x; o < KILN_OUTPUTS; o += stride) kiln_element(o);
}

#else

// e^(i 2 pi t / n) for t < n < 2^30: quadrant and octant reduction in integers, then sin and
// cos on [0, pi / 4] only, by Kiln's polynomials.
vec2 kiln_cis(uint t, uint n) {
  const uint q = (4u * t) / n;
  uint rem = 4u * t - q * n;  // angle = pi / 2 * (q + rem / n)
  const bool swap = 2u * rem > n;
  if (swap) rem = n - rem;
  const float a = 1.5707963267948966 * (float(rem) / float(n));
  float c = kiln_cos_poly(a), s = kiln_sin_poly(a);  // (kiln_math.glsl: not the driver's)
  if (swap) {
    const float tmp = c;
    c = s;
    s = tmp;
  }
  if (q == 1u) return vec2(-s, c);
  if (q == 2u) return vec2(-c, -s);
  if (q == 3u) return vec2(s, -c);
  return vec2(c, s);
}

// The transform's twiddle e^(KILN_SIGN i 2 pi t / N).
vec2 kiln_twiddle(uint t) {
  const vec2 w = kiln_cis(t, KILN_N);
  return vec2(w.x, KILN_SIGN * w.y);
}

vec2 kiln_cmul(vec2 a, vec2 b) {
  return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// Point j < N of the transform's input: the row cut or zero-padded to N (irfft: the Hermitian
// extension of its bins).
vec2 kiln_point(uint row, uint j) {
#if KILN_HERMITIAN
  const uint h = j <= KILN_N / 2u ? j : KILN_N - j;
  const vec2 v = h < KILN_M ? kiln_load(row, h) : vec2(0.0);
  return j <= KILN_N / 2u ? v : vec2(v.x, -v.y);
#else
  return j < KILN_M ? kiln_load(row, j) : vec2(0.0);
#endif
}

#if KILN_PATH == 0

// One invocation per output element (grid-stride over KILN_ROWS * KILN_OUT), so that an
// invocation's loops run about N iterations: lavapipe ends every loop of an invocation once
// they have run 65535 iterations together (Mesa's gallivm loop limiter).
void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  for (uint o = gl_GlobalInvocationID.x; o < KILN_ROWS * KILN_OUT; o += stride) {
    const uint row = o / KILN_OUT, k = o - row * KILN_OUT;
    vec2 acc = vec2(0.0);
    uint t = 0u;  // j k mod N
    for (uint j = 0u; j < KILN_N; ++j) {
      acc += kiln_cmul(kiln_point(row, j), kiln_twiddle(t));
      t += k;
      if (t >= KILN_N) t -= KILN_N;
    }
    kiln_store(row, k, acc * KILN_SCALE);
  }
}

#elif KILN_PATH == 1

shared vec2 kiln_x[KILN_N];
shared vec2 kiln_w[KILN_N];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint t = lid; t < KILN_N; t += KILN_LOCAL_SIZE) kiln_w[t] = kiln_twiddle(t);
  for (uint row = gl_WorkGroupID.x; row < KILN_ROWS; row += gl_NumWorkGroups.x) {
    for (uint j = lid; j < KILN_N; j += KILN_LOCAL_SIZE) kiln_x[j] = kiln_point(row, j);
    barrier();
    for (uint k = lid; k < KILN_OUT; k += KILN_LOCAL_SIZE) {
      vec2 acc = vec2(0.0);
      uint t = 0u;
      for (uint j = 0u; j < KILN_N; ++j) {
        acc += kiln_cmul(kiln_x[j], kiln_w[t]);
        t += k;
        if (t >= KILN_N) t -= KILN_N;
      }
      kiln_store(row, k, acc * KILN_SCALE);
    }
    barrier();
  }
}

#else

// Stockham autosort, radix 2: stage s (half = 2^s) reads butterfly j's pair (j, j + N / 2)
// from one buffer and writes (j / half) * 2 half + j % half and that + half of the other, so
// the output comes out in natural order after log2(N) stages.
shared vec2 kiln_buf[2u * KILN_N];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < KILN_ROWS; row += gl_NumWorkGroups.x) {
    for (uint j = lid; j < KILN_N; j += KILN_LOCAL_SIZE) kiln_buf[j] = kiln_point(row, j);
    barrier();
    uint src = 0u;
    for (uint half_ = 1u; half_ < KILN_N; half_ <<= 1) {
      const uint dst = KILN_N - src;
      for (uint j = lid; j < KILN_N / 2u; j += KILN_LOCAL_SIZE) {
        const uint k = j & (half_ - 1u);
        const vec2 a = kiln_buf[src + j];
        const vec2 w = kiln_twiddle(k * (KILN_N / (2u * half_)));
        const vec2 b = kiln_cmul(kiln_buf[src + j + KILN_N / 2u], w);
        const uint o = (j - k) * 2u + k;
        kiln_buf[dst + o] = a + b;
        kiln_buf[dst + o + half_] = a - b;
      }
      src = dst;
      barrier();
    }
    for (uint k = lid; k < KILN_OUT; k += KILN_LOCAL_SIZE)
      kiln_store(row, k, kiln_buf[src + k] * KILN_SCALE);
    barrier();
  }
}

#endif
#endif
