#!/usr/bin/env bash
# Loads a committed study store (docs/reproduction/data/NAME/, written by scripts/export_store.sh) into
# a new SQLite file: the head first (schema, sweeps), then every other part (the ranges of runs, the
# one-run parts of items) in name order, in one transaction.
# Refuses to overwrite an existing file; the result appears only once it is complete.
#   scripts/load_store.sh docs/reproduction/data/micro runs/studies/micro.db
set -euo pipefail
dir=${1:?usage: scripts/load_store.sh DIR OUT.db}
db=${2:?usage: scripts/load_store.sh DIR OUT.db}
[ -f "$dir/head.sql.xz" ] || { echo "load_store: $dir holds no exported store (no head.sql.xz)" >&2; exit 1; }
[ ! -e "$db" ] || { echo "load_store: $db exists; not overwriting it" >&2; exit 1; }
shopt -s nullglob
rm -f "$db.loading"
trap 'rm -f "$db.loading"' EXIT  # a load cut short leaves nothing behind
{
  echo "PRAGMA foreign_keys=OFF; BEGIN;"
  xz -dc "$dir/head.sql.xz"
  for part in "$dir"/*.sql.xz; do [ "${part##*/}" = head.sql.xz ] || xz -dc "$part"; done
  echo "COMMIT;"
} | sqlite3 -bail "$db.loading"
mv "$db.loading" "$db"
