// The training loop: AdamW (decoupled decay on matrices only), warmup + cosine schedule, gradient
// accumulation, global-norm clipping, periodic validation and atomic checkpoints, for any
// TrainObjective (language modelling, image classification). Store-agnostic: it reports through
// callbacks, and experiments/runner/train_run.h wires those to the run store.
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "core/config/config.h"
#include "core/train/checkpoint.h"
#include "core/train/kept_zeros.h"
#include "core/train/train_objective.h"

namespace moxlab {

class DataParallelGroup;

struct StepReport {
  std::int64_t step = 0;        // steps done (1-based after the first update)
  std::int64_t max_steps = 0;
  double loss = 0.0;            // main loss of this step (mean over micro-batches)
  double tokens_per_s = 0.0;    // smoothed (training units: tokens, or images)
  const char* unit = "tokens";  // the objective's unit_name()
  double eta_s = 0.0;
  double lr = 0.0;
};

struct TrainerCallbacks {
  std::function<void(const StepReport&)> on_step;                 // every step (progress bar)
  std::function<void(std::int64_t step, const Metrics&)> on_metrics;  // log_every steps and evals
  // Before each checkpoint is written: a resume redoes only the steps after it, so whatever the
  // callbacks still hold of the steps up to it (buffered metrics) must be stored first.
  std::function<void(std::int64_t step)> before_checkpoint;
  std::function<void(std::int64_t step, const std::string& path)> on_checkpoint;
};

struct TrainResult {
  std::int64_t steps = 0;
  std::int64_t tokens_seen = 0;  // training units (tokens, or images)
  const char* unit = "tokens";   // the objective's unit_name()
  bool interrupted = false;  // stopped by a stop request before max_steps
  Metrics final_val;         // last validation metrics
  double seconds = 0.0;
};

// One optimiser step's outcome (means over its micro-batches).
struct StepOutcome {
  double loss = 0.0;       // main loss
  double aux = 0.0;        // summed auxiliary losses
  double grad_norm = 0.0;  // global norm before clipping
  double lr = 0.0;
  std::map<std::string, double> terms;  // each auxiliary loss ("aux/...") and pass statistic
};

class Trainer {
 public:
  // checkpoint_path: where checkpoints go. The objective outlives the trainer.
  Trainer(const Config& cfg, TrainObjective& objective, std::string checkpoint_path, CheckpointMeta meta_template);

  // Restores model, optimiser and step from a training checkpoint of the same config; with
  // rank_batch_checked the checkpoint's train.batch_size may differ (a data-parallel run resumed by
  // another number of ranks: the caller has checked that the global batch is the same).
  void resume(const std::string& checkpoint_path, bool rank_batch_checked = false);

  // Trains as one rank of a data-parallel group (core/distributed/data_parallel.h), after any resume:
  // every rank takes rank 0's parameters, buffers and step; each step's gradients are averaged over the
  // ranks before clipping, with the batch statistics of auxiliary losses taken over the whole batch
  // (core/model/batch_statistics.h), so N ranks step as one process on their N micro-batches together.
  // Rank 0 alone validates and checkpoints; a stop request on any rank stops all after the same step.
  // The objective must already draw this rank's share of each batch. The group outlives the trainer.
  void join(DataParallelGroup& group);

  // Trains until max_steps or until *stop becomes true (then checkpoints and returns).
  TrainResult run(const TrainerCallbacks& cb, const std::atomic<bool>* stop = nullptr);

  Metrics validate() { return objective_.validate(); }

  // One optimiser step (schedule, micro-batches with their auxiliary losses, clipping, AdamW) without
  // validation, logging or checkpoints: what run() repeats, and what `bench train` times.
  StepOutcome update();

  std::int64_t step() const { return step_; }
  torch::optim::AdamW& optimizer() { return *optimizer_; }

  // Writes the checkpoint of the current state as of `step` (atomically), e.g. after a post-training
  // conversion changed the model.
  void save(std::int64_t step);

 private:

  Config cfg_;
  TrainObjective& objective_;
  std::string checkpoint_path_;
  CheckpointMeta meta_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::int64_t step_ = 0;
  std::int64_t tokens_seen_ = 0;
  std::optional<KeptZeros> kept_zeros_;  // train.keep_pruned
  DataParallelGroup* group_ = nullptr;    // join(): the ranks training together
  int world_ = 1;
  bool lead() const;                      // validates and checkpoints (rank 0, or no group)
};

}  // namespace moxlab
