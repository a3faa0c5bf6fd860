// Resolving what a command acts on: `--run ID` (the run's recorded checkpoint) or `--checkpoint PATH`,
// and the run that results are attached to (the checkpoint's own run when the store knows it,
// otherwise a new run of the given kind registered here).
#pragma once
#include <cstdint>
#include <string>

#include "core/train/checkpoint.h"

namespace moxlab {

struct CheckpointRef {
  std::int64_t run_id = -1;  // -1: resolve from the checkpoint
  std::string checkpoint;
  std::string store = "runs/runs.db";
};

struct ResolvedCheckpoint {
  LoadedCheckpoint loaded;
  std::string path;
  std::int64_t run_id = -1;  // run that results go to
  bool new_run = false;      // registered here: the caller marks it finished or failed
};

// The newest checkpoint artifact of a run (errors: no store, no such run, no checkpoint).
std::string run_checkpoint_path(const std::string& store, std::int64_t run_id);

// Loads the checkpoint; when it belongs to no run in the store, registers a `kind` run for it.
ResolvedCheckpoint resolve_checkpoint(const CheckpointRef& ref, const std::string& kind);

// train.init_from: a checkpoint path, or "sweep:NAME/VARIANT/SEED" = the checkpoint of the finished
// member with run.variant VARIANT and train.seed SEED of the newest sweep named NAME in `store` (so a
// continue-tuning sweep names the dense model it starts from without knowing its run id);
// "sweep:NAME/VARIANT" takes SEED = own_seed, the continuing run's train.seed, so one member with
// `seeds = [1, 2]` continues each seed's own start. Errors name what is missing (no such sweep, member
// not finished yet). `key` names the setting in those errors (train.teacher takes the same references).
std::string resolve_init_from(const std::string& init_from, const std::string& store, std::int64_t own_seed,
                              const std::string& key = "train.init_from");

}  // namespace moxlab
