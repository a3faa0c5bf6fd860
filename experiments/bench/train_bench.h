// `moxlab bench train`: training tokens/s of one model shape in several execution forms side by side, in
// one process: each case its own model (same initial weights), optimiser and training forms
// (core/engine/training_forms.h), the cases' timed runs interleaved within each repeat (rotating which
// goes first), so a phase of the machine weighs on all alike. A step is the trainer's own
// (Trainer::update: the objective's loss, a distillation teacher's pass where train.loss = distill, the
// auxiliary losses, backward, clipping, AdamW over what train.trainable trains). Batches are random token
// ids of the configured shape (throughput does not depend on the text, but can on the weights: a trained
// model may compute on denormal floats, docs/decisions/2026-11-28-flush-denormals.md); the weights are
// train.init_from's checkpoint where one is given (a path).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"

namespace moxlab {

class LmObjective;
class TokenSource;
class Trainer;
class Transformer;

// One case: its model (init seed 1, or train.init_from's weights), the trainer's objective (distillation teacher, frozen weights and
// all) over random tokens, and the trainer, whose optimiser step is what is timed.
struct TrainCase {
  explicit TrainCase(const Config& c);
  ~TrainCase();
  void step();
  Config cfg;
  std::shared_ptr<Transformer> model;
  std::shared_ptr<const TokenSource> tokens;
  std::unique_ptr<LmObjective> objective;
  std::unique_ptr<Trainer> trainer;
};

struct TrainBenchCase {
  std::string label;  // "reference", "automatic", "dense (automatic)"
  Config cfg;         // the model and execution.form it runs
};

struct TrainBenchOptions {
  int steps = 10, repeats = 3, warmup = 3;
  int profile_top = 0;  // > 0: each case's costliest ops over two more steps (experiments/bench/op_profile.h)
};

struct TrainBenchResult {
  std::string label;
  std::vector<double> tokens_per_s;  // one per repeat
  double flops_per_token = 0;        // train_flops_per_token of the case's model
  double rss_growth_mib = 0;         // resident memory its model, state and first steps added (MiB)
  std::string profile;               // the op table, with TrainBenchOptions::profile_top
};

std::vector<TrainBenchResult> run_train_bench(const std::vector<TrainBenchCase>& cases, const TrainBenchOptions& o);

// The forms `bench train` compares for a model: reference and automatic, and sparse where a kind has a
// sparse training form that automatic does not always take (MoHD, MoH).
std::vector<std::string> default_train_forms(const ModelOptions& m);

// Resident memory now, MiB (/proc/self/statm).
double resident_mib();

}  // namespace moxlab
