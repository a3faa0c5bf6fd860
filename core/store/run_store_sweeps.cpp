// RunStore: sweeps and their members. Members are taken by compare-and-set inside one IMMEDIATE
// transaction, so any number of worker processes (local or Slurm array tasks) can share the store and
// never run the same member twice; every later write checks that the writer still holds the member.
#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/run_store_impl.h"

namespace moxlab {

using namespace store_detail;

namespace {

const char* const kMemberColumns =
    "sweep_id, idx, run_id, status, label, config_json, worker, heartbeat, attempts, error, started_at, finished_at";

SweepMember read_member(SQLite::Statement& q) {
  SweepMember m;
  m.sweep_id = q.getColumn(0).getInt64();
  m.idx = q.getColumn(1).getInt();
  m.run_id = optional_int(q.getColumn(2));
  m.status = q.getColumn(3).getString();
  m.label = q.getColumn(4).getString();
  m.config_json = q.getColumn(5).getString();
  m.worker = q.getColumn(6).getString();
  m.heartbeat = optional_real(q.getColumn(7));
  m.attempts = q.getColumn(8).getInt();
  m.error = q.getColumn(9).getString();
  m.started_at = optional_real(q.getColumn(10));
  m.finished_at = optional_real(q.getColumn(11));
  return m;
}

SweepRecord read_sweep(SQLite::Statement& q) {
  return SweepRecord{q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                     q.getColumn(3).getDouble()};
}

std::string member_name(std::int64_t sweep, int idx) {
  return "member " + std::to_string(idx) + " of sweep " + std::to_string(sweep);
}

}  // namespace

std::int64_t RunStore::create_sweep(const std::string& name, const std::string& spec_json,
                                    const std::vector<SweepMember>& members) {
  const std::string spec = spec_json.empty() ? "{}" : spec_json;
  require_json(spec, "spec_json of sweep " + name);
  for (const auto& m : members) require_json(m.config_json, "config_json of member " + std::to_string(m.idx));
  return live(impl_).guarded("create sweep " + name, [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "INSERT INTO sweeps(name, spec_json, created_at) VALUES(?,?,?)");
    q.bind(1, name);
    q.bind(2, spec);
    q.bind(3, unix_now());
    q.exec();
    const std::int64_t id = db.getLastInsertRowid();
    SQLite::Statement add(db, "INSERT INTO sweep_members(sweep_id, idx, status, label, config_json) VALUES(?,?,'pending',?,?)");
    for (std::size_t i = 0; i < members.size(); ++i) {
      add.bind(1, static_cast<int64_t>(id));
      add.bind(2, static_cast<int>(i));
      add.bind(3, members[i].label);
      add.bind(4, members[i].config_json);
      add.exec();
      add.reset();
    }
    tx.commit();
    return id;
  });
}

SweepRecord RunStore::get_sweep(std::int64_t sweep) const {
  return live(impl_).guarded("read sweep " + std::to_string(sweep), [&](SQLite::Database& db) {
    SQLite::Statement q(db, "SELECT id, name, spec_json, created_at FROM sweeps WHERE id = ?");
    q.bind(1, static_cast<int64_t>(sweep));
    if (!q.executeStep()) throw Error("no sweep with id " + std::to_string(sweep) + " in " + live(impl_).path);
    return read_sweep(q);
  });
}

std::vector<SweepRecord> RunStore::list_sweeps() const {
  return live(impl_).guarded("list sweeps", [&](SQLite::Database& db) {
    SQLite::Statement q(db, "SELECT id, name, spec_json, created_at FROM sweeps ORDER BY id");
    std::vector<SweepRecord> out;
    while (q.executeStep()) out.push_back(read_sweep(q));
    return out;
  });
}

std::vector<SweepMember> RunStore::sweep_members(std::int64_t sweep) const {
  return live(impl_).guarded("read members of sweep " + std::to_string(sweep), [&](SQLite::Database& db) {
    SQLite::Statement q(db, std::string("SELECT ") + kMemberColumns + " FROM sweep_members WHERE sweep_id = ? ORDER BY idx");
    q.bind(1, static_cast<int64_t>(sweep));
    std::vector<SweepMember> out;
    while (q.executeStep()) out.push_back(read_member(q));
    return out;
  });
}

