#version 450



















#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#line 1 "kiln_extensions.glsl"
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
#line 25 "matmul_rowblock.comp"
#line 1 "common/kiln_common.glsl"






bool kiln_or(bool a, bool b){ return any(bvec2(a, b));}
bvec4 kiln_or(bvec4 a, bvec4 b){ return notEqual(uvec4(a)| uvec4(b), uvec4(0u));}
bool kiln_and(bool a, bool b){ return all(bvec2(a, b));}
bvec4 kiln_and(bvec4 a, bvec4 b){ return notEqual(uvec4(a)& uvec4(b), uvec4(0u));}





bool kiln_lt(float a, float b){ return a < b;}
bvec4 kiln_lt(vec4 a, vec4 b){ return lessThan(a, b);}















              float kiln_erf(float x){ const float z = x * x;const float taylor = x * 1.1283791670955126 *(1.0 + z *(- 0.3333333333333333 + z *(0.1 + z *(- 0.023809523809523808 + z *(0.004629629629629629 + z *(- 0.0007575757575757576 + z * 0.00010683760683760684))))));const float t = 1.0 /(1.0 + 0.5 * abs(x));const float y = 1.0 - t * exp(- z - 1.26551223 + t *(1.00002368 + t *(0.37409196 + t *(0.09678418 + t *(- 0.18628806 + t *(0.27886807 + t *(- 1.13520398 + t *(1.48851587 + t *(- 0.82215223 + t * 0.17087277)))))))));return mix(uintBitsToFloat(floatBitsToUint(y)^(floatBitsToUint(x)& 0x80000000u)), taylor, kiln_lt(abs(x), float(0.5)));}
             vec4 kiln_erf(vec4 x){ const vec4 z = x * x;const vec4 taylor = x * 1.1283791670955126 *(1.0 + z *(- 0.3333333333333333 + z *(0.1 + z *(- 0.023809523809523808 + z *(0.004629629629629629 + z *(- 0.0007575757575757576 + z * 0.00010683760683760684))))));const vec4 t = 1.0 /(1.0 + 0.5 * abs(x));const vec4 y = 1.0 - t * exp(- z - 1.26551223 + t *(1.00002368 + t *(0.37409196 + t *(0.09678418 + t *(- 0.18628806 + t *(0.27886807 + t *(- 1.13520398 + t *(1.48851587 + t *(- 0.82215223 + t * 0.17087277)))))))));return mix(uintBitsToFloat(floatBitsToUint(y)^(floatBitsToUint(x)& 0x80000000u)), taylor, kiln_lt(abs(x), vec4(0.5)));}




float kiln_tanh(float x){
  const float e = exp(- 2.0 * abs(x));
  const float y =(1.0 - e)/(1.0 + e);

  return mix(uintBitsToFloat(floatBitsToUint(y)|(floatBitsToUint(x)& 0x80000000u)), x, isnan(x));
}
vec4 kiln_tanh(vec4 x){
  const vec4 e = exp(- 2.0 * abs(x));
  const vec4 y =(1.0 - e)/(1.0 + e);
  return mix(uintBitsToFloat(floatBitsToUint(y)|(floatBitsToUint(x)& 0x80000000u)), x, isnan(x));
}








float kiln_exp(float x){
  const bool tiny = x < - 87.0;
  const float h = exp(mix(x, 0.5 * x, tiny));
  return mix(mix(h, h * h, tiny), x, isnan(x));
}
vec4 kiln_exp(vec4 x){
  const bvec4 tiny = lessThan(x, vec4(- 87.0));
  const vec4 h = exp(mix(x, 0.5 * x, tiny));
  return mix(mix(h, h * h, tiny), x, isnan(x));
}


float kiln_exp_nan(float x){ return mix(exp(x), x, isnan(x));}
float kiln_exp_mul(float x, float k){
  const bool tiny = x < - 87.0;
  const float h = exp(mix(x, 0.5 * x, tiny));
  return mix(mix(h * k,(h * k)* h, tiny), x, isnan(x));
}

float kiln_sigmoid(float x){ return mix(1.0 /(1.0 + exp(- x)), x, isnan(x));}
vec4 kiln_sigmoid(vec4 x){ return mix(1.0 /(1.0 + exp(- x)), x, isnan(x));}


float kiln_gelu(float x){ return 0.5 * x *(1.0 + kiln_erf(x * 0.70710678118654752));}
vec4 kiln_gelu(vec4 x){ return 0.5 * x *(1.0 + kiln_erf(x * 0.70710678118654752));}

float kiln_silu(float x){ return x * kiln_sigmoid(x);}
vec4 kiln_silu(vec4 x){ return x * kiln_sigmoid(x);}
float kiln_gelu_tanh(float x){
  return 0.5 * x *(1.0 + kiln_tanh(0.7978845608028654 *(x + 0.044715 * x * x * x)));
}
vec4 kiln_gelu_tanh(vec4 x){
  return 0.5 * x *(1.0 + kiln_tanh(0.7978845608028654 *(x + 0.044715 * x * x * x)));
}
float kiln_neg(float x){ return - x;}
vec4 kiln_neg(vec4 x){ return - x;}

float kiln_sign(float x){ return mix(mix(x, - 1.0, x < 0.0), 1.0, x > 0.0);}
vec4 kiln_sign(vec4 x){
  return mix(mix(x, vec4(- 1.0), lessThan(x, vec4(0.0))), vec4(1.0), greaterThan(x, vec4(0.0)));
}






int kiln_max_i32(int a, int b){ return a > b ? a : b;}
int kiln_min_i32(int a, int b){ return a < b ? a : b;}




float kiln_maximum(float a, float b){ return mix(mix(b, a, a > b), a, isnan(a));}
vec4 kiln_maximum(vec4 a, vec4 b){ return mix(mix(b, a, greaterThan(a, b)), a, isnan(a));}
float kiln_minimum(float a, float b){ return mix(mix(b, a, a < b), a, isnan(a));}
vec4 kiln_minimum(vec4 a, vec4 b){ return mix(mix(b, a, lessThan(a, b)), a, isnan(a));}




float kiln_f16(float x){
  const uint u = floatBitsToUint(x);
  const uint a = u & 0x7fffffffu, s = u & 0x80000000u;
  if(a >= 0x7f800000u)return x;
  if(a >= 0x477ff000u)return uintBitsToFloat(s | 0x7f800000u);
  if(a >= 0x38800000u)
    return uintBitsToFloat(s |((a + 0xfffu +((a >> 13)& 1u))& 0xffffe000u));

  const float m = roundEven(uintBitsToFloat(a)* 16777216.0)* 5.9604644775390625e-8;
  return uintBitsToFloat(s | floatBitsToUint(m));
}


int kiln_trunc_i32(float x){
  const uint u = floatBitsToUint(x);
  const int e = int((u >> 23)& 0xffu)- 127;
  if(e < 0)return 0;
  const int m = int((u & 0x7fffffu)| 0x800000u);
  const int r = e >= 23 ? m <<(e - 23): m >>(23 - e);
  return(u >> 31)!= 0u ? - r : r;
}
#line 1 "common/kiln_udiv.glsl"







uint kiln_udiv(uint n, uint d, uint m){
  uint hi, lo;
  umulExtended(n, m, hi, lo);
  return hi + uint(n - hi * d >= d);
}
uint kiln_umod(uint n, uint d, uint m){
  uint hi, lo;
  umulExtended(n, m, hi, lo);
  const uint r = n - hi * d;
  return r >= d ? r - d : r;
}
#line 141 "common/kiln_common.glsl"


float kiln_relu(float x){ return x < 0.0 ? 0.0 : x;}
vec4 kiln_relu(vec4 x){ return mix(x, vec4(0.0), lessThan(x, vec4(0.0)));}





float kiln_add_zero(float x){ return mix(x, 0.0, x == 0.0);}
float kiln_zero_sub(float x){ return mix(- x, 0.0, x == 0.0);}
float kiln_mul_zero(float x){
  return mix(uintBitsToFloat(floatBitsToUint(x)& 0x80000000u), uintBitsToFloat(0x7fc00000u),
             kiln_or(isnan(x), isinf(x)));
}
float kiln_zero_div(float x){
  return mix(uintBitsToFloat(floatBitsToUint(x)& 0x80000000u), uintBitsToFloat(0x7fc00000u),
             kiln_or(isnan(x), x == 0.0));
}
vec4 kiln_add_zero(vec4 x){ return mix(x, vec4(0.0), equal(x, vec4(0.0)));}
vec4 kiln_zero_sub(vec4 x){ return mix(- x, vec4(0.0), equal(x, vec4(0.0)));}
vec4 kiln_mul_zero(vec4 x){
  return mix(uintBitsToFloat(floatBitsToUint(x)& 0x80000000u), vec4(uintBitsToFloat(0x7fc00000u)),
             kiln_or(isnan(x), isinf(x)));
}
vec4 kiln_zero_div(vec4 x){
  return mix(uintBitsToFloat(floatBitsToUint(x)& 0x80000000u), vec4(uintBitsToFloat(0x7fc00000u)),
             kiln_or(isnan(x), equal(x, vec4(0.0))));
}





