// `moxlab config show|keys`: print a resolved config (after --set overrides) or every known key.
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"

namespace moxlab::cli {

void register_config(CLI::App& app) {
  auto* cmd = app.add_subcommand("config", "Inspect configurations");
  cmd->require_subcommand(1);

  auto* show = cmd->add_subcommand("show", "Print the resolved config as JSON with its hash");
  static std::string path;
  static std::vector<std::string> sets;
  show->add_option("--config", path, "TOML file")->required()->check(non_empty_path());
  show->add_option("--set", sets, "key=value override (repeatable)");
  show->callback([]() {
    Config c = load_config(path, sets);
    std::cout << nlohmann::json::parse(c.to_json()).dump(2) << "\nhash " << c.hash() << "\n";
  });

  auto* keys = cmd->add_subcommand("keys", "List every config key with type, default and meaning");
  keys->callback([]() {
    for (const auto& line : describe_config_keys()) std::cout << line << "\n";
  });
}

}  // namespace moxlab::cli
