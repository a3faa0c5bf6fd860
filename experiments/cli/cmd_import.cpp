// `moxlab import llama2c --model M.bin --tokenizer T.bin --out CKPT`: a real pretrained model as a
// moxlab checkpoint (recorded in the run store as an import run).
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/common/error.h"
#include "core/data/tokenizer.h"
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
    const std::string tok_spec = "llama2c:" + std::filesystem::absolute(a->tokenizer).string();
    auto tok = load_tokenizer(tok_spec);  // fail early on a bad tokenizer file
    ImportedModel m = import_llama2c(a->model, tok_spec);
    require(tok->vocab_size() == m.config.model.vocab_size,
            "tokenizer vocab (" + std::to_string(tok->vocab_size()) + ") does not match the model's (" +
                std::to_string(m.config.model.vocab_size) + ")");
    m.config.run.name = a->name;
    m.config.run.store = a->store;
    RegisteredRun run = register_run(m.config, "import", "import:llama2c " + a->model);
    const std::string out = a->out.empty() ? run.dir + "/checkpoint.pt" : a->out;
    CheckpointMeta meta;
    meta.config_json = m.config.to_json();
    meta.tokenizer_spec = tok_spec;
    meta.run_id = run.id;
    meta.source = "import:llama2c";
    save_checkpoint(out, *m.model, nullptr, meta);
    finish_import_run(run, out, count_parameters(*m.model));
    std::cout << "run " << run.id << ": imported " << a->model << " -> " << out << "\n";
  });
}

}  // namespace moxlab::cli
