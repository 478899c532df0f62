#include "codegen/lower.h"

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <string>

#include "codegen/emit.h"
#include "codegen/fusion.h"
#include "codegen/lower_internal.h"
#include "codegen/spirv.h"

namespace kiln {

SymInt groups_for(const SymInt& work, uint32_t local_size) {
  if (work.is_constant()) return SymInt((work.constant_value() + local_size - 1) / local_size);
  return sym_floordiv(work + SymInt(local_size - 1), SymInt(local_size));
}

std::array<uint32_t, 3> kernel_groups(const Kernel& k, std::span<const int64_t> values,
                                      const std::array<uint32_t, 3>& max_count) {
  std::array<uint32_t, 3> out{};
  for (size_t a = 0; a < 3; ++a) {
    const int64_t g =
        k.groups[a].is_constant() ? k.groups[a].constant_value() : k.groups[a].evaluate(values);
    out[a] = static_cast<uint32_t>(std::clamp<int64_t>(g, 0, max_count[a]));
  }
  return out;
}

int64_t kernel_loop_iterations(const Kernel& k, std::span<const int64_t> values,
                               const std::array<uint32_t, 3>& max_count) {
  const int64_t trips =
      k.loop_trips.is_constant() ? k.loop_trips.constant_value() : k.loop_trips.evaluate(values);
  const int64_t factor = k.helper_loop_factor;
  if (trips <= 0 && factor <= 1) return 0;
  int64_t repeats = 1;  // items of the grid-stride loops per workgroup, every axis together
  for (size_t a = 0; a < 3; ++a) {
    const int64_t g =
        k.groups[a].is_constant() ? k.groups[a].constant_value() : k.groups[a].evaluate(values);
    const int64_t cap = std::max<int64_t>(max_count[a], 1);
    repeats *= std::max<int64_t>((g + cap - 1) / cap, 1);
  }
  // Each item also runs the grid-stride loops' own iterations (up to three nested ones).
  return repeats * (std::max<int64_t>(trips, 1) * factor + 3);
}

uint32_t line_workgroup_size(int64_t len_hint, uint32_t base, uint32_t passes,
                             uint32_t bytes_per_invocation, const TargetCaps& caps) {
  constexpr int64_t kTripsPerInvocation = 8192;
  uint32_t size = std::min(base, caps.max_workgroup_invocations);
  while (size < 1024 && 2 * size <= caps.max_workgroup_invocations &&
         2ull * size * bytes_per_invocation <= caps.max_shared_memory &&
         static_cast<int64_t>(passes) * ((len_hint + size - 1) / size) > kTripsPerInvocation)
    size *= 2;
  return size;
}

uint32_t log2_u32(uint32_t v) {
  uint32_t l = 0;
  while ((1u << (l + 1)) <= v) ++l;
  return l;
}

Status check_loop_limit(const Kernel& k, const TargetCaps& caps) {
  if (caps.loop_limit == 0) return {};
  const std::array<uint32_t, 3> max_count = {caps.max_workgroup_count_x, 65535, 65535};
  const int64_t n = kernel_loop_iterations(k, {}, max_count);
  if (n <= caps.loop_limit) return {};
  return unimplemented(k.name + ": an invocation would run " + std::to_string(n) +
                       " loop iterations, past the driver's limit of " +
                       std::to_string(caps.loop_limit) +
                       " per invocation (Mesa's llvmpipe ends longer loops early, silently)");
}

Status check_size_slots(const Emitter& e, const Kernel& k) {
  if (e.size_slots().size() > kMaxSizeSlots)
    return unimplemented(k.name + ": " + std::to_string(e.size_slots().size()) +
                         " symbolic sizes exceed the " + std::to_string(kMaxSizeSlots) +
                         " size slots");
  if (!e.size_slots().empty() && e.sizes_binding() != static_cast<int>(k.bindings.size()))
    return internal_error(k.name + ": the sizes buffer was declared at binding " +
                          std::to_string(e.sizes_binding()) + ", not after the " +
                          std::to_string(k.bindings.size()) + " tensor bindings");
  return {};
}

std::string extensions(const Emitter& e, const TargetCaps& caps) {
  std::string s;
  if (caps.signed_zero_inf_nan_preserve) {
    // SPV_KHR_float_controls' SignedZeroInfNanPreserve (execution mode 4461, capability 4466)
    // for 32-bit floats, the only float type kernels compute in: without it the driver may
    // fold x - x, x * 0 or x + 0 to plain numbers, dropping NaN, inf and -0.0.
    s += "#extension GL_EXT_spirv_intrinsics : require\n";
    s += "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4466], "
         "4461, 32);\n";
  }
  if (e.needs_int64()) s += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  if (e.needs_16bit()) s += "#extension GL_EXT_shader_16bit_storage : require\n";
  if (e.needs_8bit()) s += "#extension GL_EXT_shader_8bit_storage : require\n";
  return s;
}

Status check_caps(const Emitter& e, const std::string& name, const TargetCaps& caps) {
  if (e.needs_int64() && !caps.shader_int64)
    return unimplemented(name + ": the device has no shaderInt64 (i64 tensors)");
  if (e.needs_16bit() && !caps.storage_buffer_16bit)
    return unimplemented(name + ": the device has no 16-bit storage (f16 tensors)");
  if (e.needs_8bit() && !caps.storage_buffer_8bit)
    return unimplemented(name + ": the device has no 8-bit storage (bool tensors)");
  return {};
}

Expected<Kernel> start_kernel(const Emitter& e, const Node& root, KernelVariant variant,
                              const TargetCaps& caps) {
  Kernel k;
  k.root = root.id;
  k.variant = variant;
  k.bindings = e.bindings();
  k.fused_nodes = e.fused_nodes();
  if (std::find(k.fused_nodes.begin(), k.fused_nodes.end(), root.id) == k.fused_nodes.end())
    k.fused_nodes.push_back(root.id);
  std::sort(k.fused_nodes.begin(), k.fused_nodes.end());
  // A node computed at several indices (the rows of a row block) is listed once.
  k.fused_nodes.erase(std::unique(k.fused_nodes.begin(), k.fused_nodes.end()), k.fused_nodes.end());
  k.name = op_name(root.op);
  k.helper_loop_factor = 1 + 64 * e.helper_loops();
  KILN_RETURN_IF_ERROR(check_caps(e, k.name, caps));
  return k;
}

Expected<std::string> kernel_source(const std::string& template_name, const Emitter& e,
                                    const std::string& body,
                                    std::map<std::string, std::string> macros, Kernel& k,
                                    const TargetCaps& caps) {
  KILN_RETURN_IF_ERROR(check_size_slots(e, k));
  k.size_slots = e.size_slots();
  k.texel_r32f_bindings = e.texel_r32f_bindings();
  return preprocess_glsl(
      template_name, macros,
      {{"kiln_extensions.glsl", extensions(e, caps)}, {"kiln_kernel.glsl", body}});
}

std::string element_accessor(Emitter& e, const Node& in, const std::string& name, DType to) {
  Index at = e.decompose("j", in.sym, "q", 0);
  const std::string v = glsl_convert(e.value(in.id, at), in.meta.dtype, to);
  std::string s = std::string(glsl_compute_type(to)) + " " + name + "(uint j) {\n" + e.take_body() +
                  "  return " + v + ";\n}\n\n";
  e.reset_scope();
  return s;
}

Expected<std::string> scatter_driver_source(const Emitter& e, const std::string& code,
                                            const std::string& outputs, Kernel& k,
                                            const TargetCaps& caps) {
  return kernel_source(
      "scatter.comp", e, e.declarations() + "\n" + code,
      {{"KILN_LOCAL_SIZE", std::to_string(k.local_size) + "u"}, {"KILN_OUTPUTS", outputs}}, k,
      caps);
}

namespace {

constexpr uint32_t kElementwiseLocalSize = 128;
constexpr int64_t kElementwiseRows = 8;         // rows per invocation in vec4 row blocks
constexpr uint32_t kWorkgroupReduceMinR = 128;  // below this, one invocation per output

/// Elementwise root: vec4 when every value is f32 and every load is contiguous or broadcast
/// along the innermost dim; otherwise scalar.
///
/// A vec4 kernel over two or more dims works in row blocks: invocation g computes vec4 column
/// `g % C4` (C4 = innermost size / 4) of up to kElementwiseRows consecutive rows, so every
/// value that depends on the innermost index alone (a broadcast row such as a bias, and what
/// is computed from it) is loaded and computed once per block (the emitter memoises values
/// per index), while the lanes of a subgroup still read consecutive vec4s of each row. The
/// last block's rows past the end are clamped to the last row (recomputed and stored again,
/// the same values), so no size needs to divide. Inputs read only as whole vec4s are bound as
/// rgba32f storage texel buffers where the device has them: on lavapipe an imageLoad costs a
/// fraction of a storage-buffer load (docs/perf.md).
Expected<Kernel> elementwise_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                    const CodegenOptions& opt, bool vec4) {
  const Node& n = g.node(root);
  Emitter e(g, fusion, vec4);
  if (vec4 && opt.caps.texel_rgba32f)
    e.set_texel_loads(opt.caps.max_texel_elements, opt.caps.texels_cover_storage);
  use_scalar_texels(e, opt.caps);
  e.set_root(root);
  e.bind_output(root);
  const SymShape outer(n.sym.begin(), n.sym.end() - (n.sym.empty() ? 0 : 1));
  const SymInt row_count = sym_numel(outer);
  int64_t rows = 1;  // rows per invocation; the hints choose it, clamping keeps it correct
  if (vec4 && n.sym.size() >= 2) {
    int64_t hint = 1;
    for (size_t d = 0; d + 1 < n.meta.shape.size(); ++d) hint *= n.meta.shape[d];
    rows = std::clamp<int64_t>(hint, 1, kElementwiseRows);
  }
  int64_t c4 = 0;
  if (rows > 1) {
    c4 = n.sym.back().constant_value() / 4;
    const std::string c4s = std::to_string(c4) + "u";
    e.add_statement("const uint col = g % " + c4s + ";");
    e.add_statement("const uint row = (g / " + c4s + ") * " + std::to_string(rows) + "u;");
    e.add_statement("const uint icol = col * 4u;");
    const bool exact = row_count.is_constant() && row_count.constant_value() % rows == 0;
    for (int64_t r = 0; r < rows; ++r) {
      const std::string row = "row" + std::to_string(r), q = "q" + std::to_string(r);
      std::string at = r == 0 ? "row" : "row + " + std::to_string(r) + "u";
      if (r > 0 && !exact) at = "min(" + at + ", (" + e.size(row_count) + ") - 1u)";
      e.add_statement("const uint " + row + " = " + at + ";");
      e.add_statement("const uint " + q + " = " + row + " * " + c4s + " + col;");
      Index index = e.decompose(row, outer, "i" + std::to_string(r) + "_", 0);
      index.push_back({"icol", 1});
      e.set_root_index(index, "(" + q + " * 4u)", q);
      const std::string v = e.value(root, index);
      e.add_statement("b0v.data[" + q + "] = " + v + ";");
    }
    e.store_output_vec4();
  } else {
    Index index = e.decompose(vec4 ? "(g * 4u)" : "g", n.sym, "i", vec4 ? 1 : 0);
    e.set_root_index(index, vec4 ? "(g * 4u)" : "g");
    std::string v = e.value(root, index);
    if (vec4) {
      e.add_statement("b0v.data[g] = " + v + ";");
      e.store_output_vec4();
    } else {
      e.add_statement(glsl_store("g", v, n.meta.dtype) + ";");
    }
  }
  if (e.failed()) return unimplemented("not vectorisable");
  KILN_ASSIGN_OR_RETURN(
      Kernel k,
      start_kernel(e, n, vec4 ? KernelVariant::kElementwiseVec4 : KernelVariant::kElementwise,
                   opt.caps));
  // vec4 only when the innermost size is a constant multiple of 4 (plan_kernels checks it).
  // Work items: row blocks x vec4 columns, vec4 groups, or elements.
  const SymInt numel = sym_numel(n.sym);
  const SymInt work = rows > 1 ? groups_for(row_count, static_cast<uint32_t>(rows)) * SymInt(c4)
                      : vec4   ? sym_floordiv(numel, SymInt(4))
                               : numel;
  k.local_size = std::min(kElementwiseLocalSize, opt.caps.max_workgroup_invocations);
  k.groups = {groups_for(work, k.local_size), 1, 1};
  k.texel_bindings = e.texel_bindings();
  const std::string total = e.size(work);
  std::string kernel_src =
      e.declarations() + "\nvoid kiln_element(uint g) {\n" + e.take_body() + "}\n";
  KILN_ASSIGN_OR_RETURN(
      k.glsl, kernel_source(
                  "elementwise.comp", e, kernel_src,
                  {{"KILN_LOCAL_SIZE", std::to_string(k.local_size) + "u"}, {"KILN_TOTAL", total}},
                  k, opt.caps));
  return k;
}

}  // namespace

