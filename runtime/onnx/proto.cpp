// TensorProto and ValueInfoProto decoding, element-type mapping, and file reading.
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "onnx/importer.h"
#include "onnx/read_file.h"

namespace kiln::onnx {

const char* onnx_type_name(OnnxType type) {
  switch (type) {
    case OnnxType::kFloat:
      return "FLOAT";
    case OnnxType::kUint8:
      return "UINT8";
    case OnnxType::kInt8:
      return "INT8";
    case OnnxType::kUint16:
      return "UINT16";
    case OnnxType::kInt16:
      return "INT16";
    case OnnxType::kInt32:
      return "INT32";
    case OnnxType::kInt64:
      return "INT64";
    case OnnxType::kString:
      return "STRING";
    case OnnxType::kBool:
      return "BOOL";
    case OnnxType::kFloat16:
      return "FLOAT16";
    case OnnxType::kDouble:
      return "DOUBLE";
    case OnnxType::kUint32:
      return "UINT32";
    case OnnxType::kUint64:
      return "UINT64";
    case OnnxType::kComplex64:
      return "COMPLEX64";
    case OnnxType::kComplex128:
      return "COMPLEX128";
    case OnnxType::kBfloat16:
      return "BFLOAT16";
    case OnnxType::kUndefined:
      break;
  }
  return "UNDEFINED";
}

Expected<DType> kiln_dtype(OnnxType type) {
  switch (type) {
    case OnnxType::kFloat:
    case OnnxType::kDouble:
    case OnnxType::kBfloat16:
      return DType::kF32;
    case OnnxType::kFloat16:
      return DType::kF16;
    case OnnxType::kUint8:
    case OnnxType::kInt8:
    case OnnxType::kUint16:
    case OnnxType::kInt16:
    case OnnxType::kInt32:
      return DType::kI32;
    case OnnxType::kInt64:
    case OnnxType::kUint32:
    case OnnxType::kUint64:
      return DType::kI64;
    case OnnxType::kBool:
      return DType::kBool;
    default:
      break;
  }
  const int n = static_cast<int>(type);
  if (n < 0 || n > 16)
    return invalid_argument("element type " + std::to_string(n) + " is not an ONNX type");
  return unimplemented(std::string("element type ") + onnx_type_name(type) +
                       " is not supported (Kiln computes in f32, f16, i32, i64, bool)");
}

std::string ValueInfo::str() const {
  std::string s = name + ": " + onnx_type_name(onnx_type);
  if (kind == Value::Kind::kSequence) return name + ": sequence of " + onnx_type_name(onnx_type);
  if (kind == Value::Kind::kOptional) return name + ": optional " + onnx_type_name(onnx_type);
  if (!has_shape) return s + "[?]";
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += !dim_params[i].empty() ? dim_params[i] : dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return s + "]";
}

namespace {

float bf16_to_float(uint16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
T read_le(const std::string& raw, size_t i) {
  T v;
  std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
  return v;
}

size_t onnx_elem_size(OnnxType t) {
  switch (t) {
    case OnnxType::kUint8:
    case OnnxType::kInt8:
    case OnnxType::kBool:
      return 1;
    case OnnxType::kUint16:
    case OnnxType::kInt16:
    case OnnxType::kFloat16:
    case OnnxType::kBfloat16:
      return 2;
    case OnnxType::kFloat:
    case OnnxType::kInt32:
    case OnnxType::kUint32:
      return 4;
    default:
      return 8;
  }
}

}  // namespace

Expected<ProtoTensor> decode_tensor(const ::onnx::TensorProto& p, Device device,
                                    const std::string& what) {
  ProtoTensor out;
  out.name = p.name();
  out.onnx_type = static_cast<OnnxType>(p.data_type());
  auto dt = kiln_dtype(out.onnx_type);
  if (!dt.ok()) return dt.status().with_context(what);
  if (p.data_location() == ::onnx::TensorProto::EXTERNAL || p.external_data_size() > 0)
    return unimplemented(what + ": external tensor data is not supported");
  if (p.has_segment()) return unimplemented(what + ": segmented tensors are not supported");
  Shape shape;
  int64_t n = 1;
  for (int64_t d : p.dims()) {
    if (d < 0) return invalid_argument(what + ": negative dim " + std::to_string(d));
    if (d > 0 && n > (int64_t{1} << 40) / d)
      return invalid_argument(what + ": element count overflows (dims too large)");
    n *= d;
    shape.push_back(d);
  }
  const OnnxType t = out.onnx_type;
  const size_t count = static_cast<size_t>(n);
  // Gather the elements into doubles (floats) or int64s (integers).
  std::vector<double> f;
  std::vector<int64_t> iv;
  auto count_error = [&](size_t have) {
    return invalid_argument(what + ": " + std::to_string(have) + " elements stored for shape " +
                            shape_str(shape) + " (" + std::to_string(count) + " expected)");
  };
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    const size_t es = onnx_elem_size(t);
    if (raw.size() != count * es)
      return invalid_argument(what + ": raw_data has " + std::to_string(raw.size()) +
                              " bytes, shape " + shape_str(shape) + " of " + onnx_type_name(t) +
                              " needs " + std::to_string(count * es));
    // Types stored as Kiln stores them are copied as they are (ONNX raw data is little-endian,
    // as the hosts Kiln runs on are).
    const bool as_stored = (t == OnnxType::kFloat && *dt == DType::kF32) ||
                           (t == OnnxType::kFloat16 && *dt == DType::kF16) ||
                           (t == OnnxType::kInt32 && *dt == DType::kI32) ||
                           (t == OnnxType::kInt64 && *dt == DType::kI64);
    if (as_stored) {
      out.tensor = Tensor::from_bytes(*dt, shape, raw.data(), raw.size(), device);
      return out;
    }
    (t == OnnxType::kFloat || t == OnnxType::kDouble || t == OnnxType::kFloat16 ||
     t == OnnxType::kBfloat16)
        ? f.reserve(count)
        : iv.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      switch (t) {
        case OnnxType::kFloat:
          f.push_back(read_le<float>(raw, i));
          break;
        case OnnxType::kDouble:
          f.push_back(read_le<double>(raw, i));
          break;
        case OnnxType::kFloat16:
          f.push_back(half_to_float(read_le<uint16_t>(raw, i)));
          break;
        case OnnxType::kBfloat16:
          f.push_back(bf16_to_float(read_le<uint16_t>(raw, i)));
          break;
        case OnnxType::kUint8:
          iv.push_back(read_le<uint8_t>(raw, i));
          break;
        case OnnxType::kInt8:
          iv.push_back(read_le<int8_t>(raw, i));
          break;
        case OnnxType::kBool:
          iv.push_back(read_le<uint8_t>(raw, i) != 0);
          break;
        case OnnxType::kUint16:
          iv.push_back(read_le<uint16_t>(raw, i));
          break;
        case OnnxType::kInt16:
          iv.push_back(read_le<int16_t>(raw, i));
          break;
        case OnnxType::kInt32:
          iv.push_back(read_le<int32_t>(raw, i));
          break;
        case OnnxType::kUint32:
          iv.push_back(read_le<uint32_t>(raw, i));
          break;
        case OnnxType::kInt64:
          iv.push_back(read_le<int64_t>(raw, i));
          break;
        case OnnxType::kUint64:
          iv.push_back(static_cast<int64_t>(read_le<uint64_t>(raw, i)));
          break;
        default:
          return internal_error(what + ": unhandled type");
      }
    }
  } else {
    switch (t) {
      case OnnxType::kFloat:
        if (static_cast<size_t>(p.float_data_size()) != count)
          return count_error(p.float_data_size());
        f.assign(p.float_data().begin(), p.float_data().end());
        break;
      case OnnxType::kDouble:
        if (static_cast<size_t>(p.double_data_size()) != count)
          return count_error(p.double_data_size());
        f.assign(p.double_data().begin(), p.double_data().end());
        break;
      case OnnxType::kFloat16:
      case OnnxType::kBfloat16:
        if (static_cast<size_t>(p.int32_data_size()) != count)
          return count_error(p.int32_data_size());
        for (int32_t v : p.int32_data()) {
          const auto bits = static_cast<uint16_t>(v);
          f.push_back(t == OnnxType::kFloat16 ? half_to_float(bits) : bf16_to_float(bits));
        }
        break;
      case OnnxType::kInt64:
        if (static_cast<size_t>(p.int64_data_size()) != count)
          return count_error(p.int64_data_size());
        iv.assign(p.int64_data().begin(), p.int64_data().end());
        break;
      case OnnxType::kUint32:
      case OnnxType::kUint64:
        if (static_cast<size_t>(p.uint64_data_size()) != count)
          return count_error(p.uint64_data_size());
        for (uint64_t v : p.uint64_data()) iv.push_back(static_cast<int64_t>(v));
        break;
      default:  // int32_data holds int32, int16, int8, uint16, uint8 and bool
        if (static_cast<size_t>(p.int32_data_size()) != count)
          return count_error(p.int32_data_size());
        for (int32_t v : p.int32_data()) iv.push_back(t == OnnxType::kBool ? (v != 0) : v);
        break;
    }
  }
  const DType dtype = *dt;
  switch (dtype) {
    case DType::kF32: {
      std::vector<float> v(f.begin(), f.end());
      out.tensor = Tensor::from_bytes(dtype, shape, v.data(), v.size() * 4, device);
      break;
    }
    case DType::kF16: {
      std::vector<uint16_t> v;
      for (double x : f) v.push_back(float_to_half(static_cast<float>(x)));
      out.tensor = Tensor::from_bytes(dtype, shape, v.data(), v.size() * 2, device);
      break;
    }
    case DType::kI32: {
      std::vector<int32_t> v(iv.begin(), iv.end());
      out.tensor = Tensor::from_bytes(dtype, shape, v.data(), v.size() * 4, device);
      break;
    }
    case DType::kI64:
      out.tensor = Tensor::from_bytes(dtype, shape, iv.data(), iv.size() * 8, device);
      break;
    case DType::kBool: {
      std::vector<uint8_t> v(iv.begin(), iv.end());
      out.tensor = Tensor::from_bytes(dtype, shape, v.data(), v.size(), device);
      break;
    }
    case DType::kC64:  // ONNX complex types map to no Kiln dtype (kiln_dtype rejects them)
      return unimplemented("complex ONNX tensors are not supported");
  }
  return out;
}

