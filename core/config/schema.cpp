#include "core/config/schema.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/common/error.h"

namespace moxlab {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string unquote(const std::string& s) {
  if (s.size() >= 2 && ((s.front() == '"' && s.back() == '"') || (s.front() == '\'' && s.back() == '\'')))
    return s.substr(1, s.size() - 2);
  return s;
}

// Edit distance, for "did you mean" hints on misspelt keys.
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string fmt_number(double v) {
  std::ostringstream os;
  os.precision(15);  // integers up to 15 digits exactly (5000000, not 5e+06)
  os << v;
  return os.str();
}

// shown: the value as the user wrote it (so an overflowing integer is not shown wrapped); "" = v.
void check_range(const FieldSpec& f, double v, const std::string& origin, const std::string& shown = "") {
  if (std::isnan(v) || v < f.min || v > f.max)
    throw Error("config key '" + f.key + "' = " + (shown.empty() ? fmt_number(v) : shown) + " is out of range [" +
                fmt_number(f.min) + ", " + fmt_number(f.max) + "] (" + origin + ")");
}

}  // namespace

std::string type_name(FieldSpec::Type t) {
  switch (t) {
    case FieldSpec::Type::Int: return "integer";
    case FieldSpec::Type::Float: return "number";
    case FieldSpec::Type::Bool: return "boolean";
    case FieldSpec::Type::String: return "string";
    case FieldSpec::Type::StringList: return "list of strings";
  }
  return "?";
}

std::string a_type_name(FieldSpec::Type t) {
  return (t == FieldSpec::Type::Int ? "an " : "a ") + type_name(t);
}

void Schema::add(const std::string& key, int& ref, double min, double max, const std::string& help) {
  // A range wider than int (kBig) would let a valid-looking value wrap when stored.
  max = std::min(max, static_cast<double>(std::numeric_limits<int>::max()));
  min = std::max(min, static_cast<double>(std::numeric_limits<int>::min()));
  fields_.push_back({key, FieldSpec::Type::Int, help, min, max, {},
                     [&ref](const ConfigValue& v) { ref = static_cast<int>(std::get<std::int64_t>(v)); },
                     [&ref]() { return ConfigValue(static_cast<std::int64_t>(ref)); }});
}

void Schema::add(const std::string& key, std::int64_t& ref, double min, double max, const std::string& help) {
  fields_.push_back({key, FieldSpec::Type::Int, help, min, max, {},
                     [&ref](const ConfigValue& v) { ref = std::get<std::int64_t>(v); },
                     [&ref]() { return ConfigValue(ref); }});
}

void Schema::add(const std::string& key, double& ref, double min, double max, const std::string& help) {
  fields_.push_back({key, FieldSpec::Type::Float, help, min, max, {},
                     [&ref](const ConfigValue& v) { ref = std::get<double>(v); },
                     [&ref]() { return ConfigValue(ref); }});
}

void Schema::add(const std::string& key, bool& ref, const std::string& help) {
  fields_.push_back({key, FieldSpec::Type::Bool, help, 0, 1, {},
                     [&ref](const ConfigValue& v) { ref = std::get<bool>(v); },
                     [&ref]() { return ConfigValue(ref); }});
}

void Schema::add(const std::string& key, std::string& ref, std::vector<std::string> choices, const std::string& help) {
  FieldSpec f{key, FieldSpec::Type::String, help, 0, 0, std::move(choices),
              [&ref](const ConfigValue& v) { ref = std::get<std::string>(v); },
              [&ref]() { return ConfigValue(ref); }};
  fields_.push_back(std::move(f));
}

void Schema::add(const std::string& key, std::vector<std::string>& ref, const std::string& help) {
  fields_.push_back({key, FieldSpec::Type::StringList, help, 0, 0, {},
                     [&ref](const ConfigValue& v) { ref = std::get<std::vector<std::string>>(v); },
                     [&ref]() { return ConfigValue(ref); }});
}

void Schema::suggest(const std::string& alias, const std::string& key) { suggestions_.emplace_back(alias, key); }

const FieldSpec* Schema::find(const std::string& key) const {
  for (const auto& f : fields_)
    if (f.key == key) return &f;
  return nullptr;
}

