#include "core/model/vision_transformer.h"

#include "core/common/error.h"
#include "core/model/transformer.h"

namespace moxlab {

namespace {
ModelOptions bidirectional(ModelOptions o) {
  o.causal = false;
  return o;
}
}  // namespace

VisionTransformer::VisionTransformer(const ModelOptions& o, const ImageGeometry& g)
    : opts_(bidirectional(o)), geom_(g) {
  require(o.patch_size >= 1 && g.rows % o.patch_size == 0 && g.cols % o.patch_size == 0,
          "model.patch_size (" + std::to_string(o.patch_size) + ") must divide the image size (" +
              std::to_string(g.rows) + "x" + std::to_string(g.cols) + ")");
  require(g.classes >= 2, "an image classifier needs at least 2 classes");
  rope_ = Rope(opts_.head_dim(), patches(), opts_.rope_theta);
  const int patch_pixels = g.channels * o.patch_size * o.patch_size;
  patch_embed = register_module("patch_embed", torch::nn::Linear(patch_pixels, opts_.dim));
  pos_embed = register_parameter("pos_embed", torch::zeros({patches(), opts_.dim}));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int l = 0; l < opts_.n_layers; ++l) blocks->push_back(Block(opts_, l));
  norm = register_module("norm", RMSNorm(opts_.dim, opts_.norm_eps));
  head = register_module("head", torch::nn::Linear(opts_.dim, g.classes));
}

torch::Tensor VisionTransformer::patchify(const torch::Tensor& pixels) const {
  const auto B = pixels.size(0);
  const int p = opts_.patch_size, C = geom_.channels;
  auto x = pixels.reshape({B, C, geom_.rows / p, p, geom_.cols / p, p});  // [B, C, Py, p, Px, p]
  return x.permute({0, 2, 4, 1, 3, 5}).reshape({B, patches(), C * p * p});
}

torch::Tensor VisionTransformer::embed(const torch::Tensor& pixels) {
  auto x = pixels.to(patch_embed->weight.device());
  x = x.is_floating_point() ? x.to(torch::kFloat32) : x.to(torch::kFloat32) / 255.0;
  return patch_embed(patchify(x * 2.0 - 1.0)) + pos_embed;  // [B, P, dim]
}

torch::Tensor VisionTransformer::forward(const torch::Tensor& pixels, Analysis& an, const PassOptions& pass) {
  const OpFormsScope ops(pass.ops);
  const auto* forms = pass.forms;
  auto x = embed(pixels);
  for (std::size_t l = 0; l < blocks->size(); ++l) {
    LayerIO io;
    x = blocks->ptr<BlockImpl>(l)->forward(x, rope_, an, io, forms && l < forms->size() ? &(*forms)[l] : nullptr);
  }
  return linear(head, norm(x).mean(1));
}

void VisionTransformer::init_weights(std::uint64_t seed) { init_parameters(*this, opts_, seed); }

ParamCount count_parameters(const VisionTransformer& model) {
  ParamCount c;
  for (std::size_t l = 0; l < model.blocks->size(); ++l) c += model.blocks->ptr<BlockImpl>(l)->param_count();
  c.total += model.norm->weight.numel();
  c.active += model.norm->weight.numel();
  return c;
}

}  // namespace moxlab
