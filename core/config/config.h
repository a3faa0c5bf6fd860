// The resolved configuration of a run: every option struct, loaded from TOML in one place.
//
// Loading order: defaults → TOML file → `--set key=value` overrides → validate(). Unknown keys,
// wrong types, out-of-range values and incompatible options are rejected with a one-line
// moxlab::Error before any work starts. The resolved config serialises to canonical JSON whose
// SHA-256 is the run's config hash.
#pragma once
#include <string>
#include <vector>

#include "core/data/data_options.h"
#include "core/eval/eval_options.h"
#include "core/model/model_options.h"
#include "core/prune/prune_options.h"
#include "core/train/train_options.h"

namespace moxlab {

// How a run computes, not what: equal results to rounding, so left out of the config hash.
struct ExecutionOptions {
  // Which form MoHD / MoH modules compute in (core/engine/form.h): automatic | reference | sparse.
  std::string form = "automatic";
  // Denormal floats in CPU arithmetic (kernels/runtime/denormals.h): flush (to zero) | keep (IEEE).
  std::string denormals = "flush";
};

struct RunOptions {
  std::string name = "run";
  std::string kind = "train";       // recorded in the run store
  std::string variant;              // free label naming the model variant; tables group rows by it
  std::string out_dir = "runs";     // run directories go under here
  std::string store = "runs/runs.db";
};

struct Config {
  RunOptions run;
  ModelOptions model;
  DataOptions data;
  TrainOptions train;
  EvalOptions eval;
  PruneOptions prune;
  ExecutionOptions execution;

  // Canonical JSON (sorted keys, every option, resolved values).
  std::string to_json() const;
  // SHA-256 of to_json() without run.*, train.threads and execution.* (names, paths, core counts and
  // execution forms do not change what is computed).
  std::string hash() const;
};

// Loads a TOML file (path "" = defaults only), applies "key=value" overrides, validates.
Config load_config(const std::string& toml_path, const std::vector<std::string>& overrides = {});

// Rebuilds a Config from the JSON written by to_json() (e.g. from a checkpoint); validates.
Config config_from_json(const std::string& json);

// Whether a and b configure the same training but for train.batch_size: a data-parallel run resumed
// by another number of ranks, whose global batch (ranks x train.batch_size) the caller has checked.
bool same_but_rank_batch(const Config& a, const Config& b);

// Applies one "section.key=value" override (value parsed by the key's type).
void apply_override(Config& cfg, const std::string& assignment);

// Checks ranges and cross-option constraints; throws Error naming the offending key.
void validate(const Config& cfg);

// Every key with its type and help text, for `moxlab config keys`.
std::vector<std::string> describe_config_keys();

}  // namespace moxlab
