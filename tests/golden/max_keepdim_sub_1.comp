#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { float data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { float data[];} b1;
layout(std430, set = 0, binding = 2)readonly buffer KilnB2 { float data[];} b2;
void kiln_element(uint g){
  const uint i0 =(g / 7u);
  const uint i1 =(g % 7u);
  const float x0 = b1 . data[g];
  const float x1 = b2 . data[i0];
  const float v2 =(x0 - x1);
  b0 . data[g]= v2;
}
void main(){
  const uint stride = gl_NumWorkGroups . x * 128u;
  for(uint g = gl_GlobalInvocationID . x;g < 35u;g += stride){
    kiln_element(g);
  }
}
