// kiln::Tensor: creation, metadata, host <-> device transfer.
#include <cstring>

#include "capture/trace.h"
#include "codegen/spirv.h"
#include "core/size_check.h"
#include "kiln/compile.h"
#include "tensor/tensor_impl.h"

namespace kiln {

HostTensor to_host(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (!impl) throw Error(invalid_argument("use of an undefined tensor"));
  if (impl->trace) {
    if (TraceContext* trace = current_trace(); trace && trace == impl->trace)
      return trace->host_read(t, "host read", "");
    throw Error(invalid_argument("data of a traced tensor (" + impl->meta.str() +
                                 ") was requested outside its trace"));
  }
  if (impl->literal)
    return filled_host(impl->meta,
                       impl->literal_int ? Scalar(*impl->literal_int) : Scalar(*impl->literal));
  if (impl->device.is_cpu()) return *impl->host;
  HostTensor h(impl->meta);
  auto dev = impl->device.vulkan_device();
  throw_if_error(dev->download(impl->buffer, h.data.data(), h.data.size()));
  return h;
}

const HostTensor& host_view(const Tensor& t, HostTensor& scratch) {
  const TensorImpl* impl = t.impl();
  if (impl != nullptr && !impl->trace && !impl->literal && impl->device.is_cpu() && impl->host)
    return *impl->host;
  scratch = to_host(t);
  return scratch;
}

std::vector<const HostTensor*> host_views(const std::vector<Tensor>& tensors,
                                          std::vector<HostTensor>& scratch) {
  scratch.assign(tensors.size(), HostTensor());
  std::vector<const HostTensor*> views;
  views.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) views.push_back(&host_view(tensors[i], scratch[i]));
  return views;
}

Tensor from_host(HostTensor host, Device device) {
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = host.meta;
  impl->device = device;
  if (device.is_cpu()) {
    impl->host = std::make_shared<HostTensor>(std::move(host));
  } else {
    auto dev = device.vulkan_device();
    impl->buffer = value_or_throw(dev->allocate(host.data.size()));
    throw_if_error(dev->upload(impl->buffer, host.data.data(), host.data.size()));
  }
  return Tensor(std::move(impl));
}

Tensor Tensor::from_bytes(DType dtype, Shape shape, const void* data, size_t bytes, Device device) {
  if (std::string why = tensor_size_error(shape, dtype); !why.empty())
    throw Error(invalid_argument("Tensor::from_data: " + why));
  HostTensor h(TensorMeta{dtype, std::move(shape)});
  if (bytes != h.data.size())
    throw Error(invalid_argument("Tensor::from_data: " + std::to_string(bytes) + " bytes for " +
                                 h.meta.str() + ", which needs " + std::to_string(h.data.size())));
  if (bytes) std::memcpy(h.data.data(), data, bytes);
  return from_host(std::move(h), device);
}

Tensor Tensor::full(Shape shape, double value, DType dtype, Device device) {
  if (std::string why = tensor_size_error(shape, dtype); !why.empty())
    throw Error(invalid_argument("Tensor::full: " + why));
  HostTensor h(TensorMeta{dtype, std::move(shape)});
  for (int64_t i = 0; i < h.meta.numel(); ++i) h.set(i, value);
  return from_host(std::move(h), device);
}

static TensorImpl& checked(const std::shared_ptr<TensorImpl>& impl) {
  if (!impl) throw Error(invalid_argument("use of an undefined tensor"));
  return *impl;
}

DType Tensor::dtype() const {
  return checked(impl_).meta.dtype;
}
namespace {
/// Inside the trace that owns `impl`, specialises every symbolic dim (records its guard).
void specialize_dims(const TensorImpl& impl, const Loc& loc, const char* what) {
  if (!impl.trace || impl.sym.empty() || current_trace() != impl.trace ||
      impl.trace_id != current_trace_id())
    return;
  for (size_t d = 0; d < impl.sym.size(); ++d) {
    if (impl.sym[d].is_constant()) continue;
    const std::string why = std::string(what) + " dim " + std::to_string(d) + " at " + loc_str(loc);
    // A data-dependent length (a nonzero count): checked where the program reads it.
    if (impl.trace->data_dependent_value(impl.sym[d], why)) continue;
    auto v = impl.trace->shape_env().evaluate_guarding(impl.sym[d], why);
    if (!v.ok()) throw Error(v.status().with_context("'" + impl.trace->name() + "'"));
  }
}
}  // namespace

const Shape& Tensor::shape(Loc loc) const {
  specialize_dims(checked(impl_), loc, "shape()");
  return impl_->meta.shape;
}
int Tensor::dim() const {
  return checked(impl_).meta.rank();
}
int64_t Tensor::numel(Loc loc) const {
  specialize_dims(checked(impl_), loc, "numel()");
  return impl_->meta.numel();
}
Device Tensor::device() const {
  return checked(impl_).device;
}
TensorMeta Tensor::meta() const {
  return checked(impl_).meta;
}
bool Tensor::is_traced() const {
  return checked(impl_).trace != nullptr;
}
bool Tensor::is_literal() const {
  return checked(impl_).literal.has_value();
}
uint64_t Tensor::version() const {
  return checked(impl_).version;
}

SymSize Tensor::size(int d, Loc loc) const {
  int r = dim();
  int n = d < 0 ? d + r : d;
  if (n < 0 || n >= r)
    throw Error(invalid_argument("size(" + std::to_string(d) + ") of a rank-" + std::to_string(r) +
                                 " tensor"));
  const TensorImpl& impl = *impl_;
  const auto i = static_cast<size_t>(n);
  if (impl.trace && i < impl.sym.size() && !impl.sym[i].is_constant() &&
      current_trace() == impl.trace && impl.trace_id == current_trace_id())
    return make_sym_size(impl.sym[i], loc_str(loc));
  return SymSize(impl.meta.shape[i]);
}

