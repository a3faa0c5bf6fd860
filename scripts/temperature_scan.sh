#!/usr/bin/env bash
# Validation loss and predictive entropy of a study's finished runs with the logits divided by each of
# several temperatures (moxlab eval --temperature): the calibration reading behind a comparison whose
# teacher or evaluation text is out of the model's domain. The study store is only read; everything is
# evaluated in a scratch copy. A run whose checkpoint is gone (trained on another machine) is trained
# again there first, from its sweep member, by its own pinned build (runs/pinned/REV/build/moxlab), after
# the run it was initialised from (sweep:NAME/VARIANT) when that one is gone too. The store's own loss
# stands beside the temperature-1 row, so a run that did not come back the same shows. Appends to
# OUT.partial per run (an interrupted scan resumes there) and moves it to OUT when every run is done.
#   scripts/temperature_scan.sh STORE OUT.tsv RUN_ID...
#   TEMPERATURES="1 1.5 2" MAX_VAL_TOKENS=65536 (the studies' final evaluation) MOXLAB=build/moxlab
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/temperature_scan.sh STORE OUT.tsv RUN_ID..."
store=${1:?$usage}
out=${2:?$usage}
shift 2
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
[ -f "$store" ] || { echo "temperature_scan: no store at $store" >&2; exit 1; }
read -ra temperatures <<< "${TEMPERATURES:-1 1.25 1.5 1.75 2 2.25 2.5}"
[ ${#temperatures[@]} -gt 0 ] || { echo "temperature_scan: TEMPERATURES is empty" >&2; exit 2; }
max_val_tokens=${MAX_VAL_TOKENS:-65536}
moxlab=${MOXLAB:-build/moxlab}
scratch=$(mktemp -d)
retrained_dirs=()
child=
cleanup() {
  # A training step stops at its next step boundary and ends its heartbeat (up to half a minute).
  if [ -n "$child" ]; then kill "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
  for d in "${retrained_dirs[@]}"; do rm -rf "$d"; done
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Runs a step in the background and waits, so a signal stops the scan (and the step) at once.
step() {
  "$@" &
  child=$!
  wait "$child"
  local rc=$?
  child=
  return $rc
}
sqlite3 -cmd ".timeout 60000" "$store" ".backup $scratch/store.db"
q() { sqlite3 -separator $'\t' "$scratch/store.db" "$1"; }
# Runs trained here get ids from 1000001 on: their folders cannot be mistaken for the study's.
q "insert into runs(id, name, created_at) values (1000000, 'temperature_scan: retrained runs follow', 0)"

declare -A retrained=()  # study run id -> its run trained again here
# Sets `ready` to the id, in the scratch store, of a run with run $1's weights: $1 itself while its
# checkpoint is on disk, else that run trained again from its sweep member by its pinned build (first
# the run it was initialised from, sweep:NAME/VARIANT[/SEED], when that one's checkpoint is gone too).
make_ready() {
  local id=$1 checkpoint rev seed member sweep index pinned init from_sweep from_variant from_seed from core
  if [ -n "${retrained[$id]:-}" ]; then ready=${retrained[$id]}; return; fi
  checkpoint=$(q "select path from artifacts where run_id = $id and kind = 'checkpoint' order by id desc limit 1")
  if [ -n "$checkpoint" ] && [ -f "$checkpoint" ]; then ready=$id; return; fi
  IFS=$'\t' read -r rev seed init <<< "$(q "select substr(git_rev, 1, 7), seed,
      json_extract(config_json, '\$.\"train.init_from\"') from runs where id = $id")"
  member=$(q "select sweep_id, idx from sweep_members where run_id = $id")
  [ -n "$member" ] || { echo "temperature_scan: run $id has no checkpoint and no sweep member to train it again" >&2; exit 1; }
  IFS=$'\t' read -r sweep index <<< "$member"
  pinned=runs/pinned/$rev/build/moxlab
  [ -x "$pinned" ] || { echo "temperature_scan: training run $id again needs its build $rev at $pinned" >&2; exit 1; }
  if [[ $init == sweep:* ]]; then
    IFS=/ read -r from_sweep from_variant from_seed <<< "${init#sweep:}"
    from=$(q "select r.id from runs r join sweeps s on s.id = r.sweep_id where s.name = '$from_sweep'
              and json_extract(r.config_json, '\$.\"run.variant\"') = '$from_variant'
              and r.seed = ${from_seed:-$seed} and r.status = 'finished' order by r.id desc limit 1")
    [ -z "$from" ] || make_ready "$from"
  fi
  q "delete from runs where id = $id;
     update sweep_members set status = 'pending', run_id = NULL, attempts = 0, worker = '', error = ''
     where sweep_id = $sweep and idx = $index"
  echo "run $id (seed $seed): training it again, sweep $sweep member $index, build $rev" >&2
  core=$(scripts/openblas_core_of.sh "$store" "$id")  # the OpenBLAS kernels that trained it
  step env ${core:+OPENBLAS_CORETYPE=$core} nice "$pinned" sweep run "$sweep" --index "$index" --store "$scratch/store.db" --threads 1 --retry-failed \
    >> "$scratch/train.log" 2>&1 || { tail -n 5 "$scratch/train.log" >&2; exit 1; }
  ready=$(q "select run_id from sweep_members where sweep_id = $sweep and idx = $index")
  retrained[$id]=$ready
  retrained_dirs+=("$(q "select path from artifacts where run_id = $ready and kind = 'run_dir' limit 1")")
}

partial=$out.partial
[ -f "$partial" ] || printf 'run\tvariant\tseed\tstore_loss\tretrained_as\ttemperature\tloss\tentropy\n' > "$partial"
for id in "$@"; do
  [[ $id =~ ^[0-9]+$ ]] || { echo "temperature_scan: run id '$id' is not a number" >&2; exit 2; }
  if awk -F'\t' -v id="$id" 'NR > 1 && $1 == id { found = 1 } END { exit !found }' "$partial"; then continue; fi
  # From the study store: the scratch copy drops a run once it has been trained again (as the start of
  # a run listed before it).
  # (Unit separator, not tab: bash's read merges runs of whitespace, which would drop an empty variant.)
  info=$(sqlite3 -readonly -cmd ".timeout 60000" -separator $'\x1f' "$store" "select json_extract(config_json, '\$.\"run.variant\"'), seed,
                   (select value from results where run_id = $id and key = 'loss/val/all') from runs where id = $id and status = 'finished'")
  [ -n "$info" ] || { echo "temperature_scan: run $id is not a finished run of $store" >&2; exit 1; }
  IFS=$'\x1f' read -r variant seed store_loss <<< "$info"
  make_ready "$id"
  retrained_as=-
  [ "$ready" = "$id" ] || retrained_as=$ready
  # Every temperature from one forward pass; moxlab prints each key's results in the order of the list.
  step nice "$moxlab" eval --run "$ready" --store "$scratch/store.db" --tasks none --no-wikitext \
    --max-val-tokens "$max_val_tokens" --threads 1 --temperature "$(IFS=,; echo "${temperatures[*]}")" \
    > "$scratch/eval.out" 2> "$scratch/eval.log" || { tail -n 3 "$scratch/eval.log" >&2; exit 1; }
  mapfile -t losses < <(awk '$1 ~ /^loss\/val\/all(@|$)/ { print $2 }' "$scratch/eval.out")
  mapfile -t entropies < <(awk '$1 ~ /^entropy\/val\/all(@|$)/ { print $2 }' "$scratch/eval.out")
  [ ${#losses[@]} -eq ${#temperatures[@]} ] && [ ${#entropies[@]} -eq ${#temperatures[@]} ] \
    || { echo "temperature_scan: run $id: eval printed ${#losses[@]} losses for ${#temperatures[@]} temperatures" >&2; exit 1; }
  rows=""
  for i in "${!temperatures[@]}"; do
    rows+="$id"$'\t'"$variant"$'\t'"$seed"$'\t'"$store_loss"$'\t'"$retrained_as"$'\t'"${temperatures[$i]}"$'\t'"${losses[$i]}"$'\t'"${entropies[$i]}"$'\n'
  done
  printf '%s' "$rows" >> "$partial"  # a run's rows land together
  echo "run $id ($variant, seed $seed): scanned" >&2
done
mv "$partial" "$out"
