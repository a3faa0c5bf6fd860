#!/usr/bin/env bash
# The claims scorecard at the top of docs/reproduction/README.md, regenerated from the committed study
# stores (docs/reproduction/data/NAME/, loaded by scripts/load_store.sh as NAME.db) and the claims in
# experiments/claims.toml:
#   scripts/scorecard.sh              # B=path/to/moxlab to use another build (default build/moxlab)
#   scripts/scorecard.sh --check      # fail unless the README's scorecard is what the stores give
set -euo pipefail
shopt -s nullglob  # no committed store yet: every claim reads "pending"
cd "$(dirname "$0")/.."
B=${B:-build/moxlab}
stores=$(mktemp -d)
trap 'rm -rf "$stores"' EXIT
for d in docs/reproduction/data/*/; do scripts/load_store.sh "$d" "$stores/$(basename "$d").db"; done
if [ "${1:-}" = "--check" ]; then
  "$B" scorecard experiments/claims.toml --stores "$stores" --check docs/reproduction/README.md
  echo "the scorecard in docs/reproduction/README.md is current"
else
  "$B" scorecard experiments/claims.toml --stores "$stores" --insert docs/reproduction/README.md
  echo "scorecard written to docs/reproduction/README.md"
fi
