#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { float16_t data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { float16_t data[];} b1;
layout(std430, set = 0, binding = 2)readonly buffer KilnB2 { float16_t data[];} b2;
void kiln_element(uint g){
  const uint i0 =(g / 8u);
  const uint i1 =(g % 8u);
  const float x0 = float(b1 . data[g]);
  const float v1 = kiln_f16((x0 * x0));
  const float x2 = float(b2 . data[i1]);
  const float v3 = kiln_f16((v1 + x2));
  const float v4 = kiln_f16(kiln_sqrt(v3));
  b0 . data[g]= float16_t(v4);
}
void main(){
  const uint stride = gl_NumWorkGroups . x * 128u;
  for(uint g = gl_GlobalInvocationID . x;g < 32u;g += stride){
    kiln_element(g);
  }
}
