#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
float kiln_erf(float x){
  if(abs(x)< 0.5){
    const float z = x * x;
    return x * 1.1283791670955126 *
           (1.0 + z *(- 0.3333333333333333 + z *(0.1 + z *(- 0.023809523809523808 +
           z *(0.004629629629629629 + z *(- 0.0007575757575757576 +
           z * 0.00010683760683760684))))));
  }
  float t = 1.0 /(1.0 + 0.5 * abs(x));
  float y = 1.0 - t * exp(- x * x - 1.26551223 +
                          t *(1.00002368 +
                          t *(0.37409196 +
                          t *(0.09678418 +
                          t *(- 0.18628806 +
                          t *(0.27886807 +
                          t *(- 1.13520398 +
                          t *(1.48851587 +
                          t *(- 0.82215223 +
                          t * 0.17087277)))))))));
  return x >= 0.0 ? y : - y;
}
vec4 kiln_erf(vec4 x){ return vec4(kiln_erf(x . x), kiln_erf(x . y), kiln_erf(x . z), kiln_erf(x . w));}
float kiln_tanh(float x){
  float e = exp(- 2.0 * abs(x));
  float y =(1.0 - e)/(1.0 + e);
  return(floatBitsToUint(x)>> 31)== 0u ? y : - y;
}
vec4 kiln_tanh(vec4 x){ return vec4(kiln_tanh(x . x), kiln_tanh(x . y), kiln_tanh(x . z), kiln_tanh(x . w));}
float kiln_exp(float x){
  if(x < - 87.0){
    const float h = exp(0.5 * x);
    return h * h;
  }
  return exp(x);
}
vec4 kiln_exp(vec4 x){ return vec4(kiln_exp(x . x), kiln_exp(x . y), kiln_exp(x . z), kiln_exp(x . w));}
float kiln_exp_mul(float x, float k){
  if(x < - 87.0){
    const float h = exp(0.5 * x);
    return(h * k)* h;
  }
  return exp(x)* k;
}
float kiln_sigmoid(float x){ return 1.0 /(1.0 + exp(- x));}
vec4 kiln_sigmoid(vec4 x){ return 1.0 /(1.0 + exp(- x));}
float kiln_gelu(float x){ return 0.5 * x *(1.0 + kiln_erf(x * 0.70710678118654752));}
vec4 kiln_gelu(vec4 x){ return 0.5 * x *(1.0 + kiln_erf(x * 0.70710678118654752));}
int kiln_max_i32(int a, int b){ return a > b ? a : b;}
int kiln_min_i32(int a, int b){ return a < b ? a : b;}
float kiln_maximum(float a, float b){ return isnan(a)|| a > b ? a : b;}
vec4 kiln_maximum(vec4 a, vec4 b){ return mix(mix(b, a, greaterThan(a, b)), a, isnan(a));}
float kiln_minimum(float a, float b){ return isnan(a)|| a < b ? a : b;}
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
float kiln_relu(float x){ return x < 0.0 ? 0.0 : x;}
vec4 kiln_relu(vec4 x){ return mix(x, vec4(0.0), lessThan(x, vec4(0.0)));}
float kiln_add_zero(float x){ return x == 0.0 ? 0.0 : x;}
float kiln_zero_sub(float x){ return x == 0.0 ? 0.0 : - x;}
float kiln_mul_zero(float x){
  return isnan(x)|| isinf(x)? uintBitsToFloat(0x7fc00000u)
                              : uintBitsToFloat(floatBitsToUint(x)& 0x80000000u);
}
float kiln_zero_div(float x){
  return isnan(x)|| x == 0.0 ? uintBitsToFloat(0x7fc00000u)
                              : uintBitsToFloat(floatBitsToUint(x)& 0x80000000u);
}
vec4 kiln_add_zero(vec4 x){ return vec4(kiln_add_zero(x . x), kiln_add_zero(x . y), kiln_add_zero(x . z), kiln_add_zero(x . w));}
vec4 kiln_zero_sub(vec4 x){ return vec4(kiln_zero_sub(x . x), kiln_zero_sub(x . y), kiln_zero_sub(x . z), kiln_zero_sub(x . w));}
vec4 kiln_mul_zero(vec4 x){ return vec4(kiln_mul_zero(x . x), kiln_mul_zero(x . y), kiln_mul_zero(x . z), kiln_mul_zero(x . w));}
vec4 kiln_zero_div(vec4 x){ return vec4(kiln_zero_div(x . x), kiln_zero_div(x . y), kiln_zero_div(x . z), kiln_zero_div(x . w));}
float kiln_nan_value(){ return uintBitsToFloat(0x7fc00000u);}
float kiln_log(float x){
  if(isnan(x)|| isinf(x)&& x > 0.0)return x;
  if(x == 0.0)return uintBitsToFloat(0xff800000u);
  return x < 0.0 ? kiln_nan_value(): log(x);
}
float kiln_sqrt(float x){ return x < 0.0 ? kiln_nan_value(): sqrt(x);}
float kiln_rsqrt(float x){
  if(isnan(x))return x;
  if(x == 0.0)return uintBitsToFloat((floatBitsToUint(x)& 0x80000000u)| 0x7f800000u);
  if(x < 0.0)return kiln_nan_value();
  return isinf(x)? 0.0 : inversesqrt(x);
}
vec4 kiln_log(vec4 x){ return vec4(kiln_log(x . x), kiln_log(x . y), kiln_log(x . z), kiln_log(x . w));}
vec4 kiln_sqrt(vec4 x){ return vec4(kiln_sqrt(x . x), kiln_sqrt(x . y), kiln_sqrt(x . z), kiln_sqrt(x . w));}
vec4 kiln_rsqrt(vec4 x){ return vec4(kiln_rsqrt(x . x), kiln_rsqrt(x . y), kiln_rsqrt(x . z), kiln_rsqrt(x . w));}
const float KILN_PIO2 = 1.5707963267948966;
const float KILN_PIO4 = 0.7853981633974483;
const float KILN_LN2 = 0.6931471805599453;
float kiln_copysign(float mag, float s){
  return uintBitsToFloat((floatBitsToUint(mag)& 0x7fffffffu)|(floatBitsToUint(s)& 0x80000000u));
}
float kiln_log1p(float x){
  precise float u = 1.0 + x;
  if(u == 1.0)return x;
  if(isinf(u)|| u == 0.0)return kiln_log(u);
  precise float d = u - 1.0;
  return log(u)*(x / d);
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
float kiln_sin(float x){
  if(isinf(x))return kiln_nan_value();
  if(!(abs(x)> KILN_PIO4))return sin(x);
  float r;
  const uint q = kiln_trig_reduce(x, r);
  const float v =(q & 1u)!= 0u ? cos(r): sin(r);
  return kiln_copysign(1.0, x)*((q & 2u)!= 0u ? - v : v);
}
float kiln_cos(float x){
  if(isinf(x))return kiln_nan_value();
  if(!(abs(x)> KILN_PIO4))return cos(x);
  float r;
  const uint q =(kiln_trig_reduce(x, r)+ 1u)& 3u;
  const float v =(q & 1u)!= 0u ? cos(r): sin(r);
  return(q & 2u)!= 0u ? - v : v;
}
float kiln_tan(float x){
  if(isinf(x))return kiln_nan_value();
  if(!(abs(x)> KILN_PIO4))return sin(x)/ cos(x);
  float r;
  const uint q = kiln_trig_reduce(x, r);
  const float t =(q & 1u)!= 0u ? - cos(r)/ sin(r): sin(r)/ cos(r);
  return kiln_copysign(1.0, x)* t;
}
float kiln_atan(float xx){
  float x = abs(xx), y = 0.0;
  if(x > 2.414213562373095){
    y = KILN_PIO2;
    x = - 1.0 / x;
  } else if(x > 0.4142135623730950){
    y = KILN_PIO4;
    x =(x - 1.0)/(x + 1.0);
  }
  const float z = x * x;
  y +=(((8.05374449538e-2 * z - 1.38776856032e-1)* z + 1.99777106478e-1)* z -
        3.33329491539e-1)* z * x + x;
  return kiln_copysign(y, xx);
}
float kiln_asin(float xx){
  const float a = abs(xx);
  if(a > 1.0)return kiln_nan_value();
  const bool high = a > 0.5;
  const float z = high ? 0.5 *(1.0 - a): a * a;
  const float x = high ? sqrt(z): a;
  float y =((((4.2163199048e-2 * z + 2.4181311049e-2)* z + 4.5470025998e-2)* z +
              7.4953002686e-2)* z + 1.6666752422e-1)* z * x + x;
  if(high)y = KILN_PIO2 -(y + y);
  return kiln_copysign(y, xx);
}
float kiln_acos(float x){
  if(abs(x)> 1.0)return kiln_nan_value();
  if(x < - 0.5)return 2.0 * KILN_PIO2 - 2.0 * kiln_asin(sqrt(0.5 *(1.0 + x)));
  if(x > 0.5)return 2.0 * kiln_asin(sqrt(0.5 *(1.0 - x)));
  return KILN_PIO2 - kiln_asin(x);
}
float kiln_sinh(float x){
  const float a = abs(x);
  float y;
  if(a < 1.0){
    const float z = x * x;
    return((2.03721912945e-4 * z + 8.33028376239e-3)* z + 1.66667160211e-1)* z * x + x;
  }
  if(a > 80.0){
    const float h = exp(0.5 * a);
    y =(0.5 * h)* h;
  } else {
    const float e = exp(a);
    y = 0.5 * e - 0.5 / e;
  }
  return kiln_copysign(y, x);
}
float kiln_cosh(float x){
  const float a = abs(x);
  if(a > 80.0){
    const float h = exp(0.5 * a);
    return(0.5 * h)* h;
  }
  const float e = exp(a);
  return 0.5 * e + 0.5 / e;
}
float kiln_asinh(float x){
  const float a = abs(x);
  float y;
  if(isinf(a)|| isnan(a))return x;
  if(a > 268435456.0)
    y = kiln_log(a)+ KILN_LN2;
  else
    y = kiln_log1p(a + a * a /(1.0 + sqrt(1.0 + a * a)));
  return kiln_copysign(y, x);
}
float kiln_acosh(float x){
  if(isnan(x))return x;
  if(x < 1.0)return kiln_nan_value();
  if(isinf(x))return x;
  if(x > 268435456.0)return kiln_log(x)+ KILN_LN2;
  const float t = x - 1.0;
  return kiln_log1p(t + sqrt(2.0 * t + t * t));
}
float kiln_atanh(float x){
  const float a = abs(x);
  if(isnan(x))return x;
  if(a > 1.0)return kiln_nan_value();
  if(a == 1.0)return kiln_copysign(uintBitsToFloat(0x7f800000u), x);
  return kiln_copysign(0.5 * kiln_log1p((a + a)/(1.0 - a)), x);
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
  if(r == 0.0)return kiln_copysign(0.0, y);
  return r != 0.0 &&(r < 0.0)!=(y < 0.0)? r + y : r;
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
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { float data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { float data[];} b1;
float kiln_load(uint o, uint r){
  const uint o0 = o;
  const uint r0 = r;
  const float x0 = b1 . data[o0 * 300u + r0];
  const float v1 = kiln_exp(x0);
  return v1;
}
void kiln_store(uint o, float acc){
  b0 . data[o]= acc;
}
shared float kiln_partial[128u];
void main(){
  const uint lid = gl_LocalInvocationID . x;
  for(uint o = gl_WorkGroupID . x;o < 4u;o += gl_NumWorkGroups . x){
        float acc = float(0);
    for(uint r = lid;r < 300u;r += 128u){
      acc =((acc)+(kiln_load(o, r)));
    }
    kiln_partial[lid]= acc;
    barrier();
    for(uint s = 128u / 2;s > 0;s >>= 1){
      if(lid < s)kiln_partial[lid]=((kiln_partial[lid])+(kiln_partial[lid + s]));
      barrier();
    }
    if(lid == 0)kiln_store(o, kiln_partial[0]);
    barrier();
  }
}
