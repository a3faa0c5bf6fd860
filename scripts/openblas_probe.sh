#!/usr/bin/env bash
# Which OpenBLAS kernels give back a finished sweep member's run: the member is trained again by its
# pinned build (runs/pinned/REV/build/moxlab) under each OpenBLAS core type given, in a scratch copy of
# the store, until it has logged past step STEPS, and every metric logged up to there (train loss, grad norm,
# lr, tokens, periodic validation; not the timing) is compared with the store's, printed to 17
# significant digits (equal text is equal bits). MoH's router and MoHD's fusion multiply through
# OpenBLAS, whose kernels follow the CPU; a run comes back bit for bit only on the kernels that trained
# it (docs/reproduction/data/micro_openblas.tsv records them for scripts/regenerate_checkpoint.sh).
#   scripts/openblas_probe.sh STORE SWEEP_ID:INDEX STEPS CORE...   (CORE: Prescott, Haswell, SkylakeX, ...)
# Prints one line per core: "CORE: equal, N values to step S" or "CORE: differs from step S (KEY)".
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/openblas_probe.sh STORE SWEEP_ID:INDEX STEPS CORE..."
store=${1:?$usage} member=${2:?$usage} steps=${3:?$usage}
shift 3
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
[ -f "$store" ] || { echo "openblas_probe: no store at $store" >&2; exit 1; }
[[ $member =~ ^[0-9]+:[0-9]+$ ]] || { echo "openblas_probe: member '$member' is not SWEEP_ID:INDEX" >&2; exit 2; }
[[ $steps =~ ^[1-9][0-9]*$ ]] || { echo "openblas_probe: STEPS '$steps' is not a positive number" >&2; exit 2; }
sweep=${member%%:*} idx=${member##*:}
query() { sqlite3 -readonly -cmd ".timeout 60000" "$1" "$2"; }
IFS=$'\x1f' read -r run rev <<< "$(sqlite3 -readonly -cmd ".timeout 60000" -separator $'\x1f' "$store" \
  "select r.id, substr(r.git_rev, 1, 7) from sweep_members m join runs r on r.id = m.run_id
   where m.sweep_id = $sweep and m.idx = $idx and m.status = 'finished'")"
[ -n "$run" ] || { echo "openblas_probe: member $member of $store is not finished" >&2; exit 1; }
binary=${MOXLAB:-runs/pinned/$rev/build/moxlab}  # MOXLAB: another binary (tests)
[ -x "$binary" ] || { echo "openblas_probe: run $run needs its build $rev at $binary" >&2; exit 1; }

scratch=$(mktemp -d)
child=
cleanup() {
  if [ -n "$child" ]; then kill "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
values() {  # STORE RUN: the metrics logged up to step $steps (a step logged twice counts once)
  query "$1" "select distinct key, step, printf('%.17g', value) from metrics
              where run_id = $2 and step <= $steps and key != 'train/tokens_per_s' order by step, key"
}
past_steps() {  # DB: the run trained there has logged its train loss past step $steps
  [ "$(query "$1" "select count(*) from metrics where run_id > 2000000 and key = 'train/loss' and step > $steps")" != 0 ]
}
values "$store" "$run" > "$scratch/original"
[ -s "$scratch/original" ] || { echo "openblas_probe: run $run logged no metrics up to step $steps" >&2; exit 1; }
for core in "$@"; do
  db=$scratch/$core.db
  sqlite3 -cmd ".timeout 60000" "$store" ".backup '$db'"
  # Runs trained here get ids from 2000001 on, and their folders are removed afterwards.
  sqlite3 "$db" "insert into runs(id, name, created_at) values (2000000, 'openblas_probe: probed runs follow', 0);
                 update sweep_members set status = 'pending', run_id = null, attempts = 0, error = ''
                 where sweep_id = $sweep and idx = $idx"
  OPENBLAS_CORETYPE=$core nice -n 10 "$binary" sweep run "$sweep" --index "$idx" --store "$db" --threads 1 \
    > "$scratch/$core.log" 2>&1 &
  child=$!
  # A short run may finish between two looks: it has stopped too early only if it never got past STEPS.
  until past_steps "$db"; do
    kill -0 "$child" 2>/dev/null || past_steps "$db" ||
      { tail -n 3 "$scratch/$core.log" >&2; echo "openblas_probe: $core: training stopped" >&2; exit 1; }
    sleep 5
  done
  kill "$child" 2>/dev/null || true
  wait "$child" 2>/dev/null || true
  child=
  new=$(query "$db" "select max(id) from runs")
  values "$db" "$new" > "$scratch/new"
  rm -rf "$(query "$db" "select path from artifacts where run_id = $new and kind = 'run_dir' limit 1")"
  if diff -q "$scratch/original" "$scratch/new" > /dev/null; then
    echo "$core: equal, $(wc -l < "$scratch/new") values to step $steps"
  else
    echo "$core: differs from step $(diff "$scratch/original" "$scratch/new" | awk -F'|' '/^[<>]/ { sub(/^[<>] /, ""); print $2 " (" $1 ")"; exit }')"
  fi
done
