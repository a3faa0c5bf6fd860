// Language modelling (next-token cross-entropy) as a training objective: windows of seq_len + 1
// tokens drawn by the BatchSampler from the train split of every domain, validation per domain on the
// first train.eval_tokens tokens of each validation split.
#pragma once
#include <memory>

#include "core/config/config.h"
#include "core/data/shards/token_source.h"
#include "core/engine/inference_plan.h"
#include "core/engine/training_forms.h"
#include "core/model/transformer.h"
#include "core/train/batch_sampler.h"
#include "core/train/train_objective.h"

namespace moxlab {

class LmObjective : public TrainObjective {
 public:
  LmObjective(const Config& cfg, std::shared_ptr<Transformer> model, std::shared_ptr<const TokenSource> train,
              std::shared_ptr<const TokenSource> val);
  torch::nn::Module& module() override { return *model_; }
  torch::Tensor micro_loss(std::int64_t step, int micro, Analysis& an) override;
  void take_share(int rank, int world) override;
  std::int64_t units_per_micro() const override;
  const char* unit_name() const override { return "tokens"; }
  // "val/<domain>/loss", "val/loss" (token-weighted over domains), "val/ppl".
  Metrics validate() override;
  std::string metric_definition(const std::string& key) const override;
  // Inputs and next-token targets [B, T] of micro-batch `micro` of step `step` (train split), on the
  // model's device; also the calibration tokens of post-training steps (ToMoE's top-K).
  std::pair<torch::Tensor, torch::Tensor> batch(std::int64_t step, int micro) const;
  // train.teacher: the model whose logits the distillation loss matches instead of ToMoE's gates-off
  // model (same vocabulary; frozen, run without autograd in its own execution form).
  void set_teacher(std::shared_ptr<Transformer> teacher, Form teacher_form);

 private:
  TrainOptions t_;
  Form form_;  // execution.form: training forms, the teacher, validation
  std::shared_ptr<Transformer> model_;
  TrainingForms forms_;           // the training forms of the model's kinds (core/engine/training_forms.h)
  std::unique_ptr<InferencePlan> teacher_;  // distillation: the dense model inside the ToMoE model, or train.teacher
  std::shared_ptr<Transformer> teacher_model_;  // train.teacher (teacher_ plans over it)
  std::shared_ptr<const TokenSource> train_, val_;
  BatchSampler sampler_;
  int first_row_ = 0;  // take_share(): this rank's first row of each micro-batch
};

}  // namespace moxlab
