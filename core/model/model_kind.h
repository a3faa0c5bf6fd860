// The registry of attention and FFN kinds, torch-free part: what the config, the viewer, routing capture,
// the training of routing parameters, the initialisation and the inference benchmark need to know about a
// kind. Each kind describes itself in its own folder (<kind>_kind.cpp, compiled into moxlab_base) and is
// listed once in model_kinds.cpp; its modules are listed once in kind_modules.cpp (LibTorch).
// docs/architecture.md, "Adding a method", has the checklist.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/model/model_options.h"

namespace moxlab {

class Schema;  // core/config/schema.h

// A model `bench infer` times: the shape given, turned into this kind's variant. `convert_keep` > 0: the
// dense model converted into a ToMoE MoE keeping that share of every expert, head and q/k pair.
struct BenchVariant {
  std::string name;                                               // e.g. "mohd_50"
  std::function<ModelOptions(const ModelOptions& dense)> options;  // throws Error where the shape does not fit
  double convert_keep = 0;
};

struct ModelKind {
  std::string name;
  std::string attention_help;  // as model.attention; empty: not an attention kind
  std::string ffn_help;        // as model.ffn; empty: not an FFN kind
  // What its router picks per token, for routing capture and the viewer ("sub-dimensions", "heads",
  // "experts"); empty: no router taps in that part.
  std::string attention_routes, ffn_routes;
  // Parameter-name parts (".head_router.") of the routing modules the kind adds on top of the dense model:
  // what train.trainable = "routing" trains.
  std::vector<std::string> routing_modules;
  // Modules initialised as PyTorch's default layers (the official code keeps those defaults): linear and
  // GRU weights U(+-1/sqrt(fan_in or hidden)), LayerNorm 1 and 0, biases 0. Checked before the generic rules.
  std::vector<std::string> torch_default_init_modules;
  // Modules whose every tensor is drawn U(+-1/sqrt(last dimension)) (a linear layer's fan-in), after the
  // norm rule and before the generic ones.
  std::vector<std::string> fan_in_init_modules;
  // Binds the kind's own config keys ("mohd.*") to its options inside ModelOptions; null: none.
  std::function<void(Schema&, ModelOptions&)> bind_options;
  // Throws Error naming the keys when a model using the kind cannot be built with these options.
  std::function<void(const ModelOptions&)> validate;
  bool sparse_form = false;  // has a sparse execution form to compare with its reference
  // Heads a token uses in `layer` (FLOP counts); null: every head.
  std::function<int(const ModelOptions&, int layer)> active_heads;
  std::vector<BenchVariant> bench_variants;
};

// Every kind, in registration order (dense first).
const std::vector<ModelKind>& model_kinds();
// The kind of that name, or null (a run recorded by a build that had other kinds).
const ModelKind* find_model_kind(const std::string& name);
// The kind of that name; throws Error "unknown model.<part> kind 'x' (known: ...)" for another.
const ModelKind& attention_kind(const std::string& name);
const ModelKind& ffn_kind(const std::string& name);
std::vector<std::string> attention_kind_names();
std::vector<std::string> ffn_kind_names();
// "mohd: MoHD sub-dimension routing; moh: ..." for the config's help text.
std::string attention_kinds_help();
std::string ffn_kinds_help();

// Whether the kinds of a model have routers whose choices routing capture records.
bool has_routers(const std::string& attention, const std::string& ffn);
// Whether `name` (a parameter of a model of any kind) belongs to a routing module.
bool is_routing_parameter(const std::string& name);
// Whether "." + name contains one of the parts.
bool names_module(const std::string& name, const std::vector<std::string>& parts);

}  // namespace moxlab
