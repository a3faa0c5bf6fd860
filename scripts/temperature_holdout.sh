#!/usr/bin/env bash
# The held-out reading of scripts/temperature_scan.sh's calibration: each run's validation loss at every
# temperature on the first half of each domain's tokens (MAX_VAL_TOKENS / 2) and on all of them, from
# which scripts/temperature_holdout.sql takes the second half's loss (a difference of NLL sums: the
# windows of the half are the first windows of the whole) and asks what a temperature chosen on the first
# half is worth on the second. The runs' checkpoints must be on this machine (temperature_scan.sh trains a
# missing one again; this check is for the rest). The study store is only read; evaluations go to a
# scratch copy. Appends per run to OUT.partial (resumable) and moves it to OUT when every run is done.
#   scripts/temperature_holdout.sh STORE OUT.tsv RUN_ID...
#   TEMPERATURES="1 1.5 2" MAX_VAL_TOKENS=65536 (the studies' final evaluation) MOXLAB=build/moxlab
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/temperature_holdout.sh STORE OUT.tsv RUN_ID..."
store=${1:?$usage}
out=${2:?$usage}
shift 2
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
[ -f "$store" ] || { echo "temperature_holdout: no store at $store" >&2; exit 1; }
read -ra temperatures <<< "${TEMPERATURES:-1 1.25 1.5 1.75 2 2.25 2.5 3 3.5}"
[ ${#temperatures[@]} -gt 0 ] || { echo "temperature_holdout: TEMPERATURES is empty" >&2; exit 2; }
whole=${MAX_VAL_TOKENS:-65536}
[[ $whole =~ ^[0-9]+$ ]] && [ $(( whole % 2 )) -eq 0 ] && [ "$whole" -gt 0 ] \
  || { echo "temperature_holdout: MAX_VAL_TOKENS must be a positive even number, got '$whole'" >&2; exit 2; }
moxlab=${MOXLAB:-build/moxlab}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
sqlite3 -cmd ".timeout 60000" "$store" ".backup $scratch/store.db"

partial=$out.partial
[ -f "$partial" ] || printf 'run\tvariant\tseed\ttemperature\tfirst_loss\tfirst_tokens\twhole_loss\twhole_tokens\n' > "$partial"
for id in "$@"; do
  [[ $id =~ ^[0-9]+$ ]] || { echo "temperature_holdout: run id '$id' is not a number" >&2; exit 2; }
  if awk -F'\t' -v id="$id" 'NR > 1 && $1 == id { found = 1 } END { exit !found }' "$partial"; then continue; fi
  checkpoint=$(sqlite3 "$scratch/store.db" "select path from artifacts where run_id = $id and kind = 'checkpoint'
                                            and (select status from runs where id = $id) = 'finished' order by id desc limit 1")
  [ -n "$checkpoint" ] && [ -f "$checkpoint" ] \
    || { echo "temperature_holdout: run $id is not a finished run of $store with its checkpoint on this machine" >&2; exit 1; }
  # Per temperature (the key's @T; none at 1), the loss and tokens of the half and of the whole.
  for n in $(( whole / 2 )) "$whole"; do
    # Only this evaluation's losses: the copy holds the run's own (temperature 1, the whole) from training.
    sqlite3 "$scratch/store.db" "delete from results where run_id = $id and key like 'loss/val/all%'"
    nice "$moxlab" eval --run "$id" --store "$scratch/store.db" --tasks none --no-wikitext --max-val-tokens "$n" \
      --threads 1 --temperature "$(IFS=,; echo "${temperatures[*]}")" > /dev/null 2> "$scratch/eval.log" \
      || { tail -n 3 "$scratch/eval.log" >&2; exit 1; }
    sqlite3 "$scratch/store.db" "create table if not exists holdout(run, n, temperature, loss, tokens);
      insert into holdout select $id, $n, coalesce(json_extract(meta_json, '\$.temperature'), 1), value,
        json_extract(meta_json, '\$.tokens') from results where run_id = $id and (key = 'loss/val/all' or key like 'loss/val/all@T%')"
  done
  rows=$(sqlite3 -separator $'\t' "$scratch/store.db" "select h.run, json_extract(r.config_json, '\$.\"run.variant\"'), r.seed,
      h.temperature, h.loss, h.tokens, w.loss, w.tokens from holdout h join holdout w on w.run = h.run and w.temperature = h.temperature
      and w.n = $whole join runs r on r.id = h.run where h.run = $id and h.n = $(( whole / 2 )) order by h.temperature")
  stored=$(grep -c . <<< "$rows" || true)  # wc -l would count an empty result as one line
  [ "$stored" -eq ${#temperatures[@]} ] \
    || { echo "temperature_holdout: run $id: eval stored $stored temperatures of ${#temperatures[@]}" >&2; exit 1; }
  printf '%s\n' "$rows" >> "$partial"  # a run's rows land together
  echo "run $id: done" >&2
done
mv "$partial" "$out"
