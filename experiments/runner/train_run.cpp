#include "experiments/runner/train_run.h"

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/dataset.h"
#include "core/data/tokenizer.h"
#include "core/model/param_count.h"
#include "core/model/torch_threads.h"
#include "core/store/run_store.h"
#include "experiments/runner/run_registry.h"

namespace moxlab {

namespace {

std::string checkpoint_of(const RunStore& store, std::int64_t run) {
  auto arts = store.artifacts(run, "checkpoint");
  return arts.empty() ? "" : arts.back().path;
}

std::string run_dir_of(const RunStore& store, std::int64_t run) {
  auto arts = store.artifacts(run, "run_dir");
  require(!arts.empty(), "run " + std::to_string(run) + " has no run directory recorded");
  return arts.back().path;
}

// The run to resume: the given id, or the newest unfinished train run with this config hash.
std::int64_t find_resumable(const RunStore& store, const Config& cfg, std::int64_t wanted) {
  if (wanted >= 0) {
    RunRecord r = store.get_run(wanted);
    require(r.config_hash == cfg.hash(), "run " + std::to_string(wanted) + " was started with a different config");
    require(r.status != RunStatus::finished, "run " + std::to_string(wanted) + " already finished");
    return wanted;
  }
  RunFilter f;
  f.kind = "train";
  auto runs = store.find_runs(f);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    if (it->config_hash == cfg.hash() && it->status != RunStatus::finished && !checkpoint_of(store, it->id).empty())
      return it->id;
  throw Error("nothing to resume: no unfinished run with config hash " + cfg.hash().substr(0, 12) + " has a checkpoint in " +
              store.path());
}

}  // namespace

TrainRunResult run_training(Config cfg, const TrainRunOptions& opts) {
  auto log = [&](const std::string& s) { if (opts.log) opts.log(s); };
  set_torch_threads(cfg.train.threads);
  torch::Device device(cfg.train.device);  // throws on a malformed device string

  PreparedData data = prepare_data(cfg.data, log);
  auto tok = load_tokenizer(data.tokenizer_spec);
  if (cfg.model.vocab_size == 0) cfg.model.vocab_size = tok->vocab_size();
  require(cfg.model.vocab_size >= tok->vocab_size(), "model.vocab_size (" + std::to_string(cfg.model.vocab_size) +
                                                          ") is smaller than the tokenizer's (" +
                                                          std::to_string(tok->vocab_size()) + ")");
  validate(cfg);

  RunStore store(cfg.run.store);
  TrainRunResult out;
  std::string resume_from;
  if (opts.resume || opts.resume_run >= 0) {
    out.run_id = find_resumable(store, cfg, opts.resume_run);
    resume_from = checkpoint_of(store, out.run_id);
    require(!resume_from.empty() && file_exists(resume_from), "run " + std::to_string(out.run_id) + " has no checkpoint to resume from");
    store.update_status(out.run_id, RunStatus::running);
    out.checkpoint = resume_from;
    log("resuming run " + std::to_string(out.run_id) + " from " + resume_from);
  } else {
    RegisteredRun run = register_run(cfg, "train", "", data.digest, opts.sweep_id);
    out.run_id = run.id;
    out.checkpoint = run.dir + "/checkpoint.pt";
    log("run " + std::to_string(run.id) + ": " + run.dir);
  }
  if (opts.on_run) opts.on_run(out.run_id);
  try {
    ShardTokenSource train(data.shards_dir, Split::Train), val(data.shards_dir, Split::Val);
    auto model = std::make_shared<Transformer>(cfg.model);
    model->init_weights(static_cast<std::uint64_t>(cfg.train.seed));
    if (!cfg.train.init_from.empty() && resume_from.empty()) {
      const InitFromReport r = init_from_checkpoint(*model, cfg.train.init_from);
      require(r.tokenizer_spec.empty() || r.tokenizer_spec == data.tokenizer_spec,
              "train.init_from " + cfg.train.init_from + " was trained with tokenizer " + r.tokenizer_spec +
                  " but this run's data uses " + data.tokenizer_spec + " (set data.tokenizer to the same)");
      log("init from " + cfg.train.init_from + ": " + std::to_string(r.copied) + " tensors copied, " +
          std::to_string(r.kept) + " new ones keep their init");
    }
    model->to(device);
    const ParamCount params = count_parameters(*model);
    record_param_counts(out.run_id, cfg.run.store, params);
    log("model: " + std::to_string(params.total) + " non-embedding parameters (" + std::to_string(params.active) +
        " active), vocab " + std::to_string(cfg.model.vocab_size));

    CheckpointMeta meta;
    meta.tokenizer_spec = data.tokenizer_spec;
    meta.run_id = out.run_id;
    meta.source = "train";
    Trainer trainer(cfg, model, train, val, out.checkpoint, meta);
    if (!resume_from.empty()) {
      trainer.resume(resume_from);
      store.delete_metrics_after(out.run_id, trainer.step());  // steps redone after the checkpoint
    }

    bool checkpoint_recorded = !resume_from.empty();
    TrainerCallbacks cb;
    cb.on_step = opts.on_step;
    cb.on_metrics = [&](std::int64_t step, const Metrics& m) { store.log_metrics(out.run_id, step, m); };
    cb.on_checkpoint = [&](std::int64_t, const std::string& path) {
      if (!checkpoint_recorded) store.add_artifact(out.run_id, "checkpoint", path);
      checkpoint_recorded = true;
    };
    out.train = trainer.run(cb, opts.stop);

    for (const auto& [key, value] : out.train.final_val) {
      const bool is_loss = key.size() > 5 && key.compare(key.size() - 5, 5, "/loss") == 0;
      const std::string over = " over the first train.eval_tokens val tokens of each domain, non-overlapping windows "
                               "of train.seq_len";
      nlohmann::json meta_json{{"metric", is_loss ? "loss" : "ppl"},
                               {"split", "val"},
                               {"tokens_per_domain", cfg.train.eval_tokens},
                               {"definition", (is_loss ? "mean next-token NLL (nats)" : "exp(mean next-token NLL)") + over}};
      store.put_result(out.run_id, "train_end/" + key, value, meta_json.dump());
    }
    store.put_result(out.run_id, "train/tokens_seen", static_cast<double>(out.train.tokens_seen),
                     R"({"metric":"count","definition":"training tokens processed"})");
    store.update_status(out.run_id, out.train.interrupted ? RunStatus::killed : RunStatus::finished,
                        out.train.interrupted ? "stopped by signal; resume with --resume" : "");
  } catch (const std::exception& e) {
    store.update_status(out.run_id, RunStatus::failed, e.what());
    throw;
  }
  return out;
}

}  // namespace moxlab
