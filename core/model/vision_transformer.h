// A small Vision Transformer (Dosovitskiy et al. 2021) built from the same blocks as the decoder, so
// every attention and FFN kind (MoH heads in particular, MoH Table 1) works on images unchanged:
// non-overlapping patch_size x patch_size patches → linear patch embedding + learned position embedding
// → pre-norm blocks with bidirectional attention (RoPE over the raster patch order is kept from the
// decoder blocks: a relative position signal on top of the absolute one) → RMSNorm → mean over patch
// tokens → linear classifier. Mean pooling instead of a class token, as MoH-ViT's TransNeXt backbone.
#pragma once
#include <torch/torch.h>

#include "core/model/block.h"
#include "core/model/model_options.h"
#include "core/model/param_count.h"

namespace moxlab {

struct ImageGeometry {
  int rows = 28, cols = 28, channels = 1;
  int classes = 10;
};

class VisionTransformer : public torch::nn::Module {
 public:
  // Throws Error when patch_size does not divide the image (model.patch_size).
  VisionTransformer(const ModelOptions& o, const ImageGeometry& g);

  // pixels: [B, rows, cols] (channels 1) or [B, channels, rows, cols], uint8 0..255 or already float in
  // [0, 1]; scaled to [-1, 1]. Returns logits [B, classes]. Taps and auxiliary losses go to an as in
  // the decoder (tap rows are patch tokens).
  torch::Tensor forward(const torch::Tensor& pixels, Analysis& an, const PassOptions& pass = {});
  // [B, patches, channels * patch_size^2]: patch p = (row-major patch index), pixels row-major inside.
  torch::Tensor patchify(const torch::Tensor& pixels) const;
  // forward's first step: the pixels as patch tokens [B, patches, dim] (embedding + position).
  torch::Tensor embed(const torch::Tensor& pixels);
  const Rope& rope() const { return rope_; }

  void init_weights(std::uint64_t seed);  // init_parameters() (core/model/transformer.h)
  const ModelOptions& options() const { return opts_; }
  const ImageGeometry& geometry() const { return geom_; }
  int patches() const { return (geom_.rows / opts_.patch_size) * (geom_.cols / opts_.patch_size); }

  torch::nn::Linear patch_embed{nullptr};
  torch::Tensor pos_embed;  // [patches, dim]
  torch::nn::ModuleList blocks{nullptr};
  RMSNorm norm{nullptr};
  torch::nn::Linear head{nullptr};

 private:
  ModelOptions opts_;
  ImageGeometry geom_;
  Rope rope_;
};

// Non-embedding parameters as for the decoder: the blocks and the final norm; the patch embedding, the
// position embedding and the classifier (the image analogues of token embedding and output head) excluded.
ParamCount count_parameters(const VisionTransformer& model);

}  // namespace moxlab
