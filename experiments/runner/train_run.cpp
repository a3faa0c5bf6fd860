#include "experiments/runner/train_run.h"

#include <cmath>
#include <filesystem>
#include <optional>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/shards/dataset.h"
#include "core/data/tokenizers/tokenizer.h"
#include "core/distributed/data_parallel.h"
#include "core/model/param_count.h"
#include "core/prune/live_weights.h"
#include "kernels/runtime/denormals.h"
#include "kernels/runtime/torch_threads.h"
#include "core/store/metric_log.h"
#include "core/store/run_liveness.h"
#include "core/store/run_store.h"
#include "core/store/store_retry.h"
#include "core/train/image_objective.h"
#include "core/train/lm_objective.h"
#include "experiments/runner/checkpoint_ref.h"
#include "experiments/runner/heartbeat.h"
#include "experiments/runner/image_eval.h"
#include "experiments/runner/run_registry.h"
#include "experiments/runner/tomoe_finish.h"

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

// Whether another process that is alive holds the run: resuming it would train it twice at once. A run
// whose process is gone or stale may be resumed, as may one recorded before runs had workers.
bool held_by_live_process(const RunRecord& r) {
  return !r.worker.empty() && r.worker != this_worker_id() && run_liveness(r, unix_now()) == RunLiveness::alive;
}

// The run to resume: the given id, or the newest unfinished train run with this config that no live
// process holds. Its config may differ in train.batch_size alone (another number of data-parallel
// ranks): check_resumed_batch then checks the global batch.
std::int64_t find_resumable(const RunStore& store, const Config& cfg, std::int64_t wanted) {
  const std::string hash = cfg.hash();
  const auto continued_by = [&](const RunRecord& r) {
    if (r.config_hash == hash) return true;
    try {
      return same_but_rank_batch(config_from_json(r.config_json), cfg);
    } catch (const Error&) {
      return false;  // a config this build no longer reads (a key since renamed) is another run
    }
  };
  if (wanted >= 0) {
    RunRecord r = store.get_run(wanted);
    require(continued_by(r), "run " + std::to_string(wanted) + " was started with a different config");
    require(r.status != RunStatus::finished, "run " + std::to_string(wanted) + " already finished");
    require(!held_by_live_process(r), "run " + std::to_string(wanted) + " is still running (process " + r.worker + ")");
    return wanted;
  }
  RunFilter f;
  f.kind = "train";
  auto runs = store.find_runs(f);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    if (it->status != RunStatus::finished && continued_by(*it) && !held_by_live_process(*it) &&
        !checkpoint_of(store, it->id).empty())
      return it->id;
  throw Error("nothing to resume: no unfinished run with config hash " + hash.substr(0, 12) + " has a checkpoint in " +
              store.path());
}

// The data of a run, read before it is registered (the digest is part of its record): token shards
// for language modelling, or the image splits for image classification (data.images).
struct PreparedTask {
  std::string digest, tokenizer_spec;
  std::optional<PreparedData> text;
  std::optional<ImageSet> train_images, test_images;
};

PreparedTask prepare_task(Config& cfg, const std::function<void(const std::string&)>& log) {
  PreparedTask task;
  if (!cfg.data.images.empty()) {
    require(cfg.train.init_from.empty(), "train.init_from is for language models; image runs start from scratch");
    task.train_images = read_image_split(cfg.data, "train");
    task.test_images = read_image_split(cfg.data, "test");
    const int patch = cfg.model.patch_size;
    require(task.train_images->rows % patch == 0 && task.train_images->cols % patch == 0,
            "model.patch_size (" + std::to_string(patch) + ") must divide the image size (" +
                std::to_string(task.train_images->rows) + "x" + std::to_string(task.train_images->cols) + ")");
    task.digest = image_data_digest(*task.train_images, *task.test_images);
    log(cfg.data.images + ": " + std::to_string(task.train_images->count) + " train images (" +
        std::to_string(cfg.data.image_val) + " held out for validation), " + std::to_string(task.test_images->count) + " test");
  } else {
    task.text = prepare_data(cfg.data, log);
    auto tok = load_tokenizer(task.text->tokenizer_spec);
    if (cfg.model.vocab_size == 0) cfg.model.vocab_size = tok->vocab_size();
    require(cfg.model.vocab_size >= tok->vocab_size(), "model.vocab_size (" + std::to_string(cfg.model.vocab_size) +
                                                            ") is smaller than the tokenizer's (" +
                                                            std::to_string(tok->vocab_size()) + ")");
    task.digest = task.text->digest;
    task.tokenizer_spec = task.text->tokenizer_spec;
  }
  validate(cfg);
  return task;
}

