// Setting one config key from a value read outside TOML and --set (an imported model's header or
// config.json), through the same schema: its type, range and choices are checked, so a foreign file
// cannot set a value that a config file could not.
#pragma once
#include <string>

#include "core/config/config.h"
#include "core/config/schema.h"

namespace moxlab {

// Throws Error naming the key, the value, its allowed range and `origin` (e.g. "num_hidden_layers in
// HF config DIR/config.json").
void set_config_key(Config& cfg, const std::string& key, const ConfigValue& value, const std::string& origin);

}  // namespace moxlab
