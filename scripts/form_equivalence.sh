#!/bin/sh
# Does the packed (automatic) training form train the same models as the reference (LibTorch) form?
# 300-step runs of the tiny dense, MoHD 50%, MoH 50% and ToMoE 50% models on the default corpus: the
# reference and the automatic form with seed 1 (the same data order and initial weights), then the
# automatic form with seeds 2 and 3, whose spread is the seed noise the forms' difference is read
# against, then the reference form with seed 2 where time allows. ToMoE converts the dense reference run
# of seed 1 (dense weights frozen, routing trained).
# Resumable: a finished step is skipped on a rerun. Results: the final val/loss of each run, printed at
# the end (and in the run store).
#   scripts/form_equivalence.sh [OUT_DIR]      (default runs/form_equivalence; B=path/to/moxlab)
set -eu
B=${B:-build/moxlab}
OUT=${1:-runs/form_equivalence}
mkdir -p "$OUT"
STORE="$OUT/runs.db"
COMMON="--set train.max_steps=300 --set train.warmup_steps=30 --set train.eval_every=100 --set train.checkpoint_every=100
  --set model.n_heads=8 --set model.n_kv_heads=4 --set run.store=$STORE"
MOHD="--set model.head_dim=32 --set model.ffn_hidden=512 --set model.attention=mohd --set mohd.attn.sub_dims=8
  --set mohd.attn.active=4 --set mohd.attn.shared=3 --set mohd.attn.fusion_groups=8 --set model.ffn=mohd
  --set mohd.ffn.sub_dims=8 --set mohd.ffn.active=4 --set mohd.ffn.shared=3 --set mohd.ffn.fusion_groups=8"
MOH="--set model.attention=moh --set moh.shared=2 --set moh.active=4"
TOMOE="--set model.attention=tomoe --set model.ffn=tomoe --set tomoe.active=0.5 --set train.loss=distill
  --set train.trainable=routing --set train.lr=1e-3 --set train.warmup_steps=0 --set train.min_lr_ratio=1
  --set train.weight_decay=0.05"

run() {  # name form seed extra...
  name=$1 form=$2 seed=$3
  shift 3
  dir="$OUT/$name.$form.$seed"
  [ -f "$dir.done" ] && return 0
  # shellcheck disable=SC2086
  "$B" train --config experiments/configs/dense_tiny.toml $COMMON "$@" --set run.name="fe_$name" --set run.variant="$name.$form" \
    --set execution.form="$form" --set train.seed="$seed" --set run.out_dir="$dir" >"$dir.log" 2>&1
  touch "$dir.done"
}

# The same-seed pairs first, then the seed noise: the automatic form with seeds 2 and 3 (three times faster
# than the reference form, and the noise between seeds does not depend on the form), then the reference
# form with seed 2 where time allows.
for form_seed in "reference 1" "automatic 1" "automatic 2" "automatic 3" "reference 2"; do
  # shellcheck disable=SC2086
  set -- $form_seed
  run dense "$1" "$2"
  run mohd_50 "$1" "$2" $MOHD
  run moh_50 "$1" "$2" $MOH
  DENSE_CKPT=$(ls "$OUT"/dense.reference.1/*/checkpoint.pt | head -n 1)
  run tomoe_50 "$1" "$2" $TOMOE --set train.init_from="$DENSE_CKPT"
done
sqlite3 -header -column "$STORE" "
  SELECT json_extract(r.config_json, '$."run.variant"') AS variant, r.seed, m.step, m.value AS final_val_loss
  FROM runs r JOIN metrics m ON m.run_id = r.id
  WHERE r.status = 'finished' AND m.key = 'val/loss'
    AND m.step = (SELECT MAX(step) FROM metrics WHERE run_id = r.id AND key = 'val/loss')
  ORDER BY variant, r.seed"
