#include "experiments/runner/tomoe_convert.h"

#include <cstdio>

#include "core/common/error.h"
#include "core/common/atomic_file.h"
#include "core/train/checkpoint.h"

namespace moxlab {

Config tomoe_convert_config(const TomoeConvertRequest& r) {
  require(file_exists(r.checkpoint), "convert tomoe: checkpoint " + r.checkpoint + " does not exist");
  require(r.active > 0 && r.active <= 1, "convert tomoe: --active must be in (0, 1], got " + std::to_string(r.active));
  require(r.steps >= 1, "convert tomoe: --steps must be at least 1");
  const LoadedCheckpoint ck = load_checkpoint(r.checkpoint);
  require(!ck.config.model.is_tomoe(), "convert tomoe: " + r.checkpoint + " is already a ToMoE model");
  Config cfg = r.base_config.empty() ? ck.config : load_config(r.base_config);
  if (r.base_config.empty()) cfg.model.vocab_size = 0;  // re-derived from the data's tokenizer, checked by init_from
  char active[32];
  std::snprintf(active, sizeof(active), "%g", r.active);
  const std::string steps = std::to_string(r.steps);
  for (const std::string& kv : std::vector<std::string>{
           "run.kind=train", std::string("run.name=tomoe_target") + active, "model.attention=tomoe", "model.ffn=tomoe",
           std::string("tomoe.active=") + active, "train.loss=distill", "train.trainable=routing",
           "train.init_from=" + r.checkpoint, "train.lr=1e-3", "train.warmup_steps=0", "train.min_lr_ratio=1",
           "train.weight_decay=0.05", "train.max_steps=" + steps, "train.checkpoint_every=" + steps,
           "train.eval_every=" + std::to_string(std::max(1, r.steps / 4))})
    apply_override(cfg, kv);
  for (const auto& kv : r.sets) apply_override(cfg, kv);
  validate(cfg);
  return cfg;
}

}  // namespace moxlab
