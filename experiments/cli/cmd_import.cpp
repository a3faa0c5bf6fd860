// `moxlab import llama2c --model M.bin --tokenizer T.bin --out CKPT` and
// `moxlab import hf --dir DIR --tokenizer SPEC`: a pretrained model as a moxlab checkpoint (recorded
// in the run store as an import run).
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/common/error.h"
#include "core/data/tokenizer.h"
#include "core/io/hf_checkpoint.h"
#include "core/io/llama2c_import.h"
#include "core/model/param_count.h"
#include "core/train/checkpoint.h"
#include "experiments/cli/commands.h"
#include "experiments/runner/run_registry.h"

namespace moxlab::cli {

namespace {
struct ImportArgs {
  std::string model, tokenizer, out, store = "runs/runs.db", name = "stories260K";
};

// Shared by every import kind: the run row, the checkpoint, the finished status.
void record_import(ImportedModel& m, const std::string& name, const std::string& store, const std::string& out_arg,
                   const std::string& tok_spec, const std::string& source, const std::string& from) {
  m.config.run.name = name;
  m.config.run.store = store;
  RegisteredRun run = register_run(m.config, "import", source + " " + from);
  const std::string out = out_arg.empty() ? run.dir + "/checkpoint.pt" : out_arg;
  CheckpointMeta meta;
  meta.config_json = m.config.to_json();
  meta.tokenizer_spec = tok_spec;
  meta.run_id = run.id;
  meta.source = source;
  save_checkpoint(out, *m.model, nullptr, meta);
  finish_import_run(run, out, count_parameters(*m.model));
  std::cout << "run " << run.id << ": imported " << from << " -> " << out << "\n";
}

void require_vocab_match(const Tokenizer& tok, const ImportedModel& m) {
  require(tok.vocab_size() == m.config.model.vocab_size,
          "tokenizer vocab (" + std::to_string(tok.vocab_size()) + ") does not match the model's (" +
              std::to_string(m.config.model.vocab_size) + ")");
}
}  // namespace

void register_import(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "Import pretrained weights as a moxlab checkpoint");
  cmd->require_subcommand(1);
  auto a = std::make_shared<ImportArgs>();
  auto* l2c = cmd->add_subcommand("llama2c", "llama2.c model .bin + tokenizer .bin");
  l2c->add_option("--model", a->model, "llama2.c model file")->required();
  l2c->add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer.bin")->required();
  l2c->add_option("--out", a->out, "checkpoint path (default: runs/<id>-<name>/checkpoint.pt)");
  l2c->add_option("--name", a->name, "run name");
  l2c->add_option("--store", a->store, "run store");
  l2c->callback([a]() {
    const std::string tok_spec = absolute_tokenizer_spec("llama2c:" + a->tokenizer);
    auto tok = load_tokenizer(tok_spec);  // fail early on a bad tokenizer file
    ImportedModel m = import_llama2c(a->model, tok_spec);
    require_vocab_match(*tok, m);
    record_import(m, a->name, a->store, a->out, tok_spec, "import:llama2c", a->model);
  });

  auto h = std::make_shared<ImportArgs>();
  h->name = "hf";
  auto* hf = cmd->add_subcommand("hf", "HF-style directory: model.safetensors + config.json (LLaMA / Qwen2)");
  hf->add_option("--dir", h->model, "directory with config.json and model.safetensors")->required();
  hf->add_option("--tokenizer", h->tokenizer, "tokenizer spec KIND:PATH (see load_tokenizer)")->required();
  hf->add_option("--out", h->out, "checkpoint path (default: runs/<id>-<name>/checkpoint.pt)");
  hf->add_option("--name", h->name, "run name");
  hf->add_option("--store", h->store, "run store");
  hf->callback([h]() {
    const std::string tok_spec = absolute_tokenizer_spec(h->tokenizer);
    auto tok = load_tokenizer(tok_spec);  // fail early on a bad tokenizer spec
    ImportedModel m = import_hf(h->model, tok_spec);
    require_vocab_match(*tok, m);
    record_import(m, h->name, h->store, h->out, tok_spec, "import:hf", h->model);
  });
}

}  // namespace moxlab::cli
