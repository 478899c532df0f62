#include "capture/trace.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "capture/host_memo.h"
#include "eager/interpreter.h"
#include "kiln/logging.h"

namespace kiln {
namespace {

thread_local TraceContext* t_current = nullptr;
thread_local uint64_t t_current_id = 0;
std::atomic<uint64_t> g_next_trace_id{1};

}  // namespace

namespace {
thread_local std::string t_source_label;  // SourceLabel
}  // namespace

SourceLabel::SourceLabel(std::string label) : previous_(std::move(t_source_label)) {
  t_source_label = std::move(label);
}
SourceLabel::~SourceLabel() {
  t_source_label = std::move(previous_);
}

std::string loc_str(const Loc& loc) {
  std::string file = loc.file_name();
  size_t slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  if (file.empty()) return t_source_label;
  file += ":" + std::to_string(loc.line());
  return t_source_label.empty() ? file : t_source_label + " (" + file + ")";
}

TraceContext* current_trace() {
  return t_current;
}

uint64_t current_trace_id() {
  return t_current_id;
}

TraceScope::TraceScope(TraceContext* trace) : trace_(trace) {
  if (t_current) throw Error(invalid_argument("kiln::compile: nested tracing is not supported"));
  t_current = trace_;
  t_current_id = g_next_trace_id++;
}

TraceScope::~TraceScope() {
  trace_->active = false;
  t_current = nullptr;
  t_current_id = 0;
}

PauseTrace::PauseTrace() : saved_(t_current), saved_id_(t_current_id) {
  t_current = nullptr;
  t_current_id = 0;
}

PauseTrace::~PauseTrace() {
  t_current = saved_;
  t_current_id = saved_id_;
}

TraceContext::TraceContext(std::vector<Tensor> args, Device device, CompileOptions options,
                           SegmentCache* cache, DynamicSpec spec, size_t num_scalars)
    : slots_(std::move(args)),
      num_tensor_args_(slots_.size() - num_scalars),
      specialized_scalars_(num_scalars, false),
      env_(std::make_shared<ShapeEnv>()),
      device_(device),
      options_(std::move(options)),
      cache_(cache) {
  program_.num_args = static_cast<int32_t>(slots_.size());
  program_.device = device;
  graph_.set_shape_env(env_.get());
  if (log_enabled(LogTopic::kDynamic)) {
    std::string name = options_.name;
    env_->set_on_guard([name](const ShapeGuard& g) {
      log(LogTopic::kDynamic, "'" + name + "' guard added: " + g.to_string());
    });
  }
  // Symbols for the dynamic dims of every argument, in argument and dim order.
  arg_syms_.resize(slots_.size());
  for (size_t a = 0; a < slots_.size() && a < spec.size(); ++a) {
    const Shape& shape = slots_[a].meta().shape;
    for (size_t d = 0; d < shape.size() && d < spec[a].size(); ++d) {
      const DimPolicy& p = spec[a][d];
      if (p.kind == DimPolicy::Kind::kStatic) continue;
      if (arg_syms_[a].empty()) arg_syms_[a] = sym_shape_of(shape);
      const std::string source = "input " + std::to_string(a) + " dim " + std::to_string(d);
      const int64_t v = shape[d];
      int id = -1;
      if (p.kind == DimPolicy::Kind::kMarked) {
        if (v < 2 || v < p.min || v > p.max)
          throw Error(invalid_argument(
              "'" + options_.name + "': mark_dynamic(" + source + ", min " + std::to_string(p.min) +
              ", max " + std::to_string(p.max) + ") but the size is " + std::to_string(v) +
              (v < 2 ? " (sizes 0 and 1 are always specialised)" : "")));
        id = env_->create_symbol(v, source, std::max<int64_t>(p.min, 2), p.max);
        if (!p.soft) throw_if_error(env_->mark_dynamic(id));
        arg_syms_[a][d] = SymInt(env_->symbol(id));
      } else {
        arg_syms_[a][d] = env_->symbol_for_value(v, source, &id);
      }
      sources_.resize(static_cast<size_t>(id) + 1);
      sources_[static_cast<size_t>(id)] = {static_cast<int32_t>(a), static_cast<int32_t>(d)};
      log(LogTopic::kDynamic, "'" + options_.name + "' " + source + " (size " + std::to_string(v) +
                                  ") is " + arg_syms_[a][d].str() +
                                  (p.kind != DimPolicy::Kind::kMarked ? ""
                                   : p.soft                           ? " (maybe_mark_dynamic)"
                                                                      : " (mark_dynamic)"));
    }
  }
}

std::vector<int64_t> TraceContext::symbol_hints() const {
  std::vector<int64_t> out;
  for (int s = 0; s < env_->num_symbols(); ++s) out.push_back(env_->info(s).hint);
  return out;
}

bool TraceContext::owns(const detail::SymSizeNode& node) const {
  return node.trace == this && node.trace_id == t_current_id && active;
}

int32_t TraceContext::new_slot(Tensor value) {
  slots_.push_back(std::move(value));
  return static_cast<int32_t>(slots_.size() - 1);
}

std::vector<Tensor> TraceContext::locked_constants() const {
  std::vector<Tensor> out;
  for (const CapturedConstant& c : constants) out.emplace_back(c.tensor.lock());
  return out;
}

Tensor TraceContext::slot_placeholder(int32_t slot) {
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = slots_.at(static_cast<size_t>(slot)).meta();
  impl->device = device_;
  impl->trace = this;
  impl->trace_id = t_current_id;
  impl->slot = slot;
  return Tensor(std::move(impl));
}

Tensor TraceContext::argument(size_t index) {
  Tensor t = slot_placeholder(static_cast<int32_t>(index));
  t.impl()->sym = arg_syms_.at(index);
  return t;
}

Tensor TraceContext::placeholder(NodeId node) {
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = graph_.node(node).meta;
  impl->device = device_;
  impl->trace = this;
  impl->trace_id = t_current_id;
  impl->segment = segment_;
  impl->node = node;
  impl->sym = graph_.node(node).sym;
  live_.push_back(impl);
  return Tensor(std::move(impl));
}

NodeId TraceContext::node_for(const Tensor& t, const std::string& loc) {
  TensorImpl* impl = t.impl();
  if (!impl) throw Error(invalid_argument("use of an undefined tensor at " + loc));
  if (impl->trace) {
    if (impl->trace_id != t_current_id || impl->trace != this || !active)
      throw Error(invalid_argument("a tensor from another (finished) trace was used at " + loc));
    if (impl->segment == segment_) return impl->node;
    // Computed by an earlier segment (or an argument): an input of this one.
    auto it = input_of_slot_.find(impl->slot);
    if (it != input_of_slot_.end()) return it->second;
    NodeId id = graph_.add_input(impl->meta, "", impl->sym);
    segment_inputs_.push_back(impl->slot);
    input_of_slot_[impl->slot] = id;
    return id;
  }
  if (impl->literal) {
    Attrs a;
    set_full_value(a, impl->literal_int ? Scalar(*impl->literal_int) : Scalar(*impl->literal));
    a.dtype = impl->meta.dtype;
    return value_or_throw(graph_.add(OpKind::Full, {}, a, loc));
  }
  if (auto it = captured_.find(impl); it != captured_.end()) return it->second;
  auto [pos, added] = constant_index_.try_emplace(impl, static_cast<int64_t>(constants.size()));
  if (added) {
    constants.push_back({t.impl_ptr(), impl->meta, impl->device, loc});
    held_constants_.push_back(t);
  }
  const int64_t index = pos->second;
  NodeId id = graph_.add_constant(impl->meta, index, loc);
  captured_[impl] = id;
  return id;
}

void TraceContext::flush(const std::vector<NodeId>& extra_outputs) {
  std::vector<NodeId> outs = extra_outputs;
  std::vector<std::shared_ptr<TensorImpl>> owners;
  for (const auto& weak : live_) {
    auto impl = weak.lock();
    if (!impl || impl->segment != segment_ || impl->slot >= 0) continue;
    owners.push_back(impl);
    outs.push_back(impl->node);
  }
  bool has_work = false;
  for (NodeId o : outs) has_work |= graph_.node(o).op != OpKind::Input;
  if (has_work) {
    graph_.set_outputs(outs);
    graph_.canonicalize(*env_);
    const GraphKey key(graph_, Executable::target_key(device_, options_));
    std::shared_ptr<Executable>& exe = (*cache_)[key];
    if (!exe)
      exe = value_or_throw(
          Executable::create(graph_, device_, options_,
                             options_.background ? locked_constants() : std::vector<Tensor>{}));
    std::vector<Tensor> in;
    for (int32_t s : segment_inputs_) in.push_back(slots_[s]);
    const std::vector<int64_t> hints = symbol_hints();
    std::vector<int64_t> resolved = hints;
    auto result = exe->run(in, locked_constants(), hints, &resolved);
    if (!result.ok()) throw Error(result.status());
    for (int u : pending_unbacked_)  // the lengths this run revealed become their hints
      if (static_cast<size_t>(u) < resolved.size()) env_->set_hint(u, resolved[u]);
    ProgramStep step;
    step.kind = ProgramStep::Kind::kSegment;
    step.exe = exe;
    step.in = segment_inputs_;
    for (Tensor& v : *result) step.out.push_back(new_slot(std::move(v)));
    // Live placeholders read their slot; extra outputs come first in `outs`.
    for (size_t i = 0; i < owners.size(); ++i) {
      owners[i]->slot = step.out[extra_outputs.size() + i];
      owners[i]->meta = slots_[static_cast<size_t>(owners[i]->slot)].meta();  // actual lengths
    }
    program_.steps.push_back(std::move(step));
    extra_slots_ = std::vector<int32_t>(
        program_.steps.back().out.begin(),
        program_.steps.back().out.begin() + static_cast<ptrdiff_t>(extra_outputs.size()));
  } else {
    extra_slots_.clear();
    for (NodeId o : extra_outputs)
      extra_slots_.push_back(segment_inputs_[graph_.node(o).attrs.index]);
  }
  graph_ = Graph();
  graph_.set_shape_env(env_.get());
  pending_unbacked_.clear();
  segment_inputs_.clear();
  input_of_slot_.clear();
  live_.clear();
  captured_.clear();
  ++segment_;
}

int TraceContext::unbacked_symbol(int64_t hint, const std::string& source) {
  const int id = env_->create_unbacked_symbol(hint, source);
  pending_unbacked_.push_back(id);
  log(LogTopic::kDynamic, "'" + options_.name + "' " + source + " is s" + std::to_string(id) +
                              " (unbacked: known when the graph runs)");
  return id;
}

bool TraceContext::reveal_unbacked(std::initializer_list<const SymInt*> sides,
                                   const std::string& what) {
  bool unbacked = false, pending = false;
  for (const SymInt* side : sides)
    for (int s : side->free_symbols()) {
      if (!env_->info(s).unbacked) continue;
      unbacked = true;
      pending |= std::find(pending_unbacked_.begin(), pending_unbacked_.end(), s) !=
                 pending_unbacked_.end();
    }
  if (pending) {
    log(LogTopic::kDynamic, "'" + options_.name + "' runs its graph to decide " + what);
    flush({});
  }
  return unbacked;
}

void TraceContext::add_size_guard(const SymRel& rel, const std::string& why) {
  ProgramStep step;
  step.kind = ProgramStep::Kind::kSizeGuard;
  step.size_guard = rel;
  step.label = why;
  step.where = {"data-dependent size " + rel.str(), why};
  step.is_break = false;
  log(LogTopic::kGuards,
      "'" + options_.name + "' checks " + rel.str() + " when it replays (" + why + ")");
  program_.steps.push_back(std::move(step));
}

std::optional<bool> TraceContext::decide_data_dependent(const SymRel& rel, const std::string& why) {
  if (!reveal_unbacked({&rel.lhs, &rel.rhs}, rel.str() + " (" + why + ")")) return std::nullopt;
  if (env_->statically_known_true(rel)) return true;
  const SymRel negated{negate(rel.op), rel.lhs, rel.rhs};
  if (env_->statically_known_true(negated)) return false;
  const std::vector<int64_t> hints = symbol_hints();
  const bool holds = rel_holds(rel.op, rel.lhs.evaluate(hints), rel.rhs.evaluate(hints));
  add_size_guard(holds ? rel : negated, why);
  return holds;
}

std::optional<int64_t> TraceContext::data_dependent_value(const SymInt& v, const std::string& why) {
  if (!reveal_unbacked({&v}, v.str() + " (" + why + ")")) return std::nullopt;
  const int64_t value = v.evaluate(symbol_hints());
  const SymRel rel = sym_eq(v, SymInt(value));
  if (!env_->statically_known_true(rel)) add_size_guard(rel, why);
  return value;
}

void TraceContext::sync_unbacked(const std::vector<Tensor>& inputs) {
  if (pending_unbacked_.empty()) return;
  for (const Tensor& t : inputs) {
    const TensorImpl* impl = t.impl();
    if (impl == nullptr || impl->trace != this || impl->segment != segment_ || impl->slot >= 0)
      continue;
    for (const SymInt& d : impl->sym)
      for (int s : d.free_symbols())
        if (std::find(pending_unbacked_.begin(), pending_unbacked_.end(), s) !=
            pending_unbacked_.end()) {
          log(LogTopic::kDynamic, "'" + options_.name + "' runs its graph to learn s" +
                                      std::to_string(s) + " before an op uses it");
          flush({});
          return;
        }
  }
}

void TraceContext::start_break(const GraphBreak& why) {
  if (options_.fullgraph)
    throw Error(invalid_argument("graph break in '" + options_.name + "' with fullgraph=true: " +
                                 why.reason + (why.loc.empty() ? "" : " at " + why.loc)));
  log(LogTopic::kGraphBreaks, "'" + options_.name + "' graph break: " + why.reason +
                                  (why.loc.empty() ? "" : " at " + why.loc));
}

int32_t TraceContext::slot_of(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (impl->trace) {
    node_for(t, "");  // validates the placeholder
    if (impl->slot < 0) flush({});
    return impl->slot;
  }
  if (impl->literal) return new_slot(t);  // a literal's value never changes
  // A captured tensor read by a break (a host function, a print): it must come out of a
  // segment so that every replay reads its current contents (the slot is refilled).
  const NodeId id = node_for(t, "");
  flush({id});
  return extra_slots_.at(0);
}

HostTensor TraceContext::host_read(const Tensor& t, const std::string& what,
                                   const std::string& loc) {
  GraphBreak why{what + " of a traced tensor (a host value is needed)", loc};
  start_break(why);
  int32_t slot = slot_of(t);
  HostTensor value = to_host(slots_[slot]);
  ProgramStep step;
  step.kind = ProgramStep::Kind::kValueGuard;
  step.in = {slot};
  step.expected = value;
  step.label = what;
  step.where = why;
  program_.steps.push_back(std::move(step));
  return value;
}

Scalar TraceContext::read_scalar(const Tensor& t, const std::string& loc) {
  GraphBreak why{"item() of a traced tensor (a host value is needed)", loc};
  start_break(why);
  const int32_t slot = slot_of(t);
  ProgramStep step;
  step.kind = ProgramStep::Kind::kScalarRead;
  step.in = {slot};
  step.label = "item()";
  step.where = why;
  program_.steps.push_back(std::move(step));
  return Scalar::traced(slot_placeholder(slot).impl_ptr(), scalar_of(to_host(slots_[slot])));
}

Scalar TraceContext::scalar_argument(size_t index, const Scalar& value) {
  if (options_.specialize_float && !value.is_integral()) {
    specialize_scalar_argument(index);
    return value.untraced();
  }
  Tensor t = argument(num_tensor_args_ + index);
  return Scalar::traced(t.impl_ptr(), value);
}

void TraceContext::specialize_scalar(const std::shared_ptr<TensorImpl>& t, const std::string& loc) {
  const size_t slot = static_cast<size_t>(t->slot);
  if (t->slot >= 0 && slot >= num_tensor_args_ &&
      slot < num_tensor_args_ + specialized_scalars_.size()) {
    specialized_scalars_[slot - num_tensor_args_] = true;  // an exact guard on the argument
    return;
  }
  if (t->slot < 0) {  // computed in the current segment: a host read like item<T>()
    host_read(Tensor(t), "a traced Scalar converted to a number", loc);
    return;
  }
  // Already in a slot (item()): a value guard on it, no new graph break.
  ProgramStep step;
  step.kind = ProgramStep::Kind::kValueGuard;
  step.in = {t->slot};
  step.expected = to_host(slots_[slot]);
  step.label = "a Scalar from item() converted to a number";
  step.where = {step.label, loc};
  step.is_break = false;
  program_.steps.push_back(std::move(step));
}

std::vector<Tensor> TraceContext::host_call(const std::string& name, const HostFunction& fn,
                                            const std::vector<Tensor>& args,
                                            const std::string& reason, const std::string& loc) {
  GraphBreak why{reason, loc};
  start_break(why);
  ProgramStep step;
  step.kind = ProgramStep::Kind::kHost;
  std::vector<Tensor> in;
  for (const Tensor& a : args) {
    int32_t s = slot_of(a);
    step.in.push_back(s);
    in.push_back(slots_[s]);
  }
  std::vector<Tensor> outs = run_host_function(fn, name, in, device_, loc);
  std::vector<Tensor> result;
  for (Tensor& o : outs) {
    step.out_metas.push_back(o.meta());
    int32_t s = new_slot(std::move(o));
    step.out.push_back(s);
    result.push_back(slot_placeholder(s));
  }
  step.fn = fn;
  step.label = name;
  step.where = why;
  program_.steps.push_back(std::move(step));
  return result;
}

void TraceContext::print(const std::string& label, const Tensor& t, const std::string& loc) {
  GraphBreak why{"print", loc};
  start_break(why);
  int32_t slot = slot_of(t);
  std::printf("%s\n", format_tensor(label, to_host(slots_[slot])).c_str());
  ProgramStep step;
  step.kind = ProgramStep::Kind::kPrint;
  step.in = {slot};
  step.label = label;
  step.where = why;
  program_.steps.push_back(std::move(step));
}

Program TraceContext::finish(const std::vector<Tensor>& outputs) {
  std::vector<NodeId> nodes;
  std::vector<int> pending;  // index into outputs of each node
  std::vector<int32_t> out_slots(outputs.size(), -1);
  for (size_t i = 0; i < outputs.size(); ++i) {
    TensorImpl* impl = outputs[i].impl();
    if (impl && impl->trace && impl->segment != segment_ && impl->slot >= 0) {
      node_for(outputs[i], "");  // validates
      out_slots[i] = impl->slot;
      continue;
    }
    nodes.push_back(
        node_for(outputs[i], "output " + std::to_string(i) + " of '" + options_.name + "'"));
    pending.push_back(static_cast<int>(i));
  }
  flush(nodes);
  for (size_t k = 0; k < pending.size(); ++k) out_slots[pending[k]] = extra_slots_[k];
  program_.outputs = out_slots;
  program_.num_slots = static_cast<int32_t>(slots_.size());
  if (!env_->unbacked_symbols().empty()) program_.num_symbols = env_->num_symbols();
  return std::move(program_);
}

}  // namespace kiln
