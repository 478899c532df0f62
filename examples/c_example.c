/* A plain C program using kiln_c.h, compiled as C: loads an ONNX model, runs it on the CPU
 * interpreter and on the default Vulkan device (when there is one) and checks the two agree.
 * Usage: c_example MODEL.onnx ROWS COLS (the model's one f32 input is [ROWS, COLS]). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kiln/kiln_c.h"

static int check(kiln_status status, const char* what) {
  if (status != KILN_OK) {
    fprintf(stderr, "%s: %s (%s)\n", what, kiln_status_name(status), kiln_last_error());
    return 0;
  }
  return 1;
}

/* Runs the model on `selector`'s device; returns the output values (malloc'd) or NULL. */
static float* run(const char* selector, const char* path, const float* x, int64_t rows,
                  int64_t cols, size_t* count) {
  kiln_device* dev = NULL;
  kiln_model* model = NULL;
  kiln_tensor* in = NULL;
  kiln_tensor* out = NULL;
  float* values = NULL;
  int64_t shape[2];
  shape[0] = rows;
  shape[1] = cols;
  if (check(kiln_device_open(selector, &dev), "kiln_device_open") &&
      check(kiln_model_load(dev, path, &model), "kiln_model_load") &&
      check(kiln_tensor_create(KILN_F32, shape, 2, x, (size_t)(rows * cols) * sizeof(float), &in),
            "kiln_tensor_create") &&
      check(kiln_model_run(model, (const kiln_tensor* const*)&in, 1, &out, 1), "kiln_model_run")) {
    *count = kiln_tensor_nbytes(out) / sizeof(float);
    values = (float*)malloc(kiln_tensor_nbytes(out) + 1);
    if (!check(kiln_tensor_read(out, values, kiln_tensor_nbytes(out)), "kiln_tensor_read")) {
      free(values);
      values = NULL;
    }
  }
  kiln_tensor_release(out);
  kiln_tensor_release(in);
  kiln_model_release(model);
  kiln_device_release(dev);
  return values;
}

int main(int argc, char** argv) {
  size_t n_cpu = 0, n_gpu = 0, i;
  int64_t rows, cols;
  float* x;
  float* cpu;
  float* gpu;
  kiln_device* probe = NULL;
  if (argc != 4) {
    fprintf(stderr, "usage: %s MODEL.onnx ROWS COLS\n", argv[0]);
    return 2;
  }
  rows = atoll(argv[2]);
  cols = atoll(argv[3]);
  x = (float*)malloc((size_t)(rows * cols) * sizeof(float));
  for (i = 0; i < (size_t)(rows * cols); ++i) x[i] = (float)((int)(i % 11) - 5) * 0.125f;
  cpu = run("cpu", argv[1], x, rows, cols, &n_cpu);
  if (cpu == NULL) return 1;
  if (kiln_device_open("", &probe) != KILN_OK) {
    printf("kiln %s: cpu only (%s): %zu outputs\n", kiln_version(), kiln_last_error(), n_cpu);
    return 0;
  }
  printf("kiln %s on %s\n", kiln_version(), kiln_device_name(probe));
  kiln_device_release(probe);
  gpu = run("", argv[1], x, rows, cols, &n_gpu);
  if (gpu == NULL || n_gpu != n_cpu) return 1;
  for (i = 0; i < n_cpu; ++i) {
    if (fabsf(cpu[i] - gpu[i]) > 1e-5f + 1e-5f * fabsf(cpu[i])) {
      fprintf(stderr, "output %zu: cpu %g, vulkan %g\n", i, cpu[i], gpu[i]);
      return 1;
    }
  }
  printf("%zu outputs agree between the cpu and vulkan\n", n_cpu);
  free(x);
  free(cpu);
  free(gpu);
  return 0;
}
