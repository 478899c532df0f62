#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { float data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { float data[];} b1;
void kiln_element(uint g){
  const uint i0 =(g / 24u);
  const uint i1 =((g / 6u)% 4u);
  const uint i2 =(g % 6u);
  const uint l0 = i2;
  const uint rs1 =(l0 % 3u);
  const uint rs2 =(l0 / 3u);
  const float x3 = b1 . data[rs2 * 12u + rs1 * 4u + i1];
  const float v4 = kiln_tanh(x3);
  b0 . data[g]= v4;
}
void main(){
  const uint stride = gl_NumWorkGroups . x * 128u;
  for(uint g = gl_GlobalInvocationID . x;g < 72u;g += stride){
    kiln_element(g);
  }
}
