#include "core/train/trainer.h"

#include <chrono>
#include <cmath>
#include <map>

#include "core/common/error.h"
#include "core/distributed/data_parallel.h"
#include "core/model/batch_statistics.h"
#include "core/model/model_kind.h"
#include "core/model/transformer.h"
#include "core/train/lr_schedule.h"

namespace moxlab {

namespace {

// AdamW groups: decoupled weight decay on matrices (dim >= 2, embeddings included), none on norms
// and biases, as in the GPT/LLaMA recipes. With train.trainable = "routing" only the routing modules
// are in them; every other parameter is frozen (requires_grad off, so no gradient is even computed).
std::vector<torch::optim::OptimizerParamGroup> param_groups(torch::nn::Module& model, const TrainOptions& t) {
  std::vector<torch::Tensor> decay, no_decay;
  for (auto& item : model.named_parameters()) {
    auto& p = item.value();
    if (t.trainable == "routing" && !is_routing_parameter(item.key())) {
      p.set_requires_grad(false);
      continue;
    }
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
  }
  require(!decay.empty() || !no_decay.empty(), "train.trainable = " + t.trainable + ": the model has no such parameters to train");
  auto make = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(t.lr).betas({t.beta1, t.beta2}).eps(t.adam_eps).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, make(t.weight_decay));
  groups.emplace_back(no_decay, make(0.0));
  return groups;
}

}  // namespace

Trainer::Trainer(const Config& cfg, TrainObjective& objective, std::string checkpoint_path, CheckpointMeta meta_template)
    : cfg_(cfg), objective_(objective), checkpoint_path_(std::move(checkpoint_path)), meta_(std::move(meta_template)) {
  optimizer_ = std::make_unique<torch::optim::AdamW>(param_groups(objective_.module(), cfg_.train),
                                                      torch::optim::AdamWOptions(cfg_.train.lr));
}

void Trainer::resume(const std::string& path, bool rank_batch_checked) {
  const CheckpointMeta ck = load_checkpoint_weights(path, objective_.module());
  const Config ck_cfg = config_from_json(ck.config_json);
  require(ck_cfg.hash() == cfg_.hash() || (rank_batch_checked && same_but_rank_batch(ck_cfg, cfg_)),
          "checkpoint " + path + " was written with a different config (hash " + ck_cfg.hash().substr(0, 12) + " vs " +
              cfg_.hash().substr(0, 12) + ")");
  load_training_state(path, *optimizer_);
  step_ = ck.step;
  tokens_seen_ = ck.tokens_seen;
}

void Trainer::join(DataParallelGroup& group) {
  group_ = &group;
  world_ = group.world();
  objective_.take_share(group.rank(), group.world());
  std::vector<torch::Tensor> state;
  for (const auto& p : objective_.module().parameters()) state.push_back(p.detach());
  for (const auto& b : objective_.module().buffers()) state.push_back(b);
  group.broadcast(state);
  std::vector<torch::Tensor> counters{torch::tensor({step_, tokens_seen_}, torch::kLong)};
  group.broadcast(counters);
  step_ = counters[0][0].item<std::int64_t>();
  tokens_seen_ = counters[0][1].item<std::int64_t>();
  // Gate noise (ToMoE's Gumbel draws) comes from the default generator, seeded alike on every rank by
  // the model's init: each rank draws its own, as the tokens of one process would.
  if (group.rank() > 0) torch::manual_seed(static_cast<std::uint64_t>(cfg_.train.seed) * 1000003ULL + group.rank());
}

bool Trainer::lead() const { return group_ == nullptr || group_->rank() == 0; }

void Trainer::save(std::int64_t step) {
  CheckpointMeta meta = meta_;
  meta.step = step;
  meta.tokens_seen = tokens_seen_;
  meta.config_json = cfg_.to_json();
  save_checkpoint(checkpoint_path_, objective_.module(), optimizer_.get(), meta);
}

