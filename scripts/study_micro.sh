#!/usr/bin/env bash
# The micro studies of issue 32 (docs/reproduction/README.md), run resumably on one pinned build by two
# single-thread lanes sharing one queue in priority order, with the store exported to
# docs/reproduction/data/micro.db.xz after every member (commit that file as members finish: a machine
# can be lost between sessions).
#   scripts/study_micro.sh                 # go on with the study (plans the sweeps the store lacks)
#   LANES=1 scripts/study_micro.sh         # one lane (the other core free for building)
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

# The stories260K repeat of ToMoE starts from the pretrained model, imported once by the pinned binary.
if [ ! -f runs/imported/stories260K.pt ]; then
  mkdir -p runs/imported
  "$B" import llama2c --model ../shared/data/models/stories260K/stories260K.bin \
    --tokenizer ../shared/data/models/stories260K/tok512.bin --out runs/imported/stories260K.pt
fi

# Both lanes and their trainers write the store: a reader waits for a writer (up to a minute) instead of failing.
query() { sqlite3 -readonly -cmd ".timeout 60000" "$store" "$1"; }
id_of() { [ -f "$store" ] && query "select id from sweeps where name = '$1'" || true; }
# The sweeps in the order the claims and tables name them; one the store lacks is planned (a new
# study, or one added to the study later: its specs are read by the pinned binary).
for s in micro_methods micro_prune micro_tomoe micro_mohd_x2 micro_controls micro_early \
         micro_moh_continue micro_prune_levels micro_tomoe_levels micro_mohd_more stories_prune stories_tomoe; do
  [ -n "$(id_of "$s")" ] || "$B" sweep plan "experiments/studies/$s.toml" --store "$store" > /dev/null
done
M=$(id_of micro_methods); P=$(id_of micro_prune); T=$(id_of micro_tomoe); X=$(id_of micro_mohd_x2)
C=$(id_of micro_controls); E=$(id_of micro_early); H=$(id_of micro_moh_continue)
PL=$(id_of micro_prune_levels); TL=$(id_of micro_tomoe_levels); MM=$(id_of micro_mohd_more)
SP=$(id_of stories_prune); ST=$(id_of stories_tomoe)

