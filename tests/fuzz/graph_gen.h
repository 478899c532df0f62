/// \file graph_gen.h
/// Random well-typed tensor programs for the differential fuzzer
/// (tests/fuzz/differential_test.cpp).
///
/// A Program is a straight-line list of Steps over the public Tensor API (elementwise ops with
/// broadcasting, compares and where, casts, reductions, matmul / linear, softmax / layer_norm,
/// views, slices, concat, index ops, creation ops, graph breaks). Every dim is `c + k * n`, with
/// `n` the program's size variable, so one program can be called at several sizes: the
/// shape-dependent arguments (reshape targets, expand shapes, full / arange sizes) are computed
/// from the tensors' SymSizes at run time, as user code written for dynamic shapes does.
///
/// generate(seed, index) is a pure function of its arguments: a mismatch reproduces from the two
/// numbers. Leaf data (inputs per call, captured constants once) is drawn from the same seeds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/op.h"
#include "kiln/kiln.h"

namespace kiln::fuzz {

/// A small deterministic PRNG (splitmix64): reproducible on every platform and library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform in [lo, hi] (inclusive).
  int64_t range(int64_t lo, int64_t hi);
  /// Uniform in [0, 1).
  double unit();
  bool chance(double p) { return unit() < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  uint64_t state_;
};

uint64_t mix_seed(uint64_t a, uint64_t b);

/// One dim: c + k * n.
struct GDim {
  int64_t c = 0;
  int64_t k = 0;
  int64_t at(int64_t n) const { return c + k * n; }
  bool var() const { return k != 0; }
  bool operator==(const GDim&) const = default;
};
using GShape = std::vector<GDim>;
Shape shape_at(const GShape& s, int64_t n);
std::string gshape_str(const GShape& s);

/// How a leaf's values are drawn.
enum class Fill : uint8_t {
  kNormal,    // floats in [-4, 4] with some exact zeros; ints in [-20, 20]; bools 50/50
  kSpecial,   // floats with NaN, +-inf, -0.0, 0, large and tiny values mixed in
  kPositive,  // floats in [0.25, 4]
  kLargeInt,  // ints near the dtype's limits, around 2^31 and 2^53 (i64), and past 2^53 (i64)
  kIndex,     // ints in [0, bound)
};

struct Leaf {
  DType dtype = DType::kF32;
  GShape shape;
  Fill fill = Fill::kNormal;
  GDim bound;             // kIndex: values in [0, bound(n))
  bool captured = false;  // a tensor the function closes over (a graph constant), else an input
};

enum class StepKind : uint8_t {
  kLeaf,           // leaves[ints[0]]: an input or a captured constant
  kUnary,          // op(a)
  kBinary,         // op(a, b), broadcasting
  kBinaryScalar,   // op(a, Number) or op(Number, a) (flag: scalar on the left)
  kCompare,        // op(a, b)
  kCompareScalar,  // op(a, Number)
  kWhere,          // where(a: bool, b, c)
  kMaskedFill,     // masked_fill(a, b: bool, scalar)
  kCast,           // cast(a, dtype)
  kReduce,         // op(a, ints = axes, flag = keepdim)
  kArgReduce,      // argmax / argmin(a, ints[0], flag = keepdim)
  kMatMul,         // matmul(a, b, flag = trans_a, flag2 = trans_b)
  kSoftmax,        // softmax(a, ints[0]); flag: log_softmax
  kLayerNorm,      // layer_norm(a, b, c, ints[0] = normalized dims, scalar = eps)
  kMerge,          // reshape merging dims ints[0] and ints[0] + 1 (from a's SymSizes)
  kSplit,          // reshape splitting dim ints[0] into (ints[1], size / ints[1])
  kFlatten,        // reshape(a, {-1})
  kPermute,        // permute(a, ints)
  kUnsqueeze,      // unsqueeze(a, ints[0])
  kSqueeze,        // squeeze(a, ints[0])
  kExpand,         // expand(a, sizes): ints = (value, dim) pairs, value -1: the constant dim
  kSlice,          // slice(a, ints[0] axis, ints[1] start, ints[2] end, ints[3] step)
  kConcat,         // concat(args, ints[0])
  kGather,         // gather(a, ints[0], b)
  kIndexSelect,    // index_select(a, ints[0], b)
  kEmbedding,      // embedding(a: [V, D], b)
  kTriangle,       // triu (flag) / tril(a, ints[0])
  kFull,           // full(sizes, scalar, dtype): ints = (value, dim) pairs as kExpand
  kArange,         // arange(a.size(ints[0]), dtype)
  kItemScale,      // a * Number(sum(b).item()): a graph break inside compile
  kHostCall,       // call_host("twice_plus_one", ...)(a): a graph break inside compile
};

struct Step {
  StepKind kind = StepKind::kUnary;
  OpKind op = OpKind::Neg;
  std::vector<int> args;
  std::vector<int64_t> ints;
  double scalar = 0;
  DType dtype = DType::kF32;
  bool flag = false;
  bool flag2 = false;
  DType out_dtype = DType::kF32;  // the result's meta, for printing
  GShape out_shape;
};

/// Where the generated programs may go.
struct GenOptions {
  /// Also generate what known, separately tracked defects break (see known_defects() in
  /// graph_gen.cpp): off for the default slice.
  bool known_defects = false;
  /// argmax / argmin. Off by default: the default slice's programs were fixed before these had
  /// a Vulkan kernel.
  bool interpreter_only_ops = false;
};

struct Program {
  uint64_t seed = 0;
  uint64_t index = 0;
  std::vector<Leaf> leaves;
  std::vector<Step> steps;  // value i is steps[i]'s result (kLeaf steps name the leaves)
  std::vector<int> outputs;
  std::vector<bool> output_lowp;  // per output: computed from f16 values (f16 tolerance)
  Dynamic dynamic = Dynamic::kFalse;
  std::vector<int64_t> sizes;  // n for each call; sizes[0] is the traced one
  bool has_break = false;
  /// The op sequence, one value per line ("v5 = add(v2, v4) : f32[3, n]").
  std::string str() const;
};

Program generate(uint64_t seed, uint64_t index, const GenOptions& options = {});

/// The leaf values of `leaf` at size n (call `call` of the program: inputs get fresh data per
/// call, captured constants the same data every call), as a CPU tensor.
Tensor make_leaf(const Program& p, size_t leaf, int64_t n, int call);

/// Runs the program on the given leaves (inputs and captured constants, in leaf order).
/// `device` is where creation ops (full, arange) put their tensors outside a trace.
/// `values`, if given, receives every value (for the magnitude scale of the tolerances).
std::vector<Tensor> run_program(const Program& p, const std::vector<Tensor>& leaves, Device device,
                                std::vector<Tensor>* values = nullptr);

}  // namespace kiln::fuzz
