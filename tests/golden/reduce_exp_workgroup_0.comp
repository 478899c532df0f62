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
float kiln_sigmoid(float x){ return 1.0 /(1.0 + exp(- x));}
vec4 kiln_sigmoid(vec4 x){ return 1.0 /(1.0 + exp(- x));}
float kiln_gelu(float x){ return 0.5 * x *(1.0 + kiln_erf(x * 0.70710678118654752));}
vec4 kiln_gelu(vec4 x){ return 0.5 * x *(1.0 + kiln_erf(x * 0.70710678118654752));}
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
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { float data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { float data[];} b1;
float kiln_load(uint o, uint r){
  const uint o0 = o;
  const uint r0 = r;
  const float x0 = b1 . data[o0 * 300u + r0];
  const float v1 = exp(x0);
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
