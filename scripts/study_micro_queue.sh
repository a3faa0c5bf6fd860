#!/usr/bin/env bash
# The micro studies' queue in priority order (scripts/study_micro.sh reads it afresh before every claim,
# so an edit here reaches running lanes). One member per line, "SWEEP_ID:INDEX" then the members it needs
# finished first. Member j of seed k of a sweep with n members per seed is index (k-1)*n + j. Pruning,
# ToMoE and continue-tuning members of seed k start from micro_methods' dense member of seed k; the
# prune-then-distill members from the Taylor-pruned model of their seed. stories_prune has 14 members per
# seed (dense, then magnitude, Wanda, Taylor, ShortGPT at 70/50/40%, then 2:4), stories_tomoe 9 (ToMoE,
# one expert, Taylor + distillation at 70/50/40%). "zs:SWEEP_ID:INDEX" is the zero-shot scoring of a
# trained member (every item of every task, with the likelihood margin); "wt:SWEEP_ID:INDEX" its WikiText-2
# perplexity when its evaluation could not read the shared data; "ck:SWEEP_ID:INDEX" a finished member's
# checkpoint on this machine (scripts/regenerate_checkpoint.sh trains it again where it was lost with its
# machine, and places it only if the new run logs the same numbers to the last digit).
#   scripts/study_micro_queue.sh STORE      # the queue
#   scripts/study_micro_queue.sh --sweeps   # the study's sweeps
set -euo pipefail
# Every sweep of the study (scripts/study_micro.sh plans them in this order), by the name its members
# carry below.
sweeps="M=micro_methods P=micro_prune T=micro_tomoe X=micro_mohd_x2 C=micro_controls E=micro_early
        H=micro_moh_continue PL=micro_prune_levels TL=micro_tomoe_levels MM=micro_mohd_more SP=stories_prune
        ST=stories_tomoe TW=micro_tomoe_widths DM=micro_dense_matched BT=base_tiny_lr BH=base_tiny_lr_high
        TB=micro_tomoe_widths_baselines D5=micro_base_more_seeds W5=micro_tomoe_widths_more_seeds
        H5=micro_moh_more_seeds BS=base_tiny S5=stories_tomoe_more_seeds MS=micro_mohd_more_seeds
        TM=micro_tomoe_levels_more_seeds ML=micro_mohd_lr ML2=micro_mohd_lr_low R=micro_methods_retrained
        MA=micro_mohd_ablations_more_seeds DL=micro_dense_lr H6=micro_moh_continue_more_seeds
        B5=micro_tomoe_widths_baselines_more_seeds"