SweepMember RunStore::sweep_member(std::int64_t sweep, int idx) const {
  return live(impl_).guarded("read " + member_name(sweep, idx), [&](SQLite::Database& db) {
    SQLite::Statement q(db, std::string("SELECT ") + kMemberColumns + " FROM sweep_members WHERE sweep_id = ? AND idx = ?");
    q.bind(1, static_cast<int64_t>(sweep));
    q.bind(2, idx);
    if (!q.executeStep()) throw Error("no " + member_name(sweep, idx) + " in " + live(impl_).path);
    return read_member(q);
  });
}

bool RunStore::claim_sweep_member(std::int64_t sweep, int idx, const std::string& expected_status,
                                  const std::string& expected_worker, const std::string& worker) {
  return live(impl_).guarded("claim " + member_name(sweep, idx), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db,
                        "UPDATE sweep_members SET status = 'running', worker = ?, heartbeat = ?, attempts = attempts + 1, "
                        "error = '', started_at = COALESCE(started_at, ?), finished_at = NULL "
                        "WHERE sweep_id = ? AND idx = ? AND status = ? AND worker = ?");
    const double now = unix_now();
    q.bind(1, worker);
    q.bind(2, now);
    q.bind(3, now);
    q.bind(4, static_cast<int64_t>(sweep));
    q.bind(5, idx);
    q.bind(6, expected_status);
    q.bind(7, expected_worker);
    const bool taken = q.exec() == 1;
    tx.commit();
    return taken;
  });
}

namespace {
// UPDATE sweep_members SET <assignments> for a member still held by `worker`; true when it was.
template <class Bind>
bool update_held(SQLite::Database& db, SQLite::Transaction tx, const std::string& assignments, std::int64_t sweep,
                 int idx, const std::string& worker, int n_bound, Bind&& bind) {
  SQLite::Statement q(db, "UPDATE sweep_members SET " + assignments +
                              " WHERE sweep_id = ? AND idx = ? AND worker = ? AND status = 'running'");
  bind(q);
  q.bind(n_bound + 1, static_cast<int64_t>(sweep));
  q.bind(n_bound + 2, idx);
  q.bind(n_bound + 3, worker);
  const bool held = q.exec() == 1;
  tx.commit();
  return held;
}
}  // namespace

bool RunStore::heartbeat_sweep_member(std::int64_t sweep, int idx, const std::string& worker) {
  return live(impl_).guarded("heartbeat " + member_name(sweep, idx), [&](SQLite::Database& db) {
    return update_held(db, live(impl_).write_transaction(), "heartbeat = ?", sweep, idx, worker, 1,
                       [&](SQLite::Statement& q) { q.bind(1, unix_now()); });
  });
}

bool RunStore::set_sweep_member_run(std::int64_t sweep, int idx, const std::string& worker, std::int64_t run) {
  return live(impl_).guarded("set the run of " + member_name(sweep, idx), [&](SQLite::Database& db) {
    return update_held(db, live(impl_).write_transaction(), "run_id = ?", sweep, idx, worker, 1,
                       [&](SQLite::Statement& q) { q.bind(1, static_cast<int64_t>(run)); });
  });
}

bool RunStore::finish_sweep_member(std::int64_t sweep, int idx, const std::string& worker, const std::string& status,
                                   const std::string& error) {
  require(status == "finished" || status == "failed" || status == "killed",
          "a sweep member cannot finish with status '" + status + "'");
  return live(impl_).guarded("finish " + member_name(sweep, idx), [&](SQLite::Database& db) {
    return update_held(db, live(impl_).write_transaction(), "status = ?, error = ?, finished_at = ?, heartbeat = ?",
                       sweep, idx, worker, 4, [&](SQLite::Statement& q) {
                         const double now = unix_now();
                         q.bind(1, status);
                         q.bind(2, error);
                         q.bind(3, now);
                         q.bind(4, now);
                       });
  });
}

}  // namespace moxlab
