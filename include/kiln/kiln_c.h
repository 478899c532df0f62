/* \file kiln_c.h
 * Kiln's C API (library kiln_c): open a device, load an ONNX model, compile and run it on
 * tensors in host memory, read the outputs. For applications written in C, and for other
 * languages through their FFI (C#, Rust, Python ctypes).
 *
 *     kiln_device* dev;    kiln_device_open("", &dev);           // the default Vulkan device
 *     kiln_model* model;   kiln_model_load(dev, "model.onnx", &model);
 *     int64_t shape[2] = {4, 16};
 *     kiln_tensor* x;      kiln_tensor_create(KILN_F32, shape, 2, data, sizeof data, &x);
 *     kiln_tensor* y;      kiln_model_run(model, &x, 1, &y, 1);
 *     kiln_tensor_read(y, out, kiln_tensor_nbytes(y));
 *     kiln_tensor_release(y); kiln_tensor_release(x);
 *     kiln_model_release(model); kiln_device_release(dev);
 *
 * Conventions
 *   - Every function that can fail returns a kiln_status; KILN_OK is 0. On failure,
 *     kiln_last_error() describes it (per thread, valid until the thread's next Kiln call) and
 *     no output pointer is written.
 *   - Objects are reference-counted internally: a model keeps its device alive, a tensor its
 *     data; release each object you were given once, in any order. Releasing NULL is a no-op.
 *   - Tensors created here hold a copy of the caller's bytes (row-major, native byte order);
 *     outputs are read back with kiln_tensor_read. Nothing keeps a pointer to caller memory.
 *   - Threads: any number may call at once; one kiln_model may be run from several threads at
 *     once (docs/runtime.md, "Threads"). No function throws or aborts on bad input.
 */
#ifndef KILN_KILN_C_H_
#define KILN_KILN_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1,   /* bad shape, dtype, handle, file or value */
  KILN_ERROR_UNAVAILABLE = 2,        /* no Vulkan driver or device */
  KILN_ERROR_UNIMPLEMENTED = 3,      /* an ONNX op or type Kiln does not support */
  KILN_ERROR_RESOURCE_EXHAUSTED = 4, /* out of device or host memory */
  KILN_ERROR_INTERNAL = 5,
  KILN_ERROR_FAILED_PRECONDITION = 6, /* valid, but not in the current state */
  /* Not a status: makes every 32-bit value a valid kiln_status, so a value from another
   * language is checked, not undefined. */
  KILN_STATUS_MAX_ENUM = 0x7fffffff
} kiln_status;

typedef enum kiln_dtype {
  KILN_F32 = 0,
  KILN_F16 = 1, /* IEEE binary16 bits in a uint16_t */
  KILN_I32 = 2,
  KILN_I64 = 3,
  KILN_BOOL = 4, /* one byte, 0 or 1 */
  /* Not a dtype (as KILN_STATUS_MAX_ENUM): out-of-range values are rejected, not undefined. */
  KILN_DTYPE_MAX_ENUM = 0x7fffffff
} kiln_dtype;

typedef struct kiln_device kiln_device;
typedef struct kiln_model kiln_model;
typedef struct kiln_tensor kiln_tensor;

/* "0.1.0" */
const char* kiln_version(void);
/* The message of this thread's last failed call ("" if none). */
const char* kiln_last_error(void);
/* "invalid_argument", ... */
const char* kiln_status_name(kiln_status status);
/* Bytes per element of `dtype` (0 for an unknown value). */
size_t kiln_dtype_size(kiln_dtype dtype);

/* --- devices --- */
/* `selector`: NULL, "" or "vulkan" is the default Vulkan device; "cpu" the interpreter; any
 * other text opens a Vulkan device of its own by index ("1") or name substring ("nvidia"). */
kiln_status kiln_device_open(const char* selector, kiln_device** out);
/* The number of physical Vulkan devices (0 without a driver). */
kiln_status kiln_device_count(size_t* out);
/* The device's name ("cpu" or the Vulkan device name); valid while `device` lives. */
const char* kiln_device_name(const kiln_device* device);
void kiln_device_release(kiln_device* device);

/* --- tensors in host memory --- */
/* Copies `bytes` bytes (exactly numel(shape) * kiln_dtype_size(dtype)) into a new tensor. */
kiln_status kiln_tensor_create(kiln_dtype dtype, const int64_t* shape, size_t rank,
                               const void* data, size_t bytes, kiln_tensor** out);
kiln_dtype kiln_tensor_dtype(const kiln_tensor* tensor);
size_t kiln_tensor_rank(const kiln_tensor* tensor);
/* Size of dim `dim` (-1 when out of range). */
int64_t kiln_tensor_dim(const kiln_tensor* tensor, size_t dim);
size_t kiln_tensor_nbytes(const kiln_tensor* tensor);
/* Copies the data (downloading it from the device if needed) into `dst`; `bytes` must equal
 * kiln_tensor_nbytes(tensor). */
kiln_status kiln_tensor_read(const kiln_tensor* tensor, void* dst, size_t bytes);
void kiln_tensor_release(kiln_tensor* tensor);

/* --- ONNX models --- */
/* Loads and imports an .onnx file; initializers are uploaded to `device` once. The model is
 * compiled (traced, fused, compiled to kernels) at its first run and for each new shape class,
 * as kiln::onnx::CompiledModel does. */
kiln_status kiln_model_load(kiln_device* device, const char* path, kiln_model** out);
/* The same from the bytes of a whole .onnx file. */
kiln_status kiln_model_load_bytes(kiln_device* device, const void* data, size_t size,
                                  kiln_model** out);
size_t kiln_model_input_count(const kiln_model* model);
size_t kiln_model_output_count(const kiln_model* model);
/* Names in graph order; valid while `model` lives (NULL when out of range). */
const char* kiln_model_input_name(const kiln_model* model, size_t index);
const char* kiln_model_output_name(const kiln_model* model, size_t index);
/* Runs the model: `inputs` in input order (moved to the model's device and cast to the dtype
 * the model computes in as needed); writes `num_outputs` (== kiln_model_output_count) new
 * tensors to `outputs`, each to be released by the caller. */
kiln_status kiln_model_run(kiln_model* model, const kiln_tensor* const* inputs, size_t num_inputs,
                           kiln_tensor** outputs, size_t num_outputs);
void kiln_model_release(kiln_model* model);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_C_H_ */
