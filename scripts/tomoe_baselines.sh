#!/bin/bash
# The static pruning baselines of ToMoE's Table 1/3 on the dense starts of a sweep (default moh_lm_tiny's
# dense members, the models tomoe_tiny converts): every method at every active ratio, calibrated on 8
# training batches of the dense model's own data, then evaluated like the sweeps' members (per-domain
# val perplexity on the first 16384 tokens, WikiText-2, zero-shot tasks, 200 items each).
#   [SEEDS="1 2"] [RATIOS="0.7 0.6 0.5 0.4"] [EVAL_ARGS="..."] [MOXLAB=moxlab] scripts/tomoe_baselines.sh [STORE] [SWEEP] [VARIANT]
set -euo pipefail
STORE=${1:-runs/runs.db}
SWEEP=${2:-moh_lm_tiny}
VARIANT=${3:-dense}
MOXLAB=${MOXLAB:-moxlab}
read -r -a EVAL <<< "${EVAL_ARGS:---tasks piqa,winogrande,openbook_qa,logi_qa --limit 200 --max-val-tokens 16384}"
for SEED in ${SEEDS:-1 2}; do
  CK=$(sqlite3 "$STORE" "select a.path from sweeps s join sweep_members m on m.sweep_id = s.id
        join artifacts a on a.run_id = m.run_id and a.kind = 'checkpoint'
        where s.name = '$SWEEP' and m.config_json like '%\"run.variant\":\"$VARIANT\"%'
          and m.config_json like '%\"train.seed\":$SEED%' order by s.id desc limit 1")
  [ -n "$CK" ] || { echo "no $SWEEP/$VARIANT seed $SEED checkpoint in $STORE" >&2; exit 1; }
  for RATIO in ${RATIOS:-0.7 0.6 0.5 0.4}; do
    for METHOD in magnitude wanda taylor shortgpt; do
      RUN=$($MOXLAB prune $METHOD --checkpoint "$CK" --active $RATIO --store "$STORE" --variant ${METHOD}_${RATIO#0.}0 \
            | sed -n 's/^run \([0-9]*\):.*/\1/p')
      $MOXLAB eval --run "$RUN" --store "$STORE" "${EVAL[@]}" > /dev/null
    done
  done
  RUN=$($MOXLAB prune wanda_2_4 --checkpoint "$CK" --active 0.5 --store "$STORE" --variant wanda_2_4 | sed -n 's/^run \([0-9]*\):.*/\1/p')
  $MOXLAB eval --run "$RUN" --store "$STORE" "${EVAL[@]}" > /dev/null
done