// The model (seeded init; for a new language-model run, train.init_from weights) and its objective.
struct BuiltTask {
  std::unique_ptr<TrainObjective> objective;
  std::shared_ptr<VisionTransformer> vit;  // image runs: evaluated on the test split after training
  std::shared_ptr<Transformer> lm;         // language-model runs
  LmObjective* lm_objective = nullptr;
  ParamCount params;
  Metrics init_reference;  // continue-tuning: validation of the train.init_from model itself (the dense start)
};

// measure_start: validate the train.init_from model (rank 0 of a data-parallel run, or one process).
BuiltTask build_task(const Config& cfg, const PreparedTask& task, bool resuming, const torch::Device& device,
                     const std::function<void(const std::string&)>& log, bool measure_start = true) {
  BuiltTask b;
  if (task.train_images) {
    const ImageSet& train = *task.train_images;
    b.vit = std::make_shared<VisionTransformer>(cfg.model, ImageGeometry{train.rows, train.cols, 1, train.classes()});
    b.vit->init_weights(static_cast<std::uint64_t>(cfg.train.seed));
    b.vit->to(device);
    b.params = count_parameters(*b.vit);
    b.objective = std::make_unique<ImageObjective>(cfg, b.vit, train);
    log("model: ViT, " + std::to_string(b.vit->patches()) + " patches of " + std::to_string(cfg.model.patch_size) + "x" +
        std::to_string(cfg.model.patch_size) + ", " + std::to_string(b.params.total) + " non-embedding parameters (" +
        std::to_string(b.params.active) + " active), " + std::to_string(train.classes()) + " classes");
    return b;
  }
  auto train = std::make_shared<ShardTokenSource>(task.text->shards_dir, Split::Train);
  auto val = std::make_shared<ShardTokenSource>(task.text->shards_dir, Split::Val);
  auto model = std::make_shared<Transformer>(cfg.model);
  model->init_weights(static_cast<std::uint64_t>(cfg.train.seed));
  if (!cfg.train.init_from.empty() && !resuming) {
    const std::string from = resolve_init_from(cfg.train.init_from, cfg.run.store, cfg.train.seed);
    const InitFromReport r = init_from_checkpoint(*model, from);
    require(r.tokenizer_spec.empty() || r.tokenizer_spec == task.tokenizer_spec,
            "train.init_from " + from + " was trained with tokenizer " + r.tokenizer_spec +
                " but this run's data uses " + task.tokenizer_spec + " (set data.tokenizer to the same)");
    log("init from " + from + ": " + std::to_string(r.copied) + " tensors copied, " + std::to_string(r.kept) +
        " new ones keep their init");
    LoadedCheckpoint start = load_checkpoint(from);
    start.model->to(device);
    if (measure_start) b.init_reference = LmObjective(cfg, start.model, train, val).validate();
  }
  model->to(device);
  b.params = count_parameters(*model);
  log("model: " + std::to_string(b.params.total) + " non-embedding parameters (" + std::to_string(b.params.active) +
      " active), vocab " + std::to_string(cfg.model.vocab_size));
  auto objective = std::make_unique<LmObjective>(cfg, model, train, val);
  if (!cfg.train.teacher.empty()) {
    const std::string from = resolve_init_from(cfg.train.teacher, cfg.run.store, cfg.train.seed, "train.teacher");
    LoadedCheckpoint teacher = load_checkpoint(from);
    require(teacher.meta.tokenizer_spec.empty() || teacher.meta.tokenizer_spec == task.tokenizer_spec,
            "train.teacher " + from + " was trained with tokenizer " + teacher.meta.tokenizer_spec + " but this run's data uses " +
                task.tokenizer_spec);
    teacher.model->to(device);
    objective->set_teacher(teacher.model, form_from_name(teacher.config.execution.form));
    log("distilling from " + from);
  }
  b.lm = model;
  b.lm_objective = objective.get();
  b.objective = std::move(objective);
  return b;
}

