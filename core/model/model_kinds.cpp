#include "core/common/error.h"
#include "core/model/model_kind.h"

namespace moxlab {

// Each kind's description, in its own folder.
ModelKind dense_kind();
ModelKind mohd_kind();
ModelKind moh_kind();
ModelKind tomoe_kind();

const std::vector<ModelKind>& model_kinds() {
  static const std::vector<ModelKind> kinds = {
      dense_kind(),
      mohd_kind(),
      moh_kind(),
      tomoe_kind(),
  };
  return kinds;
}

const ModelKind* find_model_kind(const std::string& name) {
  for (const auto& k : model_kinds())
    if (k.name == name) return &k;
  return nullptr;
}

namespace {

std::vector<std::string> names_where(bool attention) {
  std::vector<std::string> names;
  for (const auto& k : model_kinds())
    if (!(attention ? k.attention_help : k.ffn_help).empty()) names.push_back(k.name);
  return names;
}

const ModelKind& kind_for(const std::string& name, bool attention) {
  if (const ModelKind* k = find_model_kind(name); k && !(attention ? k->attention_help : k->ffn_help).empty()) return *k;
  std::string known;
  for (const auto& n : names_where(attention)) known += (known.empty() ? "" : ", ") + n;
  throw Error(std::string("unknown model.") + (attention ? "attention" : "ffn") + " kind '" + name + "' (known: " + known + ")");
}

std::string help_where(bool attention) {
  std::string help;
  for (const auto& k : model_kinds()) {
    const std::string& h = attention ? k.attention_help : k.ffn_help;
    if (!h.empty()) help += (help.empty() ? "" : "; ") + k.name + ": " + h;
  }
  return help;
}

}  // namespace

const ModelKind& attention_kind(const std::string& name) { return kind_for(name, true); }
const ModelKind& ffn_kind(const std::string& name) { return kind_for(name, false); }
std::vector<std::string> attention_kind_names() { return names_where(true); }
std::vector<std::string> ffn_kind_names() { return names_where(false); }
std::string attention_kinds_help() { return help_where(true); }
std::string ffn_kinds_help() { return help_where(false); }

bool has_routers(const std::string& attention, const std::string& ffn) {
  const ModelKind* a = find_model_kind(attention);
  const ModelKind* f = find_model_kind(ffn);
  return (a && !a->attention_routes.empty()) || (f && !f->ffn_routes.empty());
}

bool names_module(const std::string& name, const std::vector<std::string>& parts) {
  const std::string dotted = "." + name;
  for (const auto& p : parts)
    if (dotted.find(p) != std::string::npos) return true;
  return false;
}

bool is_routing_parameter(const std::string& name) {
  for (const auto& k : model_kinds())
    if (names_module(name, k.routing_modules)) return true;
  return false;
}

}  // namespace moxlab
