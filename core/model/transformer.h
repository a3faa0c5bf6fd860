// The LLaMA-style decoder every method builds on: token embedding → blocks → RMSNorm → output head
// (tied to the embedding or separate). Attention and FFN kinds come from ModelOptions, so MoHD, MoH and
// ToMoE variants are the same model with other modules in the blocks.
#pragma once
#include <torch/torch.h>

#include "core/model/block.h"
#include "core/model/model_options.h"
#include "core/model/param_count.h"
#include "core/model/tomoe/expert_hypernetwork.h"
#include "core/model/tomoe/tomoe_trace.h"

namespace moxlab {

class Transformer : public torch::nn::Module {
 public:
  explicit Transformer(const ModelOptions& o);

  // tokens: [B, T] int64 → logits [B, T, vocab]; `an` collects taps, auxiliary losses and ToMoE's trace.
  torch::Tensor forward(const torch::Tensor& tokens, Analysis& an, const PassOptions& pass = {});
  torch::Tensor forward(const torch::Tensor& tokens);

  // The parts of forward around the blocks, for an execution plan that runs the blocks its own way
  // (core/engine/inference_plan.h). Before them, one LayerIO per block: ToMoE's expert embeddings of this
  // pass, E = hypernet() (Eq. 1), one layer's each. After them, ToMoE's layers' decisions into an.tomoe
  // and Eq. 10's regularisers into an.aux_losses. Other models: empty LayerIOs, nothing after.
  std::vector<LayerIO> begin_layers(const PassOptions& pass);
  void end_layers(std::vector<LayerIO>& layers, Analysis& an);

  // Mean next-token cross-entropy of targets [B, T] (entries < 0 ignored).
  static torch::Tensor lm_loss(const torch::Tensor& logits, const torch::Tensor& targets);

  // init_parameters() of this model.
  void init_weights(std::uint64_t seed);

  const ModelOptions& options() const { return opts_; }
  const Rope& rope() const { return rope_; }
  // Output head weight: the embedding when tied.
  torch::Tensor output_weight() const;

  torch::nn::Embedding tok_embeddings{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  RMSNorm norm{nullptr};
  torch::nn::Linear output{nullptr};  // null when tied
  ExpertHypernetwork hypernet{nullptr};  // ToMoE models only: every layer's expert embeddings (Eq. 1)


 private:
  ModelOptions opts_;
  Rope rope_;
};

// The initialisation every model here shares, by parameter name: Normal(0, init_std) weights; output
// projections of each residual branch (wo, w2) scaled by 1/sqrt(2 * n_layers) as in GPT-2, so the
// residual stream's variance does not grow with depth; norms 1, biases 0; the modules each kind names
// (model_kind.h: MoHD fusion blocks, MoH routers, ToMoE's routing modules) like PyTorch's default layers,
// as in the official code. Seeds torch's generator first.
void init_parameters(torch::nn::Module& model, const ModelOptions& o, std::uint64_t seed);

}  // namespace moxlab
