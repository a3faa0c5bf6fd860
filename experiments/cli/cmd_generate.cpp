// `moxlab generate --run ID | --checkpoint P --prompt TEXT [--greedy | --temperature T] [--max-new-tokens N]`
// Prints the prompt followed by the continuation, decoded piece by piece exactly as llama2.c prints.
#include <iostream>
#include <limits>
#include <memory>

#include "core/data/tokenizers/tokenizer.h"
#include "core/engine/generate.h"
#include "core/train/checkpoint.h"
#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"

namespace moxlab::cli {

namespace {
struct GenerateArgs {
  CheckpointRef ref;
  std::string prompt;
  bool greedy = false;
  double temperature = 0.8;
  int max_new_tokens = 200;
  std::uint64_t seed = 0;
};
}  // namespace

void register_generate(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand("generate", "Generate text from a checkpoint");
  add_checkpoint_options(cmd, a->ref, "model's");
  cmd->add_option("--store", a->ref.store, "run store of --run")->capture_default_str();
  cmd->add_option("--prompt", a->prompt, "prompt text (may be empty)");
  cmd->add_flag("--greedy", a->greedy, "argmax decoding (deterministic)");
  cmd->add_option("--temperature", a->temperature, "sampling temperature (ignored with --greedy)")->check(number_in(0.0, 100.0));
  cmd->add_option("--max-new-tokens", a->max_new_tokens, "tokens to generate")->check(integer_in(0, 1 << 20));
  cmd->add_option("--seed", a->seed, "sampling seed")->check(integer_in(0, std::numeric_limits<std::int64_t>::max()));
  cmd->callback([a]() {
    LoadedCheckpoint ck = load_checkpoint(checkpoint_file(a->ref));
    auto tok = load_tokenizer(ck.meta.tokenizer_spec);
    // Sequences start after BOS (llama2.c) or after a document separator (moxlab BPE has no BOS).
    const std::int32_t start = tok->bos_id() >= 0 ? tok->bos_id() : tok->document_separator();
    std::vector<std::int32_t> prompt{start};
    for (auto id : tok->encode(a->prompt)) prompt.push_back(id);
    GenerateOptions g;
    g.max_new_tokens = a->max_new_tokens;
    g.temperature = a->greedy ? 0.0 : a->temperature;
    g.seed = a->seed;
    for (auto id : {tok->bos_id(), tok->eos_id()})
      if (id >= 0) g.stop_ids.push_back(id);
    InferencePlan plan(*ck.model, form_from_name(ck.config.execution.form));
    auto out = generate(plan, prompt, g);
    std::vector<std::int32_t> all(prompt.begin() + 1, prompt.end());
    all.insert(all.end(), out.begin(), out.end());
    std::int32_t prev = start;
    std::string text;
    for (auto id : all) {
      text += tok->token_bytes(id, prev);
      prev = id;
    }
    std::cout << text << std::endl;
  });
}

}  // namespace moxlab::cli