StepOutcome Trainer::update() {
  const auto& t = cfg_.train;
  StepOutcome out;
  out.lr = lr_at(static_cast<int>(step_), t.lr, t.warmup_steps, t.max_steps, t.min_lr_ratio);
  for (auto& group : optimizer_->param_groups()) group.options().set_lr(out.lr);
  if (cfg_.train.keep_pruned && !kept_zeros_) {
    // Captured at the first update, after init_from or a resume has loaded the weights (a checkpoint
    // holds the same zeros as the pruned start).
    kept_zeros_.emplace(objective_.module());
    require(kept_zeros_->count() > 0, "train.keep_pruned: the model has no zero weights (is train.init_from a pruned checkpoint?)");
  }
  optimizer_->zero_grad();
  const BatchReducerScope whole_batch(group_);  // balance and ToMoE statistics over every rank's rows
  for (int micro = 0; micro < t.grad_accum; ++micro) {
    Analysis an;
    auto loss = objective_.micro_loss(step_, micro, an);
    auto total = loss;
    if (auto aux = an.total_aux_loss(); aux.defined()) {
      total = total + aux;
      out.aux += aux.item<double>() / t.grad_accum;
    }
    for (const auto& [name, value] : an.aux_losses) out.terms["aux/" + name] += value.item<double>() / t.grad_accum;
    for (const auto& [name, value] : an.stats) out.terms[name] += value / t.grad_accum;
    (total / t.grad_accum).backward();
    out.loss += loss.item<double>() / t.grad_accum;
  }
  if (group_) {
    group_->average_gradients(objective_.module().parameters());
    // The logged values: means over the ranks (each rank saw as many tokens).
    std::vector<double> means{out.loss, out.aux};
    for (const auto& [name, value] : out.terms) means.push_back(value);
    group_->sum(means);
    out.loss = means[0] / world_;
    out.aux = means[1] / world_;
    std::size_t i = 2;
    for (auto& [name, value] : out.terms) value = means[i++] / world_;
  }
  out.grad_norm = torch::nn::utils::clip_grad_norm_(objective_.module().parameters(),
                                                    t.grad_clip > 0 ? t.grad_clip : std::numeric_limits<double>::infinity());
  optimizer_->step();
  if (kept_zeros_) kept_zeros_->apply();
  ++step_;
  tokens_seen_ += objective_.units_per_micro() * t.grad_accum * world_;
  return out;
}

TrainResult Trainer::run(const TrainerCallbacks& cb, const std::atomic<bool>* stop) {
  const auto& t = cfg_.train;
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  auto t_last = t_start;
  double smoothed_tps = 0;
  TrainResult result;
  objective_.module().train();
  const std::int64_t tokens_per_step = objective_.units_per_micro() * t.grad_accum * world_;
  const std::int64_t first_step = step_;
  if (step_ == 0 && !t.init_from.empty() && cb.on_metrics && lead()) {
    // Continue-tuning: where the converted model starts (MoH Fig. 2's recovery curve begins here).
    cb.on_metrics(0, objective_.validate());
    objective_.module().train();
  }

  while (step_ < t.max_steps) {
    bool stopping = stop && stop->load();
    if (group_) {  // all ranks stop after the same step
      std::vector<double> requests{stopping ? 1.0 : 0.0};
      group_->sum(requests);
      stopping = requests[0] > 0;
    }
    if (stopping) {
      result.interrupted = true;
      break;
    }
    const StepOutcome u = update();
    const double loss = u.loss, lr = u.lr;
    require(std::isfinite(loss), "training diverged: loss is " + std::to_string(loss) + " at step " + std::to_string(step_));
    const auto now = clock::now();
    const double dt = std::chrono::duration<double>(now - t_last).count();
    t_last = now;
    const double tps = tokens_per_step / std::max(dt, 1e-9);
    smoothed_tps = (step_ - first_step <= 1) ? tps : 0.9 * smoothed_tps + 0.1 * tps;

    if (cb.on_step) {
      StepReport r;
      r.step = step_;
      r.max_steps = t.max_steps;
      r.loss = loss;
      r.lr = lr;
      r.tokens_per_s = smoothed_tps;
      r.unit = objective_.unit_name();
      r.eta_s = (t.max_steps - step_) * tokens_per_step / std::max(smoothed_tps, 1e-9);
      cb.on_step(r);
    }
    if (cb.on_metrics && (step_ % t.log_every == 0 || step_ == t.max_steps)) {
      Metrics m{{"train/loss", loss}, {"train/lr", lr}, {"train/grad_norm", u.grad_norm},
                {"train/tokens", static_cast<double>(tokens_seen_)}, {"train/tokens_per_s", smoothed_tps}};
      if (u.aux != 0) m.emplace_back("train/aux_loss", u.aux);
      for (const auto& [name, mean] : u.terms) m.emplace_back("train/" + name, mean);
      cb.on_metrics(step_, m);
    }
    const bool last = step_ == t.max_steps;
    if (((t.eval_every > 0 && step_ % t.eval_every == 0) || last) && lead()) {
      result.final_val = objective_.validate();
      objective_.module().train();
      if (cb.on_metrics) cb.on_metrics(step_, result.final_val);
    }
    if ((step_ % t.checkpoint_every == 0 || last) && lead()) {
      if (cb.before_checkpoint) cb.before_checkpoint(step_);
      save(step_);
      if (cb.on_checkpoint) cb.on_checkpoint(step_, checkpoint_path_);
    }
  }
  if (result.interrupted && lead()) {
    if (cb.before_checkpoint) cb.before_checkpoint(step_);
    save(step_);
    if (cb.on_checkpoint) cb.on_checkpoint(step_, checkpoint_path_);
  }
  result.steps = step_;
  result.tokens_seen = tokens_seen_;
  result.unit = objective_.unit_name();
  result.seconds = std::chrono::duration<double>(clock::now() - t_start).count();
  return result;
}

}  // namespace moxlab
