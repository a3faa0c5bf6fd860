#include "experiments/bench/train_bench.h"

#include <chrono>
#include <fstream>
#include <memory>

#include <unistd.h>

#include <torch/torch.h>

#include "core/engine/training_forms.h"
#include "core/model/transformer.h"
#include "experiments/bench/train_flops.h"

namespace moxlab {

namespace {

// One case's model, optimiser, forms and batch.
struct TrainCase {
  explicit TrainCase(const Config& c)
      : cfg(c),
        model(c.model),
        forms(training_forms(model.blocks, c.model, form_from_name(c.execution.form))),
        x(torch::randint(c.model.vocab_size, {c.train.batch_size, c.train.seq_len}, torch::kLong)),
        y(torch::randint(c.model.vocab_size, {c.train.batch_size, c.train.seq_len}, torch::kLong)) {
    model.init_weights(1);
    model.train();
    opt = std::make_unique<torch::optim::AdamW>(model.parameters(),
                                                torch::optim::AdamWOptions(c.train.lr).weight_decay(c.train.weight_decay));
  }
  void step() {
    opt->zero_grad();
    Analysis an;
    auto loss = Transformer::lm_loss(model.forward(x, an, forms.pass()), y);
    if (auto aux = an.total_aux_loss(); aux.defined()) loss = loss + aux;
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model.parameters(), cfg.train.grad_clip > 0 ? cfg.train.grad_clip : 1e9);
    opt->step();
  }
  Config cfg;
  Transformer model;
  TrainingForms forms;
  std::unique_ptr<torch::optim::AdamW> opt;
  torch::Tensor x, y;
};

}  // namespace

double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1048576.0);
}

std::vector<std::string> default_train_forms(const ModelOptions& m) {
  const bool sparse = m.attention == "mohd" || m.ffn == "mohd" || m.attention == "moh";
  if (sparse) return {"reference", "automatic", "sparse"};
  return {"reference", "automatic"};
}

std::vector<TrainBenchResult> run_train_bench(const std::vector<TrainBenchCase>& cases, const TrainBenchOptions& o) {
  std::vector<std::unique_ptr<TrainCase>> runs;
  std::vector<TrainBenchResult> out;
  for (const auto& c : cases) {
    const double before = resident_mib();
    runs.push_back(std::make_unique<TrainCase>(c.cfg));
    for (int i = 0; i < o.warmup; ++i) runs.back()->step();  // allocator, thread pools, packings
    TrainBenchResult r;
    r.label = c.label;
    r.flops_per_token = train_flops_per_token(runs.back()->model, c.cfg.train.seq_len);
    r.rss_growth_mib = resident_mib() - before;
    out.push_back(r);
  }
  const std::size_t n = runs.size();
  for (int rep = 0; rep < o.repeats; ++rep)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(rep)) % n;  // rotate which case goes first
      auto& run = *runs[i];
      const auto t0 = std::chrono::steady_clock::now();
      for (int s = 0; s < o.steps; ++s) run.step();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      out[i].tokens_per_s.push_back(static_cast<double>(run.cfg.train.batch_size) * run.cfg.train.seq_len * o.steps / seconds);
    }
  return out;
}

}  // namespace moxlab
