#!/usr/bin/env bash
# Every study table shipped under docs/reproduction/ (*/study_*.md), regenerated from the committed study
# stores (docs/reproduction/data/NAME/, loaded by scripts/load_store.sh as NAME.db) by the table spec of
# the same name in experiments/tables/; the store is the one the spec's usage comment names with
# --store, micro.db where it names none:
#   scripts/study_tables.sh            # B=path/to/moxlab to use another build (default build/moxlab)
#   scripts/study_tables.sh --check    # fail, naming each, unless every shipped table is what the stores give
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
B=${B:-build/moxlab}
check=false
[ "${1:-}" = "--check" ] && check=true
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for d in docs/reproduction/data/*/; do scripts/load_store.sh "$d" "$scratch/$(basename "$d").db" > /dev/null; done
stale=() tables=0
for table in docs/reproduction/*/study_*.md; do
  name=$(basename "$table" .md)
  spec=experiments/tables/$name.toml
  [ -f "$spec" ] || { echo "study_tables: $table has no table spec ($spec)" >&2; exit 1; }
  store=$(grep -o -- '--store [A-Za-z0-9_]*\.db' "$spec" | head -1 | cut -d' ' -f2 || true)
  out=$table
  $check && out=$scratch/$name.md
  if ! "$B" table "$spec" --store "$scratch/${store:-micro.db}" --out "$out" > /dev/null 2> "$scratch/err"; then
    echo "study_tables: $table: $(tail -1 "$scratch/err")" >&2
    exit 1
  fi
  if $check && ! cmp -s "$out" "$table"; then stale+=("$table"); fi
  tables=$((tables + 1))
done
if $check; then
  if [ ${#stale[@]} -gt 0 ]; then
    echo "study_tables: not what the committed stores give: ${stale[*]}: run scripts/study_tables.sh" >&2
    exit 1
  fi
  echo "the $tables study tables under docs/reproduction are current"
else
  echo "$tables study tables written under docs/reproduction"
fi
