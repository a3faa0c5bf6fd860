// Options of the LLaMA-style decoder (plain struct, torch-free; bound to TOML keys "model.*" in
// core/config/config.cpp). Defaults describe the dense tiny preset.
#pragma once
#include <string>

#include "core/model/moh/moh_options.h"
#include "core/model/mohd/mohd_options.h"
#include "core/model/tomoe/tomoe_options.h"

namespace moxlab {

struct ModelOptions {
  int vocab_size = 0;        // 0: taken from the tokenizer
  int dim = 256;             // model (hidden) dimension d
  int n_layers = 4;
  int n_heads = 8;
  int n_kv_heads = 4;        // grouped-query attention: n_heads must be a multiple of n_kv_heads
  int ffn_hidden = 0;        // 0: LLaMA rule, multiple_of * ceil((8/3 * dim) / multiple_of)
  int multiple_of = 32;
  int max_seq_len = 256;
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;
  bool tie_embeddings = true;
  bool qkv_bias = false;     // Qwen2-style bias on the Q, K and V projections
  double init_std = 0.02;
  // A control for branch scale (issue 32): at initialisation MoHD and MoH start their attention branch
  // at ~0.10x / ~0.14x of a dense branch, which alone changes early training. Each block's attention and
  // FFN outputs are multiplied by a scalar before the residual add: "none"; "fixed" at attn_branch_scale
  // / ffn_branch_scale; "learned": one trained scalar per block and branch, starting there (LayerScale
  // with a scalar; no weight decay, as for every 1-D parameter).
  std::string branch_scale = "none";
  double attn_branch_scale = 1.0;
  double ffn_branch_scale = 1.0;
  std::string attention = "dense";  // pluggable attention kind: dense | mohd | moh | tomoe
  std::string ffn = "dense";        // pluggable FFN kind: dense | mohd | tomoe
  MohdOptions mohd_attn;            // used when attention = "mohd" (keys mohd.attn.*)
  MohdOptions mohd_ffn;             // used when ffn = "mohd" (keys mohd.ffn.*)
  MohOptions moh;                   // used when attention = "moh" (keys moh.*)
  TomoeOptions tomoe;               // used when attention or ffn = "tomoe" (keys tomoe.*)

  // Not a TOML key: the ViT (core/model/vision_transformer.h) clears it so its patch tokens attend to
  // each other in both directions; decoders are causal.
  bool causal = true;
  int patch_size = 4;         // model.patch_size: ViT patches are patch_size x patch_size pixels

  int head_dim_override = 0;  // model.head_dim; 0: dim / n_heads. MoHD expansion widens dim at a fixed
                              // attention width n_heads * head_dim (constant activated parameters).
  int head_dim() const { return head_dim_override > 0 ? head_dim_override : dim / n_heads; }
  bool is_tomoe() const { return attention == "tomoe" || ffn == "tomoe"; }
  int resolved_ffn_hidden() const {
    if (ffn_hidden > 0) return ffn_hidden;
    int h = (8 * dim) / 3;
    return multiple_of * ((h + multiple_of - 1) / multiple_of);
  }
};

}  // namespace moxlab
