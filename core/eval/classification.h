// Image classification metrics of a ViT on a labelled image set, in eval mode without gradients:
//   top-1 accuracy = fraction of images whose highest logit is the label (ties: the lowest class index);
//   loss = mean cross-entropy (nats) of the label; per class the same counts (for Table 1 per-class reading).
#pragma once
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "core/data/corpora/idx_images.h"
#include "core/model/vision_transformer.h"

namespace moxlab {

struct ClassificationResult {
  std::int64_t images = 0, correct = 0;
  double nll_sum = 0.0;
  std::vector<std::int64_t> class_images, class_correct;  // [classes]
  double accuracy() const { return images ? static_cast<double>(correct) / images : 0.0; }
  double loss() const { return images ? nll_sum / images : 0.0; }
};

// pixels: [N, rows, cols] uint8, labels: [N] int64 (both CPU); batches of batch_size.
ClassificationResult evaluate_classifier(VisionTransformer& model, const torch::Tensor& pixels,
                                         const torch::Tensor& labels, int batch_size);

// The images [first, first + count) of a set as tensors: pixels [count, rows, cols] uint8, labels [count] int64.
std::pair<torch::Tensor, torch::Tensor> image_tensors(const ImageSet& set, std::int64_t first, std::int64_t count);

}  // namespace moxlab