float kiln_nan_value(){ return uintBitsToFloat(0x7fc00000u);}
float kiln_log(float x){
  float r = mix(log(x), kiln_nan_value(), x < 0.0);
  r = mix(r, uintBitsToFloat(0xff800000u), x == 0.0);
  return mix(r, x, kiln_or(isnan(x), kiln_and(isinf(x), x > 0.0)));
}
float kiln_sqrt(float x){ return mix(sqrt(x), kiln_nan_value(), x < 0.0);}
float kiln_rsqrt(float x){
  float r = mix(inversesqrt(x), 0.0, isinf(x));
  r = mix(r, kiln_nan_value(), x < 0.0);
  r = mix(r, uintBitsToFloat((floatBitsToUint(x)& 0x80000000u)| 0x7f800000u), x == 0.0);
  return mix(r, x, isnan(x));
}
vec4 kiln_log(vec4 x){
  vec4 r = mix(log(x), vec4(kiln_nan_value()), lessThan(x, vec4(0.0)));
  r = mix(r, vec4(uintBitsToFloat(0xff800000u)), equal(x, vec4(0.0)));
  return mix(r, x, kiln_or(isnan(x), kiln_and(isinf(x), greaterThan(x, vec4(0.0)))));
}
vec4 kiln_sqrt(vec4 x){ return mix(sqrt(x), vec4(kiln_nan_value()), lessThan(x, vec4(0.0)));}
vec4 kiln_rsqrt(vec4 x){
  vec4 r = mix(inversesqrt(x), vec4(0.0), isinf(x));
  r = mix(r, vec4(kiln_nan_value()), lessThan(x, vec4(0.0)));
  r = mix(r, uintBitsToFloat((floatBitsToUint(x)& 0x80000000u)| 0x7f800000u),
          equal(x, vec4(0.0)));
  return mix(r, x, isnan(x));
}

#line 1 "common/kiln_math.glsl"







const float KILN_PIO2 = 1.5707963267948966;
const float KILN_PIO4 = 0.7853981633974483;
const float KILN_LN2 = 0.6931471805599453;

float kiln_copysign(float mag, float s){
  return uintBitsToFloat((floatBitsToUint(mag)& 0x7fffffffu)|(floatBitsToUint(s)& 0x80000000u));
}



float kiln_log1p(float x){
  precise float u = 1.0 + x;
  precise float d = u - 1.0;

  const float lu = kiln_log(u);
  float r = mix(lu *(x / d), lu, kiln_or(isinf(u), u == 0.0));
  return mix(r, x, u == 1.0);
}


const uint KILN_TWO_OVER_PI[7]= uint[7](0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                         0xdb629599u, 0x3c439041u);






uint kiln_trig_reduce(float a, out float r){
  const uint ia = floatBitsToUint(a)& 0x7fffffffu;
  const uint m =(ia & 0x7fffffu)| 0x800000u;
  const uint pos =(ia >> 23)- 120u;
  const uint w = pos >> 5, b = pos & 31u;
  uint th = KILN_TWO_OVER_PI[w]<< b, tl = KILN_TWO_OVER_PI[w + 1u]<< b;
  if(b > 0u){
    th |= KILN_TWO_OVER_PI[w + 1u]>>(32u - b);
    tl |= KILN_TWO_OVER_PI[w + 2u]>>(32u - b);
  }
  uint hi, lo;
  umulExtended(m, tl, hi, lo);
  hi += m * th;
  uint q = hi >> 30;
  hi &= 0x3fffffffu;
  float sgn = 1.0;
  if((hi & 0x20000000u)!= 0u){
    lo = ~ lo + 1u;
    hi =(~ hi +(lo == 0u ? 1u : 0u))& 0x3fffffffu;
    q += 1u;
    sgn = - 1.0;
  }
  const float f = float(hi)* 9.313225746154785e-10 + float(lo)* 2.168404344971009e-19;
  r = sgn * f * KILN_PIO2;
  return q & 3u;
}





float kiln_sin_poly(float x){
  const float z = x * x;
  const float y =((- 1.9515295891e-4 * z + 8.3321608736e-3)* z - 1.6666654611e-1)* z * x + x;
  return mix(y, x, abs(x)< 1.220703125e-4);
}
float kiln_cos_poly(float x){
  const float z = x * x;
  return((2.443315711809948e-5 * z - 1.388731625493765e-3)* z + 4.166664568298827e-2)* z * z -
         0.5 * z + 1.0;
}


uint kiln_trig_quadrant(float x, out float r){
  const bool small = !(abs(x)> KILN_PIO4);
  float reduced;
  const uint q = kiln_trig_reduce(mix(x, 1.0, small), reduced);
  r = mix(reduced, abs(x), small);
  return q * uint(! small);
}

float kiln_trig_poly(uint q, float r){
  const float v = mix(kiln_sin_poly(r), kiln_cos_poly(r),(q & 1u)!= 0u);
  return mix(v, - v,(q & 2u)!= 0u);
}
float kiln_sin(float x){
  float r;
  const uint q = kiln_trig_quadrant(x, r);
  const float y = kiln_copysign(1.0, x)* kiln_trig_poly(q, r);
  return mix(mix(y, x, isnan(x)), kiln_nan_value(), isinf(x));
}
float kiln_cos(float x){
  float r;
  const uint q =(kiln_trig_quadrant(x, r)+ 1u)& 3u;
  const float y = kiln_trig_poly(q, r);
  return mix(mix(y, x, isnan(x)), kiln_nan_value(), isinf(x));
}
float kiln_tan(float x){
  float r;
  const uint q = kiln_trig_quadrant(x, r);
  const float s = kiln_sin_poly(r), c = kiln_cos_poly(r);
  const float t = kiln_copysign(1.0, x)* mix(s / c, - c / s,(q & 1u)!= 0u);
  return mix(mix(t, x, isnan(x)), kiln_nan_value(), isinf(x));
}

float kiln_atan(float xx){
  const float a = abs(xx);
  const bool big = a > 2.414213562373095, mid = a > 0.4142135623730950;
  const float x = mix(mix(a,(a - 1.0)/(a + 1.0), mid), - 1.0 / a, big);
  const float z = x * x;
  const float y = mix(mix(0.0, KILN_PIO4, mid), KILN_PIO2, big)+
                  ((((8.05374449538e-2 * z - 1.38776856032e-1)* z + 1.99777106478e-1)* z -
                    3.33329491539e-1)* z * x + x);
  return kiln_copysign(y, xx);
}

float kiln_asin(float xx){
  const float a = abs(xx);
  const bool high = a > 0.5;
  const float z = mix(a * a, 0.5 *(1.0 - a), high);
  const float x = mix(a, sqrt(z), high);
  const float y =((((4.2163199048e-2 * z + 2.4181311049e-2)* z + 4.5470025998e-2)* z +
                    7.4953002686e-2)* z + 1.6666752422e-1)* z * x + x;
  return mix(kiln_copysign(mix(y, KILN_PIO2 -(y + y), high), xx), kiln_nan_value(), a > 1.0);
}

float kiln_acos(float x){
  const bool low = x < - 0.5, high = x > 0.5;
  const float s = kiln_asin(mix(x, sqrt(0.5 *(1.0 - abs(x))), kiln_or(low, high)));
  const float y = mix(mix(KILN_PIO2 - s, 2.0 * s, high), 2.0 * KILN_PIO2 - 2.0 * s, low);
  return mix(y, kiln_nan_value(), abs(x)> 1.0);
}



float kiln_sinh(float x){
  const float a = abs(x), z = x * x;
  const float poly =((2.03721912945e-4 * z + 8.33028376239e-3)* z + 1.66667160211e-1)* z * x + x;
  const bool huge = a > 80.0;
  const float e = exp(mix(a, 0.5 * a, huge));
  const float y = kiln_copysign(mix(0.5 * e - 0.5 / e,(0.5 * e)* e, huge), x);
  return mix(mix(y, poly, a < 1.0), x, isnan(x));
}

float kiln_cosh(float x){
  const float a = abs(x);
  const bool huge = a > 80.0;
  const float e = exp(mix(a, 0.5 * a, huge));
  return mix(mix(0.5 * e + 0.5 / e,(0.5 * e)* e, huge), x, isnan(x));
}

float kiln_asinh(float x){
  const float a = abs(x);
  const float y = mix(kiln_log1p(a + a * a /(1.0 + sqrt(1.0 + a * a))), kiln_log(a)+ KILN_LN2,
                      a > 268435456.0);
  return mix(kiln_copysign(y, x), x, kiln_or(isinf(a), isnan(a)));
}

float kiln_acosh(float x){
  const float t = x - 1.0;
  float y = mix(kiln_log1p(t + sqrt(2.0 * t + t * t)), kiln_log(x)+ KILN_LN2, x > 268435456.0);
  y = mix(y, x, isinf(x));
  y = mix(y, kiln_nan_value(), x < 1.0);
  return mix(y, x, isnan(x));
}

