#include "core/store/store_merge.h"

#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/common/error.h"
#include "core/common/atomic_file.h"
#include "core/store/run_store.h"
#include "core/store/run_store_impl.h"
#include "core/store/sqlite_error.h"

namespace moxlab {

namespace {

using store_detail::optional_int;

const char* const kOriginsSql = R"sql(
CREATE TABLE IF NOT EXISTS run_origins(
  run_id      INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  origin      TEXT NOT NULL,
  origin_run  INTEGER NOT NULL,
  origin_path TEXT NOT NULL,
  signature   TEXT NOT NULL,
  merged_at   REAL NOT NULL,
  UNIQUE(origin, origin_run));
)sql";

// Every column of runs but id, parent_run and sweep_id (remapped by the merge).
const char* const kRunColumns =
    "name, kind, status, config_json, config_hash, seed, git_rev, data_digest, host, error, created_at, started_at, "
    "finished_at, tags, worker, heartbeat";
const char* const kMemberState = "status, label, worker, heartbeat, attempts, error, started_at, finished_at";

// The store's id, made on first use (the one write a merge makes to its shard).
std::string store_id(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE, 10000);
  auto read = [&]() -> std::optional<std::string> {
    SQLite::Statement q(db, "SELECT value FROM meta WHERE key = 'store_id'");
    if (q.executeStep()) return q.getColumn(0).getString();
    return std::nullopt;
  };
  if (auto id = read()) return *id;
  std::random_device rd;
  char hex[33];
  for (int i = 0; i < 4; ++i) std::snprintf(hex + 8 * i, 9, "%08x", static_cast<unsigned>(rd()));
  SQLite::Statement put(db, "INSERT OR IGNORE INTO meta(key, value) VALUES('store_id', ?)");
  put.bind(1, std::string(hex, 32));
  put.exec();
  return *read();  // another process may have won the race: its id stands
}

// What a shard run is now: a merge recopies a run whose signature changed since the last merge.
std::string run_signature(SQLite::Database& db, std::int64_t run) {
  SQLite::Statement q(db,
                      "SELECT status || '|' || coalesce(finished_at, '') || '|' || coalesce(heartbeat, '') || '|' || error"
                      " || '|' || (SELECT count(*) || ':' || coalesce(max(wall_time), '') FROM shard.metrics WHERE run_id = r.id)"
                      " || '|' || (SELECT count(*) || ':' || coalesce(sum(value), '') FROM shard.results WHERE run_id = r.id)"
                      " || '|' || (SELECT count(*) FROM shard.artifacts WHERE run_id = r.id)"
                      " || '|' || (SELECT count(*) FROM shard.items WHERE run_id = r.id)"
                      " || '|' || tags FROM shard.runs r WHERE r.id = ?");
  q.bind(1, static_cast<int64_t>(run));
  q.executeStep();
  return q.getColumn(0).getString();
}

void exec_bound(SQLite::Database& db, const std::string& sql, std::initializer_list<std::int64_t> values) {
  SQLite::Statement q(db, sql);
  int i = 1;
  for (auto v : values) q.bind(i++, static_cast<int64_t>(v));
  q.exec();
}

// The run's metrics, results, artifacts and items, copied from the shard (in their order there).
void copy_children(SQLite::Database& db, std::int64_t from, std::int64_t to) {
  for (const char* table : {"metrics", "results", "artifacts", "items"})
    exec_bound(db, std::string("DELETE FROM main.") + table + " WHERE run_id = ?", {to});
  exec_bound(db, "INSERT INTO main.metrics(run_id, step, key, value, wall_time) SELECT ?, step, key, value, wall_time "
                 "FROM shard.metrics WHERE run_id = ? ORDER BY rowid", {to, from});
  exec_bound(db, "INSERT INTO main.results(run_id, key, value, meta_json) SELECT ?, key, value, meta_json "
                 "FROM shard.results WHERE run_id = ?", {to, from});
  exec_bound(db, "INSERT INTO main.artifacts(run_id, kind, path, created_at, meta_json) SELECT ?, kind, path, "
                 "created_at, meta_json FROM shard.artifacts WHERE run_id = ? ORDER BY id", {to, from});
  exec_bound(db, "INSERT INTO main.items(run_id, task, idx, payload_json) SELECT ?, task, idx, payload_json "
                 "FROM shard.items WHERE run_id = ?", {to, from});
}

