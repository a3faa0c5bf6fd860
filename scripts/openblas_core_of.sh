#!/usr/bin/env bash
# The OpenBLAS core type that trained a run of a study store, to train it again bit for bit: MoH's router
# and MoHD's fusion multiply through OpenBLAS, whose kernels follow the CPU. Read from the store's
# _openblas.tsv beside its export (docs/reproduction/data/micro_openblas.tsv: core per range of run ids,
# found by scripts/openblas_probe.sh). An OPENBLAS_CORETYPE set in the environment wins. Prints nothing
# for a run it does not cover (this CPU's own kernels).
#   scripts/openblas_core_of.sh STORE RUN_ID
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:?usage: scripts/openblas_core_of.sh STORE RUN_ID} run=${2:?usage: scripts/openblas_core_of.sh STORE RUN_ID}
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then echo "$OPENBLAS_CORETYPE"; exit 0; fi
cores=docs/reproduction/data/$(basename "$store" .db)_openblas.tsv
[ -f "$cores" ] || exit 0
awk -F'\t' -v r="$run" 'NR > 1 && r >= $1 + 0 && r <= $2 + 0 { print $3; exit }' "$cores"
