#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions =["SPV_KHR_float_controls"], capabilities =[4466], 4461, 32);
layout(local_size_x = 128u)in;
layout(std430, set = 0, binding = 0)buffer KilnB0v { vec4 data[];} b0v;
layout(std430, set = 0, binding = 1)readonly buffer KilnB1v { vec4 data[];} b1v;
layout(std430, set = 0, binding = 2)readonly buffer KilnB2v { vec4 data[];} b2v;
layout(std430, set = 0, binding = 3)readonly buffer KilnB3v { vec4 data[];} b3v;
layout(std430, set = 0, binding = 4)readonly buffer KilnB4v { vec4 data[];} b4v;
layout(std430, set = 0, binding = 5)readonly buffer KilnB5v { vec4 data[];} b5v;
void kiln_element(uint g){
  const uint col = g % 2u;
  const uint row =(g / 2u)* 4u;
  const uint icol = col * 4u;
  const uint row0 = row;
  const uint q0 = row0 * 2u + col;
  const uint i0_0 = row0;
  const vec4 x0 = b1v . data[q0];
  const vec4 x1 = b2v . data[(icol)/ 4u];
  const vec4 v2 =(x0 * x1);
  const vec4 x3 = b3v . data[(icol)/ 4u];
  const vec4 v4 =(v2 + x3);
  const vec4 x5 = b4v . data[(icol)/ 4u];
  const vec4 v6 =(v4 * x5);
  const vec4 x7 = b5v . data[(icol)/ 4u];
  const vec4 v8 =(v6 - x7);
  const vec4 v9 = kiln_relu(v8);
  b0v . data[q0]= v9;
  const uint row1 = row + 1u;
  const uint q1 = row1 * 2u + col;
  const uint i1_0 = row1;
  const vec4 x10 = b1v . data[q1];
  const vec4 v11 =(x10 * x1);
  const vec4 v12 =(v11 + x3);
  const vec4 v13 =(v12 * x5);
  const vec4 v14 =(v13 - x7);
  const vec4 v15 = kiln_relu(v14);
  b0v . data[q1]= v15;
  const uint row2 = row + 2u;
  const uint q2 = row2 * 2u + col;
  const uint i2_0 = row2;
  const vec4 x16 = b1v . data[q2];
  const vec4 v17 =(x16 * x1);
  const vec4 v18 =(v17 + x3);
  const vec4 v19 =(v18 * x5);
  const vec4 v20 =(v19 - x7);
  const vec4 v21 = kiln_relu(v20);
  b0v . data[q2]= v21;
  const uint row3 = row + 3u;
  const uint q3 = row3 * 2u + col;
  const uint i3_0 = row3;
  const vec4 x22 = b1v . data[q3];
  const vec4 v23 =(x22 * x1);
  const vec4 v24 =(v23 + x3);
  const vec4 v25 =(v24 * x5);
  const vec4 v26 =(v25 - x7);
  const vec4 v27 = kiln_relu(v26);
  b0v . data[q3]= v27;
}
void main(){
  const uint stride = gl_NumWorkGroups . x * 128u;
  for(uint g = gl_GlobalInvocationID . x;g < 2u;g += stride){
    kiln_element(g);
  }
}
