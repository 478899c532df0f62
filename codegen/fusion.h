/// \file fusion.h
/// The fusion pass: decides, from producer->consumer dependencies, which compute nodes are
/// materialized (kernel roots, written to memory) and which are folded into their consumers.
/// Every decision is one of the named legality rules below, each a separately tested predicate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/matmul_rates.h"
#include "graph/graph.h"

namespace kiln {

enum class FusionRule {
  kGraphOutput,      // a graph output is written to memory
  kReduceBoundary,   // a reduction is a kernel root (its prologue folds into its loads)
  kOwnKernel,        // matmul, softmax/layer_norm, conv/pools: a kernel root whose
                     // elementwise producers fold into its loads
  kMultiConsumer,    // elementwise node read by several consumers: computed once, stored
  kUnfused,          // fusion disabled: every compute op is its own kernel
  kInlinePointwise,  // elementwise/view node with one consumer folds into it
  kInlineView,       // views never copy: folded into index math of every consumer
  kInlineLiteral,    // `full` becomes a literal
  kMatmulEpilogue,   // a matmul whose only consumer chain is elementwise, of the matmul's shape,
                     // up to a stored root: computed by the matmul kernel, which applies the
                     // chain (bias, activation, residual, scaling) before its store
  kEpilogueRoot,     // the end of such a chain whose consumer is a view, a matmul, a norm or a
                     // reduction: stored by the matmul kernel, so that the consumer reads a
                     // stored tensor (a linear's bias before a head split, or its activation
                     // before the next linear) instead of recomputing it per load
  kAttention,        // softmax(chain(Q·Kᵀ))·V, the chain elementwise on the scores (scale,
                     // mask): one flash-style kernel with an online softmax; the scores and
                     // the probabilities are never stored
  kLayerNorm,        // a LayerNorm spelled out as ops (opset < 17 exporters): mean, centring,
                     // variance, (var + eps) and the division (or rsqrt product), then any
                     // elementwise chain (scale, shift) up to a stored root: one row-norm kernel
                     // computing exactly the graph's expressions per element
  kMatmulOperand,    // an operand (A, or B) of a matmul with a shared 2-D B, which the row-block
                     // kernel cannot read in place (a permuted view, or elementwise arithmetic
                     // folded into its loads): stored once by its own kernel when the cost
                     // estimate (codegen/matmul_choice.h) says so, instead of the product
                     // running on the tiled kernel batch by batch
  kMatmulLayout,     // permute(reshape(C, [N, H, W, C_out]), {0, 3, 1, 2}) of a row-block A·Bᵀ
                     // product C = [N·H·W, C_out] (a conv lowered to im2col + product): the
                     // product kernel stores the permuted NCHW tensor, C is never stored
  kWindowEpilogue,   // a depthwise_nhwc read only through the reshape to its [N·H·W, C] matrix,
                     // then an elementwise region on scalar operands (its activation): its
                     // kernel applies the region before its store, stored at the region's exit
};
const char* fusion_rule_name(FusionRule rule);

/// The nodes of one kLayerNorm pattern over the trailing `dims` dims of x:
/// mean = mean(x), centred = x - mean, square = centred² (pow(centred, p) or centred·centred),
/// var = mean(square), shifted = var + eps, normed = centred / sqrt(shifted) (or
/// centred · rsqrt(shifted)), then root = an elementwise chain of normed (normed itself if none).
struct LayerNormMatch {
  NodeId x = -1, mean = -1, centred = -1, square = -1, var = -1, shifted = -1, denom = -1,
         normed = -1, root = -1;
  int64_t dims = 0;
};

struct FusionDecision {
  std::vector<bool> materialize;     // per node; sources (input/constant) are always buffers
  std::vector<FusionRule> rule;      // why, per compute node
  std::vector<NodeId> epilogue_of;   // per stored root: the kMatmulEpilogue matmul (or
                                     // kWindowEpilogue depthwise_nhwc) it applies to
  std::vector<NodeId> attention_of;  // per stored root: the P·V matmul of the kAttention kernel
                                     // that writes it (the matmul itself, or the heads-merging
                                     // view permute(.., -2 <-> -3) + reshape of it)
  std::vector<NodeId> layout_of;     // per stored kMatmulLayout permute: the product it stores
                                     // (the matmul, or its epilogue root)
  std::vector<int> layer_norm_of;    // per stored root: index into layer_norms, or -1
  std::vector<LayerNormMatch> layer_norms;
  std::vector<std::string> note;  // per node: why a matmul got its kernel, with the cost
                                  // estimate (empty for other nodes)
};

/// The nodes of one kAttention pattern.
struct AttentionMatch {
  NodeId scores = -1;                 // Q·Kᵀ (a matmul)
  NodeId softmax = -1;                // softmax over the last axis of chain(scores)
  NodeId output = -1;                 // softmax·V (a matmul)
  NodeId permute = -1, reshape = -1;  // the heads-merging view stored instead, if any
};

/// Rule predicates (exposed for unit tests).
bool rule_inline_view(const Node& n);
bool rule_inline_literal(const Node& n);
bool rule_multi_consumer(const Node& n, int uses);
bool rule_own_kernel(const Node& n);
/// The matmul that `root`'s inline tree reaches through elementwise nodes of root's shape, if it
/// has no other use and the same shape (kMatmulEpilogue); -1 otherwise.
NodeId rule_matmul_epilogue(const Graph& graph, const FusionDecision& d, const Node& root,
                            const std::vector<int>& uses);

/// kMatmulLayout: for a permute `p` of a stored row-block A·Bᵀ product's NHWC view, the
/// product's stored node (the matmul or its epilogue root), else -1. `readers`: per node, the
/// nodes that read it directly.
NodeId rule_matmul_layout(const Graph& g, const FusionDecision& d, const Node& p,
                          const std::vector<bool>& is_output, const std::vector<int>& readers,
                          bool rowblock, const MatmulRates& rates);
/// The matmul of a kMatmulLayout product `x` (layout_of[p]): x itself or the matmul whose
/// epilogue ends at x.
inline NodeId layout_matmul(const FusionDecision& d, NodeId x) {
  return d.epilogue_of[x] >= 0 ? d.epilogue_of[x] : x;
}
/// The attention pattern ending in matmul `pv` (softmax(chain(Q·Kᵀ))·V, f32, the head dims
/// constant multiples of 8 up to 128, every intermediate used once and not stored), or nullopt.
/// `first`: per node, the first node reading it (a single-use node's only consumer).
std::optional<AttentionMatch> rule_attention(const Graph& graph, const FusionDecision& d,
                                             const Node& pv, const std::vector<int>& uses,
                                             const std::vector<NodeId>& first);

/// The kLayerNorm pattern whose variance is the reduction `var` (f32, the two means over the
/// same trailing dims with keepdim, every intermediate used only inside the pattern, eps and
/// the exponent single elements), or nullopt. Its root is the first stored node of the
/// elementwise single-use chain after `normed`, or the chain's end.
std::optional<LayerNormMatch> rule_layer_norm(const Graph& graph, const FusionDecision& d,
                                              const Node& var, const std::vector<int>& uses,
                                              const std::vector<NodeId>& first);

/// `attention`: whether the target runs the flash-attention kernel (subgroup shuffles);
/// `rowblock`: whether it runs the row-block matmul kernel (kMatmulOperand applies only then);
/// `rates`: the device's measured kernel speeds, if any (codegen/matmul_choice.h).
FusionDecision decide_fusion(const Graph& graph, bool fuse, bool attention = false,
                             bool rowblock = false, const MatmulRates& rates = {});
/// "%3 mul: inline_pointwise" lines; a matmul's line adds its kernel and the estimate.
std::string fusion_decision_to_string(const Graph& graph, const FusionDecision& d);

}  // namespace kiln