uint32_t set_reduce_geometry(Kernel& k, bool workgroup, const SymInt& outputs,
                             const SymInt& r_count, int64_t r_hint, uint32_t acc_bytes,
                             const TargetCaps& caps) {
  uint32_t steps = 1;
  if (workgroup) {
    // One workgroup per output; long rows get more invocations (loop limit), and where the
    // device's workgroups cannot grow enough (128 invocations on many mobile GPUs), more
    // loads per iteration.
    k.local_size = line_workgroup_size(r_hint, 128, 1, acc_bytes, caps);
    constexpr int64_t kTripsPerInvocation = 8192;
    while (steps < 16 &&
           (r_hint + int64_t{k.local_size} * steps - 1) / (int64_t{k.local_size} * steps) >
               kTripsPerInvocation)
      steps *= 2;
    k.groups = {outputs, 1, 1};
    k.loop_trips = groups_for(r_count, k.local_size * steps) + SymInt(log2_u32(k.local_size) + 1);
  } else {
    k.local_size = std::min<uint32_t>(64, caps.max_workgroup_invocations);
    k.groups = {groups_for(outputs, k.local_size), 1, 1};
    k.loop_trips = r_count;
  }
  return steps;
}

namespace {

Expected<Kernel> reduce_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt) {
  const Node& n = g.node(root);
  const Node& src = g.node(n.inputs[0]);
  SymShape kept, reduced;
  std::vector<bool> is_reduced(src.sym.size(), false);
  for (int64_t a : n.attrs.dims) is_reduced[a] = true;
  int64_t r_hint = 1;  // the reduced extent at the hints: variant choice only
  for (size_t d = 0; d < src.sym.size(); ++d) {
    (is_reduced[d] ? reduced : kept).push_back(src.sym[d]);
    if (is_reduced[d]) r_hint *= src.meta.shape[d];
  }
  const SymInt outputs = sym_numel(kept), r_count = sym_numel(reduced);

  // Accumulator: float for floats, i64 for bool sums, the input's integer type otherwise.
  // argmax / argmin: a (value, index) pair of the input's compute type (bool as i32).
  const bool arg = n.op == OpKind::ArgMax || n.op == OpKind::ArgMin;
  DType acc = n.meta.dtype == DType::kF16 ? DType::kF32 : n.meta.dtype;
  if (arg)
    acc = src.meta.dtype == DType::kF16    ? DType::kF32
          : src.meta.dtype == DType::kBool ? DType::kI32
                                           : src.meta.dtype;
  std::string acc_t = glsl_compute_type(acc);
  std::string init, combine, arg_decl;
  if (arg) {
    const bool want_max = n.op == OpKind::ArgMax;
    const std::string value_t = acc_t;
    acc_t = "KilnArg";
    // The index 0xffffffff marks the initial pair: any element beats it. Otherwise a NaN
    // beats a number, the extreme value wins, and equal values (or two NaNs) go to the lower
    // index, so the first extreme wins whatever order the tree combines in (the interpreter's
    // rule: the first NaN, else the first extreme).
    std::string nan_a = "false", nan_b = "false";
    if (is_floating(acc)) nan_a = "isnan(a.v)", nan_b = "isnan(b.v)";
    const std::string better = glsl_binary(want_max ? ">" : "<", "a.v", "b.v", acc);
    arg_decl = "struct KilnArg {\n  " + value_t +
               " v;\n  uint i;\n};\n\nKilnArg kiln_arg_combine(KilnArg a, KilnArg b) {\n"
               "  if (a.i == 0xffffffffu) return b;\n  if (b.i == 0xffffffffu) return a;\n"
               "  const bool na = " +
               nan_a + ", nb = " + nan_b +
               ";\n  if (na != nb) return na ? a : b;\n"
               "  if (!na && (" +
               better + ")) return a;\n  if (!na && a.v != b.v) return b;\n" +
               "  return a.i < b.i ? a : b;\n}\n\n";
    init = "KilnArg(" + value_t + "(0), 0xffffffffu)";
    combine = "kiln_arg_combine(a, b)";
  } else if (n.op == OpKind::Max) {
    if (acc == DType::kBool)
      init = "false", combine = "((a) || (b))";
    else if (is_floating(acc))
      init = "(-KILN_INF)", combine = "kiln_maximum(a, b)";
    else if (acc == DType::kI32)
      init = "int(0x80000000)", combine = "kiln_max_i32(a, b)";
    else if (int64_pairs())
      init = glsl_int_literal(std::numeric_limits<int64_t>::min(), acc),
      combine = "kiln_max_i64(a, b)";
    else
      init = "(int64_t(1) << 63)",
      combine = "kiln_max_i64(a, b)";  // no 64-bit literal: macros precede #extension
  } else if (n.op == OpKind::Min) {
    if (acc == DType::kBool)
      init = "true", combine = "((a) && (b))";
    else if (is_floating(acc))
      init = "KILN_INF", combine = "kiln_minimum(a, b)";
    else if (acc == DType::kI32)
      init = "int(0x7fffffff)", combine = "kiln_min_i32(a, b)";
    else if (int64_pairs())
      init = glsl_int_literal(std::numeric_limits<int64_t>::max(), acc),
      combine = "kiln_min_i64(a, b)";
    else
      init = "(~(int64_t(1) << 63))", combine = "kiln_min_i64(a, b)";
  } else if (n.op == OpKind::Prod) {
    // (Native int64 takes no 64-bit literal here: the macros precede #extension.)
    init = acc == DType::kI64 && int64_pairs() ? glsl_int_literal(1, acc) : acc_t + "(1)";
    combine = glsl_binary("*", "(a)", "(b)", acc);
  } else {
    init = acc_t + "(0)", combine = glsl_binary("+", "(a)", "(b)", acc);
  }

  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(root);
  e.bind_output(root);
  // kiln_load(o, r): the prologue, at input index assembled from kept (o) and reduced (r) dims.
  Index ko = e.decompose("o", kept, "o", 0);
  Index kr = e.decompose("r", reduced, "r", 0);
  Index in(src.sym.size());
  for (size_t d = 0, a = 0, b = 0; d < in.size(); ++d) in[d] = is_reduced[d] ? kr[b++] : ko[a++];
  std::string loaded = glsl_convert(e.value(n.inputs[0], in), src.meta.dtype, acc);
  if (arg) loaded = "KilnArg(" + loaded + ", r)";
  std::string load_body = e.take_body();
  e.reset_scope();
  std::string result = arg ? glsl_from_uint("acc.i", DType::kI64) : "acc";
  if (n.op == OpKind::Mean)
    result = "(acc / float(" +
             (r_count.is_constant() ? std::to_string(r_count.constant_value()) : e.size(r_count)) +
             "))";
  const std::string store = glsl_store("o", result, n.meta.dtype);
  const std::string outputs_glsl = e.size(outputs), r_glsl = e.size(r_count);
  std::string kernel_src = e.declarations() + "\n" + arg_decl + acc_t +
                           " kiln_load(uint o, uint r) {\n" + load_body + "  return " + loaded +
                           ";\n}\n\nvoid kiln_store(uint o, " + acc_t + " acc) {\n  " + store +
                           ";\n}\n";

  bool workgroup = r_hint >= kWorkgroupReduceMinR;
  KILN_ASSIGN_OR_RETURN(
      Kernel k,
      start_kernel(e, n, workgroup ? KernelVariant::kReduceWorkgroup : KernelVariant::kReduceThread,
                   opt.caps));
  const uint32_t steps =
      set_reduce_geometry(k, workgroup, outputs, r_count, r_hint, arg ? 16 : 8, opt.caps);
  std::string more_steps;
  for (uint32_t u = 1; u < steps; ++u) {
    const std::string ru = "(r + " + std::to_string(u) + "u * KILN_LOCAL_SIZE)";
    more_steps += "if (" + ru + " < KILN_R) acc = KILN_COMBINE(acc, kiln_load(o, " + ru + ")); ";
  }
  KILN_ASSIGN_OR_RETURN(k.glsl,
                        kernel_source("reduce.comp", e, kernel_src,
                                      {{"KILN_LOCAL_SIZE", std::to_string(k.local_size) + "u"},
                                       {"KILN_OUTPUTS", outputs_glsl},
                                       {"KILN_R", r_glsl},
                                       {"ACC_T", acc_t},
                                       {"KILN_INIT", init},
                                       {"KILN_COMBINE(a, b)", combine},
                                       {"KILN_WORKGROUP_REDUCE", workgroup ? "1" : "0"},
                                       {"KILN_STEPS", std::to_string(steps) + "u"},
                                       {"KILN_MORE_STEPS", more_steps}},
                                      k, opt.caps));
  return k;
}

}  // namespace

