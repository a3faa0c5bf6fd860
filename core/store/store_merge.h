// Merging run-store shards. SQLite in WAL mode is safe for many writers on one host only, so workers on
// other hosts (Slurm array tasks on several nodes) each write their own store, a shard, and
// `moxlab store merge` folds the shards into the main store:
//   - runs get new ids in the target; their metrics, results, artifacts and items follow them, and a
//     run of the shard whose parent is also in the shard keeps that parent (remapped);
//   - each merged run's origin (the shard's store id and the run's id there) is recorded in the
//     target's table run_origins: merging a shard again changes nothing, and a shard that went on
//     (a run resumed and finished) replaces what its earlier merge brought;
//   - a shard's sweep is the target's sweep of the same name and spec (else it is added with its
//     members); each shard member that has a run takes its state into the target's member, unless the
//     target's member already finished with another run (two finished runs of one member: a conflict);
//   - all of one shard or nothing: one transaction, so a killed or failed merge leaves the target as it
//     was, and rerunning it is safe. Hosts, configs, builds and times are kept as the shard wrote them.
// A store's id (meta.store_id, 128 random bits) is made the first time it takes part in a merge.
// run_origins lives outside the versioned schema (run_store_schema.h): builds that predate merging
// keep reading and writing a merged store.
#pragma once
#include <cstdint>
#include <string>

namespace moxlab {

struct MergeReport {
  int runs_added = 0;
  int runs_updated = 0;    // merged before, changed in the shard since
  int runs_unchanged = 0;  // merged before, the same now
  int sweeps_added = 0;
  int members_updated = 0;
};

// Merges the shard store into the target store (created when missing). Errors (a missing or foreign
// file, the target itself or a copy of it as the shard, a conflict) name the files and leave the target
// unchanged.
MergeReport merge_store(const std::string& target, const std::string& shard);

// Writes a sweep's plan (the sweep under the same id, all its members pending) into a shard store,
// created when missing, so a worker on another host runs `moxlab sweep run ID --index K --store SHARD`
// without touching the main store. Nothing to do when the shard already has it; an Error when the shard
// holds another sweep under that id.
void plan_shard(const std::string& main_store, std::int64_t sweep, const std::string& shard);

// "2 runs added, 0 updated, 1 unchanged; 0 sweeps added; 2 members updated"
std::string merge_report_text(const MergeReport& r);

}  // namespace moxlab
