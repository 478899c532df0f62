#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
layout(local_size_x = 64u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0 { float data[];} b0;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1 { float data[];} b1;
float kiln_load(uint o, uint r){
  const uint o0 = o;
  const uint r0 = r;
  const float x0 = b1 . data[o0 * 12u + r0];
  const float v1 = kiln_exp(x0);
  return v1;
}
void kiln_store(uint o, float acc){
  b0 . data[o]= acc;
}
void main(){
  const uint stride = gl_NumWorkGroups . x * 64u;
  for(uint o = gl_GlobalInvocationID . x;o < 16u;o += stride){
        float acc = float(0);
    for(uint r = 0;r < 12u;++ r){
      acc =((acc)+(kiln_load(o, r)));
    }
    kiln_store(o, acc);
  }
}
