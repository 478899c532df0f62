// kiln::Scalar: exact values, traced scalars (parameters and item()), and the literals and
// Full attributes built from them.
#include <cstdio>
#include <cstring>

#include "capture/trace.h"

namespace kiln {

double Scalar::to_double(std::source_location loc) const {
  if (traced_) specialize_traced_scalar(traced_, loc_str(loc));
  return hint_double();
}

int64_t Scalar::to_int(std::source_location loc) const {
  if (traced_) specialize_traced_scalar(traced_, loc_str(loc));
  return hint_int();
}

std::string Scalar::str() const {
  char buf[40];
  if (is_int_)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(int_));
  else
    std::snprintf(buf, sizeof buf, "%.17g", double_);
  return traced_ ? "scalar(" + std::string(buf) + ", traced)" : buf;
}

Scalar Scalar::traced(std::shared_ptr<TensorImpl> t, const Scalar& hint) {
  Scalar s = hint.untraced();
  s.traced_ = std::move(t);
  return s;
}

Scalar Scalar::untraced() const {
  Scalar s = *this;
  s.traced_.reset();
  return s;
}

Scalar Tensor::item(Loc loc) const {
  if (!impl_) throw Error(invalid_argument("item() of an undefined tensor"));
  if (impl_->meta.numel() != 1)
    throw Error(invalid_argument("item() on " + impl_->meta.str() + ": needs exactly one element"));
  if (impl_->trace && current_trace() == impl_->trace)
    return impl_->trace->read_scalar(*this, loc_str(loc));
  return scalar_of(to_host(*this));
}

int64_t Tensor::item_int(const Loc& loc) const {
  return item(loc).to_int(loc);
}

Scalar scalar_of(const HostTensor& h) {
  switch (h.meta.dtype) {
    case DType::kI64: {
      int64_t v = 0;
      std::memcpy(&v, h.data.data(), sizeof v);
      return v;
    }
    case DType::kI32:
    case DType::kBool:
      return static_cast<int64_t>(h.get(0));
    case DType::kF32:
    case DType::kF16:
      break;
    case DType::kC64:
      throw Error(invalid_argument("item(): a complex64 value is not a Scalar (read real / imag)"));
  }
  return h.get(0);
}

HostTensor filled_host(const TensorMeta& meta, const Scalar& value) {
  HostTensor h(meta);
  const int64_t n = meta.numel();
  if (value.is_integral() && meta.dtype == DType::kI64) {
    const int64_t v = value.hint_int();
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(h.data.data() + static_cast<size_t>(i) * sizeof v, &v, sizeof v);
  } else if (value.is_integral() && meta.dtype == DType::kI32) {
    const auto v = static_cast<int32_t>(static_cast<uint32_t>(value.hint_int()));  // wraps
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(h.data.data() + static_cast<size_t>(i) * sizeof v, &v, sizeof v);
  } else {
    // Integers round to float once (as the interpreter's Full and the GLSL literal do).
    double v = value.hint_double();
    if (value.is_integral() && meta.dtype == DType::kBool) v = value.hint_int() != 0 ? 1.0 : 0.0;
    if (value.is_integral() && is_floating(meta.dtype))
      v = static_cast<double>(static_cast<float>(value.hint_int()));
    for (int64_t i = 0; i < n; ++i) h.set(i, v);
  }
  return h;
}

void set_full_value(Attrs& attrs, const Scalar& value) {
  attrs.scalar = value.hint_double();
  attrs.scalar_is_int = value.is_integral();
  attrs.scalar_int = value.is_integral() ? value.hint_int() : 0;
}

Tensor traced_scalar_tensor(const Scalar& s, DType dtype, const Loc& loc) {
  Tensor t(s.traced_tensor());
  if (t.impl()->meta.rank() != 0) t = reshape(t, Sizes{}, loc);
  return t.dtype() == dtype ? t : cast(t, dtype, loc);
}

void specialize_traced_scalar(const std::shared_ptr<TensorImpl>& t, const std::string& loc) {
  if (t->trace && current_trace() == t->trace && t->trace_id == current_trace_id() &&
      t->trace->active) {
    t->trace->specialize_scalar(t, loc);
    return;
  }
  // Outside its trace (a host function, a later trace) the value cannot be guarded: using the
  // traced value would silently go stale on replay.
  throw Error(invalid_argument(
      "a traced kiln::Scalar was converted to a number outside its compiled function's trace" +
      (loc.empty() ? std::string() : " at " + loc) +
      " (inside a host function or after the trace ended); pass the value to the host function "
      "as a tensor, or convert it before the call"));
}

namespace detail {

void specialize_scalar_argument(size_t index) {
  if (TraceContext* t = current_trace()) t->specialize_scalar_argument(index);
}

Scalar scalar_argument(size_t index, const Scalar& value) {
  TraceContext* t = current_trace();
  return t ? t->scalar_argument(index, value) : value;
}

}  // namespace detail
}  // namespace kiln
