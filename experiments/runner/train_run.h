// `moxlab train` as a library call: prepare data (tokenizer + shards), register the run (or find the
// run to resume), build and train the model, stream metrics into the run store, record final results.
// A run killed at any point resumes from its last checkpoint with the same data order.
// Data-parallel (TrainRunOptions::data_parallel): every rank calls run_training with the same config;
// rank 0 owns the run (store, checkpoints, logs, the final evaluation), the others only train.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/train/trainer.h"

namespace moxlab {

class DataParallelGroup;

struct TrainRunOptions {
  bool resume = false;          // continue the latest unfinished run with the same config hash
  std::int64_t resume_run = -1; // ... or this run id
  std::function<void(const StepReport&)> on_step;
  std::function<void(const std::string&)> log;  // human-readable status lines
  const std::atomic<bool>* stop = nullptr;      // set by a signal handler: checkpoint and stop
  std::optional<std::int64_t> sweep_id;         // recorded on a new run
  std::function<void(std::int64_t)> on_run;     // told the run id as soon as it is registered or resumed
  DataParallelGroup* data_parallel = nullptr;   // this process is one rank of these (core/train/trainer.h, join)
};

struct TrainRunResult {
  std::int64_t run_id = -1;  // -1 on a data-parallel rank other than 0
  std::string checkpoint;
  TrainResult train;
};

TrainRunResult run_training(Config cfg, const TrainRunOptions& opts);

}  // namespace moxlab