// Shard sweep id -> target sweep id: the target's sweep of the same name and spec (the same id first),
// or a new one with the shard's members, pending.
std::map<std::int64_t, std::int64_t> map_sweeps(SQLite::Database& db, MergeReport& report) {
  std::map<std::int64_t, std::int64_t> out;
  SQLite::Statement sweeps(db, "SELECT id FROM shard.sweeps ORDER BY id");
  while (sweeps.executeStep()) {
    const std::int64_t id = sweeps.getColumn(0).getInt64();
    SQLite::Statement same(db, "SELECT t.id FROM main.sweeps t, shard.sweeps s WHERE s.id = ? AND t.name = s.name "
                               "AND t.spec_json = s.spec_json ORDER BY t.id = s.id DESC, t.id LIMIT 1");
    same.bind(1, static_cast<int64_t>(id));
    if (same.executeStep()) {
      out[id] = same.getColumn(0).getInt64();
      continue;
    }
    exec_bound(db, "INSERT INTO main.sweeps(name, spec_json, created_at) SELECT name, spec_json, created_at "
                   "FROM shard.sweeps WHERE id = ?", {id});
    out[id] = db.getLastInsertRowid();
    exec_bound(db, "INSERT INTO main.sweep_members(sweep_id, idx, status, label, config_json) SELECT ?, idx, "
                   "'pending', label, config_json FROM shard.sweep_members WHERE sweep_id = ?", {out[id], id});
    ++report.sweeps_added;
  }
  return out;
}

std::optional<std::int64_t> lookup(const std::map<std::int64_t, std::int64_t>& m, std::optional<std::int64_t> key) {
  if (!key) return std::nullopt;
  const auto it = m.find(*key);
  return it == m.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
}

void bind_optional(SQLite::Statement& q, int i, std::optional<std::int64_t> v) {
  if (v) q.bind(i, static_cast<int64_t>(*v));
  else q.bind(i);
}

// Shard run id -> target run id, adding new runs and recopying changed ones.
std::map<std::int64_t, std::int64_t> merge_runs(SQLite::Database& db, const std::string& origin, const std::string& shard_path,
                                                const std::map<std::int64_t, std::int64_t>& sweeps, MergeReport& report) {
  std::map<std::int64_t, std::int64_t> out;
  std::vector<std::pair<std::int64_t, std::optional<std::int64_t>>> parents;  // shard run, shard parent
  SQLite::Statement runs(db, "SELECT id, parent_run, sweep_id FROM shard.runs ORDER BY id");
  while (runs.executeStep()) {
    const std::int64_t id = runs.getColumn(0).getInt64();
    parents.emplace_back(id, optional_int(runs.getColumn(1)));
    const auto sweep = lookup(sweeps, optional_int(runs.getColumn(2)));
    const std::string signature = run_signature(db, id);
    SQLite::Statement known(db, "SELECT run_id, signature FROM main.run_origins WHERE origin = ? AND origin_run = ?");
    known.bind(1, origin);
    known.bind(2, static_cast<int64_t>(id));
    std::int64_t target = 0;
    if (known.executeStep()) {
      target = known.getColumn(0).getInt64();
      out[id] = target;
      if (known.getColumn(1).getString() == signature) {
        ++report.runs_unchanged;
        continue;
      }
      SQLite::Statement update(db, std::string("UPDATE main.runs SET (") + kRunColumns + ", sweep_id) = (SELECT " + kRunColumns +
                                       ", ? FROM shard.runs WHERE id = ?) WHERE id = ?");
      bind_optional(update, 1, sweep);
      update.bind(2, static_cast<int64_t>(id));
      update.bind(3, static_cast<int64_t>(target));
      update.exec();
      ++report.runs_updated;
    } else {
      SQLite::Statement insert(db, std::string("INSERT INTO main.runs(") + kRunColumns + ", sweep_id) SELECT " + kRunColumns +
                                       ", ? FROM shard.runs WHERE id = ?");
      bind_optional(insert, 1, sweep);
      insert.bind(2, static_cast<int64_t>(id));
      insert.exec();
      target = db.getLastInsertRowid();
      out[id] = target;
      ++report.runs_added;
    }
    copy_children(db, id, target);
    SQLite::Statement record(db, "INSERT OR REPLACE INTO main.run_origins(run_id, origin, origin_run, origin_path, signature, "
                                 "merged_at) VALUES(?,?,?,?,?,?)");
    record.bind(1, static_cast<int64_t>(target));
    record.bind(2, origin);
    record.bind(3, static_cast<int64_t>(id));
    record.bind(4, shard_path);
    record.bind(5, signature);
    record.bind(6, unix_now());
    record.exec();
  }
  for (const auto& [id, parent] : parents) {  // a parent inside the shard follows its child; others are unknown here
    SQLite::Statement q(db, "UPDATE main.runs SET parent_run = ? WHERE id = ?");
    bind_optional(q, 1, lookup(out, parent));
    q.bind(2, static_cast<int64_t>(out.at(id)));
    q.exec();
  }
  return out;
}

