#!/usr/bin/env bash
# Commits a study store as docs/reproduction/data/NAME.sql: the SQL text of a consistent snapshot
# (SQLite's online backup, safe while the study's runs write to it), moved into place atomically. Text,
# not a compressed file: git stores each new version as a delta against the last (a few members' rows,
# tens of kB, where a recompressed store cost its whole 2 MB every commit; .gitattributes keeps it out of
# diffs). Rows come out in the order they were written, so a version differs from the last by its new
# rows and changed member states. The store holds runs, metrics, results and artifact paths, never the
# checkpoints themselves; every value is printed so that it reads back bit for bit.
#   scripts/export_store.sh runs/studies/micro.db            # -> docs/reproduction/data/micro.sql
# To go on with a study on another machine: sqlite3 runs/studies/micro.db < docs/reproduction/data/micro.sql
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:?usage: scripts/export_store.sh STORE.db}
[ -f "$store" ] || { echo "export_store: no store $store" >&2; exit 1; }
out=docs/reproduction/data/$(basename "$store" .db).sql
# One export at a time, and none while scripts/commit_study.sh commits a store with its scorecard (it
# holds this lock and sets MOXLAB_EXPORT_LOCKED for its own export).
if [ -z "${MOXLAB_EXPORT_LOCKED:-}" ]; then
  exec 9> "$(dirname "$store")/.export.lock"
  flock 9
fi
tmp=$(mktemp -d)
part=$(mktemp "$out.XXXXXX")  # beside $out: the rename into place is atomic
trap 'rm -rf "$tmp" "$part"' EXIT
sqlite3 -cmd ".timeout 60000" "$store" ".backup '$tmp/snapshot.db'"
sqlite3 "$tmp/snapshot.db" .dump > "$part"
chmod 644 "$part"
mv "$part" "$out"
echo "$out: $(du -h "$out" | cut -f1)"
