#!/usr/bin/env bash
# Commits a study store as docs/reproduction/data/NAME.db.xz: a consistent snapshot (SQLite's online
# backup, safe while the study's runs write to it), compacted, xz-compressed, moved into place atomically.
# The store holds runs, metrics, results and artifact paths, never the checkpoints themselves.
#   scripts/export_store.sh runs/studies/micro.db            # -> docs/reproduction/data/micro.db.xz
# To go on with a study on another machine: xz -dc docs/reproduction/data/micro.db.xz > runs/studies/micro.db
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:?usage: scripts/export_store.sh STORE.db}
[ -f "$store" ] || { echo "export_store: no store $store" >&2; exit 1; }
out=docs/reproduction/data/$(basename "$store").xz
# One export at a time, and none while scripts/commit_study.sh commits a store with its scorecard (it
# holds this lock and sets MOXLAB_EXPORT_LOCKED for its own export).
if [ -z "${MOXLAB_EXPORT_LOCKED:-}" ]; then
  exec 9> "$(dirname "$store")/.export.lock"
  flock 9
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sqlite3 -cmd ".timeout 60000" "$store" ".backup '$tmp/snapshot.db'"
sqlite3 "$tmp/snapshot.db" "PRAGMA journal_mode=DELETE; VACUUM;" > /dev/null
xz -9 -c "$tmp/snapshot.db" > "$tmp/snapshot.db.xz"
mv "$tmp/snapshot.db.xz" "$out"
echo "$out: $(du -h "$out" | cut -f1)"