// Each shard member with a run takes its state into the target's member (see the header).
void merge_members(SQLite::Database& db, const std::map<std::int64_t, std::int64_t>& sweeps,
                   const std::map<std::int64_t, std::int64_t>& runs, MergeReport& report) {
  SQLite::Statement members(db, "SELECT m.sweep_id, m.idx, m.run_id, m.status, s.name FROM shard.sweep_members m "
                                "JOIN shard.sweeps s ON s.id = m.sweep_id WHERE m.run_id IS NOT NULL ORDER BY m.sweep_id, m.idx");
  while (members.executeStep()) {
    const std::int64_t sweep = sweeps.at(members.getColumn(0).getInt64());
    const int idx = members.getColumn(1).getInt();
    const std::int64_t run = runs.at(members.getColumn(2).getInt64());
    const std::string status = members.getColumn(3).getString();
    const std::string what = "member " + std::to_string(idx) + " of sweep " + members.getColumn(4).getString();
    SQLite::Statement target(db, "SELECT run_id, status FROM main.sweep_members WHERE sweep_id = ? AND idx = ?");
    target.bind(1, static_cast<int64_t>(sweep));
    target.bind(2, idx);
    require(target.executeStep(), what + " is in the shard but not in the target's plan of that sweep");
    const auto target_run = optional_int(target.getColumn(0));
    const std::string target_status = target.getColumn(1).getString();
    if (target_run != run && target_status == "finished") {
      require(status != "finished", what + " finished in both stores, as target run " + std::to_string(target_run.value_or(-1)) +
                                        " and as the shard's (merged as run " + std::to_string(run) + ")");
      continue;  // the target's finished run stands
    }
    SQLite::Statement update(db, std::string("UPDATE main.sweep_members SET run_id = ?, (") + kMemberState + ") = (SELECT " +
                                     kMemberState + " FROM shard.sweep_members WHERE sweep_id = ? AND idx = ?) "
                                     "WHERE sweep_id = ? AND idx = ?");
    update.bind(1, static_cast<int64_t>(run));
    update.bind(2, static_cast<int64_t>(members.getColumn(0).getInt64()));
    update.bind(3, idx);
    update.bind(4, static_cast<int64_t>(sweep));
    update.bind(5, idx);
    update.exec();
    if (db.getChanges() > 0 && (target_run != run || target_status != status)) ++report.members_updated;
  }
}

}  // namespace

MergeReport merge_store(const std::string& target, const std::string& shard) {
  require(file_exists(shard), "no shard store at " + shard);
  namespace fs = std::filesystem;
  require(!fs::exists(target) || !fs::equivalent(target, shard), "cannot merge the store " + target + " into itself");
  {  // both at the current schema (an older file is migrated); the target is created when missing
    const RunStore opened_shard(shard);
    const RunStore opened_target(target);
  }
  std::string origin, own;
  try {
    origin = store_id(shard);
    own = store_id(target);
  } catch (const SQLite::Exception& e) {
    throw_sqlite_error(e, shard + " / " + target, "read the store ids");
  }
  require(origin != own, "the shard " + shard + " is a copy of the target " + target + " (the same store id)");
  MergeReport report;
  try {
    SQLite::Database db(target, SQLite::OPEN_READWRITE, 10000);
    db.exec("PRAGMA foreign_keys=ON");
    SQLite::Statement attach(db, "ATTACH DATABASE ? AS shard");
    attach.bind(1, shard);
    attach.exec();
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    db.exec(kOriginsSql);
    const auto sweeps = map_sweeps(db, report);
    const auto runs = merge_runs(db, origin, fs::absolute(shard).string(), sweeps, report);
    merge_members(db, sweeps, runs, report);
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw_sqlite_error(e, target, "merge " + shard);
  }
  return report;
}

void plan_shard(const std::string& main_store, std::int64_t sweep, const std::string& shard) {
  RunStoreOptions ro;
  ro.read_only = true;
  const RunStore main(main_store, ro);
  const SweepRecord s = main.get_sweep(sweep);
  const std::vector<SweepMember> members = main.sweep_members(sweep);
  { const RunStore created(shard); }
  try {
    SQLite::Database db(shard, SQLite::OPEN_READWRITE, 10000);
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement existing(db, "SELECT name, spec_json FROM sweeps WHERE id = ?");
    existing.bind(1, static_cast<int64_t>(sweep));
    if (existing.executeStep()) {
      require(existing.getColumn(0).getString() == s.name && existing.getColumn(1).getString() == s.spec_json,
              "shard " + shard + " holds another sweep (" + existing.getColumn(0).getString() + ") under id " +
                  std::to_string(sweep));
      return;
    }
    SQLite::Statement add(db, "INSERT INTO sweeps(id, name, spec_json, created_at) VALUES(?,?,?,?)");
    add.bind(1, static_cast<int64_t>(sweep));
    add.bind(2, s.name);
    add.bind(3, s.spec_json);
    add.bind(4, s.created_at);
    add.exec();
    SQLite::Statement member(db, "INSERT INTO sweep_members(sweep_id, idx, status, label, config_json) VALUES(?,?,'pending',?,?)");
    for (const auto& m : members) {
      member.bind(1, static_cast<int64_t>(sweep));
      member.bind(2, m.idx);
      member.bind(3, m.label);
      member.bind(4, m.config_json);
      member.exec();
      member.reset();
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw_sqlite_error(e, shard, "plan sweep " + std::to_string(sweep));
  }
}

std::string merge_report_text(const MergeReport& r) {
  return std::to_string(r.runs_added) + " runs added, " + std::to_string(r.runs_updated) + " updated, " +
         std::to_string(r.runs_unchanged) + " unchanged; " + std::to_string(r.sweeps_added) + " sweeps added; " +
         std::to_string(r.members_updated) + " members updated";
}

}  // namespace moxlab
