// `moxlab export hf --checkpoint P --out DIR [--arch llama|qwen2]`: a moxlab checkpoint as a Hugging
// Face-style directory (model.safetensors + config.json) that transformers' LlamaForCausalLM or
// Qwen2ForCausalLM loads. Without --arch the model's Q/K/V bias decides (bias: qwen2, else llama).
// `moxlab export tomoe --checkpoint P --out F.safetensors`: a converted ToMoE run's checkpoint as the real
// MoE (core/model/tomoe/tomoe_moe.h): experts holding only their kept channels, q/k only the kept pairs.
#include <iostream>
#include <memory>

#include "core/io/hf_checkpoint.h"
#include "core/model/tomoe/tomoe_moe.h"
#include "core/train/checkpoint.h"
#include "experiments/cli/commands.h"

namespace moxlab::cli {

namespace {
struct ExportArgs {
  std::string checkpoint, out, arch;
};
}  // namespace

void register_export(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Export a moxlab checkpoint to another format");
  cmd->require_subcommand(1);
  auto a = std::make_shared<ExportArgs>();
  auto* hf = cmd->add_subcommand("hf", "HF-style model.safetensors + config.json (LLaMA / Qwen2)");
  hf->add_option("--checkpoint", a->checkpoint, "moxlab checkpoint")->required();
  hf->add_option("--out", a->out, "output directory")->required();
  hf->add_option("--arch", a->arch, "llama or qwen2 (default: from the model's model.qkv_bias)")
      ->check(CLI::IsMember({"llama", "qwen2"}));
  hf->callback([a]() {
    LoadedCheckpoint ck = load_checkpoint(a->checkpoint);
    const std::string arch = !a->arch.empty() ? a->arch : ck.config.model.qkv_bias ? "qwen2" : "llama";
    export_hf(*ck.model, a->out, arch);
    std::cout << "exported " << a->checkpoint << " -> " << a->out << " (" << arch << ")\n";
  });
  auto* tomoe = cmd->add_subcommand("tomoe", "a converted ToMoE model as the real MoE (kept weights only, safetensors)");
  tomoe->add_option("--checkpoint", a->checkpoint, "checkpoint of a finished ToMoE run")->required();
  tomoe->add_option("--out", a->out, "output .safetensors file")->required();
  tomoe->callback([a]() {
    LoadedCheckpoint ck = load_checkpoint(a->checkpoint);
    const TomoeMoe moe = TomoeMoe::extract(*ck.model);
    moe.save(a->out);
    const ParamCount p = moe.param_count();
    std::cout << "exported " << a->checkpoint << " -> " << a->out << ": " << p.total << " non-embedding parameters, "
              << p.active << " active per token\n";
  });
}

}  // namespace moxlab::cli
