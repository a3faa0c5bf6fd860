#include "experiments/bench/train_bench.h"

#include <chrono>
#include <fstream>
#include <memory>

#include <unistd.h>

#include <torch/torch.h>

#include "core/common/error.h"
#include "core/data/shards/token_source.h"
#include "core/model/transformer.h"
#include "core/train/checkpoint.h"
#include "core/train/lm_objective.h"
#include "core/train/trainer.h"
#include "experiments/bench/op_profile.h"
#include "experiments/bench/train_flops.h"

namespace moxlab {

namespace {

// Random token ids, enough for the sampler's windows (throughput does not depend on the text).
std::shared_ptr<const TokenSource> random_tokens(const Config& c) {
  auto src = std::make_shared<VectorTokenSource>();
  const auto n = std::max<std::int64_t>(1 << 16, 4 * static_cast<std::int64_t>(c.train.batch_size) * (c.train.seq_len + 1));
  const auto ids = torch::randint(c.model.vocab_size, {n}, torch::kInt);
  src->add("random", std::vector<std::int32_t>(ids.data_ptr<std::int32_t>(), ids.data_ptr<std::int32_t>() + n));
  return src;
}

}  // namespace

TrainCase::TrainCase(const Config& c) : cfg(c), model(std::make_shared<Transformer>(c.model)), tokens(random_tokens(c)) {
  model->init_weights(1);
  if (!c.train.init_from.empty()) {
    require(c.train.init_from.rfind("sweep:", 0) != 0,
            "bench train: train.init_from takes a checkpoint path here, not a sweep reference (" + c.train.init_from + ")");
    init_from_checkpoint(*model, c.train.init_from);
  }
  objective = std::make_unique<LmObjective>(c, model, tokens, tokens);
  trainer = std::make_unique<Trainer>(c, *objective, std::string(), CheckpointMeta{});
  model->train();
}

TrainCase::~TrainCase() = default;

void TrainCase::step() { trainer->update(); }

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
    r.flops_per_token = train_flops_per_token(*runs.back()->model, c.cfg.train.seq_len);
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
      out[i].tokens_per_s.push_back(static_cast<double>(run.objective->units_per_micro()) * run.cfg.train.grad_accum * o.steps / seconds);
    }
  if (o.profile_top > 0)
    for (std::size_t i = 0; i < n; ++i) out[i].profile = format_op_profile(profile_ops([&] { runs[i]->step(); }, 2), o.profile_top);
  return out;
}

}  // namespace moxlab