TargetCaps TargetCaps::generic() {
  TargetCaps c;
  c.subgroup_size = 32;
  c.max_workgroup_invocations = 1024;
  c.max_workgroup_count_x = 65535;
  c.max_shared_memory = 32768;
  c.shader_int64 = c.storage_buffer_16bit = c.storage_buffer_8bit = true;
  c.signed_zero_inf_nan_preserve = true;
  c.device_key = "generic";
  return c;
}

const char* kernel_variant_name(KernelVariant v) {
  switch (v) {
    case KernelVariant::kElementwise:
      return "elementwise";
    case KernelVariant::kElementwiseVec4:
      return "elementwise_vec4";
    case KernelVariant::kReduceThread:
      return "reduce_thread";
    case KernelVariant::kReduceWorkgroup:
      return "reduce_workgroup";
    case KernelVariant::kRowNorm:
      return "row_norm";
    case KernelVariant::kMatmulTiled:
      return "matmul_tiled";
    case KernelVariant::kMatmulRowBlock:
      return "matmul_rowblock";
    case KernelVariant::kAttention:
      return "attention";
    case KernelVariant::kWindow:
      return "window";
    case KernelVariant::kConvGemm:
      return "conv_gemm";
    case KernelVariant::kResample:
      return "resample";
    case KernelVariant::kScatter:
      return "scatter";
    case KernelVariant::kFft:
      return "fft";
    case KernelVariant::kComplexPart:
      return "complex_part";
    case KernelVariant::kCompaction:
      return "compaction";
    case KernelVariant::kScan:
      return "scan";
    case KernelVariant::kIm2col:
      return "im2col";
  }
  return "?";
}