float kiln_atanh(float x){
  const float a = abs(x);
  float y = kiln_copysign(0.5 * kiln_log1p((a + a)/(1.0 - a)), x);
  y = mix(y, kiln_copysign(uintBitsToFloat(0x7f800000u), x), a == 1.0);
  y = mix(y, kiln_nan_value(), a > 1.0);
  return mix(y, x, isnan(x));
}



                       vec4 kiln_sin(vec4 x){ return vec4(kiln_sin(x . x), kiln_sin(x . y), kiln_sin(x . z), kiln_sin(x . w));}
                       vec4 kiln_cos(vec4 x){ return vec4(kiln_cos(x . x), kiln_cos(x . y), kiln_cos(x . z), kiln_cos(x . w));}
                       vec4 kiln_tan(vec4 x){ return vec4(kiln_tan(x . x), kiln_tan(x . y), kiln_tan(x . z), kiln_tan(x . w));}
                        vec4 kiln_asin(vec4 x){ return vec4(kiln_asin(x . x), kiln_asin(x . y), kiln_asin(x . z), kiln_asin(x . w));}
                        vec4 kiln_acos(vec4 x){ return vec4(kiln_acos(x . x), kiln_acos(x . y), kiln_acos(x . z), kiln_acos(x . w));}
                        vec4 kiln_atan(vec4 x){ return vec4(kiln_atan(x . x), kiln_atan(x . y), kiln_atan(x . z), kiln_atan(x . w));}
                        vec4 kiln_sinh(vec4 x){ return vec4(kiln_sinh(x . x), kiln_sinh(x . y), kiln_sinh(x . z), kiln_sinh(x . w));}
                        vec4 kiln_cosh(vec4 x){ return vec4(kiln_cosh(x . x), kiln_cosh(x . y), kiln_cosh(x . z), kiln_cosh(x . w));}
                         vec4 kiln_asinh(vec4 x){ return vec4(kiln_asinh(x . x), kiln_asinh(x . y), kiln_asinh(x . z), kiln_asinh(x . w));}
                         vec4 kiln_acosh(vec4 x){ return vec4(kiln_acosh(x . x), kiln_acosh(x . y), kiln_acosh(x . z), kiln_acosh(x . w));}
                         vec4 kiln_atanh(vec4 x){ return vec4(kiln_atanh(x . x), kiln_atanh(x . y), kiln_atanh(x . z), kiln_atanh(x . w));}
                         vec4 kiln_log1p(vec4 x){ return vec4(kiln_log1p(x . x), kiln_log1p(x . y), kiln_log1p(x . z), kiln_log1p(x . w));}






float kiln_fmod(float x, float y){
  if(isnan(x)|| isnan(y)|| isinf(x)|| y == 0.0)return kiln_nan_value();
  const float ax = abs(x), ay = abs(y);
  if(isinf(y)|| ax < ay)return x;
  int ex, ey;
  const float fx = frexp(ax, ex), fy = frexp(ay, ey);
  uint mx = uint(fx * 16777216.0), my = uint(fy * 16777216.0);
  for(int e = ex - ey;e > 0;-- e){
    if(mx >= my)mx -= my;
    mx <<= 1;
  }
  if(mx >= my)mx -= my;
  return kiln_copysign(ldexp(float(mx), ey - 24), x);
}
float kiln_mod(float x, float y){
  const float r = kiln_fmod(x, y);
  return mix(mix(r, r + y,(r < 0.0)!=(y < 0.0)), kiln_copysign(0.0, y), r == 0.0);
}
vec4 kiln_fmod(vec4 x, vec4 y){
  return vec4(kiln_fmod(x . x, y . x), kiln_fmod(x . y, y . y), kiln_fmod(x . z, y . z), kiln_fmod(x . w, y . w));
}
vec4 kiln_mod(vec4 x, vec4 y){
  return vec4(kiln_mod(x . x, y . x), kiln_mod(x . y, y . y), kiln_mod(x . z, y . z), kiln_mod(x . w, y . w));
}
int kiln_fmod(int a, int b){
  if(b == 0)return 0;
  const uint r = uint(a < 0 ? - a : a)% uint(b < 0 ? - b : b);
  return a < 0 ? - int(r): int(r);
}
int kiln_mod(int a, int b){
  const int r = kiln_fmod(a, b);
  return r != 0 &&(r < 0)!=(b < 0)? r + b : r;
}
#line 203 "common/kiln_common.glsl"
#line 26 "matmul_rowblock.comp"

layout(local_size_x = 32u)in;

#line 1 "kiln_kernel.glsl"
layout(std430, set = 0, binding = 0)buffer KilnB0 { float data[];} b0;
layout(set = 0, binding = 3, r32f)uniform readonly imageBuffer kiln_s3;

layout(std140, set = 0, binding = 4)uniform KilnSizes { uint p0;uint p1;} kiln_pc;
layout(set = 0, binding = 1, rgba32f)uniform readonly imageBuffer kiln_t1;
layout(set = 0, binding = 2, rgba32f)uniform readonly imageBuffer kiln_t2;


layout(std430, set = 0, binding = 0)buffer KilnB0w { vec4 data[];} b0w;

float kiln_out(uint i, uint j, float acc){
  const uint ep0 =(((kiln_pc . p1 + i)* 128u + j)/ 128u);
  const uint ep1 =(((kiln_pc . p1 + i)* 128u + j)% 128u);
  const float x0 = imageLoad(kiln_s3, int(ep1)). x;
  const float v1 =(acc + x0);
  const float v2 = kiln_relu(v1);
  return v2;
}

