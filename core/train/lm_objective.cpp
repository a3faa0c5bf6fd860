#include "core/train/lm_objective.h"

#include <cmath>

#include "core/common/error.h"
#include "core/data/shards/domain_subset.h"
#include "core/engine/inference_plan.h"
#include "core/engine/training_forms.h"
#include "core/eval/perplexity.h"
#include "core/train/distillation.h"

namespace moxlab {

namespace {
std::vector<std::int64_t> domain_sizes(const TokenSource& src) {
  std::vector<std::int64_t> out;
  for (int d = 0; d < src.num_domains(); ++d) out.push_back(src.size(d));
  return out;
}
}  // namespace

LmObjective::LmObjective(const Config& cfg, std::shared_ptr<Transformer> model, std::shared_ptr<const TokenSource> train,
                         std::shared_ptr<const TokenSource> val)
    : t_(cfg.train),
      form_(form_from_name(cfg.execution.form)),
      model_(std::move(model)),
      train_(restrict_domains(std::move(train), cfg.train.domains)),
      val_(std::move(val)),
      sampler_(domain_sizes(*train_), cfg.train.seq_len + 1, static_cast<std::uint64_t>(cfg.train.seed)) {
  forms_ = training_forms(model_->blocks, model_->options(), form_);
  if (t_.loss == "distill" && t_.teacher.empty()) teacher_ = std::make_unique<InferencePlan>(*model_, form_);
}

void LmObjective::set_teacher(std::shared_ptr<Transformer> teacher, Form teacher_form) {
  require(t_.loss == "distill", "a distillation teacher needs train.loss = distill");
  require(teacher->options().vocab_size == model_->options().vocab_size,
          "train.teacher has vocabulary " + std::to_string(teacher->options().vocab_size) + ", the model " +
              std::to_string(model_->options().vocab_size));
  for (auto& p : teacher->parameters()) p.set_requires_grad(false);
  teacher->eval();
  teacher_model_ = std::move(teacher);
  teacher_ = std::make_unique<InferencePlan>(*teacher_model_, teacher_form);
}

std::int64_t LmObjective::units_per_micro() const { return static_cast<std::int64_t>(t_.batch_size) * t_.seq_len; }

std::pair<torch::Tensor, torch::Tensor> LmObjective::batch(std::int64_t step, int micro) const {
  const int B = t_.batch_size, T = t_.seq_len;
  std::vector<std::int32_t> buf(static_cast<std::size_t>(B) * (T + 1));
  const auto windows = sampler_.windows(step, micro, B, first_row_);
  for (int b = 0; b < B; ++b) train_->read(windows[b].domain, windows[b].start, T + 1, buf.data() + b * (T + 1));
  auto t = torch::from_blob(buf.data(), {B, T + 1}, torch::kInt32).to(torch::kLong);
  const auto device = model_->tok_embeddings->weight.device();
  return {t.narrow(1, 0, T).to(device), t.narrow(1, 1, T).to(device)};
}

void LmObjective::take_share(int rank, int world) {
  require(rank >= 0 && rank < world, "rank " + std::to_string(rank) + " is outside a world of " + std::to_string(world));
  first_row_ = rank * t_.batch_size;
}

torch::Tensor LmObjective::micro_loss(std::int64_t step, int micro, Analysis& an) {
  auto [x, y] = batch(step, micro);
  auto logits = model_->forward(x, an, forms_.pass());
  if (t_.loss != "distill") return forms_.lm_loss(logits, y);
  require(teacher_ != nullptr, "train.teacher " + t_.teacher + " was not loaded");
  ExecOptions exec;
  exec.gates_off = teacher_model_ == nullptr;  // ToMoE: the dense model inside the gated one (Eq. 10's f(x))
  const torch::Tensor teacher = teacher_->forward(x, exec);
  return t_.distill_scale * distillation_kl(teacher, logits);
}

Metrics LmObjective::validate() {
  Metrics m;
  double nll = 0;
  std::int64_t tokens = 0;
  for (int d = 0; d < val_->num_domains(); ++d) {
    auto r = evaluate_perplexity(*model_, *val_, d, t_.seq_len, t_.eval_tokens, t_.batch_size, {}, form_, Entropy::skipped);
    if (r.tokens == 0) continue;
    m.emplace_back("val/" + val_->domain_name(d) + "/loss", r.loss());
    nll += r.nll_sum;
    tokens += r.tokens;
  }
  if (tokens > 0) {
    m.emplace_back("val/loss", nll / tokens);  // token-weighted over domains
    m.emplace_back("val/ppl", std::exp(nll / tokens));
  }
  return m;
}

std::string LmObjective::metric_definition(const std::string& key) const {
  const bool is_loss = key.size() > 5 && key.compare(key.size() - 5, 5, "/loss") == 0;
  return std::string(is_loss ? "mean next-token NLL (nats)" : "exp(mean next-token NLL)") +
         " over the first " + std::to_string(t_.eval_tokens) +
         " val tokens of each domain (train.eval_tokens), non-overlapping windows of train.seq_len";
}

}  // namespace moxlab