Expected<KernelPlan> plan_kernels(const Graph& graph, const CodegenOptions& options) {
  // Kernels index in uint32. Symbolic sizes are checked per call by the executable.
  const bool symbolic = graph.is_symbolic();
  for (const Node& n : graph.nodes())
    if (!symbolic && n.meta.numel() > kMaxKernelElements)
      return unimplemented("node %" + std::to_string(n.id) + " (" + n.meta.str() +
                           "): tensors over 2^32 elements need 64-bit indexing");
  // Without shaderInt64, int64 values are pairs of 32-bit words; without 8-bit storage, bools
  // are bytes of words (codegen/emit.h).
  const StorageModeScope modes(!options.caps.shader_int64, !options.caps.storage_buffer_8bit,
                               !options.caps.storage_buffer_16bit);
  FusionDecision fusion = decide_fusion(graph, options.fuse, attention_supported(options.caps),
                                        rowblock_supported(options.caps), options.caps.matmul);
  KernelPlan plan;
  plan.fusion_log = fusion_decision_to_string(graph, fusion);
  plan.graph_key = graph_cache_key(graph, options);
  for (const Node& n : graph.nodes()) {
    if (!fusion.materialize[n.id] || n.op == OpKind::Input || n.op == OpKind::Constant) continue;
    plan.materialized.push_back(n.id);
    Expected<Kernel> k = unimplemented("");
    switch (n.op) {  // the ops whose rows name their kernel builder and variant
#define KILN_OP(e, name, cat, arity, attrs)
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem)               \
  case OpKind::e:                                                               \
    k = stem##_kernel(graph, fusion, n.id, options, KernelVariant::k##variant); \
    break;
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_OP
      default:
        break;
    }
    if (is_kernel_op(n.op)) {
      // built above
    } else if (fusion.attention_of[n.id] >= 0) {
      k = attention_kernel(graph, fusion, n.id, options);
    } else if (fusion.layer_norm_of[n.id] >= 0) {
      k = layer_norm_pattern_kernel(graph, fusion, n.id, options);
    } else if (is_reduce(n.op)) {
      k = reduce_kernel(graph, fusion, n.id, options);
    } else if (n.op == OpKind::CumSum) {
      k = cumsum_kernel(graph, fusion, n.id, options);
    } else if (op_category(n.op) == OpCategory::kNormalization) {
      k = norm_kernel(graph, fusion, n.id, options);
    } else if (n.op == OpKind::Resize || n.op == OpKind::GridSample) {
      k = resample_kernel(graph, fusion, n.id, options);
    } else if (op_category(n.op) == OpCategory::kScatter) {
      k = scatter_kernel(graph, fusion, n.id, options);
    } else if (op_category(n.op) == OpCategory::kSpectral) {
      k = spectral_kernel(graph, fusion, n.id, options);
    } else if (op_category(n.op) == OpCategory::kCompaction) {
      k = select_kernel(graph, fusion, n.id, options);
    } else if (op_category(n.op) == OpCategory::kWindow) {
      k = window_kernel(graph, fusion, n.id, options);
    } else if (op_category(n.op) == OpCategory::kContraction) {
      k = matmul_kernel(graph, fusion, n.id, options);
    } else if (const NodeId x = fusion.layout_of[n.id]; x >= 0) {  // kMatmulLayout
      const NodeId mm = layout_matmul(fusion, x);
      k = matmul_rowblock_kernel(graph, fusion, mm, options, mm == x ? NodeId{-1} : x, n.id);
    } else if (const NodeId ep = fusion.epilogue_of[n.id];
               ep >= 0 && graph.node(ep).op == OpKind::DepthwiseNhwc) {  // kWindowEpilogue
      k = depthwise_nhwc_epilogue_kernel(graph, fusion, ep, options, KernelVariant::kScatter, n.id);
    } else if (fusion.epilogue_of[n.id] >= 0) {
      k = matmul_kernel(graph, fusion, fusion.epilogue_of[n.id], options, n.id);
    } else {
      // vec4 needs an innermost size that is a multiple of 4 for every size of the class.
      bool vec_ok = options.vectorize && n.meta.dtype == DType::kF32 && !n.sym.empty() &&
                    n.sym.back().is_constant() && n.sym.back().constant_value() % 4 == 0 &&
                    n.meta.numel() > 0;
      if (vec_ok) k = elementwise_kernel(graph, fusion, n.id, options, true);
      if (!k.ok()) k = elementwise_kernel(graph, fusion, n.id, options, false);
    }
    if (!k.ok()) return k.status().with_context("kernel for %" + std::to_string(n.id));
    if (!symbolic) KILN_RETURN_IF_ERROR(check_loop_limit(*k, options.caps));
    k->name = "k" + std::to_string(plan.kernels.size()) + "_" + k->name;
    if (is_const(sym_numel(n.sym), 0)) k->groups = {0, 0, 0};
    plan.kernels.push_back(std::move(k).value());
  }
  return plan;
}

}  // namespace kiln
