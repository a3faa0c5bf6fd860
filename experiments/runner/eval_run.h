// `moxlab eval` as a library call: perplexity per domain on the validation splits, WikiText-2 test
// perplexity and the zero-shot tasks (lm-evaluation-harness conventions), stored as results of the run
// with their metric definitions, and per-item log-likelihoods stored as audit rows.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiments/runner/checkpoint_ref.h"

namespace moxlab {

struct EvalRunOptions {
  CheckpointRef ref;
  std::vector<std::string> tasks;   // empty: all registered tasks; "none": skip zero-shot
  int limit = 0;                    // first N items per task
  bool perplexity = true;           // per-domain val perplexity
  bool wikitext = true;
  std::int64_t max_val_tokens = 0;  // per domain (0: all)
  // With perplexity: also KL(reference || model) per domain on the same windows (kl/val/<domain>,
  // kl/val/all). "" none; "init": the model's train.init_from (the dense model it was converted, pruned
  // or continue-tuned from); else a checkpoint path.
  std::string kl_reference;
  // The validation and WikiText-2 perplexities are scored with the model's logits divided by each of
  // these before the softmax (a calibration reading: how loss moves as the model's probability is
  // spread or sharpened), all from one forward pass. A temperature other than 1 stores its results under
  // keys ending in "@T<temperature>" (loss/val/all@T1.5), beside the model's own; any such takes no
  // zero-shot tasks, no KL reference and no unigram baseline.
  std::vector<double> temperatures{1.0};
  int batch_size = 16;
  int threads = 0;
  std::function<void(const std::string&)> log;
  // Progress inside each phase: "perplexity" (validation tokens over all domains), "wikitext2"
  // (tokens), "task NAME" (loglikelihood requests); done of total, called often.
  std::function<void(const std::string& phase, std::int64_t done, std::int64_t total)> progress;
};

struct EvalLine {
  std::string key;
  double value;
  double std_err;  // NaN when not applicable
  std::string definition;
  std::string note;  // "at chance" for an accuracy whose 95% interval contains chance
};

struct EvalRunResult {
  std::int64_t run_id = -1;
  std::vector<EvalLine> lines;
};

EvalRunResult run_evaluation(const EvalRunOptions& opts);

}  // namespace moxlab
