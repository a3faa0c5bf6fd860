// A sweep spec: a base config, overrides for every member, axes over any config key (a grid, or an
// explicit list of members) and seeds. `moxlab sweep plan` expands it into fully resolved member configs,
// each validated before anything is written, and records them in the run store.
//
//   name  = "tiny_lr_width"
//   base  = "../configs/dense_tiny.toml"    # relative to this file; "" = built-in defaults
//   seeds = [1, 2]                          # train.seed of every member (default: the base config's)
//   set   = ["train.max_steps=200"]         # overrides for every member
//   mode  = "grid"                          # grid: every combination of the axes; list: the [[member]]s
//   [[axis]]
//   key    = "train.lr"
//   values = [1e-3, 3e-3]
//   [[axis]]                                # linked keys move together
//   keys   = ["model.d_model", "model.n_heads"]
//   values = [[128, 4], [192, 6]]
//   [[member]]                              # mode = "list": one entry per member (times the seeds)
//   set = ["train.lr=1e-3", "model.d_model=128"]
//   [eval]                                  # optional: `moxlab eval` on each trained member
//   tasks = ["none"]                        # zero-shot tasks; [] = all, ["none"] = skip
//   limit = 0                               # first N items per task (0 = all)
//   wikitext = false
//   max_val_tokens = 0                      # per domain (0 = all)
//   routing_tokens_per_domain = 0           # > 0: MoHD members also get `moxlab route` (Fig. 11)
//   kl_reference = "init"                   # optional: KL(reference || model) per domain; "init" = each
//                                           # member's train.init_from (its dense start), or a checkpoint
//
// Member order: seeds outermost, then the axes (first axis slowest), so the first members complete
// one seed of every configuration. Member k runs run.name "<name>.<k>".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"

namespace moxlab {

struct SweepAxis {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> points;  // points[i][j]: value of keys[j], as override text
};

struct SweepEval {
  bool enabled = false;
  std::vector<std::string> tasks;  // [] = all tasks, {"none"} = no zero-shot tasks
  int limit = 0;
  bool wikitext = false;
  std::int64_t max_val_tokens = 0;
  std::int64_t routing_tokens_per_domain = 0;  // > 0: per-domain router statistics of MoHD members
  std::string kl_reference;                    // "" none, "init" or a checkpoint path (EvalRunOptions)
};

struct SweepSpec {
  std::string name;
  std::string base;  // absolute path of the base config, "" = defaults
  std::vector<std::int64_t> seeds;
  std::vector<std::string> set;
  bool grid = true;
  std::vector<SweepAxis> axes;                    // grid mode
  std::vector<std::vector<std::string>> members;  // list mode: overrides per member
  SweepEval eval;
  std::string file;  // the spec file (absolute)
  std::string text;  // its contents, kept with the sweep for provenance
};

// Parses and checks a spec file; unknown keys, wrong types and empty axes are one-line Errors.
SweepSpec load_sweep_spec(const std::string& path);

struct PlannedMember {
  std::string label;                   // "train.lr=0.001 model.d_model=128 train.seed=1"
  std::vector<std::string> overrides;  // spec.set, then this member's values, then seed and run.name/store
  Config config;                       // resolved and validated
};

// Expands the spec into members with validated configs. store = the run store they record into (it
// is written into every member's run.store). Two members with the same config are an Error.
std::vector<PlannedMember> expand_sweep(const SweepSpec& spec, const std::string& store);

// What the store keeps in sweeps.spec_json: the spec (file, text, eval) and the working directory the
// members run in (relative paths in the configs are relative to it).
nlohmann::json sweep_spec_json(const SweepSpec& spec, const std::string& workdir);
SweepEval sweep_eval_from_json(const nlohmann::json& spec_json);

}  // namespace moxlab
