#include "experiments/sweep/sweep_spec.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <toml++/toml.h>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab {

namespace {

namespace fs = std::filesystem;

// Rejects keys other than `allowed` in a table: a typo in a sweep spec must not silently do nothing.
void check_keys(const toml::table& t, const std::set<std::string>& allowed, const std::string& where) {
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (!allowed.count(key)) throw Error("unknown key '" + key + "' in " + where);
  }
}

// The shortest decimal text that reads back as the same double ("0.003", not "0.0030000000000000001").
std::string shortest_double(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// A TOML scalar as the text `--set key=value` takes.
std::string override_text(const toml::node& n, const std::string& where) {
  if (auto i = n.value_exact<std::int64_t>()) return std::to_string(*i);
  if (auto d = n.value_exact<double>()) return shortest_double(*d);
  if (auto b = n.value_exact<bool>()) return *b ? "true" : "false";
  if (auto s = n.value_exact<std::string>()) return *s;
  throw Error(where + ": axis values must be numbers, booleans or strings");
}

std::vector<std::string> string_list(const toml::node* n, const std::string& where) {
  std::vector<std::string> out;
  if (!n) return out;
  const toml::array* arr = n->as_array();
  require(arr != nullptr, where + " must be an array of strings");
  for (const auto& el : *arr) {
    auto s = el.value_exact<std::string>();
    require(s.has_value(), where + " must be an array of strings");
    out.push_back(*s);
  }
  return out;
}

const toml::array& array_of(const toml::table& t, const std::string& key, const std::string& where) {
  const toml::array* arr = t[key].as_array();
  require(arr != nullptr, where + ": '" + key + "' must be an array");
  return *arr;
}

SweepAxis parse_axis(const toml::table& t, const std::string& where) {
  check_keys(t, {"key", "keys", "values"}, where);
  SweepAxis axis;
  if (auto k = t["key"].value_exact<std::string>()) axis.keys = {*k};
  else axis.keys = string_list(t.get("keys"), where + ".keys");
  require(!axis.keys.empty(), where + " needs key = \"section.name\" or keys = [...]");
  require(!(t.contains("key") && t.contains("keys")), where + ": give either key or keys, not both");
  for (const auto& value : array_of(t, "values", where)) {
    std::vector<std::string> point;
    if (axis.keys.size() == 1 && !value.is_array()) {
      point.push_back(override_text(value, where));
    } else {
      const toml::array* tuple = value.as_array();
      require(tuple && tuple->size() == axis.keys.size(),
              where + ": each value must be an array of " + std::to_string(axis.keys.size()) + " values (one per key)");
      for (const auto& el : *tuple) point.push_back(override_text(el, where));
    }
    axis.points.push_back(point);
  }
  require(!axis.points.empty(), where + " has no values");
  return axis;
}

SweepEval parse_eval(const toml::table& t, const std::string& where) {
  check_keys(t, {"tasks", "limit", "wikitext", "max_val_tokens", "routing_tokens_per_domain", "kl_reference"}, where);
  SweepEval e;
  e.enabled = true;
  e.tasks = string_list(t.get("tasks"), where + ".tasks");
  e.limit = static_cast<int>(t["limit"].value_or<std::int64_t>(0));
  e.wikitext = t["wikitext"].value_or(false);
  e.max_val_tokens = t["max_val_tokens"].value_or<std::int64_t>(0);
  e.routing_tokens_per_domain = t["routing_tokens_per_domain"].value_or<std::int64_t>(0);
  if (const toml::node* kl = t.get("kl_reference")) {
    const auto s = kl->value_exact<std::string>();
    require(s && !s->empty(), where + ".kl_reference must be \"init\", a checkpoint path or sweep:NAME/VARIANT[/SEED]");
    e.kl_reference = *s;
  }
  require(e.limit >= 0 && e.max_val_tokens >= 0 && e.routing_tokens_per_domain >= 0,
          where + ": limit, max_val_tokens and routing_tokens_per_domain must be >= 0");
  return e;
}

// Every combination of the axes' points, first axis slowest.
std::vector<std::vector<std::string>> grid_points(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<std::string>> out{{}};
  for (const auto& axis : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out)
      for (const auto& point : axis.points) {
        auto row = prefix;
        for (std::size_t j = 0; j < axis.keys.size(); ++j) row.push_back(axis.keys[j] + "=" + point[j]);
        next.push_back(row);
      }
    out = std::move(next);
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

SweepSpec load_sweep_spec(const std::string& path) {
  SweepSpec spec;
  spec.file = fs::absolute(path).string();
  require(file_exists(spec.file), "cannot open sweep spec " + path);
  spec.text = read_file(spec.file);
  toml::table t;
  try {
    t = toml::parse(spec.text, spec.file);
  } catch (const toml::parse_error& err) {
    throw Error("sweep spec " + path + ":" + std::to_string(err.source().begin.line) + ": " + std::string(err.description()));
  }
  check_keys(t, {"name", "base", "seeds", "set", "mode", "axis", "member", "eval"}, "sweep spec " + path);
  spec.name = t["name"].value_or(std::string());
  require(!spec.name.empty(), "sweep spec " + path + " needs name = \"...\"");
  for (char c : spec.name)
    require(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-',
            "sweep name '" + spec.name + "' may only use letters, digits, _ and -");
  if (auto base = t["base"].value_exact<std::string>(); base && !base->empty())
    spec.base = (fs::path(spec.file).parent_path() / *base).lexically_normal().string();
  if (const toml::node* seeds = t.get("seeds")) {
    const toml::array* arr = seeds->as_array();
    require(arr != nullptr, "sweep spec " + path + ": seeds must be an array of integers");
    for (const auto& s : *arr) {
      auto v = s.value_exact<std::int64_t>();
      require(v.has_value(), "sweep spec " + path + ": seeds must be an array of integers");
      spec.seeds.push_back(*v);
    }
    require(std::set<std::int64_t>(spec.seeds.begin(), spec.seeds.end()).size() == spec.seeds.size(),
            "sweep spec " + path + ": seeds repeat");
  }
  spec.set = string_list(t.get("set"), "sweep spec " + path + ": set");
  const std::string mode = t["mode"].value_or(std::string("grid"));
  require(mode == "grid" || mode == "list", "sweep spec " + path + ": mode must be \"grid\" or \"list\", got \"" + mode + "\"");
  spec.grid = mode == "grid";
  if (const toml::node* axes = t.get("axis")) {
    require(spec.grid, "sweep spec " + path + ": [[axis]] belongs to mode = \"grid\"");
    const toml::array* arr = axes->as_array();
    require(arr && arr->is_array_of_tables(), "sweep spec " + path + ": axis must be [[axis]] tables");
    for (std::size_t i = 0; i < arr->size(); ++i)
      spec.axes.push_back(parse_axis(*arr->get(i)->as_table(), "sweep spec " + path + ": axis " + std::to_string(i + 1)));
  }
  if (const toml::node* members = t.get("member")) {
    require(!spec.grid, "sweep spec " + path + ": [[member]] needs mode = \"list\"");
    const toml::array* arr = members->as_array();
    require(arr && arr->is_array_of_tables(), "sweep spec " + path + ": member must be [[member]] tables");
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const std::string where = "sweep spec " + path + ": member " + std::to_string(i + 1);
      const toml::table& m = *arr->get(i)->as_table();
      check_keys(m, {"set"}, where);
      spec.members.push_back(string_list(m.get("set"), where + ".set"));
    }
    require(!spec.members.empty(), "sweep spec " + path + " has no members");
  }
  require(spec.grid || !spec.members.empty(), "sweep spec " + path + ": mode = \"list\" needs [[member]] entries");
  if (const toml::node* e = t.get("eval")) {
    require(e->is_table(), "sweep spec " + path + ": eval must be a table");
    spec.eval = parse_eval(*e->as_table(), "sweep spec " + path + ": [eval]");
  }
  return spec;
}

std::vector<PlannedMember> expand_sweep(const SweepSpec& spec, const std::string& store) {
  const auto points = spec.grid ? grid_points(spec.axes) : spec.members;
  const Config base = load_config(spec.base, spec.set);
  const std::vector<std::int64_t> seeds = spec.seeds.empty() ? std::vector<std::int64_t>{base.train.seed} : spec.seeds;
  // Every member gets train.seed from the seed loop below, so a seed set anywhere else would be
  // silently replaced: refuse it and point at `seeds`.
  const auto sets_seed = [](const std::vector<std::string>& overrides) {
    return std::any_of(overrides.begin(), overrides.end(),
                       [](const std::string& o) { return o.rfind("train.seed=", 0) == 0; });
  };
  require(!sets_seed(spec.set) || spec.seeds.empty(),
          "sweep " + spec.name + ": set has train.seed and seeds is given; keep only seeds = [...]");
  for (std::size_t i = 0; i < points.size(); ++i)
    require(!sets_seed(points[i]), "sweep " + spec.name + ": member " + std::to_string(i) +
                                       " sets train.seed; list seeds in seeds = [...] instead (each member runs once per seed)");
  std::vector<PlannedMember> out;
  std::map<std::string, std::size_t> by_hash;
  for (std::int64_t seed : seeds) {
    for (const auto& point : points) {
      PlannedMember m;
      const std::size_t idx = out.size();
      std::vector<std::string> labelled = point;
      labelled.push_back("train.seed=" + std::to_string(seed));
      m.label = join(labelled, " ");
      m.overrides = spec.set;
      m.overrides.insert(m.overrides.end(), labelled.begin(), labelled.end());
      m.overrides.push_back("run.name=" + spec.name + "." + std::to_string(idx));
      m.overrides.push_back("run.store=" + store);
      try {
        m.config = load_config(spec.base, m.overrides);
      } catch (const Error& e) {
        throw Error("sweep " + spec.name + " member " + std::to_string(idx) + " (" + m.label + "): " + e.what());
      }
      auto [it, fresh] = by_hash.emplace(m.config.hash(), idx);
      require(fresh, "sweep " + spec.name + ": members " + std::to_string(it->second) + " and " + std::to_string(idx) +
                         " have the same config (" + m.label + ")");
      out.push_back(std::move(m));
    }
  }
  return out;
}

nlohmann::json sweep_spec_json(const SweepSpec& spec, const std::string& workdir) {
  return {{"file", spec.file},
          {"text", spec.text},
          {"workdir", workdir},
          {"eval",
           {{"enabled", spec.eval.enabled},
            {"tasks", spec.eval.tasks},
            {"limit", spec.eval.limit},
            {"wikitext", spec.eval.wikitext},
            {"max_val_tokens", spec.eval.max_val_tokens},
            {"routing_tokens_per_domain", spec.eval.routing_tokens_per_domain},
            {"kl_reference", spec.eval.kl_reference}}}};
}

SweepEval sweep_eval_from_json(const nlohmann::json& spec_json) {
  SweepEval e;
  if (!spec_json.contains("eval")) return e;
  const auto& j = spec_json.at("eval");
  e.enabled = j.value("enabled", false);
  e.tasks = j.value("tasks", std::vector<std::string>{});
  e.limit = j.value("limit", 0);
  e.wikitext = j.value("wikitext", false);
  e.max_val_tokens = j.value("max_val_tokens", std::int64_t{0});
  e.routing_tokens_per_domain = j.value("routing_tokens_per_domain", std::int64_t{0});
  e.kl_reference = j.value("kl_reference", std::string());
  return e;
}

}  // namespace moxlab
