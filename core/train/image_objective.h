// Image classification as a training objective (MoH Table 1 analog): cross-entropy of the label for
// train.batch_size images per micro-batch, drawn uniformly with replacement from the train images by the
// same stateless sampler as text windows (an image is a window of length 1), so resumed runs see the
// same batches. The last data.image_val images of the train split are held out for validation.
#pragma once
#include <memory>

#include "core/config/config.h"
#include "core/data/corpora/idx_images.h"
#include "core/engine/training_forms.h"
#include "core/model/vision_transformer.h"
#include "core/train/batch_sampler.h"
#include "core/train/train_objective.h"

namespace moxlab {

class ImageObjective : public TrainObjective {
 public:
  // train_split: the whole train split; throws when it does not leave images to train on.
  ImageObjective(const Config& cfg, std::shared_ptr<VisionTransformer> model, const ImageSet& train_split);
  torch::nn::Module& module() override { return *model_; }
  torch::Tensor micro_loss(std::int64_t step, int micro, Analysis& an) override;
  void take_share(int rank, int /*world*/) override { first_row_ = rank * batch_size_; }
  std::int64_t units_per_micro() const override { return batch_size_; }
  const char* unit_name() const override { return "images"; }
  // "val/loss" (mean cross-entropy), "val/acc" (top-1) over the held-out images.
  Metrics validate() override;
  std::string metric_definition(const std::string& key) const override;

  std::int64_t train_images() const { return train_x_.size(0); }

 private:
  std::shared_ptr<VisionTransformer> model_;
  TrainingForms forms_;  // the training forms of the model's kinds (core/engine/training_forms.h)
  int batch_size_;
  torch::Tensor train_x_, train_y_, val_x_, val_y_;
  BatchSampler sampler_;
  int first_row_ = 0;  // take_share(): this rank's first row of each micro-batch
};

}  // namespace moxlab
