// Weights from .npy files: named_parameters for each nn module and load_weights.
#include <filesystem>

#include "kiln/io.h"
#include "kiln/nn.h"

namespace kiln::nn {
namespace {

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void append(NamedParameters& out, NamedParameters more) {
  for (auto& p : more) out.push_back(std::move(p));
}

}  // namespace

NamedParameters named_parameters(Linear& m, const std::string& prefix) {
  return {{join(prefix, "weight"), &m.weight}, {join(prefix, "bias"), &m.bias}};
}

NamedParameters named_parameters(LayerNorm& m, const std::string& prefix) {
  return {{join(prefix, "weight"), &m.weight}, {join(prefix, "bias"), &m.bias}};
}

NamedParameters named_parameters(Embedding& m, const std::string& prefix) {
  return {{join(prefix, "weight"), &m.weight}};
}

NamedParameters named_parameters(MultiheadAttention& m, const std::string& prefix) {
  NamedParameters out;
  append(out, named_parameters(m.q, join(prefix, "q")));
  append(out, named_parameters(m.k, join(prefix, "k")));
  append(out, named_parameters(m.v, join(prefix, "v")));
  append(out, named_parameters(m.out, join(prefix, "out")));
  return out;
}

NamedParameters named_parameters(TransformerEncoderLayer& m, const std::string& prefix) {
  NamedParameters out = named_parameters(m.attn, join(prefix, "attn"));
  append(out, named_parameters(m.ff1, join(prefix, "ff1")));
  append(out, named_parameters(m.ff2, join(prefix, "ff2")));
  append(out, named_parameters(m.norm1, join(prefix, "norm1")));
  append(out, named_parameters(m.norm2, join(prefix, "norm2")));
  return out;
}

NamedParameters named_parameters(TransformerEncoder& m, const std::string& prefix) {
  NamedParameters out;
  for (size_t i = 0; i < m.layers.size(); ++i)
    append(out, named_parameters(m.layers[i], join(prefix, "layers." + std::to_string(i))));
  return out;
}

Status load_weights(const std::string& dir,
                    const std::vector<std::pair<std::string, Tensor*>>& params, Device device) {
  // Read and check everything first, so a bad file leaves every tensor as it was.
  std::vector<Tensor> loaded;
  loaded.reserve(params.size());
  for (const auto& [name, target] : params) {
    const std::string path = (std::filesystem::path(dir) / (name + ".npy")).string();
    if (!target || !target->defined())
      return invalid_argument("load_weights: parameter '" + name + "' (" + path +
                              ") has no tensor to load into");
    if (target->is_traced())
      return invalid_argument("load_weights: parameter '" + name + "' is a traced tensor");
    KILN_ASSIGN_OR_RETURN(Tensor t, load_npy(path, Device::cpu()));
    if (t.meta() != target->meta())
      return invalid_argument("load_weights: " + path + " holds " + t.meta().str() +
                              " but parameter '" + name + "' is " + target->meta().str());
    loaded.push_back(std::move(t));
  }
  try {
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& target = *params[i].second;
      if (target.device() == device && !target.is_literal()) {
        std::vector<std::byte> bytes(loaded[i].meta().nbytes());
        loaded[i].copy_to(bytes.data(), bytes.size());
        target.copy_from(bytes.data(), bytes.size());
      } else {
        target = loaded[i].to(device);
      }
    }
  } catch (const Error& e) {
    return e.status().with_context("load_weights from " + dir);
  }
  return Status::ok_status();
}

}  // namespace kiln::nn
