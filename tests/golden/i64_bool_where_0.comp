#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { uint8_t data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { int64_t data[];} b1;
layout(std430, set = 0, binding = 2)readonly buffer KilnB2 { int64_t data[];} b2;
int64_t kiln_max_i64(int64_t a, int64_t b){ return a > b ? a : b;}
int64_t kiln_min_i64(int64_t a, int64_t b){ return a < b ? a : b;}
int64_t kiln_trunc_i64(float x){
  const uint u = floatBitsToUint(x);
  const int e = int((u >> 23)& 0xffu)- 127;
  if(e < 0)return int64_t(0);
  const int64_t m = int64_t((u & 0x7fffffu)| 0x800000u);
  const int64_t r = e >= 23 ? m <<(e - 23): m >>(23 - e);
  return(u >> 31)!= 0u ? - r : r;
}
void kiln_element(uint g){
  const uint i0 =(g / 5u);
  const uint i1 =(g % 5u);
  const int64_t x0 = b1 . data[g];
  const int64_t x1 = b2 . data[i1];
  const bool v2 =(x0 > x1);
  b0 . data[g]= uint8_t((v2)? 1u : 0u);
}
void main(){
  const uint stride = gl_NumWorkGroups . x * 128u;
  for(uint g = gl_GlobalInvocationID . x;g < 30u;g += stride){
    kiln_element(g);
  }
}
