#!/usr/bin/env bash
# The micro studies of issue 32 (docs/reproduction/README.md), run resumably on one pinned build in two
# single-thread lanes, tier 1 first, with the store exported to docs/reproduction/data/micro.db.xz after
# every member (commit that file as members finish: a machine can be lost between sessions).
#   scripts/study_micro.sh                 # go on with the study (plans it on a new store)
# The pinned revision is docs/reproduction/data/micro.pin; its binary is built once, from a git worktree
# of that revision, into runs/pinned/<rev>/ (about 20 minutes on 2 cores), so the whole study is one build
# whatever main has moved on to. A store lost with its machine is restored from the committed file; a
# member that was running there starts again (its checkpoints were on that machine).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
pin=$(cat docs/reproduction/data/micro.pin)
store=runs/studies/micro.db
B=$root/runs/pinned/$pin/build/moxlab

if [ ! -x "$B" ]; then
  [ -d "runs/pinned/$pin" ] || git worktree add --detach "runs/pinned/$pin" "$pin"
  cmake -S "runs/pinned/$pin" -B "runs/pinned/$pin/build" -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "runs/pinned/$pin/build" -j"$(nproc)" --target moxlab
fi
mkdir -p runs/studies
if [ ! -f "$store" ] && [ -f docs/reproduction/data/micro.db.xz ]; then
  xz -dc docs/reproduction/data/micro.db.xz > "$store.restoring" && mv "$store.restoring" "$store"
fi
if [ ! -f "$store" ]; then  # a new study: the sweeps in the order the claims and tables name them
  for s in micro_methods micro_prune micro_tomoe micro_mohd_x2 micro_controls micro_early; do
    "$B" sweep plan "experiments/studies/$s.toml" --store "$store" > /dev/null
  done
fi
# Both lanes and their trainers write the store: a reader waits for a writer (up to a minute) instead of failing.
query() { sqlite3 -readonly -cmd ".timeout 60000" "$store" "$1"; }
id_of() { query "select id from sweeps where name = '$1'"; }
M=$(id_of micro_methods); P=$(id_of micro_prune); T=$(id_of micro_tomoe)
X=$(id_of micro_mohd_x2); C=$(id_of micro_controls); E=$(id_of micro_early)

# "SWEEP:INDEX" in order; a lane runs its list one member at a time, each after the ones it needs (the
# pruning and ToMoE members of seed k read micro_methods' dense member of seed k, trained earlier on the
# same lane). Finished members are skipped, so the script resumes where the last one stopped.
seed_chain() {  # the dense model of seed $1 and everything converted or pruned from it
  local k=$1
  echo "$M:$(( (k - 1) * 4 ))"
  for i in $(seq $(( (k - 1) * 6 )) $(( (k - 1) * 6 + 5 ))); do echo "$P:$i"; done
  for i in $(seq $(( (k - 1) * 3 )) $(( (k - 1) * 3 + 2 ))); do echo "$T:$i"; done
}
lane1=$(seed_chain 1; seed_chain 3; for i in 1 5 9 3 7 11; do echo "$M:$i"; done; for i in 0 1 2; do echo "$X:$i"; done)
lane2=$(seed_chain 2; for i in 2 6 10; do echo "$M:$i"; done; for i in $(seq 0 29); do echo "$E:$i"; done
        for i in $(seq 0 17); do echo "$C:$i"; done)

run_lane() {
  local name=$1 list=$2
  for member in $list; do
    local sweep=${member%%:*} idx=${member##*:}
    local status
    status=$(query "select status from sweep_members where sweep_id = $sweep and idx = $idx")
    [ "$status" = "finished" ] && continue
    echo "$(date -u +%FT%TZ) $name: sweep $sweep member $idx"
    nice -n 10 "$B" sweep run "$sweep" --index "$idx" --store "$store" --threads 1 || echo "$name: member $sweep:$idx ended with $?"
    scripts/export_store.sh "$store"
  done
}
run_lane lane1 "$lane1" > runs/studies/lane1.log 2>&1 &
run_lane lane2 "$lane2" > runs/studies/lane2.log 2>&1 &
wait
