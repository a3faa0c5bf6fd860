-- Validation perplexity of every member of the newest sweeps named in `wanted`, relative to the dense member
-- of the same seed (pruning/ToMoE members start from that seed's dense model), with the measured active
-- ratio (tomoe/active_ratio or prune/active_ratio). Seeds differ by more than methods at the tiny scale, so
-- docs/reproduction/tomoe.md compares these paired ratios.
--   sqlite3 runs/runs.db < scripts/relative_ppl.sql      (edit `wanted` for other sweeps)
with wanted(name) as (values ('tomoe_tiny'), ('tomoe_tiny_baselines')),
s as (select max(sw.id) as id from sweeps sw join wanted w on sw.name = w.name group by sw.name),
v as (
  select r.seed, json_extract(r.config_json, '$."run.variant"') as variant,
         (select value from results where run_id = r.id and key = 'ppl/val/all') as ppl,
         coalesce((select value from results where run_id = r.id and key = 'tomoe/active_ratio'),
                  (select value from results where run_id = r.id and key = 'prune/active_ratio')) as active
  from runs r where r.sweep_id in (select id from s) and r.status = 'finished'),
d as (select seed, ppl as dense_ppl from v where variant = 'dense')
select v.variant,
       printf('%.3f', avg(v.ppl / d.dense_ppl)) as mean_ratio_to_dense,
       printf('%.3f', avg(v.active)) as mean_active,
       group_concat(printf('seed %d: %.1f (x%.3f, active %.3f)', v.seed, v.ppl, v.ppl / d.dense_ppl, v.active), '; ')
from v join d on v.seed = d.seed group by v.variant order by v.variant;