Sizes Tensor::sizes(Loc loc) const {
  std::vector<SymSize> out;
  for (int d = 0; d < dim(); ++d) out.push_back(size(d, loc));
  return out;
}

/// Host data of `t`; inside its trace a graph break that guards the value read.
static HostTensor host_value(const Tensor& t, const Loc& loc, const char* what) {
  TensorImpl* impl = t.impl();
  if (impl && impl->trace && current_trace() == impl->trace)
    return impl->trace->host_read(t, what, loc_str(loc));
  return to_host(t);
}

void Tensor::read_into(DType as, void* out, size_t bytes, const Loc& loc, const char* what) const {
  checked(impl_);
  if (as != impl_->meta.dtype && !(as == DType::kF32 && impl_->meta.dtype == DType::kF16))
    throw Error(invalid_argument(std::string("to_vector<") + dtype_name(as) + ">() on a " +
                                 impl_->meta.str() + " tensor; cast() it first"));
  HostTensor h = host_value(*this, loc, what);
  if (as == h.meta.dtype) {
    if (bytes) std::memcpy(out, h.data.data(), bytes);
    return;
  }
  auto* f = static_cast<float*>(out);
  for (int64_t i = 0; i < h.meta.numel(); ++i) f[i] = static_cast<float>(h.get(i));
}

void Tensor::copy_to(void* data, size_t bytes, Loc loc) const {
  const TensorImpl& impl = checked(impl_);
  if (bytes != impl.meta.nbytes())
    throw Error(
        invalid_argument("copy_to: " + std::to_string(bytes) + " bytes from " + impl.meta.str()));
  read_into(impl.meta.dtype, data, bytes, loc, "copy_to()");
}

double Tensor::item_double(const Loc& loc) const {
  if (numel() != 1)
    throw Error(
        invalid_argument("item() on " + checked(impl_).meta.str() + ": needs exactly one element"));
  if (is_complex(dtype()))
    throw Error(invalid_argument("item() on a complex64 tensor: read real() or imag()"));
  return host_value(*this, loc, "item()").get(0);
}

Tensor::operator bool() const {
  TensorImpl& impl = checked(impl_);
  if (impl.meta.numel() != 1)
    throw Error(invalid_argument("bool() of " + impl.meta.str() +
                                 " is ambiguous: needs exactly one element"));
  if (is_complex(impl.meta.dtype))
    throw Error(invalid_argument("bool() of a complex64 tensor: compare real() or imag()"));
  // `if (t)` cannot carry a source location; name the op that produced t instead.
  if (impl.trace && current_trace() == impl.trace)
    return impl.trace
               ->host_read(*this, "bool() (data-dependent branch)", impl.trace->producer_loc(impl))
               .get(0) != 0;
  return to_host(*this).get(0) != 0;
}

std::vector<double> Tensor::to_doubles(Loc loc) const {
  HostTensor h = host_value(*this, loc, "to_doubles()");
  if (is_complex(h.meta.dtype)) {  // interleaved (real, imaginary) pairs
    const auto* f = h.ptr<float>();
    return std::vector<double>(f, f + 2 * h.meta.numel());
  }
  std::vector<double> out(static_cast<size_t>(h.meta.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = h.get(static_cast<int64_t>(i));
  return out;
}

Tensor Tensor::to(Device device) const {
  TensorImpl& impl = checked(impl_);
  if (impl.device == device && !impl.literal) return *this;
  return from_host(to_host(*this), device);
}

void Tensor::copy_from(const void* data, size_t bytes) {
  TensorImpl& impl = checked(impl_);
  if (impl.trace || impl.literal)
    throw Error(invalid_argument("copy_from on a traced or literal tensor"));
  if (bytes != impl.meta.nbytes())
    throw Error(
        invalid_argument("copy_from: " + std::to_string(bytes) + " bytes into " + impl.meta.str()));
  if (impl.device.is_cpu()) {
    if (bytes) std::memcpy(impl.host->data.data(), data, bytes);
  } else {
    throw_if_error(impl.device.vulkan_device()->upload(impl.buffer, data, bytes));
  }
  ++impl.version;
}

std::string Tensor::str() const {
  if (!impl_) return "Tensor(undefined)";
  std::string where = impl_->trace ? "traced" : impl_->literal ? "literal" : impl_->device.str();
  return "Tensor(" + impl_->meta.str() + ", " + where + ")";
}

RuntimeCounters runtime_counters() {
  RuntimeCounters c;
  c.shader_compiles = shader_compile_stats().compiles;
  auto dev = vk::VulkanDevice::default_device();
  if (!dev.ok()) return c;
  vk::DeviceStats s = (*dev)->stats();
  c.dispatches = s.dispatches;
  c.submissions = s.submissions;
  c.pipelines_created = s.pipelines_created;
  c.pipeline_cache_hits = s.pipeline_cache_hits;
  c.validation_errors = s.validation_errors;
  c.device_bytes_allocated = s.bytes_allocated;
  c.device_bytes_peak = s.peak_bytes;
  c.buffer_allocations = s.buffer_allocations;
  c.memory_allocations = s.memory_allocations;
  c.command_buffers_recorded = s.command_buffers_recorded;
  return c;
}

void reset_device_peak() {
  auto dev = vk::VulkanDevice::default_device();
  if (dev.ok()) (*dev)->reset_peak();
}

std::vector<std::string> validation_messages() {
  return vk::VulkanDevice::all_validation_messages();
}

}  // namespace kiln
