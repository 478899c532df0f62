#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { float data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { float data[];} b1;
layout(std430, set = 0, binding = 2)readonly buffer KilnB2 { float data[];} b2;
layout(std430, set = 0, binding = 3)readonly buffer KilnB3 { float data[];} b3;
layout(std430, set = 0, binding = 4)readonly buffer KilnB4 { float data[];} b4;
layout(std430, set = 0, binding = 5)readonly buffer KilnB5 { float data[];} b5;
void kiln_element(uint g){
  const uint i0 =(g / 7u);
  const uint i1 =(g % 7u);
  const float x0 = b1 . data[g];
  const float x1 = b2 . data[i1];
  const float v2 =(x0 * x1);
  const float x3 = b3 . data[i1];
  const float v4 =(v2 + x3);
  const float x5 = b4 . data[i1];
  const float v6 =(v4 * x5);
  const float x7 = b5 . data[i1];
  const float v8 =(v6 - x7);
  const float v9 = kiln_relu(v8);
  b0 . data[g]= v9;
}
void main(){
  const uint stride = gl_NumWorkGroups . x * 128u;
  for(uint g = gl_GlobalInvocationID . x;g < 21u;g += stride){
    kiln_element(g);
  }
}
