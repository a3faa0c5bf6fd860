// A table of typed, range-checked config fields bound to the members of option structs.
// One Schema instance is built per Config (see config.cpp); TOML, JSON and --set all go through it,
// so a key is declared once and parsed the same way everywhere.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace moxlab {

using ConfigValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::string>>;

struct FieldSpec {
  enum class Type { Int, Float, Bool, String, StringList };
  std::string key;  // "section.name"
  Type type;
  std::string help;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // for strings; empty = free text
  std::function<void(const ConfigValue&)> set;
  std::function<ConfigValue()> get;
};

class Schema {
 public:
  void add(const std::string& key, int& ref, double min, double max, const std::string& help);
  void add(const std::string& key, std::int64_t& ref, double min, double max, const std::string& help);
  void add(const std::string& key, double& ref, double min, double max, const std::string& help);
  void add(const std::string& key, bool& ref, const std::string& help);
  void add(const std::string& key, std::string& ref, std::vector<std::string> choices, const std::string& help);
  void add(const std::string& key, std::vector<std::string>& ref, const std::string& help);

  // A name that is not a key but that users write for `key` (train.steps -> train.max_steps): it is
  // never accepted, only suggested when an unknown key matches it.
  void suggest(const std::string& alias, const std::string& key);

  const FieldSpec* find(const std::string& key) const;
  const FieldSpec& at(const std::string& key) const;  // throws "unknown config key" with a hint
  const std::vector<FieldSpec>& fields() const { return fields_; }

  // Sets a field from a value of compatible type, checking range/choices. `origin` names the source
  // (file, --set) for the error message.
  void set(const std::string& key, const ConfigValue& value, const std::string& origin) const;
  // Parses text by the field's type ("3", "1e-3", "true", "a,b" or "[a, b]" for lists).
  void set_from_text(const std::string& key, const std::string& text, const std::string& origin) const;

 private:
  std::vector<FieldSpec> fields_;
  std::vector<std::pair<std::string, std::string>> suggestions_;  // alias -> key
};

std::string type_name(FieldSpec::Type t);
// "an integer", "a number", ...: the type name with its article, for messages.
std::string a_type_name(FieldSpec::Type t);

}  // namespace moxlab
