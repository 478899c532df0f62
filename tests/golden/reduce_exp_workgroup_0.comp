#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
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
    for(uint r = lid;r < 300u;r += 128u * 1u){
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
