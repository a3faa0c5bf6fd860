#include "experiments/runner/sweep_member.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/distributed/data_parallel.h"
#include "core/store/run_store.h"
#include "experiments/runner/checkpoint_ref.h"
#include "experiments/runner/eval_run.h"
#include "experiments/runner/heartbeat.h"
#include "experiments/runner/prune_run.h"
#include "experiments/runner/route_run.h"
#include "experiments/runner/train_run.h"
#include "experiments/sweep/sweep_spec.h"

namespace moxlab {

int member_exit_code(MemberOutcome outcome) {
  switch (outcome) {
    case MemberOutcome::finished:
    case MemberOutcome::already_finished: return 0;
    case MemberOutcome::failed: return 1;
    case MemberOutcome::killed: return 2;
    case MemberOutcome::unavailable: return kExitMemberUnavailable;
  }
  return 1;
}

namespace {

// Rank 0 of a data-parallel member tells the other ranks, once, what they train: the member's config
// and the sweep's working directory, or nothing (finished, held by another worker, a pruning member, a
// failure before training). Whatever path rank 0 takes, the destructor sends "nothing" if it has not
// spoken, so the other ranks never wait for a training that will not come.
class RankCue {
 public:
  explicit RankCue(DataParallelGroup* group) : group_(group) {}
  ~RankCue() {
    try {
      send("");
    } catch (const std::exception&) {
      // The other ranks see rank 0's connection close instead.
    }
  }
  void send(const std::string& what) {
    if (group_ == nullptr || sent_) return;
    sent_ = true;
    std::string bytes = what;
    group_->broadcast(bytes);
  }

