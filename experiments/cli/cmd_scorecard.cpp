// `moxlab scorecard CLAIMS.toml --stores DIR [--insert FILE | --check FILE | --out FILE]`: the claims
// scorecard (experiments/report/scorecard.h) from the study stores in DIR; --insert replaces the block
// between the scorecard markers of FILE (docs/reproduction/README.md) atomically; --check fails when that
// block is not what the stores give (a store committed without regenerating the scorecard).
// scripts/scorecard.sh is the one command that unpacks the committed stores and regenerates the README's
// scorecard (--check: tests it).
#include <iostream>
#include <memory>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "experiments/cli/commands.h"
#include "experiments/report/scorecard.h"

namespace moxlab::cli {

void register_scorecard(CLI::App& app) {
  struct Args {
    std::string claims, stores = ".", insert, check, out;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("scorecard", "Claims scorecard (paired differences per paper claim) from study stores");
  cmd->add_option("claims", a->claims, "claims TOML (experiments/report/scorecard.h)")->required();
  cmd->add_option("--stores", a->stores, "directory holding the claims' store files")->capture_default_str();
  auto* insert = cmd->add_option("--insert", a->insert, "replace the scorecard block of this Markdown file");
  auto* check = cmd->add_option("--check", a->check, "fail unless this Markdown file's scorecard block is current")->excludes(insert);
  cmd->add_option("--out", a->out, "write here (atomically) instead of stdout")->excludes(insert)->excludes(check);
  cmd->callback([a]() {
    const std::string block = scorecard_markdown(load_claims(a->claims), a->stores);
    if (!a->check.empty()) {
      const std::string text = read_file(a->check);
      require(replace_scorecard_block(text, block) == text,
              "the scorecard in " + a->check + " is not what the stores in " + a->stores + " give: run scripts/scorecard.sh");
    } else if (!a->insert.empty()) write_text_atomically(a->insert, replace_scorecard_block(read_file(a->insert), block));
    else if (!a->out.empty()) write_text_atomically(a->out, block);
    else std::cout << block;
  });
}

}  // namespace moxlab::cli
