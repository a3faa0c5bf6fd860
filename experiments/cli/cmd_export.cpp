// `moxlab export hf --run ID | --checkpoint P --out DIR [--arch llama|qwen2]`: a moxlab checkpoint as a
// Hugging Face-style directory (model.safetensors + config.json) that transformers' LlamaForCausalLM or
// Qwen2ForCausalLM loads. Without --arch the model's Q/K/V bias decides (bias: qwen2, else llama). The
// model's tokenizer goes along (tokenizer_bundle.h), so `moxlab import hf --dir DIR` reads it back as is.
// `moxlab export tomoe --run ID | --checkpoint P --out F.safetensors`: a converted ToMoE run's checkpoint as
// the real MoE (core/model/tomoe/tomoe_moe_weights.h): experts holding only their kept channels, q/k only the kept pairs.
#include <iostream>
#include <memory>

#include "core/io/hf_checkpoint.h"
#include "core/io/tomoe_moe_file.h"
#include "core/train/checkpoint.h"
#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/tokenizer_bundle.h"

namespace moxlab::cli {

namespace {
struct ExportArgs {
  CheckpointRef ref;
  std::string out, arch;
};
}  // namespace

void register_export(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Export a moxlab checkpoint to another format");
  cmd->require_subcommand(1);
  auto a = std::make_shared<ExportArgs>();
  auto* hf = cmd->add_subcommand("hf", "HF-style model.safetensors + config.json (LLaMA / Qwen2), with the tokenizer");
  add_checkpoint_options(hf, a->ref, "model's");
  hf->add_option("--store", a->ref.store, "run store of --run")->capture_default_str();
  hf->add_option("--out", a->out, "output directory")->required();
  hf->add_option("--arch", a->arch, "llama or qwen2 (default: from the model's model.qkv_bias)")
      ->check(CLI::IsMember({"llama", "qwen2"}));
  hf->callback([a]() {
    const std::string path = checkpoint_file(a->ref);
    LoadedCheckpoint ck = load_checkpoint(path);
    const std::string arch = !a->arch.empty() ? a->arch : ck.config.model.qkv_bias ? "qwen2" : "llama";
    export_hf(*ck.model, a->out, arch);
    std::cout << "exported " << path << " -> " << a->out << " (" << arch << ")\n";
    if (ck.meta.tokenizer_spec.empty()) {
      std::cout << "the checkpoint records no tokenizer: import it with moxlab import hf --dir " << a->out
                << " --tokenizer KIND:PATH\n";
      return;
    }
    const std::string spec = write_tokenizer_bundle(a->out, ck.meta.tokenizer_spec);
    std::cout << "tokenizer " << spec << " (moxlab import hf --dir " << a->out << " uses it)\n";
  });
  auto* tomoe = cmd->add_subcommand("tomoe", "a converted ToMoE model as the real MoE (kept weights only, safetensors)");
  add_checkpoint_options(tomoe, a->ref, "finished ToMoE run's");
  tomoe->add_option("--store", a->ref.store, "run store of --run")->capture_default_str();
  tomoe->add_option("--out", a->out, "output .safetensors file")->required();
  tomoe->callback([a]() {
    const std::string path = checkpoint_file(a->ref);
    LoadedCheckpoint ck = load_checkpoint(path);
    const TomoeMoeWeights moe = extract_tomoe_moe(*ck.model);
    save_tomoe_moe(moe, a->out);
    const ParamCount p = moe.param_count();
    std::cout << "exported " << path << " -> " << a->out << ": " << p.total << " non-embedding parameters, " << p.active
              << " active per token\n";
  });
}

}  // namespace moxlab::cli