// Data-parallel ranks must train one config: each compares its hash, after preparing its data (the
// vocabulary size may come from the data), with rank 0's; all fail together when one differs.
void agree_on_config(DataParallelGroup& group, bool same) {
  std::vector<double> differing{same ? 0.0 : 1.0};
  group.sum(differing);
  require(differing[0] == 0, std::to_string(static_cast<int>(differing[0])) + " of " + std::to_string(group.world()) +
                                 " data-parallel ranks were started with another config than rank 0's");
}

// The ranks of a data-parallel run other than 0: the same data, model and steps as rank 0, which
// sends the checkpoint to resume from (empty for a new run) and, at join(), its parameters and step;
// nothing is written. Shares of the batch, gradients and stops as Trainer::join.
TrainRunResult train_as_rank(Config cfg, const TrainRunOptions& opts, DataParallelGroup& group) {
  auto log = [&](const std::string& s) { if (opts.log) opts.log(s); };
  set_torch_threads(cfg.train.threads);
  set_flush_denormals(cfg.execution.denormals == "flush");
  torch::Device device(cfg.train.device);
  std::string lead_hash;
  group.broadcast(lead_hash);  // once rank 0 has prepared the data (a cache hit here on its host)
  const PreparedTask task = prepare_task(cfg, log);
  agree_on_config(group, lead_hash == cfg.hash());
  std::string checkpoint;
  group.broadcast(checkpoint);
  BuiltTask built = build_task(cfg, task, !checkpoint.empty(), device, log, /*measure_start=*/false);
  Trainer trainer(cfg, *built.objective, "", CheckpointMeta{});
  if (!checkpoint.empty()) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("moxlab-rank" + std::to_string(group.rank()) + "-" + std::to_string(::getpid()) + ".pt"))
                                 .string();
    write_text_atomically(path, checkpoint);
    try {
      trainer.resume(path, /*rank_batch_checked=*/true);  // by rank 0, before it sent the checkpoint
    } catch (...) {
      std::filesystem::remove(path);
      throw;
    }
    std::filesystem::remove(path);
  }
  trainer.join(group);
  TrainRunResult out;
  out.train = trainer.run({}, opts.stop);
  return out;
}

// The number of ranks a run trains with is part of its batch: recorded at the start when more than one
// (one process records nothing, as before data-parallel runs).
void record_world_size(RunStore& store, std::int64_t run, int world) {
  if (world == 1) return;
  store.put_result(run, "train/world_size", world,
                   nlohmann::json{{"metric", "count"},
                                  {"definition", "data-parallel ranks training the run; the global batch is train.batch_size times this"}}
                       .dump());
}

// A resume keeps the run's global batch (ranks x train.batch_size), with the same ranks or another
// number of them splitting it (then recorded as train/resumed_world_size). Returns whether the split changed.
bool check_resumed_batch(RunStore& store, std::int64_t run, const Config& cfg, int world) {
  const auto recorded = store.result(run, "train/world_size");
  const std::int64_t before = recorded ? static_cast<std::int64_t>(recorded->value) : 1;
  const std::int64_t rows = config_from_json(store.get_run(run).config_json).train.batch_size;
  const std::int64_t global = before * rows, now = world * static_cast<std::int64_t>(cfg.train.batch_size);
  require(global == now, "run " + std::to_string(run) + " was trained with a global batch of " + std::to_string(global) +
                             " rows (" + std::to_string(before) + " data-parallel rank(s) x train.batch_size " +
                             std::to_string(rows) + "); resume it with ranks x train.batch_size = " + std::to_string(global) +
                             " (this is " + std::to_string(world) + " x " + std::to_string(cfg.train.batch_size) + ")");
  if (before == world) return false;
  store.put_result(run, "train/resumed_world_size", world,
                   nlohmann::json{{"metric", "count"},
                                  {"definition", "data-parallel ranks of the last resume, another number than train/world_size "
                                                 "splitting the same global batch"}}
                       .dump());
  return true;
}

}  // namespace

