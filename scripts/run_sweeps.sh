#!/usr/bin/env bash
# Runs planned sweeps of one store one after another with a pinned moxlab binary, resumably: after any
# interruption run the same command again; finished members are skipped and the others resume from their
# checkpoints (docs/sweeps.md). A study is one build: keep B the same binary for all of its sweeps.
#   B=/path/to/pinned/moxlab scripts/run_sweeps.sh runs/studies/base.db 1 2 > study.log 2>&1 &
set -uo pipefail
cd "$(dirname "$0")/.."
B=${B:?set B to the pinned moxlab binary of the study}
store=${1:?usage: B=... scripts/run_sweeps.sh STORE SWEEP_ID...}
shift
for id in "$@"; do
  echo "$(date -Is) sweep $id: start with $B"
  "$B" sweep run "$id" --store "$store" --workers auto
  echo "$(date -Is) sweep $id: exit $?"
done
