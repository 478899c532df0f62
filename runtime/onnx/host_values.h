// Values of the ONNX front end that are not numeric tensors: sequences, optionals and string
// tensors. They live on the host while a graph runs (Val::kind, Val::items, Val::host); the
// tensors a sequence holds are traced like any other.
#pragma once

#include <string>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx {

/// A sequence (or an optional, with 0 or 1 items) of the given items.
Val sequence_val(std::vector<Val> items);
Val optional_val(std::optional<Val> item);
/// A string tensor of `shape` (host only).
Val strings_val(std::vector<int64_t> shape, std::vector<std::string> strings);

/// Input i of a node as a sequence's items, an optional's (0 or 1) or a string tensor, or a
/// failure naming the node and what the input is instead.
const std::vector<Val>& sequence_items(NodeCtx& c, size_t i);
const std::vector<Val>& optional_items(NodeCtx& c, size_t i);
const Value& string_tensor(NodeCtx& c, size_t i);
/// "a sequence", "an optional", "a string tensor", "a tensor".
std::string kind_name(const Val& v);
std::string kind_name(Value::Kind kind);

/// Runs a model on values of any kind (Model::run_values): eagerly, node by node.
std::vector<Value> run_values(ModelImpl& m, const std::vector<Value>& inputs);

}  // namespace kiln::onnx