TrainRunResult run_training(Config cfg, const TrainRunOptions& opts) {
  DataParallelGroup* const group = opts.data_parallel;
  if (group != nullptr && group->rank() != 0) return train_as_rank(std::move(cfg), opts, *group);
  auto log = [&](const std::string& s) { if (opts.log) opts.log(s); };
  set_torch_threads(cfg.train.threads);
  set_flush_denormals(cfg.execution.denormals == "flush");
  torch::Device device(cfg.train.device);  // throws on a malformed device string

  const PreparedTask task = prepare_task(cfg, log);
  if (group != nullptr) {
    std::string hash = cfg.hash();
    group->broadcast(hash);
    agree_on_config(*group, true);
  }

  RunStore store(cfg.run.store);
  const int world = group != nullptr ? group->world() : 1;
  TrainRunResult out;
  std::string resume_from;
  bool regrouped = false;  // resumed by another number of ranks splitting the same global batch
  if (opts.resume || opts.resume_run >= 0) {
    out.run_id = find_resumable(store, cfg, opts.resume_run);
    regrouped = check_resumed_batch(store, out.run_id, cfg, world);
    resume_from = checkpoint_of(store, out.run_id);
    require(!resume_from.empty() && file_exists(resume_from), "run " + std::to_string(out.run_id) + " has no checkpoint to resume from");
    store.update_status(out.run_id, RunStatus::running);
    out.checkpoint = resume_from;
    log("resuming run " + std::to_string(out.run_id) + " from " + resume_from);
  } else {
    RegisteredRun run = register_run(cfg, "train", "", task.digest, opts.sweep_id);
    out.run_id = run.id;
    record_world_size(store, out.run_id, world);
    out.checkpoint = run.dir + "/checkpoint.pt";
    log("run " + std::to_string(run.id) + ": " + run.dir);
  }
  if (opts.on_run) opts.on_run(out.run_id);
  for (const auto& file : remove_orphaned_temp_files(out.checkpoint))
    log("removed " + file + ", left by a save that was killed");
  // Lets readers tell this training from one whose process died (run_liveness.h).
  const Heartbeat heartbeat(kHeartbeatSeconds, [path = cfg.run.store, id = out.run_id] {
    try {
      RunStoreOptions quick;
      quick.busy_timeout_ms = 200;
      RunStore(path, quick).heartbeat_run(id);
    } catch (const Error&) {
      // A busy store delays one beat; the stale limit is ten beats.
    }
  });
  // Metrics are buffered while another process holds the store's lock (metric_log.h). Where the run
  // cannot go on without writing (before a checkpoint, at the end) it waits up to kStoreWaitSeconds.
  MetricLog metrics(cfg.run.store, out.run_id);
  metrics.note = log;
  bool said_waiting = false;
  const auto say_waiting = [&] {
    if (!said_waiting) log("waiting for the run store " + cfg.run.store + ", locked by another process");
    said_waiting = true;
  };
  const auto durably = [&](const std::function<void()>& write) { retry_while_busy(write, kStoreWaitSeconds, say_waiting); };
  try {
    if (group != nullptr) {
      std::string checkpoint = resume_from.empty() ? "" : read_file(resume_from);
      group->broadcast(checkpoint);
    }
    BuiltTask built = build_task(cfg, task, !resume_from.empty(), device, log);
    for (const auto& [key, value] : built.init_reference)
      store.put_result(out.run_id, "init_from/" + key, value,
                       nlohmann::json{{"split", "val"},
                                      {"definition", "the train.init_from model before continue-tuning: " +
                                                         built.objective->metric_definition(key)}}
                           .dump());

    CheckpointMeta meta;
    meta.tokenizer_spec = task.tokenizer_spec;
    meta.run_id = out.run_id;
    meta.source = "train";
    Trainer trainer(cfg, *built.objective, out.checkpoint, meta);
    if (!resume_from.empty()) {
      trainer.resume(resume_from, regrouped);
      store.delete_metrics_after(out.run_id, trainer.step());  // steps redone after the checkpoint
    }
    if (group != nullptr) trainer.join(*group);
    if (cfg.train.keep_pruned && built.lm) {  // the pruned start's structure (weights loaded by now)
      built.params.active = built.params.total - live_matrix_weights(*built.lm).dead();
    }
    record_param_counts(out.run_id, cfg.run.store, built.params);

    bool checkpoint_recorded = !resume_from.empty();
    TrainerCallbacks cb;
    cb.on_step = opts.on_step;
    cb.on_metrics = [&](std::int64_t step, const Metrics& m) {
      metrics.add(step, m);
      if (step == 0)  // continue-tuning: the converted model before any update
        for (const auto& [key, value] : m)
          durably([&] {
            store.put_result(out.run_id, "train_start/" + key, value,
                             nlohmann::json{{"split", "val"},
                                            {"definition", "before the first update: " + built.objective->metric_definition(key)}}
                                 .dump());
          });
    };
    cb.before_checkpoint = [&](std::int64_t) { metrics.flush(kStoreWaitSeconds, say_waiting); };
    cb.on_checkpoint = [&](std::int64_t, const std::string& path) {
      if (!checkpoint_recorded) durably([&] { store.add_artifact(out.run_id, "checkpoint", path); });
      checkpoint_recorded = true;
    };
    out.train = trainer.run(cb, opts.stop);
    metrics.flush(kStoreWaitSeconds, say_waiting);
    if (cfg.model.is_tomoe() && !out.train.interrupted) {
      finish_tomoe_conversion(*built.lm, *built.lm_objective, cfg, out.run_id, log);
      trainer.save(out.train.steps);
      out.train.final_val = built.objective->validate();  // the converted model's (top-K) validation
    }

    for (const auto& [key, value] : out.train.final_val) {
      const bool is_loss = key.size() > 5 && key.compare(key.size() - 5, 5, "/loss") == 0;
      const bool is_acc = key.size() > 4 && key.compare(key.size() - 4, 4, "/acc") == 0;
      nlohmann::json meta_json{{"metric", is_loss ? "loss" : is_acc ? "acc" : "ppl"},
                               {"split", "val"},
                               {"definition", built.objective->metric_definition(key)}};
      durably([&] { store.put_result(out.run_id, "train_end/" + key, value, meta_json.dump()); });
    }
    durably([&] {
      store.put_result(out.run_id, "train/tokens_seen", static_cast<double>(out.train.tokens_seen),
                       nlohmann::json{{"metric", "count"},
                                      {"definition", task.train_images ? "training images processed, with repeats"
                                                                       : "training tokens processed"}}
                           .dump());
    });
    if (built.vit && !out.train.interrupted)
      evaluate_image_run(*built.vit, cfg, *task.test_images, out.run_id,
                         std::filesystem::path(out.checkpoint).parent_path().string(), log);
    durably([&] {
      store.update_status(out.run_id, out.train.interrupted ? RunStatus::killed : RunStatus::finished,
                          out.train.interrupted ? "stopped by signal; resume with --resume" : "");
    });
  } catch (const std::exception& e) {
    // Store the metrics of the steps done and record the failure, waiting for a busy store, unless it
    // already stayed locked past the wait: then one plain try (if it fails too, the run shows killed
    // once this process is gone, and the unstored metrics are of steps after the last checkpoint).
    const bool store_stuck = dynamic_cast<const RunStoreBusy*>(&e) != nullptr;
    try {
      if (!store_stuck) {
        metrics.flush(kStoreWaitSeconds, say_waiting);
        durably([&] { store.update_status(out.run_id, RunStatus::failed, e.what()); });
      } else {
        store.update_status(out.run_id, RunStatus::failed, e.what());
      }
    } catch (const Error& second) {
      log("cannot record the failure of run " + std::to_string(out.run_id) + ": " + second.what());
    }
    throw;
  }
  return out;
}

}  // namespace moxlab
