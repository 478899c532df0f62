// The C API (include/kiln/kiln_c.h) over the C++ one: handles own C++ objects, every entry
// point catches what the C++ side throws and turns it into a kiln_status + kiln_last_error().
#include "kiln/kiln_c.h"

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx.h"

struct kiln_device {
  kiln::Device device;
  std::string name;
};

struct kiln_tensor {
  kiln::Tensor tensor;
};

struct kiln_model {
  kiln::onnx::CompiledModel compiled;
};

namespace {

thread_local std::string t_last_error;

kiln_status code_of(kiln::StatusCode code) {
  switch (code) {
    case kiln::StatusCode::kOk:
      return KILN_OK;
    case kiln::StatusCode::kInvalidArgument:
      return KILN_ERROR_INVALID_ARGUMENT;
    case kiln::StatusCode::kUnavailable:
      return KILN_ERROR_UNAVAILABLE;
    case kiln::StatusCode::kUnimplemented:
      return KILN_ERROR_UNIMPLEMENTED;
    case kiln::StatusCode::kResourceExhausted:
      return KILN_ERROR_RESOURCE_EXHAUSTED;
    case kiln::StatusCode::kFailedPrecondition:
      return KILN_ERROR_FAILED_PRECONDITION;
    case kiln::StatusCode::kInternal:
      return KILN_ERROR_INTERNAL;
  }
  return KILN_ERROR_INTERNAL;
}

kiln_status fail(kiln_status code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

kiln_status fail(const kiln::Status& status) {
  return fail(code_of(status.code()), status.to_string());
}

/// Runs `body` (which returns a kiln_status), turning any exception into an error status.
template <typename F>
kiln_status guarded(F&& body) {
  t_last_error.clear();
  try {
    return body();
  } catch (const kiln::Error& e) {
    return fail(e.status());
  } catch (const std::bad_alloc&) {
    return fail(KILN_ERROR_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& e) {
    return fail(KILN_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(KILN_ERROR_INTERNAL, "unknown exception");
  }
}

bool valid_dtype(kiln_dtype dtype) {
  return dtype >= KILN_F32 && dtype <= KILN_BOOL;
}

kiln::DType to_dtype(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F32:
      return kiln::DType::kF32;
    case KILN_F16:
      return kiln::DType::kF16;
    case KILN_I32:
      return kiln::DType::kI32;
    case KILN_I64:
      return kiln::DType::kI64;
    case KILN_BOOL:
      return kiln::DType::kBool;
    case KILN_DTYPE_MAX_ENUM:
      break;
  }
  return kiln::DType::kF32;
}

kiln_dtype from_dtype(kiln::DType dtype) {
  switch (dtype) {
    case kiln::DType::kF32:
      return KILN_F32;
    case kiln::DType::kF16:
      return KILN_F16;
    case kiln::DType::kI32:
      return KILN_I32;
    case kiln::DType::kI64:
      return KILN_I64;
    case kiln::DType::kBool:
      return KILN_BOOL;
    case kiln::DType::kC64:  // ONNX models never output complex64 (DFT outputs [..., 2] f32)
      break;
  }
  return KILN_F32;
}

kiln_status model_from(kiln::Expected<kiln::onnx::Model> model, kiln_model** out) {
  if (!model.ok()) return fail(model.status());
  kiln::CompileOptions options;
  options.name = model->name();
  *out = new kiln_model{kiln::onnx::CompiledModel(std::move(model).value(), options)};
  return KILN_OK;
}

}  // namespace

extern "C" {

const char* kiln_version(void) {
  return KILN_VERSION_STRING;
}

const char* kiln_last_error(void) {
  return t_last_error.c_str();
}

const char* kiln_status_name(kiln_status status) {
  switch (status) {
    case KILN_OK:
      return "ok";
    case KILN_ERROR_INVALID_ARGUMENT:
      return "invalid_argument";
    case KILN_ERROR_UNAVAILABLE:
      return "unavailable";
    case KILN_ERROR_UNIMPLEMENTED:
      return "unimplemented";
    case KILN_ERROR_RESOURCE_EXHAUSTED:
      return "resource_exhausted";
    case KILN_ERROR_INTERNAL:
      return "internal";
    case KILN_ERROR_FAILED_PRECONDITION:
      return "failed_precondition";
    case KILN_STATUS_MAX_ENUM:
      break;
  }
  return "unknown";
}

size_t kiln_dtype_size(kiln_dtype dtype) {
  return valid_dtype(dtype) ? kiln::dtype_size(to_dtype(dtype)) : 0;
}

kiln_status kiln_device_open(const char* selector, kiln_device** out) {
  return guarded([&] {
    if (out == nullptr) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_device_open: out is NULL");
    const std::string s = selector == nullptr ? "" : selector;
    kiln::Device device = kiln::Device::cpu();
    if (s == "cpu") {
      device = kiln::Device::cpu();
    } else if (s.empty() || s == "vulkan") {
      if (!kiln::vulkan_available()) return fail(kiln::vulkan_status());
      device = kiln::Device::vulkan();
    } else {
      auto opened = kiln::Device::open(s);
      if (!opened.ok()) return fail(opened.status());
      device = *opened;
    }
    auto* d = new kiln_device{device, device.name()};
    *out = d;
    return KILN_OK;
  });
}

kiln_status kiln_device_count(size_t* out) {
  return guarded([&] {
    if (out == nullptr) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_device_count: out is NULL");
    auto list = kiln::Device::list();
    if (!list.ok()) return fail(list.status());
    *out = list->size();
    return KILN_OK;
  });
}

const char* kiln_device_name(const kiln_device* device) {
  return device == nullptr ? "" : device->name.c_str();
}

void kiln_device_release(kiln_device* device) {
  delete device;
}

kiln_status kiln_tensor_create(kiln_dtype dtype, const int64_t* shape, size_t rank,
                               const void* data, size_t bytes, kiln_tensor** out) {
  return guarded([&] {
    if (out == nullptr) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_tensor_create: out is NULL");
    if (!valid_dtype(dtype))
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "kiln_tensor_create: unknown dtype " + std::to_string(static_cast<int>(dtype)));
    if (rank > 0 && shape == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_tensor_create: shape is NULL");
    if (bytes > 0 && data == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_tensor_create: data is NULL");
    kiln::Shape s(shape, shape + rank);
    // from_bytes checks negative sizes and that `bytes` matches the shape.
    kiln::Tensor t = kiln::Tensor::from_bytes(to_dtype(dtype), std::move(s), data, bytes);
    *out = new kiln_tensor{std::move(t)};
    return KILN_OK;
  });
}

kiln_dtype kiln_tensor_dtype(const kiln_tensor* tensor) {
  return tensor == nullptr ? KILN_F32 : from_dtype(tensor->tensor.dtype());
}

size_t kiln_tensor_rank(const kiln_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.shape().size();
}

int64_t kiln_tensor_dim(const kiln_tensor* tensor, size_t dim) {
  if (tensor == nullptr || dim >= tensor->tensor.shape().size()) return -1;
  return tensor->tensor.shape()[dim];
}

size_t kiln_tensor_nbytes(const kiln_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.meta().nbytes();
}

kiln_status kiln_tensor_read(const kiln_tensor* tensor, void* dst, size_t bytes) {
  return guarded([&] {
    if (tensor == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_tensor_read: tensor is NULL");
    const size_t n = tensor->tensor.meta().nbytes();
    if (bytes != n)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_tensor_read: " + std::to_string(bytes) +
                                                   " bytes asked for a tensor of " +
                                                   std::to_string(n));
    if (n > 0 && dst == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_tensor_read: dst is NULL");
    tensor->tensor.copy_to(dst, bytes);
    return KILN_OK;
  });
}

void kiln_tensor_release(kiln_tensor* tensor) {
  delete tensor;
}

kiln_status kiln_model_load(kiln_device* device, const char* path, kiln_model** out) {
  return guarded([&] {
    if (device == nullptr || path == nullptr || out == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_load: device, path and out must be set");
    return model_from(kiln::onnx::Model::load(path, device->device), out);
  });
}

kiln_status kiln_model_load_bytes(kiln_device* device, const void* data, size_t size,
                                  kiln_model** out) {
  return guarded([&] {
    if (device == nullptr || (data == nullptr && size > 0) || out == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "kiln_model_load_bytes: device, data and out must be set");
    const auto* bytes = static_cast<const std::byte*>(data);
    return model_from(
        kiln::onnx::Model::parse(std::span<const std::byte>(bytes, size), device->device, "model"),
        out);
  });
}

size_t kiln_model_input_count(const kiln_model* model) {
  return model == nullptr ? 0 : model->compiled.model().inputs().size();
}

size_t kiln_model_output_count(const kiln_model* model) {
  return model == nullptr ? 0 : model->compiled.model().outputs().size();
}

const char* kiln_model_input_name(const kiln_model* model, size_t index) {
  if (model == nullptr || index >= model->compiled.model().inputs().size()) return nullptr;
  return model->compiled.model().inputs()[index].name.c_str();
}

const char* kiln_model_output_name(const kiln_model* model, size_t index) {
  if (model == nullptr || index >= model->compiled.model().outputs().size()) return nullptr;
  return model->compiled.model().outputs()[index].name.c_str();
}

kiln_status kiln_model_run(kiln_model* model, const kiln_tensor* const* inputs, size_t num_inputs,
                           kiln_tensor** outputs, size_t num_outputs) {
  return guarded([&] {
    if (model == nullptr) return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_run: model is NULL");
    if (num_inputs > 0 && inputs == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_run: inputs is NULL");
    const size_t want = model->compiled.model().outputs().size();
    if (want > 0 && outputs == nullptr)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_run: outputs is NULL");
    if (num_outputs != want)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_run: the model has " +
                                                   std::to_string(want) + " outputs, " +
                                                   std::to_string(num_outputs) + " asked for");
    std::vector<kiln::Tensor> args;
    for (size_t i = 0; i < num_inputs; ++i) {
      if (inputs[i] == nullptr)
        return fail(KILN_ERROR_INVALID_ARGUMENT,
                    "kiln_model_run: input " + std::to_string(i) + " is NULL");
      args.push_back(inputs[i]->tensor);
    }
    auto result = model->compiled.run(args);
    if (!result.ok()) return fail(result.status());
    if (result->size() != want)
      return fail(KILN_ERROR_INTERNAL, "kiln_model_run: the model returned " +
                                           std::to_string(result->size()) + " outputs");
    // Allocate every handle first, so a failure writes no output.
    std::vector<kiln_tensor*> made;
    try {
      for (kiln::Tensor& t : *result) made.push_back(new kiln_tensor{std::move(t)});
    } catch (...) {
      for (kiln_tensor* t : made) delete t;
      throw;
    }
    for (size_t i = 0; i < want; ++i) outputs[i] = made[i];
    return KILN_OK;
  });
}

void kiln_model_release(kiln_model* model) {
  delete model;
}

}  // extern "C"
