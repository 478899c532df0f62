// Sequences and optionals: host-side values of the front end (host_values.h) whose elements are
// tensors traced as usual, so a model that builds, edits and concatenates sequences compiles to
// the same graph as the tensor ops it spells out. Positions and split sizes are read like other
// size inputs (a computed one is a host read, a graph break guarded by its value).
#include <string>
#include <vector>

#include "onnx/host_values.h"

namespace kiln::onnx {

namespace {

/// A sequence position in [-n, n) (or [-n, n] where `end_ok`), made non-negative.
int64_t position(NodeCtx& c, size_t i, int64_t n, bool end_ok) {
  const int64_t p = c.scalar_int(i);
  const int64_t hi = end_ok ? n : n - 1;
  if (p < -n || p > hi)
    c.fail("position " + std::to_string(p) + " is outside [" + std::to_string(-n) + ", " +
           std::to_string(hi) + "] for a sequence of " + std::to_string(n) + " tensors");
  return p < 0 ? p + n : p;
}

/// Input i, which must be a tensor (or known elements), as a Val to store in a sequence.
Val tensor_item(NodeCtx& c, size_t i) {
  if (!c.has(i)) c.fail("input " + std::to_string(i) + " is missing");
  const Val& v = c.val(i);
  if (v.kind != Value::Kind::kTensor)
    c.fail("input " + std::to_string(i) + " must be a tensor, not " + kind_name(v));
  return v;
}

DType item_dtype(NodeCtx& c, const Val& v) {
  return v.t.defined() ? v.t.dtype() : c.materialize(v).dtype();
}

void sequence_construct(NodeCtx& c) {
  std::vector<Val> items;
  for (size_t i = 0; i < c.inputs(); ++i) {
    items.push_back(tensor_item(c, i));
    if (item_dtype(c, items.back()) != item_dtype(c, items.front()))
      c.fail("the tensors of a sequence must have one element type");
  }
  c.set_val(0, sequence_val(std::move(items)));
}

void sequence_insert(NodeCtx& c) {
  std::vector<Val> items = sequence_items(c, 0);
  Val v = tensor_item(c, 1);
  if (!items.empty() && item_dtype(c, v) != item_dtype(c, items.front()))
    c.fail("the tensor's element type differs from the sequence's");
  const auto n = static_cast<int64_t>(items.size());
  const int64_t at = c.has(2) ? position(c, 2, n, true) : n;
  items.insert(items.begin() + at, std::move(v));
  c.set_val(0, sequence_val(std::move(items)));
}

void sequence_erase(NodeCtx& c) {
  std::vector<Val> items = sequence_items(c, 0);
  const auto n = static_cast<int64_t>(items.size());
  if (n == 0) c.fail("erasing from an empty sequence");
  const int64_t at = c.has(1) ? position(c, 1, n, false) : n - 1;
  items.erase(items.begin() + at);
  c.set_val(0, sequence_val(std::move(items)));
}

void sequence_at(NodeCtx& c) {
  const std::vector<Val>& items = sequence_items(c, 0);
  const auto n = static_cast<int64_t>(items.size());
  c.set_val(0, items[static_cast<size_t>(position(c, 1, n, false))]);
}

void sequence_length(NodeCtx& c) {
  const auto n = static_cast<double>(sequence_items(c, 0).size());
  c.set(0, c.constant(DType::kI64, {}, {n}));
}

void split_to_sequence(NodeCtx& c) {
  const Tensor x = c.in(0);
  if (x.dim() == 0) c.fail("cannot split a scalar");
  const int64_t axis = axis_of(c, c.attr_i("axis", 0), x.dim());
  const int64_t len = x.sizes()[static_cast<size_t>(axis)].value();
  std::vector<int64_t> sizes;
  bool squeeze_each = false;
  if (!c.has(1)) {
    sizes.assign(static_cast<size_t>(len), 1);
    squeeze_each = c.attr_i("keepdims", 1) == 0;
  } else {
    const std::vector<int64_t> split = c.int_values(1);
    const auto& v = c.val(1);
    const bool scalar = v.t.defined() ? v.t.dim() == 0 : c.materialize(v).dim() == 0;
    if (scalar) {
      if (split.size() != 1 || split[0] < 1) c.fail("a scalar split must be positive");
      for (int64_t at = 0; at < len; at += split[0]) sizes.push_back(std::min(split[0], len - at));
    } else {
      int64_t total = 0;
      for (int64_t s : split) {
        if (s < 0) c.fail("split sizes must not be negative");
        total += s;
      }
      if (total != len)
        c.fail("split sizes sum to " + std::to_string(total) + ", the axis has " +
               std::to_string(len));
      sizes = split;
    }
  }
  std::vector<Val> items;
  int64_t at = 0;
  for (int64_t s : sizes) {
    Tensor part = slice(x, axis, at, at + s);
    at += s;
    Val v;
    v.t = squeeze_each ? squeeze(part, axis) : part;
    items.push_back(std::move(v));
  }
  c.set_val(0, sequence_val(std::move(items)));
}

void concat_from_sequence(NodeCtx& c) {
  const std::vector<Val>& items = sequence_items(c, 0);
  if (items.empty()) c.fail("cannot concatenate an empty sequence");
  const bool new_axis = c.attr_i("new_axis", 0) != 0;
  if (!c.has_attr("axis")) c.fail("needs the axis attribute");
  std::vector<Tensor> parts;
  for (const Val& v : items) parts.push_back(c.materialize(v));
  const int64_t rank = parts[0].dim() + (new_axis ? 1 : 0);
  if (rank == 0) c.fail("cannot concatenate scalars without new_axis");
  const int64_t axis = axis_of(c, c.attr_i("axis", 0), rank);
  if (new_axis)
    for (Tensor& p : parts) p = unsqueeze(p, axis);
  c.set(0, concat(parts, axis));
}

/// Runs the body once per element of the first input; other sequence inputs give their
/// element at the same position, tensor inputs themselves. Each body output is a sequence.
void sequence_map(NodeCtx& c) {
  const ::onnx::GraphProto& body = c.attr_graph("body");
  const size_t n = sequence_items(c, 0).size();
  for (size_t i = 1; i < c.inputs(); ++i)
    if (c.has(i) && c.val(i).kind == Value::Kind::kSequence && c.val(i).items->size() != n)
      c.fail("the input sequences differ in length");
  std::vector<std::vector<Val>> outs(c.outputs());
  for (size_t k = 0; k < n; ++k) {
    std::vector<Val> args;
    for (size_t i = 0; i < c.inputs(); ++i) {
      if (!c.has(i)) c.fail("input " + std::to_string(i) + " is missing");
      const Val& v = c.val(i);
      args.push_back(v.kind == Value::Kind::kSequence ? (*v.items)[k] : v);
    }
    std::vector<Val> res = c.model().run_subgraph(body, *c.scope, std::move(args));
    if (res.size() != c.outputs()) c.fail("the body's outputs do not match the node's");
    for (size_t o = 0; o < res.size(); ++o) outs[o].push_back(std::move(res[o]));
  }
  for (size_t o = 0; o < c.outputs(); ++o) c.set_val(o, sequence_val(std::move(outs[o])));
}

void optional_op(NodeCtx& c) {
  if (!c.has(0)) {
    if (!c.attr_t("type") && !c.has_attr("type")) c.fail("an empty Optional needs its type");
    c.set_val(0, optional_val(std::nullopt));
    return;
  }
  if (c.val(0).kind == Value::Kind::kOptional) c.fail("an optional of an optional");
  c.set_val(0, optional_val(c.val(0)));
}

// A tensor or sequence where an optional is expected is a present optional: ONNX feeds a Loop
// body's optional input from the sequence the body returned (and opset 18 accepts any value);
// no input at all is an empty one.
void optional_has_element(NodeCtx& c) {
  bool has = false;
  if (c.has(0)) {
    const Val& v = c.val(0);
    has = v.kind != Value::Kind::kOptional || !v.items->empty();
  }
  c.set(0, c.constant(DType::kBool, {}, {has ? 1.0 : 0.0}));
}

void optional_get_element(NodeCtx& c) {
  if (!c.has(0)) c.fail("input 0 is missing");
  const Val& v = c.val(0);
  if (v.kind != Value::Kind::kOptional) {
    c.set_val(0, v);
    return;
  }
  if (v.items->empty()) c.fail("the optional is empty");
  c.set_val(0, v.items->front());
}

}  // namespace

void register_sequence_ops(std::map<std::string, OpHandler>& t) {
  t["SequenceEmpty"] = [](NodeCtx& c) { c.set_val(0, sequence_val({})); };
  t["SequenceConstruct"] = sequence_construct;
  t["SequenceInsert"] = sequence_insert;
  t["SequenceErase"] = sequence_erase;
  t["SequenceAt"] = sequence_at;
  t["SequenceLength"] = sequence_length;
  t["SplitToSequence"] = split_to_sequence;
  t["ConcatFromSequence"] = concat_from_sequence;
  t["SequenceMap"] = sequence_map;
  t["Optional"] = optional_op;
  t["OptionalHasElement"] = optional_has_element;
  t["OptionalGetElement"] = optional_get_element;
}

}  // namespace kiln::onnx
