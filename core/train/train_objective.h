// What the training loop trains: a model, the loss of any micro-batch, and a validation pass. The loop
// (core/train/trainer.h: AdamW, schedule, accumulation, clipping, checkpoints) is the same for language
// modelling (lm_objective.h) and image classification (image_objective.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "core/model/analysis.h"

namespace moxlab {

using Metrics = std::vector<std::pair<std::string, double>>;

class TrainObjective {
 public:
  virtual ~TrainObjective() = default;
  virtual torch::nn::Module& module() = 0;
  // Main loss of micro-batch `micro` of optimiser step `step` (auxiliary losses go to an). The batch
  // is a pure function of (seed, step, micro), so a resumed run sees the batches of an uninterrupted one.
  virtual torch::Tensor micro_loss(std::int64_t step, int micro, Analysis& an) = 0;
  // A data-parallel rank's share of every micro-batch: rows [rank * B, (rank + 1) * B) of the micro-batch
  // of world * B rows that one process would draw (core/train/trainer.h, join()).
  virtual void take_share(int rank, int world) = 0;
  // Training units (tokens, or images) in one micro-batch (of this rank); throughput and "tokens seen"
  // count these.
  virtual std::int64_t units_per_micro() const = 0;
  // Their name in progress and summary lines ("tokens", "images").
  virtual const char* unit_name() const = 0;
  // Periodic validation metrics ("val/..."), in eval mode without gradients.
  virtual Metrics validate() = 0;
  // The exact definition of a validation metric key, for the results table.
  virtual std::string metric_definition(const std::string& key) const = 0;
};

}  // namespace moxlab
