#!/usr/bin/env bash
# Commits a study's progress: its store exported (scripts/export_store.sh), the README's scorecard and
# the study tables regenerated from the committed stores (scripts/scorecard.sh, scripts/study_tables.sh)
# and the CPU each member ran on, in one commit; the scorecard and study-table tests fail on a store
# committed without them.
#   scripts/commit_study.sh "Study micro: ..."        # STORE=runs/studies/other.db for another study
set -euo pipefail
cd "$(dirname "$0")/.."
message=${1:?usage: scripts/commit_study.sh MESSAGE}
store=${STORE:-runs/studies/micro.db}
# The study's lanes export after every member: hold their lock so the committed store is the one the
# scorecard was generated from.
exec 9> "$(dirname "$store")/.export.lock"
flock 9
# A later evaluation (moxlab eval --run N) adds its results task by task: exported mid-way, its run would
# show in the tables with some tasks only. Training members are exported as they go (their curves are
# whole up to their last step); evaluations are waited for, a few minutes each.
evaluation=" eval --run [0-9]+ --store $store( |\$)"
while pgrep -f -- "$evaluation" > /dev/null; do
  echo "waiting for the evaluation of run(s) $(pgrep -af -- "$evaluation" | sed -E 's/.* eval --run ([0-9]+).*/\1/' |
        paste -sd ' ') to finish"
  sleep 30
done
MOXLAB_EXPORT_LOCKED=1 scripts/export_store.sh "$store"
scripts/scorecard.sh
scripts/study_tables.sh
git add -A "docs/reproduction/data/$(basename "$store" .db)" docs/reproduction/README.md docs/reproduction/*/study_*.md
cpus=docs/reproduction/data/$(basename "$store" .db)_cpus.tsv  # each member's CPU (scripts/study_micro.sh)
[ ! -f "$cpus" ] || git add "$cpus"
git commit -q -m "$message"
git log --oneline -1
