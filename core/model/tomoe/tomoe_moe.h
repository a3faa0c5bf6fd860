// The converted ToMoE model as real, smaller weights (section 3.5, App. B.3), extracted from a ToMoE
// Transformer after convert_to_tomoe_moe():
//   attention: W_Q / W_K hold only the kept q/k RoPE pairs (each rotated with its own frequency; the
//              attention scale stays 1/sqrt(head_dim) as in the gated model); W_V, W_O whole, each token's
//              output limited to its top-K v/o dims chosen by the v/o router, whose Proj_E bias absorbs
//              the mean expert embedding (1/N 1^T E) and whose decoder keeps only its v/o rows;
//   MLP:       a bias-free router [N, d] and N experts holding only their kept channels, zero-padded to
//              the widest so they stack as [N, k_max, d] in the file; forward() cuts each expert to its
//              own width and dispatches the tokens to their expert.
// forward() uses only these tensors and equals the gated model in eval mode (tested to tolerance). The
// weights stay whole because other tokens read other dims: the v/o top-K masks each token's heads as the
// attention kernel stores them, and W_O multiplies only each token's kept dims (head_dim_masked_matmul)
// where the top-K keeps at most 5/8 of them.
// Inference on CPU in float32: the products run on weights packed once (kernels/fused/packed_matmul.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/model/model_options.h"
#include "core/model/param_count.h"
#include "core/model/rope.h"
#include "kernels/fused/packed_matmul.h"

namespace moxlab {

class Transformer;
struct KvCache;

class TomoeMoe {
 public:
  // Extracts from a converted ToMoE model (attention and FFN of kind tomoe, v/o top-K set).
  static TomoeMoe extract(Transformer& converted);
  // tokens [B, T] -> logits [B, T, vocab] ([B, 1, vocab]: the last position's only); with a cache the
  // tokens follow its positions (incremental decoding).
  torch::Tensor forward(const torch::Tensor& tokens, KvCache* cache = nullptr, bool last_logits_only = false) const;
  // One layer's attention and MLP on their normalised input h [B, T, d] (without the residual), for
  // per-layer benchmarks; forward() is the blocks of these.
  torch::Tensor attention(int layer, const torch::Tensor& h, KvCache* cache = nullptr) const;
  torch::Tensor feed_forward(int layer, const torch::Tensor& h) const;
  // Non-embedding parameters: total stored, active per token (widest expert, kept q/k, top-K v/o rows of W_V
  // and columns of W_O, routers).
  ParamCount param_count() const;

  // safetensors with the model options in the metadata ("moxlab.tomoe_moe.config"); atomic write.
  void save(const std::string& path) const;
  static TomoeMoe load(const std::string& path);
  // From tensors named as in the file (checked: a missing one is a one-line error naming it).
  static TomoeMoe from_tensors(const ModelOptions& o, std::map<std::string, torch::Tensor> tensors);

  const ModelOptions& options() const { return o_; }
  const std::map<std::string, torch::Tensor>& tensors() const { return t_; }

 private:
  // What forward() derives from the tensors once, packed for the kernel (kernels/fused/packed_matmul.h):
  // each layer's q/k rotation, its input projections stacked, W_O, the expert router and, per expert, its
  // gate and up rows cut to the expert's width (one SwiGLU product) and its down columns.
  void build_derived();
  const torch::Tensor& at(const std::string& name) const;
  ModelOptions o_;
  std::map<std::string, torch::Tensor> t_;  // every weight, by name (the file's layout)
  std::vector<Rope> qk_rope_;               // per layer: the kept pairs' rotation
  struct AttentionWeights {
    PackedWeight in;          // [W_Q; W_K; W_V; Proj_E]: one product
    torch::Tensor in_bias;    // [0; Proj_E's bias]
    PackedWeight out;         // W_O: its columns in (dim, head) order (pack_head_dim_major) where out_by_dim
    bool out_by_dim = false;  // W_O multiplies each token's kept v/o dims only (head_dim_masked_matmul)
    PackedWeight decode;      // the v/o router's decoder (its bias: attn.vo_dec.bias)
  };
  std::vector<AttentionWeights> attn_;  // per layer
  std::vector<PackedWeight> router_;    // per layer: the MLP's expert router
  PackedWeight head_;                   // the output head
  struct Expert {
    PackedWeight gate_up;  // SwiGLU packing of the kept gate and up rows
    PackedWeight down;     // [d, width]
    std::int64_t width = 0;
  };
  std::vector<std::vector<Expert>> experts_;  // per layer, per expert
};

}  // namespace moxlab