Expected<ValueInfo> decode_value_info(const ::onnx::ValueInfoProto& info) {
  ValueInfo v;
  v.name = info.name();
  if (!info.has_type()) return unimplemented("value '" + info.name() + "' has no type");
  // A sequence or optional: its kind, and the innermost element type when the file says.
  const ::onnx::TypeProto* type = &info.type();
  if (type->has_sequence_type() || type->has_optional_type()) {
    v.kind = type->has_sequence_type() ? Value::Kind::kSequence : Value::Kind::kOptional;
    for (int depth = 0; depth < 8; ++depth) {
      if (type->has_sequence_type() && type->sequence_type().has_elem_type())
        type = &type->sequence_type().elem_type();
      else if (type->has_optional_type() && type->optional_type().has_elem_type())
        type = &type->optional_type().elem_type();
      else
        break;
    }
    if (type->has_tensor_type())
      v.onnx_type = static_cast<OnnxType>(type->tensor_type().elem_type());
    return v;
  }
  if (!type->has_tensor_type())
    return unimplemented("value '" + info.name() + "' is not a tensor, sequence or optional " +
                         "(maps are not supported)");
  const auto& tt = type->tensor_type();
  v.onnx_type = static_cast<OnnxType>(tt.elem_type());
  if (v.onnx_type == OnnxType::kString) v.kind = Value::Kind::kStrings;
  auto dt =
      v.kind == Value::Kind::kStrings ? Expected<DType>(DType::kF32) : kiln_dtype(v.onnx_type);
  if (!dt.ok()) return dt.status().with_context("value '" + info.name() + "'");
  v.dtype = *dt;
  if (tt.has_shape()) {
    v.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      v.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      v.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
      if (d.has_dim_value() && d.dim_value() < 0)
        return invalid_argument("value '" + info.name() + "' has a negative dim");
    }
  }
  return v;
}

Expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return invalid_argument("cannot open '" + path + "'");
  const std::streamoff size = in.tellg();
  std::string data;
  if (size > 0) {  // one read of the whole file; a stream that cannot seek is read to its end
    data.resize(static_cast<size_t>(size));
    in.seekg(0);
    in.read(data.data(), size);
    if (in.gcount() != size) return invalid_argument("cannot read '" + path + "'");
    return data;
  }
  in.clear();
  in.seekg(0);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return invalid_argument("cannot read '" + path + "'");
  return ss.str();
}

Expected<ProtoTensor> parse_tensor_proto(std::span<const std::byte> bytes, Device device) {
  ::onnx::TensorProto p;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return invalid_argument("not a valid TensorProto (truncated or corrupt protobuf data)");
  return decode_tensor(p, device, "tensor '" + p.name() + "'");
}

Expected<ProtoTensor> load_tensor_proto(const std::string& path, Device device) {
  KILN_ASSIGN_OR_RETURN(std::string data, read_file(path));
  auto t = parse_tensor_proto(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data.data()), data.size()),
      device);
  if (!t.ok()) return t.status().with_context(path);
  return t;
}

std::vector<double> values_as(const Tensor& t, OnnxType as) {
  std::vector<double> v = t.to_doubles();
  for (double& x : v) {
    switch (as) {
      case OnnxType::kUint8:
        x = static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(x)));
        break;
      case OnnxType::kInt8:
        x = static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(x)));
        break;
      case OnnxType::kUint16:
        x = static_cast<double>(static_cast<uint16_t>(static_cast<int64_t>(x)));
        break;
      case OnnxType::kInt16:
        x = static_cast<double>(static_cast<int16_t>(static_cast<int64_t>(x)));
        break;
      case OnnxType::kUint32:
        x = static_cast<double>(static_cast<uint32_t>(static_cast<int64_t>(x)));
        break;
      case OnnxType::kUint64:
        x = static_cast<double>(static_cast<uint64_t>(static_cast<int64_t>(x)));
        break;
      case OnnxType::kBfloat16: {
        // Keep the upper 16 bits (truncation), as ONNX 1.12's float -> bfloat16 Cast.
        float f = static_cast<float>(x);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        bits &= 0xffff0000u;
        std::memcpy(&f, &bits, 4);
        x = f;
        break;
      }
      default:
        break;
    }
  }
  return v;
}

}  // namespace kiln::onnx
