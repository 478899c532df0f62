// Small helpers that build ONNX models in memory for the importer tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace kiln::test {

/// A dim: a number, or a dim_param name.
struct OnnxDim {
  OnnxDim(int64_t v) : value(v) {}      // NOLINT: implicit
  OnnxDim(const char* p) : param(p) {}  // NOLINT: implicit
  int64_t value = -1;
  std::string param;
};

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }
  ::onnx::ValueInfoProto* value(::onnx::ValueInfoProto* v, const std::string& name, int type,
                                std::initializer_list<OnnxDim> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (const OnnxDim& d : dims) {
      auto* dim = shape->add_dim();
      if (d.param.empty()) {
        dim->set_dim_value(d.value);
      } else {
        dim->set_dim_param(d.param);
      }
    }
    return v;
  }
  OnnxBuilder& input(const std::string& name, int type, std::initializer_list<OnnxDim> dims) {
    value(model_.mutable_graph()->add_input(), name, type, dims);
    return *this;
  }
  OnnxBuilder& output(const std::string& name, int type, std::initializer_list<OnnxDim> dims = {}) {
    auto* v = model_.mutable_graph()->add_output();
    value(v, name, type, dims);
    if (dims.size() == 0) v->mutable_type()->mutable_tensor_type()->clear_shape();
    return *this;
  }
  ::onnx::NodeProto* node(const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out, const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? out.at(0) : name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  static void attr_i(::onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_f(::onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_ints(::onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  /// A one-element INT64 tensor attribute (ConstantOfShape's `value`).
  static void attr_i64_tensor(::onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(v);
  }
  OnnxBuilder& init_i64(const std::string& name, std::vector<int64_t> v,
                        std::vector<int64_t> dims) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t x : v) t->add_int64_data(x);
    return *this;
  }
  OnnxBuilder& init_f32(const std::string& name, std::vector<float> v, std::vector<int64_t> dims) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    return *this;
  }
  ::onnx::ModelProto& proto() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  ::onnx::ModelProto model_;
};

inline std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace kiln::test
