// `moxlab import llama2c --model M.bin --tokenizer T.bin [--out CKPT] [--print-id]` and
// `moxlab import hf --dir DIR [--tokenizer SPEC] [--print-id]`: a pretrained model as a moxlab checkpoint
// (recorded in the run store as an import run). A directory written by `moxlab export hf` carries its
// tokenizer (tokenizer_bundle.h); other HF directories need --tokenizer.
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/common/error.h"
#include "core/data/tokenizers/tokenizer.h"
#include "core/io/hf_checkpoint.h"
#include "core/io/llama2c_import.h"
#include "core/model/param_count.h"
#include "core/train/checkpoint.h"
#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/tokenizer_bundle.h"
#include "experiments/runner/run_registry.h"

namespace moxlab::cli {

namespace {
struct ImportArgs {
  std::string model, tokenizer, out, store = "runs/runs.db", name;
  bool print_id = false;
};

// Default run name: the model file's stem, or the directory's name.
std::string name_of(const std::string& from) {
  std::filesystem::path p = std::filesystem::absolute(from).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "dir/"
  return std::filesystem::is_directory(p) ? p.filename().string() : p.stem().string();
}

// Shared by every import kind: the run row, the checkpoint, the finished status.
void record_import(ImportedModel& m, const ImportArgs& a, const std::string& tok_spec, const std::string& source) {
  const std::string& from = a.model;
  m.config.run.name = !a.name.empty() ? a.name : name_of(from);
  m.config.run.store = a.store;
  RegisteredRun run = register_run(m.config, "import", source + " " + from);
  const std::string out = a.out.empty() ? run.dir + "/checkpoint.pt" : a.out;
  CheckpointMeta meta;
  meta.config_json = m.config.to_json();
  meta.tokenizer_spec = tok_spec;
  meta.run_id = run.id;
  meta.source = source;
  save_checkpoint(out, *m.model, nullptr, meta);
  finish_import_run(run, out, count_parameters(*m.model));
  summary_stream(a.print_id) << "run " << run.id << ": imported " << from << " -> " << out << "\n";
  if (a.print_id) std::cout << run.id << "\n";
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
  l2c->add_option("--name", a->name, "run name (default: the model file's stem)");
  l2c->add_option("--store", a->store, "run store")->capture_default_str();
  add_print_id_flag(l2c, a->print_id);
  l2c->callback([a]() {
    const std::string tok_spec = absolute_tokenizer_spec("llama2c:" + a->tokenizer);
    auto tok = load_tokenizer(tok_spec);  // fail early on a bad tokenizer file
    ImportedModel m = import_llama2c(a->model, tok_spec);
    require_vocab_match(*tok, m);
    record_import(m, *a, tok_spec, "import:llama2c");
  });

  auto h = std::make_shared<ImportArgs>();
  auto* hf = cmd->add_subcommand("hf", "HF-style directory: model.safetensors + config.json (LLaMA / Qwen2)");
  hf->add_option("--dir", h->model, "directory with config.json and model.safetensors")->required();
  hf->add_option("--tokenizer", h->tokenizer, "tokenizer spec KIND:PATH, kinds bpe, gpt2, sentencepiece, llama2c "
                                               "(default: the one moxlab export hf put in the directory)");
  hf->add_option("--out", h->out, "checkpoint path (default: runs/<id>-<name>/checkpoint.pt)");
  hf->add_option("--name", h->name, "run name (default: the directory's name)");
  hf->add_option("--store", h->store, "run store")->capture_default_str();
  add_print_id_flag(hf, h->print_id);
  hf->callback([h]() {
    std::string tok_spec = h->tokenizer;
    if (tok_spec.empty()) {
      const auto bundled = read_tokenizer_bundle(h->model);
      require(bundled.has_value(), "import hf: " + h->model + " carries no tokenizer (moxlab export hf writes one): "
                                   "give --tokenizer KIND:PATH");
      tok_spec = *bundled;
    }
    tok_spec = absolute_tokenizer_spec(tok_spec);
    auto tok = load_tokenizer(tok_spec);  // fail early on a bad tokenizer spec
    ImportedModel m = import_hf(h->model, tok_spec);
    require_vocab_match(*tok, m);
    record_import(m, *h, tok_spec, "import:hf");
  });
}

}  // namespace moxlab::cli