void kiln_rowblock(uint rb, uint cb){
  const uint x = gl_LocalInvocationID . x, lane = gl_SubgroupInvocationID;
  const uint i0 = rb * 32u;
  const uint ar0 = min(i0 + 0u + lane, kiln_pc . p0 - 1u)* 288u;
  const uint ar1 = min(i0 + 8u + lane, kiln_pc . p0 - 1u)* 288u;
  const uint ar2 = min(i0 + 16u + lane, kiln_pc . p0 - 1u)* 288u;
  const uint ar3 = min(i0 + 24u + lane, kiln_pc . p0 - 1u)* 288u;
  const uint j0 = cb * 128u + x * 4u + 0u;
  const uint jc0 = min(j0, 128u - 1u)* 288u;
  const uint j1 = cb * 128u + x * 4u + 1u;
  const uint jc1 = min(j1, 128u - 1u)* 288u;
  const uint j2 = cb * 128u + x * 4u + 2u;
  const uint jc2 = min(j2, 128u - 1u)* 288u;
  const uint j3 = cb * 128u + x * 4u + 3u;
  const uint jc3 = min(j3, 128u - 1u)* 288u;
  float c0_0 = 0.0;
  float c0_1 = 0.0;
  float c0_2 = 0.0;
  float c0_3 = 0.0;
  float c1_0 = 0.0;
  float c1_1 = 0.0;
  float c1_2 = 0.0;
  float c1_3 = 0.0;
  float c2_0 = 0.0;
  float c2_1 = 0.0;
  float c2_2 = 0.0;
  float c2_3 = 0.0;
  float c3_0 = 0.0;
  float c3_1 = 0.0;
  float c3_2 = 0.0;
  float c3_3 = 0.0;
  float c4_0 = 0.0;
  float c4_1 = 0.0;
  float c4_2 = 0.0;
  float c4_3 = 0.0;
  float c5_0 = 0.0;
  float c5_1 = 0.0;
  float c5_2 = 0.0;
  float c5_3 = 0.0;
  float c6_0 = 0.0;
  float c6_1 = 0.0;
  float c6_2 = 0.0;
  float c6_3 = 0.0;
  float c7_0 = 0.0;
  float c7_1 = 0.0;
  float c7_2 = 0.0;
  float c7_3 = 0.0;
  float c8_0 = 0.0;
  float c8_1 = 0.0;
  float c8_2 = 0.0;
  float c8_3 = 0.0;
  float c9_0 = 0.0;
  float c9_1 = 0.0;
  float c9_2 = 0.0;
  float c9_3 = 0.0;
  float c10_0 = 0.0;
  float c10_1 = 0.0;
  float c10_2 = 0.0;
  float c10_3 = 0.0;
  float c11_0 = 0.0;
  float c11_1 = 0.0;
  float c11_2 = 0.0;
  float c11_3 = 0.0;
  float c12_0 = 0.0;
  float c12_1 = 0.0;
  float c12_2 = 0.0;
  float c12_3 = 0.0;
  float c13_0 = 0.0;
  float c13_1 = 0.0;
  float c13_2 = 0.0;
  float c13_3 = 0.0;
  float c14_0 = 0.0;
  float c14_1 = 0.0;
  float c14_2 = 0.0;
  float c14_3 = 0.0;
  float c15_0 = 0.0;
  float c15_1 = 0.0;
  float c15_2 = 0.0;
  float c15_3 = 0.0;
  float c16_0 = 0.0;
  float c16_1 = 0.0;
  float c16_2 = 0.0;
  float c16_3 = 0.0;
  float c17_0 = 0.0;
  float c17_1 = 0.0;
  float c17_2 = 0.0;
  float c17_3 = 0.0;
  float c18_0 = 0.0;
  float c18_1 = 0.0;
  float c18_2 = 0.0;
  float c18_3 = 0.0;
  float c19_0 = 0.0;
  float c19_1 = 0.0;
  float c19_2 = 0.0;
  float c19_3 = 0.0;
  float c20_0 = 0.0;
  float c20_1 = 0.0;
  float c20_2 = 0.0;
  float c20_3 = 0.0;
  float c21_0 = 0.0;
  float c21_1 = 0.0;
  float c21_2 = 0.0;
  float c21_3 = 0.0;
  float c22_0 = 0.0;
  float c22_1 = 0.0;
  float c22_2 = 0.0;
  float c22_3 = 0.0;
  float c23_0 = 0.0;
  float c23_1 = 0.0;
  float c23_2 = 0.0;
  float c23_3 = 0.0;
  float c24_0 = 0.0;
  float c24_1 = 0.0;
  float c24_2 = 0.0;
  float c24_3 = 0.0;
  float c25_0 = 0.0;
  float c25_1 = 0.0;
  float c25_2 = 0.0;
  float c25_3 = 0.0;
  float c26_0 = 0.0;
  float c26_1 = 0.0;
  float c26_2 = 0.0;
  float c26_3 = 0.0;
  float c27_0 = 0.0;
  float c27_1 = 0.0;
  float c27_2 = 0.0;
  float c27_3 = 0.0;
  float c28_0 = 0.0;
  float c28_1 = 0.0;
  float c28_2 = 0.0;
  float c28_3 = 0.0;
  float c29_0 = 0.0;
  float c29_1 = 0.0;
  float c29_2 = 0.0;
  float c29_3 = 0.0;
  float c30_0 = 0.0;
  float c30_1 = 0.0;
  float c30_2 = 0.0;
  float c30_3 = 0.0;
  float c31_0 = 0.0;
  float c31_1 = 0.0;
  float c31_2 = 0.0;
  float c31_3 = 0.0;
  for(uint k = 0u;k < 288u;++ k){
    const vec4 al0 = imageLoad(kiln_t1, int(ar0 + k));
    const vec4 al1 = imageLoad(kiln_t1, int(ar1 + k));
    const vec4 al2 = imageLoad(kiln_t1, int(ar2 + k));
    const vec4 al3 = imageLoad(kiln_t1, int(ar3 + k));
    const vec4 bv0 = imageLoad(kiln_t2, int(jc0 + k));
    const vec4 bv1 = imageLoad(kiln_t2, int(jc1 + k));
    const vec4 bv2 = imageLoad(kiln_t2, int(jc2 + k));
    const vec4 bv3 = imageLoad(kiln_t2, int(jc3 + k));
    { const float av = subgroupShuffle(al0[0], 0u);c0_0 = fma(av, bv0[0], c0_0);c0_1 = fma(av, bv1[0], c0_1);c0_2 = fma(av, bv2[0], c0_2);c0_3 = fma(av, bv3[0], c0_3);}
    { const float av = subgroupShuffle(al0[1], 0u);c0_0 = fma(av, bv0[1], c0_0);c0_1 = fma(av, bv1[1], c0_1);c0_2 = fma(av, bv2[1], c0_2);c0_3 = fma(av, bv3[1], c0_3);}
    { const float av = subgroupShuffle(al0[2], 0u);c0_0 = fma(av, bv0[2], c0_0);c0_1 = fma(av, bv1[2], c0_1);c0_2 = fma(av, bv2[2], c0_2);c0_3 = fma(av, bv3[2], c0_3);}
    { const float av = subgroupShuffle(al0[3], 0u);c0_0 = fma(av, bv0[3], c0_0);c0_1 = fma(av, bv1[3], c0_1);c0_2 = fma(av, bv2[3], c0_2);c0_3 = fma(av, bv3[3], c0_3);}
    { const float av = subgroupShuffle(al0[0], 1u);c1_0 = fma(av, bv0[0], c1_0);c1_1 = fma(av, bv1[0], c1_1);c1_2 = fma(av, bv2[0], c1_2);c1_3 = fma(av, bv3[0], c1_3);}
    { const float av = subgroupShuffle(al0[1], 1u);c1_0 = fma(av, bv0[1], c1_0);c1_1 = fma(av, bv1[1], c1_1);c1_2 = fma(av, bv2[1], c1_2);c1_3 = fma(av, bv3[1], c1_3);}
    { const float av = subgroupShuffle(al0[2], 1u);c1_0 = fma(av, bv0[2], c1_0);c1_1 = fma(av, bv1[2], c1_1);c1_2 = fma(av, bv2[2], c1_2);c1_3 = fma(av, bv3[2], c1_3);}
    { const float av = subgroupShuffle(al0[3], 1u);c1_0 = fma(av, bv0[3], c1_0);c1_1 = fma(av, bv1[3], c1_1);c1_2 = fma(av, bv2[3], c1_2);c1_3 = fma(av, bv3[3], c1_3);}
    { const float av = subgroupShuffle(al0[0], 2u);c2_0 = fma(av, bv0[0], c2_0);c2_1 = fma(av, bv1[0], c2_1);c2_2 = fma(av, bv2[0], c2_2);c2_3 = fma(av, bv3[0], c2_3);}
    { const float av = subgroupShuffle(al0[1], 2u);c2_0 = fma(av, bv0[1], c2_0);c2_1 = fma(av, bv1[1], c2_1);c2_2 = fma(av, bv2[1], c2_2);c2_3 = fma(av, bv3[1], c2_3);}
    { const float av = subgroupShuffle(al0[2], 2u);c2_0 = fma(av, bv0[2], c2_0);c2_1 = fma(av, bv1[2], c2_1);c2_2 = fma(av, bv2[2], c2_2);c2_3 = fma(av, bv3[2], c2_3);}
    { const float av = subgroupShuffle(al0[3], 2u);c2_0 = fma(av, bv0[3], c2_0);c2_1 = fma(av, bv1[3], c2_1);c2_2 = fma(av, bv2[3], c2_2);c2_3 = fma(av, bv3[3], c2_3);}
    { const float av = subgroupShuffle(al0[0], 3u);c3_0 = fma(av, bv0[0], c3_0);c3_1 = fma(av, bv1[0], c3_1);c3_2 = fma(av, bv2[0], c3_2);c3_3 = fma(av, bv3[0], c3_3);}
    { const float av = subgroupShuffle(al0[1], 3u);c3_0 = fma(av, bv0[1], c3_0);c3_1 = fma(av, bv1[1], c3_1);c3_2 = fma(av, bv2[1], c3_2);c3_3 = fma(av, bv3[1], c3_3);}
    { const float av = subgroupShuffle(al0[2], 3u);c3_0 = fma(av, bv0[2], c3_0);c3_1 = fma(av, bv1[2], c3_1);c3_2 = fma(av, bv2[2], c3_2);c3_3 = fma(av, bv3[2], c3_3);}
    { const float av = subgroupShuffle(al0[3], 3u);c3_0 = fma(av, bv0[3], c3_0);c3_1 = fma(av, bv1[3], c3_1);c3_2 = fma(av, bv2[3], c3_2);c3_3 = fma(av, bv3[3], c3_3);}
    { const float av = subgroupShuffle(al0[0], 4u);c4_0 = fma(av, bv0[0], c4_0);c4_1 = fma(av, bv1[0], c4_1);c4_2 = fma(av, bv2[0], c4_2);c4_3 = fma(av, bv3[0], c4_3);}
    { const float av = subgroupShuffle(al0[1], 4u);c4_0 = fma(av, bv0[1], c4_0);c4_1 = fma(av, bv1[1], c4_1);c4_2 = fma(av, bv2[1], c4_2);c4_3 = fma(av, bv3[1], c4_3);}
    { const float av = subgroupShuffle(al0[2], 4u);c4_0 = fma(av, bv0[2], c4_0);c4_1 = fma(av, bv1[2], c4_1);c4_2 = fma(av, bv2[2], c4_2);c4_3 = fma(av, bv3[2], c4_3);}
    { const float av = subgroupShuffle(al0[3], 4u);c4_0 = fma(av, bv0[3], c4_0);c4_1 = fma(av, bv1[3], c4_1);c4_2 = fma(av, bv2[3], c4_2);c4_3 = fma(av, bv3[3], c4_3);}
    { const float av = subgroupShuffle(al0[0], 5u);c5_0 = fma(av, bv0[0], c5_0);c5_1 = fma(av, bv1[0], c5_1);c5_2 = fma(av, bv2[0], c5_2);c5_3 = fma(av, bv3[0], c5_3);}
    { const float av = subgroupShuffle(al0[1], 5u);c5_0 = fma(av, bv0[1], c5_0);c5_1 = fma(av, bv1[1], c5_1);c5_2 = fma(av, bv2[1], c5_2);c5_3 = fma(av, bv3[1], c5_3);}
    { const float av = subgroupShuffle(al0[2], 5u);c5_0 = fma(av, bv0[2], c5_0);c5_1 = fma(av, bv1[2], c5_1);c5_2 = fma(av, bv2[2], c5_2);c5_3 = fma(av, bv3[2], c5_3);}
    { const float av = subgroupShuffle(al0[3], 5u);c5_0 = fma(av, bv0[3], c5_0);c5_1 = fma(av, bv1[3], c5_1);c5_2 = fma(av, bv2[3], c5_2);c5_3 = fma(av, bv3[3], c5_3);}
    { const float av = subgroupShuffle(al0[0], 6u);c6_0 = fma(av, bv0[0], c6_0);c6_1 = fma(av, bv1[0], c6_1);c6_2 = fma(av, bv2[0], c6_2);c6_3 = fma(av, bv3[0], c6_3);}
    { const float av = subgroupShuffle(al0[1], 6u);c6_0 = fma(av, bv0[1], c6_0);c6_1 = fma(av, bv1[1], c6_1);c6_2 = fma(av, bv2[1], c6_2);c6_3 = fma(av, bv3[1], c6_3);}
    { const float av = subgroupShuffle(al0[2], 6u);c6_0 = fma(av, bv0[2], c6_0);c6_1 = fma(av, bv1[2], c6_1);c6_2 = fma(av, bv2[2], c6_2);c6_3 = fma(av, bv3[2], c6_3);}
    { const float av = subgroupShuffle(al0[3], 6u);c6_0 = fma(av, bv0[3], c6_0);c6_1 = fma(av, bv1[3], c6_1);c6_2 = fma(av, bv2[3], c6_2);c6_3 = fma(av, bv3[3], c6_3);}
    { const float av = subgroupShuffle(al0[0], 7u);c7_0 = fma(av, bv0[0], c7_0);c7_1 = fma(av, bv1[0], c7_1);c7_2 = fma(av, bv2[0], c7_2);c7_3 = fma(av, bv3[0], c7_3);}
    { const float av = subgroupShuffle(al0[1], 7u);c7_0 = fma(av, bv0[1], c7_0);c7_1 = fma(av, bv1[1], c7_1);c7_2 = fma(av, bv2[1], c7_2);c7_3 = fma(av, bv3[1], c7_3);}
    { const float av = subgroupShuffle(al0[2], 7u);c7_0 = fma(av, bv0[2], c7_0);c7_1 = fma(av, bv1[2], c7_1);c7_2 = fma(av, bv2[2], c7_2);c7_3 = fma(av, bv3[2], c7_3);}
    { const float av = subgroupShuffle(al0[3], 7u);c7_0 = fma(av, bv0[3], c7_0);c7_1 = fma(av, bv1[3], c7_1);c7_2 = fma(av, bv2[3], c7_2);c7_3 = fma(av, bv3[3], c7_3);}
    { const float av = subgroupShuffle(al1[0], 0u);c8_0 = fma(av, bv0[0], c8_0);c8_1 = fma(av, bv1[0], c8_1);c8_2 = fma(av, bv2[0], c8_2);c8_3 = fma(av, bv3[0], c8_3);}
    { const float av = subgroupShuffle(al1[1], 0u);c8_0 = fma(av, bv0[1], c8_0);c8_1 = fma(av, bv1[1], c8_1);c8_2 = fma(av, bv2[1], c8_2);c8_3 = fma(av, bv3[1], c8_3);}
    { const float av = subgroupShuffle(al1[2], 0u);c8_0 = fma(av, bv0[2], c8_0);c8_1 = fma(av, bv1[2], c8_1);c8_2 = fma(av, bv2[2], c8_2);c8_3 = fma(av, bv3[2], c8_3);}
    { const float av = subgroupShuffle(al1[3], 0u);c8_0 = fma(av, bv0[3], c8_0);c8_1 = fma(av, bv1[3], c8_1);c8_2 = fma(av, bv2[3], c8_2);c8_3 = fma(av, bv3[3], c8_3);}
    { const float av = subgroupShuffle(al1[0], 1u);c9_0 = fma(av, bv0[0], c9_0);c9_1 = fma(av, bv1[0], c9_1);c9_2 = fma(av, bv2[0], c9_2);c9_3 = fma(av, bv3[0], c9_3);}
    { const float av = subgroupShuffle(al1[1], 1u);c9_0 = fma(av, bv0[1], c9_0);c9_1 = fma(av, bv1[1], c9_1);c9_2 = fma(av, bv2[1], c9_2);c9_3 = fma(av, bv3[1], c9_3);}
    { const float av = subgroupShuffle(al1[2], 1u);c9_0 = fma(av, bv0[2], c9_0);c9_1 = fma(av, bv1[2], c9_1);c9_2 = fma(av, bv2[2], c9_2);c9_3 = fma(av, bv3[2], c9_3);}
    { const float av = subgroupShuffle(al1[3], 1u);c9_0 = fma(av, bv0[3], c9_0);c9_1 = fma(av, bv1[3], c9_1);c9_2 = fma(av, bv2[3], c9_2);c9_3 = fma(av, bv3[3], c9_3);}
    { const float av = subgroupShuffle(al1[0], 2u);c10_0 = fma(av, bv0[0], c10_0);c10_1 = fma(av, bv1[0], c10_1);c10_2 = fma(av, bv2[0], c10_2);c10_3 = fma(av, bv3[0], c10_3);}
    { const float av = subgroupShuffle(al1[1], 2u);c10_0 = fma(av, bv0[1], c10_0);c10_1 = fma(av, bv1[1], c10_1);c10_2 = fma(av, bv2[1], c10_2);c10_3 = fma(av, bv3[1], c10_3);}
    { const float av = subgroupShuffle(al1[2], 2u);c10_0 = fma(av, bv0[2], c10_0);c10_1 = fma(av, bv1[2], c10_1);c10_2 = fma(av, bv2[2], c10_2);c10_3 = fma(av, bv3[2], c10_3);}
    { const float av = subgroupShuffle(al1[3], 2u);c10_0 = fma(av, bv0[3], c10_0);c10_1 = fma(av, bv1[3], c10_1);c10_2 = fma(av, bv2[3], c10_2);c10_3 = fma(av, bv3[3], c10_3);}
    { const float av = subgroupShuffle(al1[0], 3u);c11_0 = fma(av, bv0[0], c11_0);c11_1 = fma(av, bv1[0], c11_1);c11_2 = fma(av, bv2[0], c11_2);c11_3 = fma(av, bv3[0], c11_3);}
    { const float av = subgroupShuffle(al1[1], 3u);c11_0 = fma(av, bv0[1], c11_0);c11_1 = fma(av, bv1[1], c11_1);c11_2 = fma(av, bv2[1], c11_2);c11_3 = fma(av, bv3[1], c11_3);}
    { const float av = subgroupShuffle(al1[2], 3u);c11_0 = fma(av, bv0[2], c11_0);c11_1 = fma(av, bv1[2], c11_1);c11_2 = fma(av, bv2[2], c11_2);c11_3 = fma(av, bv3[2], c11_3);}
    { const float av = subgroupShuffle(al1[3], 3u);c11_0 = fma(av, bv0[3], c11_0);c11_1 = fma(av, bv1[3], c11_1);c11_2 = fma(av, bv2[3], c11_2);c11_3 = fma(av, bv3[3], c11_3);}
    { const float av = subgroupShuffle(al1[0], 4u);c12_0 = fma(av, bv0[0], c12_0);c12_1 = fma(av, bv1[0], c12_1);c12_2 = fma(av, bv2[0], c12_2);c12_3 = fma(av, bv3[0], c12_3);}
    { const float av = subgroupShuffle(al1[1], 4u);c12_0 = fma(av, bv0[1], c12_0);c12_1 = fma(av, bv1[1], c12_1);c12_2 = fma(av, bv2[1], c12_2);c12_3 = fma(av, bv3[1], c12_3);}
    { const float av = subgroupShuffle(al1[2], 4u);c12_0 = fma(av, bv0[2], c12_0);c12_1 = fma(av, bv1[2], c12_1);c12_2 = fma(av, bv2[2], c12_2);c12_3 = fma(av, bv3[2], c12_3);}
    { const float av = subgroupShuffle(al1[3], 4u);c12_0 = fma(av, bv0[3], c12_0);c12_1 = fma(av, bv1[3], c12_1);c12_2 = fma(av, bv2[3], c12_2);c12_3 = fma(av, bv3[3], c12_3);}
    { const float av = subgroupShuffle(al1[0], 5u);c13_0 = fma(av, bv0[0], c13_0);c13_1 = fma(av, bv1[0], c13_1);c13_2 = fma(av, bv2[0], c13_2);c13_3 = fma(av, bv3[0], c13_3);}
    { const float av = subgroupShuffle(al1[1], 5u);c13_0 = fma(av, bv0[1], c13_0);c13_1 = fma(av, bv1[1], c13_1);c13_2 = fma(av, bv2[1], c13_2);c13_3 = fma(av, bv3[1], c13_3);}
    { const float av = subgroupShuffle(al1[2], 5u);c13_0 = fma(av, bv0[2], c13_0);c13_1 = fma(av, bv1[2], c13_1);c13_2 = fma(av, bv2[2], c13_2);c13_3 = fma(av, bv3[2], c13_3);}
    { const float av = subgroupShuffle(al1[3], 5u);c13_0 = fma(av, bv0[3], c13_0);c13_1 = fma(av, bv1[3], c13_1);c13_2 = fma(av, bv2[3], c13_2);c13_3 = fma(av, bv3[3], c13_3);}
    { const float av = subgroupShuffle(al1[0], 6u);c14_0 = fma(av, bv0[0], c14_0);c14_1 = fma(av, bv1[0], c14_1);c14_2 = fma(av, bv2[0], c14_2);c14_3 = fma(av, bv3[0], c14_3);}
    { const float av = subgroupShuffle(al1[1], 6u);c14_0 = fma(av, bv0[1], c14_0);c14_1 = fma(av, bv1[1], c14_1);c14_2 = fma(av, bv2[1], c14_2);c14_3 = fma(av, bv3[1], c14_3);}
    { const float av = subgroupShuffle(al1[2], 6u);c14_0 = fma(av, bv0[2], c14_0);c14_1 = fma(av, bv1[2], c14_1);c14_2 = fma(av, bv2[2], c14_2);c14_3 = fma(av, bv3[2], c14_3);}
    { const float av = subgroupShuffle(al1[3], 6u);c14_0 = fma(av, bv0[3], c14_0);c14_1 = fma(av, bv1[3], c14_1);c14_2 = fma(av, bv2[3], c14_2);c14_3 = fma(av, bv3[3], c14_3);}
    { const float av = subgroupShuffle(al1[0], 7u);c15_0 = fma(av, bv0[0], c15_0);c15_1 = fma(av, bv1[0], c15_1);c15_2 = fma(av, bv2[0], c15_2);c15_3 = fma(av, bv3[0], c15_3);}
    { const float av = subgroupShuffle(al1[1], 7u);c15_0 = fma(av, bv0[1], c15_0);c15_1 = fma(av, bv1[1], c15_1);c15_2 = fma(av, bv2[1], c15_2);c15_3 = fma(av, bv3[1], c15_3);}
    { const float av = subgroupShuffle(al1[2], 7u);c15_0 = fma(av, bv0[2], c15_0);c15_1 = fma(av, bv1[2], c15_1);c15_2 = fma(av, bv2[2], c15_2);c15_3 = fma(av, bv3[2], c15_3);}
    { const float av = subgroupShuffle(al1[3], 7u);c15_0 = fma(av, bv0[3], c15_0);c15_1 = fma(av, bv1[3], c15_1);c15_2 = fma(av, bv2[3], c15_2);c15_3 = fma(av, bv3[3], c15_3);}
    { const float av = subgroupShuffle(al2[0], 0u);c16_0 = fma(av, bv0[0], c16_0);c16_1 = fma(av, bv1[0], c16_1);c16_2 = fma(av, bv2[0], c16_2);c16_3 = fma(av, bv3[0], c16_3);}
    { const float av = subgroupShuffle(al2[1], 0u);c16_0 = fma(av, bv0[1], c16_0);c16_1 = fma(av, bv1[1], c16_1);c16_2 = fma(av, bv2[1], c16_2);c16_3 = fma(av, bv3[1], c16_3);}
    { const float av = subgroupShuffle(al2[2], 0u);c16_0 = fma(av, bv0[2], c16_0);c16_1 = fma(av, bv1[2], c16_1);c16_2 = fma(av, bv2[2], c16_2);c16_3 = fma(av, bv3[2], c16_3);}
    { const float av = subgroupShuffle(al2[3], 0u);c16_0 = fma(av, bv0[3], c16_0);c16_1 = fma(av, bv1[3], c16_1);c16_2 = fma(av, bv2[3], c16_2);c16_3 = fma(av, bv3[3], c16_3);}
    { const float av = subgroupShuffle(al2[0], 1u);c17_0 = fma(av, bv0[0], c17_0);c17_1 = fma(av, bv1[0], c17_1);c17_2 = fma(av, bv2[0], c17_2);c17_3 = fma(av, bv3[0], c17_3);}
    { const float av = subgroupShuffle(al2[1], 1u);c17_0 = fma(av, bv0[1], c17_0);c17_1 = fma(av, bv1[1], c17_1);c17_2 = fma(av, bv2[1], c17_2);c17_3 = fma(av, bv3[1], c17_3);}
    { const float av = subgroupShuffle(al2[2], 1u);c17_0 = fma(av, bv0[2], c17_0);c17_1 = fma(av, bv1[2], c17_1);c17_2 = fma(av, bv2[2], c17_2);c17_3 = fma(av, bv3[2], c17_3);}
    { const float av = subgroupShuffle(al2[3], 1u);c17_0 = fma(av, bv0[3], c17_0);c17_1 = fma(av, bv1[3], c17_1);c17_2 = fma(av, bv2[3], c17_2);c17_3 = fma(av, bv3[3], c17_3);}
    { const float av = subgroupShuffle(al2[0], 2u);c18_0 = fma(av, bv0[0], c18_0);c18_1 = fma(av, bv1[0], c18_1);c18_2 = fma(av, bv2[0], c18_2);c18_3 = fma(av, bv3[0], c18_3);}
    { const float av = subgroupShuffle(al2[1], 2u);c18_0 = fma(av, bv0[1], c18_0);c18_1 = fma(av, bv1[1], c18_1);c18_2 = fma(av, bv2[1], c18_2);c18_3 = fma(av, bv3[1], c18_3);}
    { const float av = subgroupShuffle(al2[2], 2u);c18_0 = fma(av, bv0[2], c18_0);c18_1 = fma(av, bv1[2], c18_1);c18_2 = fma(av, bv2[2], c18_2);c18_3 = fma(av, bv3[2], c18_3);}
    { const float av = subgroupShuffle(al2[3], 2u);c18_0 = fma(av, bv0[3], c18_0);c18_1 = fma(av, bv1[3], c18_1);c18_2 = fma(av, bv2[3], c18_2);c18_3 = fma(av, bv3[3], c18_3);}
    { const float av = subgroupShuffle(al2[0], 3u);c19_0 = fma(av, bv0[0], c19_0);c19_1 = fma(av, bv1[0], c19_1);c19_2 = fma(av, bv2[0], c19_2);c19_3 = fma(av, bv3[0], c19_3);}
    { const float av = subgroupShuffle(al2[1], 3u);c19_0 = fma(av, bv0[1], c19_0);c19_1 = fma(av, bv1[1], c19_1);c19_2 = fma(av, bv2[1], c19_2);c19_3 = fma(av, bv3[1], c19_3);}
    { const float av = subgroupShuffle(al2[2], 3u);c19_0 = fma(av, bv0[2], c19_0);c19_1 = fma(av, bv1[2], c19_1);c19_2 = fma(av, bv2[2], c19_2);c19_3 = fma(av, bv3[2], c19_3);}
    { const float av = subgroupShuffle(al2[3], 3u);c19_0 = fma(av, bv0[3], c19_0);c19_1 = fma(av, bv1[3], c19_1);c19_2 = fma(av, bv2[3], c19_2);c19_3 = fma(av, bv3[3], c19_3);}
    { const float av = subgroupShuffle(al2[0], 4u);c20_0 = fma(av, bv0[0], c20_0);c20_1 = fma(av, bv1[0], c20_1);c20_2 = fma(av, bv2[0], c20_2);c20_3 = fma(av, bv3[0], c20_3);}
    { const float av = subgroupShuffle(al2[1], 4u);c20_0 = fma(av, bv0[1], c20_0);c20_1 = fma(av, bv1[1], c20_1);c20_2 = fma(av, bv2[1], c20_2);c20_3 = fma(av, bv3[1], c20_3);}
    { const float av = subgroupShuffle(al2[2], 4u);c20_0 = fma(av, bv0[2], c20_0);c20_1 = fma(av, bv1[2], c20_1);c20_2 = fma(av, bv2[2], c20_2);c20_3 = fma(av, bv3[2], c20_3);}
    { const float av = subgroupShuffle(al2[3], 4u);c20_0 = fma(av, bv0[3], c20_0);c20_1 = fma(av, bv1[3], c20_1);c20_2 = fma(av, bv2[3], c20_2);c20_3 = fma(av, bv3[3], c20_3);}
    { const float av = subgroupShuffle(al2[0], 5u);c21_0 = fma(av, bv0[0], c21_0);c21_1 = fma(av, bv1[0], c21_1);c21_2 = fma(av, bv2[0], c21_2);c21_3 = fma(av, bv3[0], c21_3);}
    { const float av = subgroupShuffle(al2[1], 5u);c21_0 = fma(av, bv0[1], c21_0);c21_1 = fma(av, bv1[1], c21_1);c21_2 = fma(av, bv2[1], c21_2);c21_3 = fma(av, bv3[1], c21_3);}
    { const float av = subgroupShuffle(al2[2], 5u);c21_0 = fma(av, bv0[2], c21_0);c21_1 = fma(av, bv1[2], c21_1);c21_2 = fma(av, bv2[2], c21_2);c21_3 = fma(av, bv3[2], c21_3);}
    { const float av = subgroupShuffle(al2[3], 5u);c21_0 = fma(av, bv0[3], c21_0);c21_1 = fma(av, bv1[3], c21_1);c21_2 = fma(av, bv2[3], c21_2);c21_3 = fma(av, bv3[3], c21_3);}
    { const float av = subgroupShuffle(al2[0], 6u);c22_0 = fma(av, bv0[0], c22_0);c22_1 = fma(av, bv1[0], c22_1);c22_2 = fma(av, bv2[0], c22_2);c22_3 = fma(av, bv3[0], c22_3);}
    { const float av = subgroupShuffle(al2[1], 6u);c22_0 = fma(av, bv0[1], c22_0);c22_1 = fma(av, bv1[1], c22_1);c22_2 = fma(av, bv2[1], c22_2);c22_3 = fma(av, bv3[1], c22_3);}
    { const float av = subgroupShuffle(al2[2], 6u);c22_0 = fma(av, bv0[2], c22_0);c22_1 = fma(av, bv1[2], c22_1);c22_2 = fma(av, bv2[2], c22_2);c22_3 = fma(av, bv3[2], c22_3);}
    { const float av = subgroupShuffle(al2[3], 6u);c22_0 = fma(av, bv0[3], c22_0);c22_1 = fma(av, bv1[3], c22_1);c22_2 = fma(av, bv2[3], c22_2);c22_3 = fma(av, bv3[3], c22_3);}
    { const float av = subgroupShuffle(al2[0], 7u);c23_0 = fma(av, bv0[0], c23_0);c23_1 = fma(av, bv1[0], c23_1);c23_2 = fma(av, bv2[0], c23_2);c23_3 = fma(av, bv3[0], c23_3);}
    { const float av = subgroupShuffle(al2[1], 7u);c23_0 = fma(av, bv0[1], c23_0);c23_1 = fma(av, bv1[1], c23_1);c23_2 = fma(av, bv2[1], c23_2);c23_3 = fma(av, bv3[1], c23_3);}
    { const float av = subgroupShuffle(al2[2], 7u);c23_0 = fma(av, bv0[2], c23_0);c23_1 = fma(av, bv1[2], c23_1);c23_2 = fma(av, bv2[2], c23_2);c23_3 = fma(av, bv3[2], c23_3);}
    { const float av = subgroupShuffle(al2[3], 7u);c23_0 = fma(av, bv0[3], c23_0);c23_1 = fma(av, bv1[3], c23_1);c23_2 = fma(av, bv2[3], c23_2);c23_3 = fma(av, bv3[3], c23_3);}
    { const float av = subgroupShuffle(al3[0], 0u);c24_0 = fma(av, bv0[0], c24_0);c24_1 = fma(av, bv1[0], c24_1);c24_2 = fma(av, bv2[0], c24_2);c24_3 = fma(av, bv3[0], c24_3);}
    { const float av = subgroupShuffle(al3[1], 0u);c24_0 = fma(av, bv0[1], c24_0);c24_1 = fma(av, bv1[1], c24_1);c24_2 = fma(av, bv2[1], c24_2);c24_3 = fma(av, bv3[1], c24_3);}
    { const float av = subgroupShuffle(al3[2], 0u);c24_0 = fma(av, bv0[2], c24_0);c24_1 = fma(av, bv1[2], c24_1);c24_2 = fma(av, bv2[2], c24_2);c24_3 = fma(av, bv3[2], c24_3);}
    { const float av = subgroupShuffle(al3[3], 0u);c24_0 = fma(av, bv0[3], c24_0);c24_1 = fma(av, bv1[3], c24_1);c24_2 = fma(av, bv2[3], c24_2);c24_3 = fma(av, bv3[3], c24_3);}
    { const float av = subgroupShuffle(al3[0], 1u);c25_0 = fma(av, bv0[0], c25_0);c25_1 = fma(av, bv1[0], c25_1);c25_2 = fma(av, bv2[0], c25_2);c25_3 = fma(av, bv3[0], c25_3);}
    { const float av = subgroupShuffle(al3[1], 1u);c25_0 = fma(av, bv0[1], c25_0);c25_1 = fma(av, bv1[1], c25_1);c25_2 = fma(av, bv2[1], c25_2);c25_3 = fma(av, bv3[1], c25_3);}
    { const float av = subgroupShuffle(al3[2], 1u);c25_0 = fma(av, bv0[2], c25_0);c25_1 = fma(av, bv1[2], c25_1);c25_2 = fma(av, bv2[2], c25_2);c25_3 = fma(av, bv3[2], c25_3);}
    { const float av = subgroupShuffle(al3[3], 1u);c25_0 = fma(av, bv0[3], c25_0);c25_1 = fma(av, bv1[3], c25_1);c25_2 = fma(av, bv2[3], c25_2);c25_3 = fma(av, bv3[3], c25_3);}
    { const float av = subgroupShuffle(al3[0], 2u);c26_0 = fma(av, bv0[0], c26_0);c26_1 = fma(av, bv1[0], c26_1);c26_2 = fma(av, bv2[0], c26_2);c26_3 = fma(av, bv3[0], c26_3);}
    { const float av = subgroupShuffle(al3[1], 2u);c26_0 = fma(av, bv0[1], c26_0);c26_1 = fma(av, bv1[1], c26_1);c26_2 = fma(av, bv2[1], c26_2);c26_3 = fma(av, bv3[1], c26_3);}
    { const float av = subgroupShuffle(al3[2], 2u);c26_0 = fma(av, bv0[2], c26_0);c26_1 = fma(av, bv1[2], c26_1);c26_2 = fma(av, bv2[2], c26_2);c26_3 = fma(av, bv3[2], c26_3);}
    { const float av = subgroupShuffle(al3[3], 2u);c26_0 = fma(av, bv0[3], c26_0);c26_1 = fma(av, bv1[3], c26_1);c26_2 = fma(av, bv2[3], c26_2);c26_3 = fma(av, bv3[3], c26_3);}
    { const float av = subgroupShuffle(al3[0], 3u);c27_0 = fma(av, bv0[0], c27_0);c27_1 = fma(av, bv1[0], c27_1);c27_2 = fma(av, bv2[0], c27_2);c27_3 = fma(av, bv3[0], c27_3);}
    { const float av = subgroupShuffle(al3[1], 3u);c27_0 = fma(av, bv0[1], c27_0);c27_1 = fma(av, bv1[1], c27_1);c27_2 = fma(av, bv2[1], c27_2);c27_3 = fma(av, bv3[1], c27_3);}
    { const float av = subgroupShuffle(al3[2], 3u);c27_0 = fma(av, bv0[2], c27_0);c27_1 = fma(av, bv1[2], c27_1);c27_2 = fma(av, bv2[2], c27_2);c27_3 = fma(av, bv3[2], c27_3);}
    { const float av = subgroupShuffle(al3[3], 3u);c27_0 = fma(av, bv0[3], c27_0);c27_1 = fma(av, bv1[3], c27_1);c27_2 = fma(av, bv2[3], c27_2);c27_3 = fma(av, bv3[3], c27_3);}
    { const float av = subgroupShuffle(al3[0], 4u);c28_0 = fma(av, bv0[0], c28_0);c28_1 = fma(av, bv1[0], c28_1);c28_2 = fma(av, bv2[0], c28_2);c28_3 = fma(av, bv3[0], c28_3);}
    { const float av = subgroupShuffle(al3[1], 4u);c28_0 = fma(av, bv0[1], c28_0);c28_1 = fma(av, bv1[1], c28_1);c28_2 = fma(av, bv2[1], c28_2);c28_3 = fma(av, bv3[1], c28_3);}
    { const float av = subgroupShuffle(al3[2], 4u);c28_0 = fma(av, bv0[2], c28_0);c28_1 = fma(av, bv1[2], c28_1);c28_2 = fma(av, bv2[2], c28_2);c28_3 = fma(av, bv3[2], c28_3);}
    { const float av = subgroupShuffle(al3[3], 4u);c28_0 = fma(av, bv0[3], c28_0);c28_1 = fma(av, bv1[3], c28_1);c28_2 = fma(av, bv2[3], c28_2);c28_3 = fma(av, bv3[3], c28_3);}
    { const float av = subgroupShuffle(al3[0], 5u);c29_0 = fma(av, bv0[0], c29_0);c29_1 = fma(av, bv1[0], c29_1);c29_2 = fma(av, bv2[0], c29_2);c29_3 = fma(av, bv3[0], c29_3);}
    { const float av = subgroupShuffle(al3[1], 5u);c29_0 = fma(av, bv0[1], c29_0);c29_1 = fma(av, bv1[1], c29_1);c29_2 = fma(av, bv2[1], c29_2);c29_3 = fma(av, bv3[1], c29_3);}
    { const float av = subgroupShuffle(al3[2], 5u);c29_0 = fma(av, bv0[2], c29_0);c29_1 = fma(av, bv1[2], c29_1);c29_2 = fma(av, bv2[2], c29_2);c29_3 = fma(av, bv3[2], c29_3);}
    { const float av = subgroupShuffle(al3[3], 5u);c29_0 = fma(av, bv0[3], c29_0);c29_1 = fma(av, bv1[3], c29_1);c29_2 = fma(av, bv2[3], c29_2);c29_3 = fma(av, bv3[3], c29_3);}
    { const float av = subgroupShuffle(al3[0], 6u);c30_0 = fma(av, bv0[0], c30_0);c30_1 = fma(av, bv1[0], c30_1);c30_2 = fma(av, bv2[0], c30_2);c30_3 = fma(av, bv3[0], c30_3);}
    { const float av = subgroupShuffle(al3[1], 6u);c30_0 = fma(av, bv0[1], c30_0);c30_1 = fma(av, bv1[1], c30_1);c30_2 = fma(av, bv2[1], c30_2);c30_3 = fma(av, bv3[1], c30_3);}
    { const float av = subgroupShuffle(al3[2], 6u);c30_0 = fma(av, bv0[2], c30_0);c30_1 = fma(av, bv1[2], c30_1);c30_2 = fma(av, bv2[2], c30_2);c30_3 = fma(av, bv3[2], c30_3);}
    { const float av = subgroupShuffle(al3[3], 6u);c30_0 = fma(av, bv0[3], c30_0);c30_1 = fma(av, bv1[3], c30_1);c30_2 = fma(av, bv2[3], c30_2);c30_3 = fma(av, bv3[3], c30_3);}
    { const float av = subgroupShuffle(al3[0], 7u);c31_0 = fma(av, bv0[0], c31_0);c31_1 = fma(av, bv1[0], c31_1);c31_2 = fma(av, bv2[0], c31_2);c31_3 = fma(av, bv3[0], c31_3);}
    { const float av = subgroupShuffle(al3[1], 7u);c31_0 = fma(av, bv0[1], c31_0);c31_1 = fma(av, bv1[1], c31_1);c31_2 = fma(av, bv2[1], c31_2);c31_3 = fma(av, bv3[1], c31_3);}
    { const float av = subgroupShuffle(al3[2], 7u);c31_0 = fma(av, bv0[2], c31_0);c31_1 = fma(av, bv1[2], c31_1);c31_2 = fma(av, bv2[2], c31_2);c31_3 = fma(av, bv3[2], c31_3);}
    { const float av = subgroupShuffle(al3[3], 7u);c31_0 = fma(av, bv0[3], c31_0);c31_1 = fma(av, bv1[3], c31_1);c31_2 = fma(av, bv2[3], c31_2);c31_3 = fma(av, bv3[3], c31_3);}
  }
  if(i0 + 0u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 0u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 0u, j0, c0_0), kiln_out(i0 + 0u, j1, c0_1), kiln_out(i0 + 0u, j2, c0_2), kiln_out(i0 + 0u, j3, c0_3));}
  if(i0 + 1u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 1u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 1u, j0, c1_0), kiln_out(i0 + 1u, j1, c1_1), kiln_out(i0 + 1u, j2, c1_2), kiln_out(i0 + 1u, j3, c1_3));}
  if(i0 + 2u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 2u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 2u, j0, c2_0), kiln_out(i0 + 2u, j1, c2_1), kiln_out(i0 + 2u, j2, c2_2), kiln_out(i0 + 2u, j3, c2_3));}
  if(i0 + 3u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 3u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 3u, j0, c3_0), kiln_out(i0 + 3u, j1, c3_1), kiln_out(i0 + 3u, j2, c3_2), kiln_out(i0 + 3u, j3, c3_3));}
  if(i0 + 4u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 4u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 4u, j0, c4_0), kiln_out(i0 + 4u, j1, c4_1), kiln_out(i0 + 4u, j2, c4_2), kiln_out(i0 + 4u, j3, c4_3));}
  if(i0 + 5u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 5u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 5u, j0, c5_0), kiln_out(i0 + 5u, j1, c5_1), kiln_out(i0 + 5u, j2, c5_2), kiln_out(i0 + 5u, j3, c5_3));}
  if(i0 + 6u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 6u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 6u, j0, c6_0), kiln_out(i0 + 6u, j1, c6_1), kiln_out(i0 + 6u, j2, c6_2), kiln_out(i0 + 6u, j3, c6_3));}
  if(i0 + 7u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 7u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 7u, j0, c7_0), kiln_out(i0 + 7u, j1, c7_1), kiln_out(i0 + 7u, j2, c7_2), kiln_out(i0 + 7u, j3, c7_3));}
  if(i0 + 8u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 8u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 8u, j0, c8_0), kiln_out(i0 + 8u, j1, c8_1), kiln_out(i0 + 8u, j2, c8_2), kiln_out(i0 + 8u, j3, c8_3));}
  if(i0 + 9u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 9u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 9u, j0, c9_0), kiln_out(i0 + 9u, j1, c9_1), kiln_out(i0 + 9u, j2, c9_2), kiln_out(i0 + 9u, j3, c9_3));}
  if(i0 + 10u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 10u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 10u, j0, c10_0), kiln_out(i0 + 10u, j1, c10_1), kiln_out(i0 + 10u, j2, c10_2), kiln_out(i0 + 10u, j3, c10_3));}
  if(i0 + 11u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 11u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 11u, j0, c11_0), kiln_out(i0 + 11u, j1, c11_1), kiln_out(i0 + 11u, j2, c11_2), kiln_out(i0 + 11u, j3, c11_3));}
  if(i0 + 12u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 12u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 12u, j0, c12_0), kiln_out(i0 + 12u, j1, c12_1), kiln_out(i0 + 12u, j2, c12_2), kiln_out(i0 + 12u, j3, c12_3));}
  if(i0 + 13u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 13u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 13u, j0, c13_0), kiln_out(i0 + 13u, j1, c13_1), kiln_out(i0 + 13u, j2, c13_2), kiln_out(i0 + 13u, j3, c13_3));}
  if(i0 + 14u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 14u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 14u, j0, c14_0), kiln_out(i0 + 14u, j1, c14_1), kiln_out(i0 + 14u, j2, c14_2), kiln_out(i0 + 14u, j3, c14_3));}
  if(i0 + 15u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 15u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 15u, j0, c15_0), kiln_out(i0 + 15u, j1, c15_1), kiln_out(i0 + 15u, j2, c15_2), kiln_out(i0 + 15u, j3, c15_3));}
  if(i0 + 16u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 16u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 16u, j0, c16_0), kiln_out(i0 + 16u, j1, c16_1), kiln_out(i0 + 16u, j2, c16_2), kiln_out(i0 + 16u, j3, c16_3));}
  if(i0 + 17u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 17u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 17u, j0, c17_0), kiln_out(i0 + 17u, j1, c17_1), kiln_out(i0 + 17u, j2, c17_2), kiln_out(i0 + 17u, j3, c17_3));}
  if(i0 + 18u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 18u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 18u, j0, c18_0), kiln_out(i0 + 18u, j1, c18_1), kiln_out(i0 + 18u, j2, c18_2), kiln_out(i0 + 18u, j3, c18_3));}
  if(i0 + 19u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 19u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 19u, j0, c19_0), kiln_out(i0 + 19u, j1, c19_1), kiln_out(i0 + 19u, j2, c19_2), kiln_out(i0 + 19u, j3, c19_3));}
  if(i0 + 20u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 20u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 20u, j0, c20_0), kiln_out(i0 + 20u, j1, c20_1), kiln_out(i0 + 20u, j2, c20_2), kiln_out(i0 + 20u, j3, c20_3));}
  if(i0 + 21u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 21u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 21u, j0, c21_0), kiln_out(i0 + 21u, j1, c21_1), kiln_out(i0 + 21u, j2, c21_2), kiln_out(i0 + 21u, j3, c21_3));}
  if(i0 + 22u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 22u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 22u, j0, c22_0), kiln_out(i0 + 22u, j1, c22_1), kiln_out(i0 + 22u, j2, c22_2), kiln_out(i0 + 22u, j3, c22_3));}
  if(i0 + 23u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 23u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 23u, j0, c23_0), kiln_out(i0 + 23u, j1, c23_1), kiln_out(i0 + 23u, j2, c23_2), kiln_out(i0 + 23u, j3, c23_3));}
  if(i0 + 24u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 24u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 24u, j0, c24_0), kiln_out(i0 + 24u, j1, c24_1), kiln_out(i0 + 24u, j2, c24_2), kiln_out(i0 + 24u, j3, c24_3));}
  if(i0 + 25u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 25u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 25u, j0, c25_0), kiln_out(i0 + 25u, j1, c25_1), kiln_out(i0 + 25u, j2, c25_2), kiln_out(i0 + 25u, j3, c25_3));}
  if(i0 + 26u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 26u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 26u, j0, c26_0), kiln_out(i0 + 26u, j1, c26_1), kiln_out(i0 + 26u, j2, c26_2), kiln_out(i0 + 26u, j3, c26_3));}
  if(i0 + 27u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 27u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 27u, j0, c27_0), kiln_out(i0 + 27u, j1, c27_1), kiln_out(i0 + 27u, j2, c27_2), kiln_out(i0 + 27u, j3, c27_3));}
  if(i0 + 28u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 28u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 28u, j0, c28_0), kiln_out(i0 + 28u, j1, c28_1), kiln_out(i0 + 28u, j2, c28_2), kiln_out(i0 + 28u, j3, c28_3));}
  if(i0 + 29u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 29u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 29u, j0, c29_0), kiln_out(i0 + 29u, j1, c29_1), kiln_out(i0 + 29u, j2, c29_2), kiln_out(i0 + 29u, j3, c29_3));}
  if(i0 + 30u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 30u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 30u, j0, c30_0), kiln_out(i0 + 30u, j1, c30_1), kiln_out(i0 + 30u, j2, c30_2), kiln_out(i0 + 30u, j3, c30_3));}
  if(i0 + 31u < kiln_pc . p0){ if(j0 < 128u)b0w . data[((i0 + 31u)* 128u + j0)/ 4u]= vec4(kiln_out(i0 + 31u, j0, c31_0), kiln_out(i0 + 31u, j1, c31_1), kiln_out(i0 + 31u, j2, c31_2), kiln_out(i0 + 31u, j3, c31_3));}
}
#line 30 "matmul_rowblock.comp"

void main(){

  for(uint rb = gl_WorkGroupID . x;rb <((kiln_pc . p0 + 31u)/ 32u);rb += gl_NumWorkGroups . x){
    for(uint cb = gl_WorkGroupID . y;cb < 1u;cb += gl_NumWorkGroups . y){




      kiln_rowblock(rb, cb);
    }
  }
}
