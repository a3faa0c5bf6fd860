#include "core/train/image_objective.h"

#include "core/common/error.h"
#include "core/engine/training_forms.h"
#include "core/eval/classification.h"

namespace moxlab {

namespace {
std::int64_t train_count(const Config& cfg, const ImageSet& split) {
  const std::int64_t n = split.count - cfg.data.image_val;
  require(n > 0, "data.image_val (" + std::to_string(cfg.data.image_val) + ") leaves no training images of " +
                     std::to_string(split.count));
  return n;
}
}  // namespace

ImageObjective::ImageObjective(const Config& cfg, std::shared_ptr<VisionTransformer> model, const ImageSet& train_split)
    : model_(std::move(model)),
      batch_size_(cfg.train.batch_size),
      sampler_({train_count(cfg, train_split)}, 1, static_cast<std::uint64_t>(cfg.train.seed)) {
  const std::int64_t n = train_count(cfg, train_split);
  std::tie(train_x_, train_y_) = image_tensors(train_split, 0, n);
  std::tie(val_x_, val_y_) = image_tensors(train_split, n, cfg.data.image_val);
  forms_ = training_forms(model_->blocks, model_->options(), form_from_name(cfg.execution.form));
}

torch::Tensor ImageObjective::micro_loss(std::int64_t step, int micro, Analysis& an) {
  std::vector<std::int64_t> idx;
  for (const auto& w : sampler_.windows(step, micro, batch_size_, first_row_)) idx.push_back(w.start);
  auto sel = torch::tensor(idx, torch::kLong);
  auto logits = model_->forward(train_x_.index_select(0, sel), an, forms_.pass());
  return torch::nn::functional::cross_entropy(logits, train_y_.index_select(0, sel).to(logits.device()));
}

Metrics ImageObjective::validate() {
  const ClassificationResult r = evaluate_classifier(*model_, val_x_, val_y_, 4 * batch_size_);
  return {{"val/loss", r.loss()}, {"val/acc", r.accuracy()}};
}

std::string ImageObjective::metric_definition(const std::string& key) const {
  const std::string over = " over the " + std::to_string(val_x_.size(0)) +
                           " validation images (the last data.image_val of the train split)";
  if (key == "val/acc") return "top-1 accuracy (argmax of the logits equals the label)" + over;
  return "mean cross-entropy of the label (nats)" + over;
}

}  // namespace moxlab