# The queue, one member per line, "SWEEP:INDEX" then the members it needs finished first. Member j of
# seed k of a sweep with n members per seed is index (k-1)*n + j. Pruning, ToMoE and continue-tuning
# members of seed k start from micro_methods' dense member of seed k; the prune-then-distill members from
# the Taylor-pruned model of their seed. stories_prune has 14 members per seed (dense, then magnitude,
# Wanda, Taylor, ShortGPT at 70/50/40%, then 2:4), stories_tomoe 9 (ToMoE, one expert, Taylor +
# distillation at 70/50/40%). "zs:SWEEP:INDEX" is the zero-shot scoring of a trained member (every item
# of every task, with the likelihood margin; results added to the member's run by the pinned binary).
queue() {
  local k dense
  for k in 1 2 3; do echo "$M:$(( (k - 1) * 4 ))"; done  # the base models, one per seed
  for k in 1 2 3; do                                     # tier 1: ToMoE 50% and its baselines
    dense="$M:$(( (k - 1) * 4 ))"
    for j in 0 1 2 3 4 5; do echo "$P:$(( (k - 1) * 6 + j )) $dense"; done
    echo "$T:$(( (k - 1) * 3 )) $dense"
    echo "$T:$(( (k - 1) * 3 + 1 )) $dense"
    echo "$T:$(( (k - 1) * 3 + 2 )) $dense $P:$(( (k - 1) * 6 + 3 ))"
  done
  for j in 1 2 3; do for k in 1 2 3; do echo "$M:$(( (k - 1) * 4 + j ))"; done; done  # MoHD 50%, MoH 75%, 50%
  for i in $(seq 0 11); do echo "zs:$M:$i $M:$i"; done                                # their zero-shot scores
  for i in $(seq 0 29); do echo "$E:$i"; done        # the 200-step reruns: which early effects are branch scale
  for i in 0 1 2; do echo "$X:$i"; echo "zs:$X:$i $X:$i"; done                        # MoHD x2
  for k in 1 2 3; do for j in 0 1; do echo "$H:$(( (k - 1) * 2 + j )) $M:$(( (k - 1) * 4 ))"; done; done
  for i in $(seq 0 17); do echo "$C:$i"; done                                         # the branch-scale controls
  for k in 1 2 3; do
    dense="$M:$(( (k - 1) * 4 ))"
    for j in $(seq 0 7); do echo "$PL:$(( (k - 1) * 8 + j )) $dense"; done
    for j in 0 1 3 4; do echo "$TL:$(( (k - 1) * 6 + j )) $dense"; done
    echo "$TL:$(( (k - 1) * 6 + 2 )) $dense $PL:$(( (k - 1) * 8 + 2 ))"
    echo "$TL:$(( (k - 1) * 6 + 5 )) $dense $PL:$(( (k - 1) * 8 + 6 ))"
  done
  for k in 1 2 3; do                                     # ToMoE on stories260K, 70/50/40%
    for j in $(seq 0 13); do echo "$SP:$(( (k - 1) * 14 + j ))"; done
    for l in 0 1 2; do
      echo "$ST:$(( (k - 1) * 9 + 3 * l ))"
      echo "$ST:$(( (k - 1) * 9 + 3 * l + 1 ))"
      echo "$ST:$(( (k - 1) * 9 + 3 * l + 2 )) $SP:$(( (k - 1) * 14 + 3 + 4 * l ))"
    done
  done
  for i in $(seq 0 11); do echo "$MM:$i"; echo "zs:$MM:$i $MM:$i"; done               # MoHD 75% and Table 4
}
run_of() { query "select run_id from sweep_members where sweep_id = ${1%%:*} and idx = ${1##*:}"; }
status_of() {
  case $1 in
    zs:*) local run; run=$(run_of "${1#zs:}")
          [ -n "$run" ] && [ -n "$(query "select 1 from results where run_id = $run and key = 'winogrande/margin'")" ] &&
            echo finished || echo pending ;;
    *) query "select status from sweep_members where sweep_id = ${1%%:*} and idx = ${1##*:}" ;;
  esac
}
zero_shot() {  # the member's training run, scored on every zero-shot item (log: runs/studies/zero_shot_RUN.log)
  local run; run=$(run_of "$1")
  nice -n 10 "$B" eval --run "$run" --store "$store" --no-perplexity --no-wikitext --threads 1 > "runs/studies/zero_shot_$run.log" 2>&1
}

# A lane takes the first member of the queue that is not finished, not taken by a lane of this script
# (claims/<member>: mkdir is atomic) and whose needs are finished; a member is tried once per start of
# the script. With nothing to take it waits while another lane still runs a member, else it ends.
claims=runs/studies/claims
rm -rf "$claims" && mkdir -p "$claims"
run_lane() {
  local name=$1 member needs next busy
  while true; do
    next=""
    while read -r member needs; do
      [ -d "$claims/$member" ] && continue
      [ "$(status_of "$member")" = "finished" ] && continue
      local ready=1 need
      for need in $needs; do [ "$(status_of "$need")" = "finished" ] || ready=0; done
      [ "$ready" = 1 ] && mkdir "$claims/$member" 2> /dev/null && { next=$member; break; }
    done < <(queue)
    if [ -z "$next" ]; then
      busy=$(find "$claims" -mindepth 1 -maxdepth 1 -type d '!' -exec test -e '{}/done' ';' -print | head -n1)
      [ -n "$busy" ] || return 0
      sleep 60
      continue
    fi
    echo "$(date -u +%FT%TZ) $name: $next"
    case $next in
      zs:*) zero_shot "${next#zs:}" || echo "$name: $next ended with $?" ;;
      *) nice -n 10 "$B" sweep run "${next%%:*}" --index "${next##*:}" --store "$store" --threads 1 ||
           echo "$name: member $next ended with $?" ;;
    esac
    touch "$claims/$next/done"
    scripts/export_store.sh "$store"
  done
}
for lane in $(seq 1 "${LANES:-2}"); do
  run_lane "lane$lane" >> "runs/studies/lane$lane.log" 2>&1 &
  sleep 5  # the first lane claims first
done
wait