if [ "${1:-}" = --sweeps ]; then for s in $sweeps; do echo "${s#*=}"; done; exit 0; fi
store=${1:?usage: scripts/study_micro_queue.sh STORE | --sweeps}
id_of() { sqlite3 -readonly -cmd ".timeout 60000" "$store" "select id from sweeps where name = '$1'"; }
for s in $sweeps; do printf -v "${s%%=*}" '%s' "$(id_of "${s#*=}")"; done

levels() {  # ToMoE at 70/40% and its baselines from dense seed $1 (its checkpoint regenerated first)
  local k=$1 dense="ck:$M:$(( ($1 - 1) * 4 ))" j
  for j in $(seq 0 7); do echo "$PL:$(( (k - 1) * 8 + j )) $dense"; done
  for j in 0 1 3 4; do echo "$TL:$(( (k - 1) * 6 + j )) $dense"; done
  for j in 2 6; do echo "ck:$PL:$(( (k - 1) * 8 + j )) $PL:$(( (k - 1) * 8 + j ))"; done  # the Taylor-pruned starts
  echo "$TL:$(( (k - 1) * 6 + 2 )) $dense ck:$PL:$(( (k - 1) * 8 + 2 ))"
  echo "$TL:$(( (k - 1) * 6 + 5 )) $dense ck:$PL:$(( (k - 1) * 8 + 6 ))"
}
# ToMoE on stories260K at 70/50/40% and its baselines, seed $1; 50%'s ToMoE and one expert (the scorecard
# row) are queued on their own, first
stories() {
  local k=$1 l taylor j
  for j in $(seq 0 13); do echo "$SP:$(( (k - 1) * 14 + j ))"; done
  for l in 0 1 2; do
    taylor="$SP:$(( (k - 1) * 14 + 3 + 4 * l ))"
    if [ "$l" != 1 ]; then
      echo "$ST:$(( (k - 1) * 9 + 3 * l ))"
      echo "$ST:$(( (k - 1) * 9 + 3 * l + 1 ))"
    fi
    echo "ck:$taylor $taylor"
    echo "$ST:$(( (k - 1) * 9 + 3 * l + 2 )) ck:$taylor"
  done
}
members() {
  for k in 1 2 3; do echo "$M:$(( (k - 1) * 4 ))"; done  # the base models, one per seed
  for k in 1 2 3; do                                     # tier 1: ToMoE 50% and its baselines
    dense="$M:$(( (k - 1) * 4 ))"
    for j in 0 1 2 3 4 5; do echo "$P:$(( (k - 1) * 6 + j )) $dense"; done
    echo "$T:$(( (k - 1) * 3 )) $dense"
    echo "$T:$(( (k - 1) * 3 + 1 )) $dense"
    echo "$T:$(( (k - 1) * 3 + 2 )) $dense $P:$(( (k - 1) * 6 + 3 ))"
  done
  for k in 1 2 3; do echo "$M:$(( (k - 1) * 4 + 1 ))"; done                           # MoHD 50%
  for k in 1 2 3; do for j in 0 1 2; do echo "$TW:$(( (k - 1) * 3 + j )) $M:$(( (k - 1) * 4 ))"; done; done  # ToMoE, equal widths
  for i in $(seq 0 8); do echo "wt:$TW:$i $TW:$i"; done  # WikiText-2 its first runs missed (shared data not found)
  for k in 1 2 3; do  # the ToMoE 50% baselines again on the widths build: every comparison inside one build
    dense="$M:$(( (k - 1) * 4 ))"
    for j in 0 1 2 3 4 5; do echo "$TB:$(( (k - 1) * 7 + j )) $dense"; done
    echo "$TB:$(( (k - 1) * 7 + 6 )) $dense $TB:$(( (k - 1) * 7 + 3 ))"
  done
  for j in 2 3; do for k in 1 2 3; do echo "$M:$(( (k - 1) * 4 + j ))"; done; done  # MoH 75%, 50%
  # dense tiny's learning rate (8.2 M tokens), for the tiny base models; base_tiny_lr_high's 1.2e-2 was
  # stopped at step 1400, 0.66 nats behind 3e-3 at step 1250, once 3e-3 was interior (1.5e-3 and 6e-3 worse)
  for i in 0 1 2; do echo "$BT:$i"; done
  for k in 1 2; do  # dense seeds 4, 5 and their ToMoE routing members: 5 seeds where the effect is small
    echo "$D5:$(( k - 1 ))"
    for j in 0 1 2; do echo "$W5:$(( (k - 1) * 3 + j )) $D5:$(( k - 1 ))"; done
  done
  for k in 1 2; do for j in 0 1; do echo "$H5:$(( (k - 1) * 2 + j ))"; done; done  # MoH 75%, 50% seeds 4, 5
  # From here on a member that starts from another's checkpoint needs "ck:" of it (the checkpoint on this
  # machine, regenerated when lost), and the ck: line comes before it. One long member at a time (MoHD x2,
  # the tiny base models: 2.3-2.5 h each), then short ones the other lane finishes and commits within a
  # session: a machine replaced between sessions loses the members running on it and every checkpoint
  # (2026-11-27, 11-28, 12-01, 12-03), so a second long one waits until the short ones are done.
  echo "$X:0"; echo "$X:1"; echo "ck:$X:1 $X:1"; echo "zs:$X:1 ck:$X:1"  # MoHD x2 seeds 1, 2, seed 2's zero-shot
  for i in $(seq 0 29); do echo "$E:$i"; done        # the 200-step reruns: which early effects are branch scale
  for i in 0 1 2; do echo "$DM:$i"; done             # dense at MoHD 50%'s activated size (~1 h each)
  # stories260K's scorecard row (ToMoE 50% and one static expert, 3 seeds) beside the first dense
  # regeneration: they start from the imported model, so no lost checkpoint holds them up
  echo "ck:$M:0 $M:0"
  for k in 1 2 3; do for j in 3 4; do echo "$ST:$(( (k - 1) * 9 + j ))"; done; done
  levels 1
  # MoH continue-tuning (the dense base models regenerated seed by seed), then ToMoE at 70/40%: the cheap
  # scorecard rows
  for k in 1 2 3; do
    dense="$M:$(( (k - 1) * 4 ))"
    echo "ck:$dense $dense"
    for j in 0 1; do echo "$H:$(( (k - 1) * 2 + j )) ck:$dense"; done
  done
  levels 2; levels 3
  for i in 0 1 2 3; do echo "$S5:$i"; done  # stories260K's scorecard row at seeds 4 and 5 (a small effect)
  # stories260K seed 1's other levels after seeds 2-3 of the micro levels: its members need no lost
  # checkpoint, so a machine replaced before they finish costs nothing but themselves
  stories 1
  echo "$X:2"; echo "ck:$X:2 $X:2"; echo "zs:$X:2 ck:$X:2"  # MoHD x2 seed 3
  # the dense references of the zero-shot table while their regenerated checkpoints are on this machine
  for k in 1 2 3; do echo "zs:$M:$(( (k - 1) * 4 )) ck:$M:$(( (k - 1) * 4 ))"; done
  # MoHD 75% and Table 4: the last four scorecard rows, ~1.5 h a member; a row's seeds before the next
  # row's (member j of seed k is index (k-1)*4 + j), so each row completes, and is written up, in turn. A
  # finished member's zero-shot scoring (4 min) comes before the next training, while its checkpoint is here
  for i in $(seq 0 11); do echo "ck:$MM:$i $MM:$i"; echo "zs:$MM:$i ck:$MM:$i"; done
  for j in 0 1 2 3; do for k in 1 2 3; do echo "$MM:$(( (k - 1) * 4 + j ))"; done; done
  # the branch-scale controls at 18.4 M tokens (~27 lane-hours, no scorecard row of their own), a row's
  # three seeds before the next row's: MoHD 50% with alpha = K/sum(g) and with identity fusion, dense at
  # MoHD's branch scale, MoH with every head active, dense at MoH's, learned scalars (member j of seed k
  # is index (k-1)*6 + j)
  for j in 3 4; do for k in 1 2 3; do echo "$C:$(( (k - 1) * 6 + j ))"; done; done
  # ToMoE at 70/40% and one expert at seeds 4 and 5, from dense seeds 4, 5 (their checkpoints regenerated
  # first; member j of seed k is index (k-1)*4 + j): two scorecard rows from n = 3 to 5, ~3.5 lane-hours
  for k in 1 2; do
    echo "ck:$D5:$(( k - 1 )) $D5:$(( k - 1 ))"
    for j in 0 1 2 3; do echo "$TM:$(( (k - 1) * 4 + j )) ck:$D5:$(( k - 1 ))"; done
  done
  for j in 0 5 1 2; do for k in 1 2 3; do echo "$C:$(( (k - 1) * 6 + j ))"; done; done
  for i in 0 1 2; do echo "$BS:$i"; done                 # the dense tiny base models (32.8 M tokens, lr 3e-3)
  stories 2; stories 3
  # MoHD 50% at dense's neighbouring learning rates, seed 1 (~1 h each): is its deficit dense's tuned rate?
  for i in 0 1; do echo "$ML:$i"; done
  echo "$ML2:0"  # 1.5e-3: 3e-3 was the best of the three, at the grid's edge
  # MoHD 50%, 75% and x2 at seeds 4 and 5 (paired with dense seeds 4, 5): a row's seeds before the next
  # row's (member j of seed k is index (k-1)*3 + j)
  for j in 0 1 2; do for k in 1 2; do echo "$MS:$(( (k - 1) * 3 + j ))"; done; done
  # the zero-shot scores of the seed-4 and -5 checkpoints on this machine: dense, MoHD 50%, 75%, x2
  for k in 1 2; do echo "zs:$D5:$(( k - 1 )) ck:$D5:$(( k - 1 ))"; done
  for j in 0 1 2; do for k in 1 2; do echo "zs:$MS:$(( (k - 1) * 3 + j )) ck:$MS:$(( (k - 1) * 3 + j ))"; done; done
  # MoH 75% at seeds 1-3 and MoH 50% at seed 1 trained again on the model-167 Xeon's own OpenBLAS kernels
  # (micro_methods_retrained, member j of seed k is index (k-1)*3 + j), each scored while its checkpoint is
  # here: how far the kernels move a routed run (started before the kernels were found; its other
  # members are not run)
  for i in 0 3 6 1; do echo "$R:$i"; echo "zs:$R:$i $R:$i"; done
  # last, the zero-shot scores of the routed models whose checkpoints were lost with the first Xeons:
  # regenerated bit for bit on their OpenBLAS kernels (Prescott, data/micro_openblas.tsv), MoH 75% and
  # 50% at seeds 1-5, then MoHD 50% at seeds 1-3 (~1.3 h each, 4 min of scoring)
  regenerated() { echo "ck:$1 $1"; echo "zs:$1 ck:$1"; }
  for j in 2 3; do
    for k in 1 2 3; do regenerated "$M:$(( (k - 1) * 4 + j ))"; done
    for k in 1 2; do regenerated "$H5:$(( (k - 1) * 2 + j - 2 ))"; done
  done
  for k in 1 2 3; do regenerated "$M:$(( (k - 1) * 4 + 1 ))"; done
  regenerated "$X:0"  # MoHD x2 seed 1 (run 92, the EPYC's Cooperlake kernels): its zero-shot row from n = 4 to 5
  # dense micro's learning-rate grid on the study's build (its first store was lost; ~1 h a point): the
  # neighbours of 6e-3 first, which make it interior
  for i in 0 1 2; do echo "$DL:$i"; done
  # MoH continue-tuning and ToMoE 50%'s static baselines at seeds 4 and 5, from dense seeds 4, 5 (their
  # checkpoints regenerated first): four small or unsettled scorecard rows from n = 3 to 5, ~3 lane-hours.
  # Member j of seed k is index (k-1)*2 + j (MoH 75%, dense continued) and (k-1)*7 + j (dense, magnitude,
  # Wanda, Taylor, ShortGPT, 2:4, then Taylor + distillation from the Taylor-pruned model)
  for k in 1 2; do
    dense="ck:$D5:$(( k - 1 ))"
    echo "$dense $D5:$(( k - 1 ))"
    for j in 0 1; do echo "$H6:$(( (k - 1) * 2 + j )) $dense"; done
    for j in 0 1 2 3 4 5; do echo "$B5:$(( (k - 1) * 7 + j )) $dense"; done
    echo "ck:$B5:$(( (k - 1) * 7 + 3 )) $B5:$(( (k - 1) * 7 + 3 ))"
    echo "$B5:$(( (k - 1) * 7 + 6 )) $dense ck:$B5:$(( (k - 1) * 7 + 3 ))"
  done
  # MoHD 50%'s Table 4 ablations at seeds 4 and 5, paired with micro_mohd_more_seeds' MoHD 50% (~1.3 h a
  # member): the paper's effects are small against the n = 3 intervals; a row's seeds before the next
  # row's (member j of seed k is index (k-1)*3 + j: no balance loss, no fusion, no scaling)
  for j in 0 1 2; do for k in 1 2; do echo "$MA:$(( (k - 1) * 3 + j ))"; done; done
}
# A sweep the store does not hold yet (planned at the script's next start) has no id: leave its lines out.
members | grep -Ev '(^|[ :]):[0-9]'