const FieldSpec& Schema::at(const std::string& key) const {
  if (const FieldSpec* f = find(key)) return *f;
  std::string best;
  std::size_t best_d = 4;
  for (const auto& f : fields_) {
    std::size_t d = distance(key, f.key);
    if (d < best_d) { best_d = d; best = f.key; }
  }
  for (const auto& [alias, target] : suggestions_) {  // an alias as close as a key wins: it is what was meant
    std::size_t d = distance(key, alias);
    if (d <= best_d) { best_d = d; best = target; }
  }
  throw Error("unknown config key '" + key + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)"));
}

void Schema::set(const std::string& key, const ConfigValue& value, const std::string& origin) const {
  const FieldSpec& f = at(key);
  auto wrong = [&]() {
    return Error("config key '" + key + "' expects " + a_type_name(f.type) + " (" + origin + ")");
  };
  switch (f.type) {
    case FieldSpec::Type::Int: {
      std::int64_t v;
      if (auto* i = std::get_if<std::int64_t>(&value)) v = *i;
      else if (auto* d = std::get_if<double>(&value); d && std::floor(*d) == *d) {
        check_range(f, *d, origin);  // before the cast: a double beyond int64 does not convert
        v = static_cast<std::int64_t>(*d);
      } else throw wrong();
      check_range(f, static_cast<double>(v), origin);
      f.set(ConfigValue(v));
      return;
    }
    case FieldSpec::Type::Float: {
      double v;
      if (auto* d = std::get_if<double>(&value)) v = *d;
      else if (auto* i = std::get_if<std::int64_t>(&value)) v = static_cast<double>(*i);
      else throw wrong();
      check_range(f, v, origin);
      f.set(ConfigValue(v));
      return;
    }
    case FieldSpec::Type::Bool:
      if (!std::holds_alternative<bool>(value)) throw wrong();
      f.set(value);
      return;
    case FieldSpec::Type::String: {
      auto* s = std::get_if<std::string>(&value);
      if (!s) throw wrong();
      if (!f.choices.empty() && std::find(f.choices.begin(), f.choices.end(), *s) == f.choices.end()) {
        std::string all;
        for (const auto& c : f.choices) all += (all.empty() ? "" : "|") + c;
        throw Error("config key '" + key + "' = '" + *s + "' is not one of " + all + " (" + origin + ")");
      }
      f.set(value);
      return;
    }
    case FieldSpec::Type::StringList:
      if (!std::holds_alternative<std::vector<std::string>>(value)) throw wrong();
      f.set(value);
      return;
  }
}

void Schema::set_from_text(const std::string& key, const std::string& raw, const std::string& origin) const {
  const FieldSpec& f = at(key);
  const std::string text = trim(raw);
  auto bad = [&]() {
    return Error("config key '" + key + "' expects " + a_type_name(f.type) + ", got '" + text + "' (" + origin + ")");
  };
  switch (f.type) {
    case FieldSpec::Type::Int: {
      std::size_t pos = 0;
      double d;
      try { d = std::stod(text, &pos); } catch (...) { throw bad(); }
      if (pos != text.size() || std::floor(d) != d) throw bad();
      check_range(f, d, origin, text);
      set(key, ConfigValue(static_cast<std::int64_t>(d)), origin);
      return;
    }
    case FieldSpec::Type::Float: {
      std::size_t pos = 0;
      double d;
      try { d = std::stod(text, &pos); } catch (...) { throw bad(); }
      if (pos != text.size()) throw bad();
      set(key, ConfigValue(d), origin);
      return;
    }
    case FieldSpec::Type::Bool:
      if (text == "true" || text == "1") set(key, ConfigValue(true), origin);
      else if (text == "false" || text == "0") set(key, ConfigValue(false), origin);
      else throw bad();
      return;
    case FieldSpec::Type::String:
      set(key, ConfigValue(unquote(text)), origin);
      return;
    case FieldSpec::Type::StringList: {
      std::string body = text;
      if (!body.empty() && body.front() == '[') {
        if (body.back() != ']') throw bad();
        body = body.substr(1, body.size() - 2);
      }
      std::vector<std::string> items;
      std::stringstream ss(body);
      std::string item;
      while (std::getline(ss, item, ',')) {
        item = unquote(trim(item));
        if (!item.empty()) items.push_back(item);
      }
      set(key, ConfigValue(items), origin);
      return;
    }
  }
}

}  // namespace moxlab
