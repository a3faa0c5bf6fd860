#include "core/eval/classification.h"

#include "core/common/error.h"
#include "core/engine/vit_plan.h"

namespace moxlab {

std::pair<torch::Tensor, torch::Tensor> image_tensors(const ImageSet& set, std::int64_t first, std::int64_t count) {
  require(first >= 0 && count >= 0 && first + count <= set.count, "image range [" + std::to_string(first) + ", " +
                                                                      std::to_string(first + count) + ") outside a set of " +
                                                                      std::to_string(set.count));
  const std::int64_t pixels = static_cast<std::int64_t>(set.rows) * set.cols;
  auto images = torch::from_blob(const_cast<std::uint8_t*>(set.pixels.data()) + first * pixels,
                                 {count, set.rows, set.cols}, torch::kUInt8).clone();
  auto labels = torch::from_blob(const_cast<std::uint8_t*>(set.labels.data()) + first, {count}, torch::kUInt8)
                    .to(torch::kLong);
  return {images, labels};
}

ClassificationResult evaluate_classifier(VisionTransformer& model, const torch::Tensor& pixels,
                                         const torch::Tensor& labels, int batch_size) {
  require(pixels.size(0) == labels.size(0), "image and label counts differ");
  require(batch_size >= 1, "classification batch size must be positive");
  const int classes = model.geometry().classes;
  ClassificationResult r;
  r.class_images.assign(classes, 0);
  r.class_correct.assign(classes, 0);
  torch::NoGradGuard ng;
  model.eval();
  VitPlan plan(model);
  for (std::int64_t s = 0; s < pixels.size(0); s += batch_size) {
    const std::int64_t n = std::min<std::int64_t>(batch_size, pixels.size(0) - s);
    auto logits = plan.forward(pixels.narrow(0, s, n)).to(torch::kCPU).to(torch::kFloat32);
    auto y = labels.narrow(0, s, n);
    r.nll_sum += torch::nn::functional::cross_entropy(
                     logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                     .item<double>();
    auto hit = (logits.argmax(1) == y).to(torch::kLong);
    auto yc = y.contiguous();
    auto hc = hit.contiguous();
    const auto* yp = yc.data_ptr<std::int64_t>();
    const auto* hp = hc.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < n; ++i) {
      require(yp[i] >= 0 && yp[i] < classes, "label " + std::to_string(yp[i]) + " outside the model's classes");
      ++r.class_images[yp[i]];
      r.class_correct[yp[i]] += hp[i];
      r.correct += hp[i];
    }
    r.images += n;
  }
  return r;
}

}  // namespace moxlab
