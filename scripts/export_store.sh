#!/usr/bin/env bash
# Exports a study store as docs/reproduction/data/NAME/, xz-compressed SQL in parts that git stores once:
#   head.sql.xz                   the schema, meta, sweeps and sweep members (small; changes every member)
#   runs-00001-00010.sql.xz ...   every row of runs 1-10 and of the tables keyed by their run_id
#   items-00002.sql.xz ...        the zero-shot items of run 2 (~0.45 MB a run scored on every item:
#                                 one run a part keeps every part under 2 MB however many runs are scored)
# A part holds a fixed range of run ids, so once its runs are finished (and until a later evaluation adds
# to one) it is written with the same bytes (rows in the order they were written, xz single-threaded)
# and git adds nothing for it; a commit adds the head and the part where runs are being written, each
# well under 2 MB. The rows come from a consistent snapshot (SQLite's online backup, safe while the
# study's runs write to the store), every value printed so that it reads back bit for bit;
# scripts/load_store.sh loads the parts back. The store holds runs, metrics, results and artifact paths,
# never the checkpoints themselves.
#   scripts/export_store.sh runs/studies/micro.db            # -> docs/reproduction/data/micro/
#   scripts/export_store.sh STORE.db DIR                     # into DIR instead
# To go on with a study on another machine:
#   scripts/load_store.sh docs/reproduction/data/micro runs/studies/micro.db
set -euo pipefail
cd "$(dirname "$0")/.."  # relative paths are the checkout's
store=${1:?usage: scripts/export_store.sh STORE.db [DIR]}
[ -f "$store" ] || { echo "export_store: no store $store" >&2; exit 1; }
out=${2:-docs/reproduction/data/$(basename "$store" .db)}
span=10  # run ids a part holds: a commit adds the head and about one part (the micro study's are 0.1-0.5 MB)
# One export at a time, and none while scripts/commit_study.sh commits a store with its scorecard (it
# holds this lock and sets MOXLAB_EXPORT_LOCKED for its own export).
if [ -z "${MOXLAB_EXPORT_LOCKED:-}" ]; then
  exec 9> "$(dirname "$store")/.export.lock"
  flock 9
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sqlite3 -cmd ".timeout 60000" "$store" ".backup '$tmp/snapshot.db'"
q() { sqlite3 -batch "$tmp/snapshot.db" "$@"; }
head_tables="meta sweeps sweep_members"
own_part_tables="items"  # large per run: a part of their own for each run that has rows
run_tables="" own_tables=""
for t in $(q "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"); do
  case " $head_tables runs " in *" $t "*) continue ;; esac
  case " $own_part_tables " in *" $t "*) own_tables="$own_tables $t"; continue ;; esac
  [ -n "$(q "SELECT 1 FROM pragma_table_info('$t') WHERE name = 'run_id'")" ] ||
    { echo "export_store: table $t is neither keyed by run_id nor one of: $head_tables" >&2; exit 1; }
  run_tables="$run_tables $t"
done
# Rows as INSERT statements, in rowid order: sqlite3's insert mode prints what .dump prints.
rows() {  # TABLE [WHERE-clause]
  q -cmd ".mode insert $1" "SELECT * FROM \"$1\" ${2:-} ORDER BY rowid"
}
mkdir -p "$tmp/parts"
{
  q "SELECT sql || ';' FROM sqlite_master WHERE sql NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
  for t in $head_tables; do rows "$t"; done
} | xz -9 -T1 > "$tmp/parts/head.sql.xz"
for lo in $(q "SELECT DISTINCT (id - 1) / $span * $span + 1 FROM runs ORDER BY 1"); do  # ranges holding a run
  hi=$((lo + span - 1))
  {
    rows runs "WHERE id BETWEEN $lo AND $hi"
    for t in $run_tables; do rows "$t" "WHERE run_id BETWEEN $lo AND $hi"; done
  } | xz -9 -T1 > "$tmp/parts/$(printf 'runs-%05d-%05d' "$lo" "$hi").sql.xz"
done
for t in $own_tables; do
  for run in $(q "SELECT DISTINCT run_id FROM \"$t\" ORDER BY 1"); do
    rows "$t" "WHERE run_id = $run" | xz -9 -T1 > "$tmp/parts/$(printf '%s-%05d' "$t" "$run").sql.xz"
  done
done
# Into place part by part (each rename atomic; a part whose bytes are unchanged is left alone), then
# drop parts the store no longer has. An export cut short leaves every part whole; the next one, or
# the one scripts/commit_study.sh makes under the lock, brings them all to one snapshot.
mkdir -p "$out"
for f in "$tmp"/parts/*; do
  dest=$out/$(basename "$f")
  cmp -s "$f" "$dest" && continue
  chmod 644 "$f"
  cp "$f" "$dest.tmp" && mv "$dest.tmp" "$dest"
done
for f in "$out"/*.sql.xz; do
  [ -f "$tmp/parts/$(basename "$f")" ] || rm -f "$f"
done
echo "$out: $(du -sh "$out" | cut -f1) in $(ls "$out" | wc -l) parts"