 private:
  DataParallelGroup* group_;
  bool sent_ = false;
};

// A rank other than 0: trains what rank 0 sends, alongside it.
MemberOutcome follow_member(const SweepMemberOptions& opts, DataParallelGroup& group) {
  std::string what;
  group.broadcast(what);
  if (what.empty()) return MemberOutcome::already_finished;  // rank 0 reports the member's outcome
  const nlohmann::json cue = nlohmann::json::parse(what);
  const std::string workdir = cue.at("workdir").get<std::string>();
  if (!workdir.empty() && ::chdir(workdir.c_str()) != 0) throw Error("cannot enter the sweep's working directory " + workdir);
  TrainRunOptions t;
  t.data_parallel = &group;
  t.stop = opts.stop;
  t.log = opts.log;
  return run_training(config_from_json(cue.at("config").get<std::string>()), t).train.interrupted ? MemberOutcome::killed
                                                                                                    : MemberOutcome::finished;
}

}  // namespace

MemberOutcome run_sweep_member(const SweepMemberOptions& opts) {
  if (opts.data_parallel != nullptr && opts.data_parallel->rank() != 0) return follow_member(opts, *opts.data_parallel);
  RankCue cue(opts.data_parallel);
  auto log = [&](const std::string& s) { if (opts.log) opts.log(s); };
  const std::string store_path = std::filesystem::absolute(opts.store).string();
  RunStore store(store_path);
  const SweepRecord sweep = store.get_sweep(opts.sweep);
  const SweepMember m = store.sweep_member(opts.sweep, opts.index);
  const std::string name = "member " + std::to_string(m.idx) + " of sweep " + std::to_string(sweep.id);

  switch (member_availability(m, opts.policy, unix_now())) {
    case MemberAvailability::finished:
      log(name + " already finished (run " + (m.run_id ? std::to_string(*m.run_id) : "?") + ")");
      return MemberOutcome::already_finished;
    case MemberAvailability::failed:
      log(name + " failed before (" + m.error + "); pass --retry-failed to run it again");
      return MemberOutcome::unavailable;
    case MemberAvailability::held:
      log(name + " is running in worker " + m.worker);
      return MemberOutcome::unavailable;
    case MemberAvailability::free: break;
  }
  const std::string worker = this_worker_id();
  if (!store.claim_sweep_member(opts.sweep, opts.index, m.status, m.worker, worker)) {
    log(name + " was taken by another worker");
    return MemberOutcome::unavailable;
  }
  log(name + " (" + m.label + "): worker " + worker + ", attempt " + std::to_string(m.attempts + 1));

  std::atomic<bool> local_stop{false};
  std::atomic<bool>* stop = opts.stop ? opts.stop : &local_stop;
  // When the member turns out to be held by someone else (this worker was presumed dead and the member
  // taken over), the heartbeat raises `stop`.
  std::atomic<bool> lost{false};
  Heartbeat heartbeat(kHeartbeatSeconds, [&, store_path, worker] {
    try {
      if (!RunStore(store_path).heartbeat_sweep_member(opts.sweep, opts.index, worker)) {
        lost = true;
        *stop = true;
      }
    } catch (const Error&) {
      // A busy store delays one beat; the stale limit is ten beats.
    }
  });
  auto finish = [&](const std::string& status, const std::string& error) {
    if (!store.finish_sweep_member(opts.sweep, opts.index, worker, status, error))
      log(name + " was taken over by another worker; not recording '" + status + "'");
  };
  try {
    const nlohmann::json spec = nlohmann::json::parse(sweep.spec_json);
    // Relative paths in the member's config (data cache, run folders) mean what they meant at plan time.
    const std::string workdir = spec.value("workdir", "");
    if (!workdir.empty() && ::chdir(workdir.c_str()) != 0)
      throw Error("cannot enter the sweep's working directory " + workdir);
    Config cfg = config_from_json(m.config_json);
    cfg.run.store = store_path;
    cfg.train.threads = opts.threads;

    std::int64_t run_id = -1;
    bool trained = false;
    if (m.run_id) {
      const RunRecord run = store.get_run(*m.run_id);
      if (run.status == RunStatus::finished) {
        run_id = run.id;
        trained = true;
        log("run " + std::to_string(run_id) + " already trained");
      } else if (const auto ck = store.artifacts(run.id, "checkpoint"); !ck.empty() && file_exists(ck.back().path)) {
        run_id = run.id;
      } else {  // no checkpoint yet, or its file is gone (a store carried to another machine)
        store.update_status(run.id, RunStatus::failed,
                            ck.empty() ? "abandoned before its first checkpoint; the sweep member restarts"
                                       : "its checkpoint " + ck.back().path + " is gone; the sweep member restarts");
      }
    }
    if (!trained && !cfg.prune.method.empty()) {  // a pruning baseline of train.init_from
      PruneRunOptions p;
      p.checkpoint = resolve_init_from(cfg.train.init_from, store_path, cfg.train.seed);
      p.init_from_ref = cfg.train.init_from;
      p.prune = cfg.prune;
      p.store = store_path;
      p.name = cfg.run.name;
      p.variant = cfg.run.variant;
      p.threads = opts.threads;
      p.seed = cfg.train.seed;
      p.sweep_id = opts.sweep;
      p.log = log;
      p.on_run = [&](std::int64_t id) { store.set_sweep_member_run(opts.sweep, opts.index, worker, id); };
      run_id = run_pruning(p).run_id;
    } else if (!trained) {
      cue.send(nlohmann::json{{"config", cfg.to_json()}, {"workdir", workdir}}.dump());
      TrainRunOptions t;
      t.data_parallel = opts.data_parallel;
      t.resume_run = run_id;  // -1: a new run
      t.sweep_id = opts.sweep;
      t.stop = stop;
      t.log = log;
      t.on_run = [&](std::int64_t id) { store.set_sweep_member_run(opts.sweep, opts.index, worker, id); };
      TrainRunResult r = run_training(cfg, t);
      run_id = r.run_id;
      if (r.train.interrupted) {
        finish("killed", lost ? "taken over by another worker" : "stopped by signal at step " + std::to_string(r.train.steps));
        return MemberOutcome::killed;
      }
    }
    const SweepEval ev = sweep_eval_from_json(spec);
    if (ev.enabled && !cfg.data.images.empty()) {
      log("image run " + std::to_string(run_id) + ": evaluated on the test split when training ended");
    } else if (ev.enabled) {
      EvalRunOptions e;
      e.ref.run_id = run_id;
      e.ref.store = store_path;
      e.tasks = ev.tasks;
      e.limit = ev.limit;
      e.wikitext = ev.wikitext;
      e.max_val_tokens = ev.max_val_tokens;
      e.kl_reference = ev.kl_reference;
      e.threads = opts.threads;
      e.log = log;
      run_evaluation(e);
      if (ev.routing_tokens_per_domain > 0 && has_routers(cfg.model.attention, cfg.model.ffn))
        route_stored_run(store_path, run_id, ev.routing_tokens_per_domain, log);  // MoHD Fig. 11, MoH head load
    }
    finish("finished", "");
    log(name + " finished (run " + std::to_string(run_id) + ")");
    return MemberOutcome::finished;
  } catch (const std::exception& e) {
    finish("failed", e.what());
    log(name + " failed: " + e.what());
    return MemberOutcome::failed;
  }
}

}  // namespace moxlab
