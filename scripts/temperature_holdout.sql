-- What a temperature chosen on held-out tokens is worth, from scripts/temperature_holdout.sh's TSV: per
-- run, the temperature that is best on the first half of each domain's validation tokens (t_first), the
-- second half's loss at temperature 1, at t_first and at the second half's own best, and the cost of
-- choosing on the first half (loss at t_first - best, both on the second half: the optimism of reading
-- the best temperature off the tokens it is scored on). Then the largest and mean cost, and the paired
-- one-expert comparisons scored that way.
--   sqlite3 :memory: -cmd '.mode tabs' -cmd '.import docs/reproduction/data/stories_temperature_holdout.tsv holdout' \
--     -cmd '.mode column' < scripts/temperature_holdout.sql
-- The second half's loss is a difference of NLL sums: the first half's windows are the whole's first.
create temp view halves as
  select run, variant, cast(seed as integer) as seed, cast(temperature as real) as t, cast(first_loss as real) as first,
         (cast(whole_loss as real) * cast(whole_tokens as integer) - cast(first_loss as real) * cast(first_tokens as integer))
           / (cast(whole_tokens as integer) - cast(first_tokens as integer)) as second
  from holdout;
create temp view per_run as
  select run, variant, seed,
         (select t from halves x where x.run = a.run order by x.first limit 1) as t_first,
         (select t from halves x where x.run = a.run order by x.second limit 1) as t_second,
         max(case when t = 1 then second end) as second_at_1, min(second) as second_best
  from halves a group by run;
create temp view costs as
  select p.run, p.variant, p.seed, p.t_first, p.t_second, p.second_at_1, h.second as second_at_t_first, p.second_best,
         h.second - p.second_best as cost
  from per_run p join halves h on h.run = p.run and h.t = p.t_first;

select run, variant, seed, t_first, t_second, printf('%.4f', second_at_1) as second_at_1,
       printf('%.4f', second_at_t_first) as second_at_t_first, printf('%.4f', second_best) as second_best,
       printf('%.4f', cost) as cost
from costs order by variant, seed;
select count(*) as runs, printf('%.4f', max(cost)) as largest_cost, printf('%.4f', avg(cost)) as mean_cost,
       sum(t_first = t_second) as same_temperature
from costs;

-- One expert minus ToMoE (variant V_e1 against V, paired by seed), each scored on the second half at the
-- temperature it chose on the first: the calibrated comparison with the choice held out.
with d as (
  select m.variant as method, r.variant as reference, m.seed, m.second_at_t_first - r.second_at_t_first as diff
  from costs m join costs r on m.variant = r.variant || '_e1' and m.seed = r.seed order by m.seed),
a as (
  select method, reference, count(*) as n, avg(diff) as m, sum(diff * diff) as s,
         group_concat(printf('%+.3f', diff), ', ') as per_seed
  from d group by method),
t(n, q) as (values (2, 12.706), (3, 4.303), (4, 3.182), (5, 2.776), (6, 2.571))
select a.method || ' - ' || a.reference as pair, a.n,
       printf('%+.3f [%+.3f, %+.3f]', a.m, a.m - t.q * sqrt(max(a.s - a.n * a.m * a.m, 0) / (a.n - 1) / a.n),
              a.m + t.q * sqrt(max(a.s - a.n * a.m * a.m, 0) / (a.n - 1) / a.n)) as held_out, a.per_seed
from a join t on t.n = a.n order by a.method;
