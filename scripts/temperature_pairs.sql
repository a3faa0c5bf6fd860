-- Paired differences of stories260K's ToMoE rows at temperature 1 (the study's validation loss) and at each
-- run's best temperature on the scan's grid (its loss once its confidence is set right: the calibration
-- control), from scripts/temperature_scan.sh's TSV. Per pair: n, the mean difference with its 95%
-- t-interval and the per-seed values, then per variant the best temperature and the entropy at 1.
--   sqlite3 :memory: -cmd '.mode tabs' -cmd '.import docs/reproduction/data/stories_temperature.tsv scan' \
--     -cmd '.mode column' < scripts/temperature_pairs.sql
create temp view runs as
  select run, variant, cast(seed as integer) as seed,
         min(cast(loss as real)) as best,
         max(case when cast(temperature as real) = 1 then cast(loss as real) end) as at_one,
         max(case when cast(temperature as real) = 1 then cast(entropy as real) end) as entropy_at_one,
         (select cast(s2.temperature as real) from scan s2 where s2.run = s.run order by cast(s2.loss as real) limit 1) as best_t
  from scan s group by run;

with pairs(ord, level, name, method, reference) as (values
  (1, '70%', 'one expert - ToMoE', 'tomoe_70_e1', 'tomoe_70'),
  (2, '70%', 'Taylor + distillation - ToMoE', 'taylor_70_distill', 'tomoe_70'),
  (3, '70%', 'one-shot Taylor - ToMoE', 'taylor_70', 'tomoe_70'),
  (4, '50%', 'one expert - ToMoE', 'tomoe_50_e1', 'tomoe_50'),
  (5, '50%', 'Taylor + distillation - ToMoE', 'taylor_50_distill', 'tomoe_50'),
  (6, '50%', 'Wanda 2:4 - ToMoE', 'wanda_2_4', 'tomoe_50'),
  (7, '40%', 'one expert - ToMoE', 'tomoe_40_e1', 'tomoe_40'),
  (8, '40%', 'Taylor + distillation - ToMoE', 'taylor_40_distill', 'tomoe_40'),
  (9, '40%', 'Wanda - ToMoE', 'wanda_40', 'tomoe_40'),
  (10, '50-70%', 'Taylor + distillation, 50% - 70%', 'taylor_50_distill', 'taylor_70_distill'),
  (11, '70%', 'Taylor + distillation - stories260K', 'taylor_70_distill', 'dense'),
  (12, '50%', 'Taylor + distillation - stories260K', 'taylor_50_distill', 'dense'),
  (13, '40%', 'Taylor + distillation - stories260K', 'taylor_40_distill', 'dense')),
-- stories260K is one model whatever the seed: every seed pairs with the one scanned.
d as (
  select p.ord, p.level, p.name, m.seed, m.at_one - r.at_one as at_one, m.best - r.best as best
  from pairs p join runs m on m.variant = p.method
  join runs r on r.variant = p.reference and (r.seed = m.seed or p.reference = 'dense')),
a as (
  select ord, level, name, count(*) as n, avg(at_one) as m1, avg(best) as mb,
         sum(at_one * at_one) as s1, sum(best * best) as sb,
         group_concat(printf('%+.3f', best), ', ') as per_seed
  from d group by ord),
t(n, q) as (values (2, 12.706), (3, 4.303), (4, 3.182), (5, 2.776), (6, 2.571))
select a.level, a.name, a.n,
       printf('%+.3f [%+.3f, %+.3f]', m1, m1 - q * sqrt(max(s1 - a.n * m1 * m1, 0) / (a.n - 1) / a.n),
              m1 + q * sqrt(max(s1 - a.n * m1 * m1, 0) / (a.n - 1) / a.n)) as at_temperature_1,
       printf('%+.3f [%+.3f, %+.3f]', mb, mb - q * sqrt(max(sb - a.n * mb * mb, 0) / (a.n - 1) / a.n),
              mb + q * sqrt(max(sb - a.n * mb * mb, 0) / (a.n - 1) / a.n)) as at_best_temperature,
       per_seed
from a join t on t.n = a.n order by a.ord;

select variant, count(*) as n, printf('%.3f', avg(at_one)) as loss_at_1, printf('%.3f', avg(entropy_at_one)) as entropy_at_1,
       printf('%.3f', avg(best)) as loss_at_best, group_concat(best_t, ' ') as best_temperatures
from runs group by variant order by variant;
