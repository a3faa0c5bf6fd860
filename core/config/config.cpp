#include "core/config/config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/model/model_kind.h"
#include "core/config/config_key.h"
#include "core/config/schema.h"

namespace moxlab {

namespace {
// Keys that earlier builds wrote into configs, checkpoints and run stores under another name (and value), so
// they still load: old key -> new key, old value -> new value.
struct RenamedKey {
  const char* from;
  const char* to;
  std::vector<std::pair<std::string, std::string>> values;
};
const std::vector<RenamedKey>& renamed_keys() {
  static const std::vector<RenamedKey> keys = {
      {"tomoe.vo_top_k", "tomoe.conversion", {{"widest", "code"}, {"mean", "paper"}}},
      {"model.kernels", "execution.form", {}},
  };
  return keys;
}

// The current name of `key`, and `value` (when given) as the current key spells it.
std::string current_key(const std::string& key, ConfigValue* value = nullptr) {
  for (const auto& r : renamed_keys()) {
    if (key != r.from) continue;
    if (value)
      for (const auto& [old_value, new_value] : r.values)
        if (std::holds_alternative<std::string>(*value) && std::get<std::string>(*value) == old_value) *value = new_value;
    return r.to;
  }
  return key;
}
}  // namespace

namespace {

constexpr double kBig = 1e15;

// The one place where option structs meet their TOML keys, ranges and help texts.
Schema bind(Config& c) {
  Schema s;
  s.add("run.name", c.run.name, {}, "run name shown in the store and the viewer");
  s.add("run.kind", c.run.kind, {}, "run kind recorded in the store (train, eval, import, ...)");
  s.add("run.variant", c.run.variant, {}, "label of the model variant for tables (e.g. mohd_x2); not hashed");
  s.add("run.out_dir", c.run.out_dir, {}, "directory under which run directories are created");
  s.add("run.store", c.run.store, {}, "SQLite run store path");

  auto& m = c.model;
  s.add("model.vocab_size", m.vocab_size, 0, 1 << 22, "vocabulary size (0: from the tokenizer)");
  s.add("model.dim", m.dim, 8, 1 << 16, "model dimension d");
  s.add("model.n_layers", m.n_layers, 1, 512, "number of decoder blocks");
  s.add("model.n_heads", m.n_heads, 1, 1024, "attention heads");
  s.add("model.n_kv_heads", m.n_kv_heads, 1, 1024, "key/value heads (grouped-query attention)");
  s.add("model.ffn_hidden", m.ffn_hidden, 0, 1 << 20, "SwiGLU hidden size (0: LLaMA 8/3 rule)");
  s.add("model.multiple_of", m.multiple_of, 1, 4096, "rounding of the automatic FFN hidden size");
  s.add("model.max_seq_len", m.max_seq_len, 2, 1 << 20, "longest sequence (RoPE table length)");
  s.add("model.norm_eps", m.norm_eps, 1e-12, 1e-1, "RMSNorm epsilon");
  s.add("model.rope_theta", m.rope_theta, 1.0, 1e9, "RoPE base");
  s.add("model.tie_embeddings", m.tie_embeddings, "share the token embedding with the output head");
  s.add("model.qkv_bias", m.qkv_bias, "bias on Q/K/V projections (Qwen2 style)");
  s.add("model.init_std", m.init_std, 0.0, 1.0, "std of the normal weight init");
  s.add("model.patch_size", m.patch_size, 1, 1024, "ViT patch side in pixels (image runs, data.images)");
  s.add("model.head_dim", m.head_dim_override, 0, 4096, "attention head width (0: model.dim / model.n_heads)");
  s.add("model.branch_scale", m.branch_scale, {"none", "fixed", "learned"},
        "scalar on each block's attention and FFN output before the residual add: none, fixed, or learned per block (branch-scale control)");
  s.add("model.attn_branch_scale", m.attn_branch_scale, 0.0, 1e3, "attention-branch scale (fixed) or its initial value (learned)");
  s.add("model.ffn_branch_scale", m.ffn_branch_scale, 0.0, 1e3, "FFN-branch scale (fixed) or its initial value (learned)");
  s.add("model.attention", m.attention, attention_kind_names(), "attention kind (" + attention_kinds_help() + ")");
  s.add("model.ffn", m.ffn, ffn_kind_names(), "FFN kind (" + ffn_kinds_help() + ")");
  for (const auto& kind : model_kinds())  // each kind's own keys (mohd.*, moh.*, tomoe.*)
    if (kind.bind_options) kind.bind_options(s, m);

  s.add("execution.form", c.execution.form, {"automatic", "reference", "sparse"},
        "MoHD/MoH compute form: the sparse form where measured faster (automatic), always the masked dense reference, or always sparse");
  s.add("execution.denormals", c.execution.denormals, {"flush", "keep"},
        "floats below 1.2e-38 in CPU arithmetic: flush to zero (x86 computes on them tens of times slower) or keep (IEEE)");

  auto& d = c.data;
  s.add("data.corpus", d.corpus, {"default", "none"}, "built-in package corpus or none");
  s.add("data.extra", d.extra, "extra corpora as DOMAIN=PATH");
  s.add("data.jsonl_field", d.jsonl_field, {}, "text field of jsonl corpora");
  s.add("data.tokenizer", d.tokenizer, {}, "bpe (train) or KIND:PATH");
  s.add("data.bpe_vocab_size", d.bpe_vocab_size, 257, 1 << 20, "vocab size of the trained BPE");
  s.add("data.bpe_train_bytes", d.bpe_train_bytes, 1000, kBig, "train-split bytes used to train the BPE");
  s.add("data.domain_cap_bytes", d.domain_cap_bytes, 1000, kBig, "per-domain size cap of the default corpus");
  s.add("data.val_fraction", d.val_fraction, 0.001, 0.5, "validation share of each domain");
  s.add("data.split_seed", d.split_seed, 0, kBig, "seed of the train/val split");
  s.add("data.cache_dir", d.cache_dir, {}, "where tokenised shards are cached");
  s.add("data.images", d.images, {"", "fashion_mnist"},
        "image classification instead of language modelling: fashion_mnist (Debian dataset-fashion-mnist)");
  s.add("data.image_val", d.image_val, 1, 1 << 20, "images held out from the end of the train split for validation");

  auto& t = c.train;
  s.add("train.seed", t.seed, 0, kBig, "seed of init and data order");
  s.add("train.batch_size", t.batch_size, 1, 1 << 16, "sequences per micro-batch");
  s.add("train.seq_len", t.seq_len, 2, 1 << 20, "tokens per training sequence");
  s.add("train.grad_accum", t.grad_accum, 1, 1 << 16, "micro-batches per step");
  s.add("train.max_steps", t.max_steps, 1, kBig, "optimiser steps");
  s.add("train.lr", t.lr, 0.0, 10.0, "peak learning rate");
  s.add("train.min_lr_ratio", t.min_lr_ratio, 0.0, 1.0, "cosine floor / peak");
  s.add("train.warmup_steps", t.warmup_steps, 0, kBig, "linear warmup steps");
  s.add("train.weight_decay", t.weight_decay, 0.0, 10.0, "AdamW decoupled weight decay");
  s.add("train.beta1", t.beta1, 0.0, 0.999999, "AdamW beta1");
  s.add("train.beta2", t.beta2, 0.0, 0.999999999, "AdamW beta2");
  s.add("train.adam_eps", t.adam_eps, 0.0, 1.0, "AdamW epsilon");
  s.add("train.grad_clip", t.grad_clip, 0.0, 1e6, "global gradient-norm clip (0: off)");
  s.add("train.eval_every", t.eval_every, 0, kBig, "steps between validation passes");
  s.add("train.eval_tokens", t.eval_tokens, 1, kBig, "validation tokens per domain per pass");
  s.add("train.checkpoint_every", t.checkpoint_every, 1, kBig, "steps between checkpoints");
  s.add("train.log_every", t.log_every, 1, kBig, "steps between metric rows");
  s.add("train.threads", t.threads, 0, 4096, "LibTorch threads (0: all cores)");
  s.add("train.device", t.device, {}, "cpu, cuda, cuda:N");
  s.add("train.trainable", t.trainable, {"all", "routing"},
        "parameters that train: all, or only the routing modules a method adds (ToMoE: the dense model stays frozen)");
  s.add("train.loss", t.loss, {"lm", "distill"},
        "main loss: lm (next-token cross-entropy) or distill (ToMoE Eq. 10: KL of the dense teacher, gates off, to the gated model)");
  s.add("train.distill_scale", t.distill_scale, 0.0, 1e6, "factor on the distillation KL (the official ToMoE code uses 2)");
  s.add("train.teacher", t.teacher, {},
        "distillation teacher (path, sweep:NAME/VARIANT/SEED or sweep:NAME/VARIANT) for loss = distill; empty: ToMoE's gates-off model");
  s.add("train.keep_pruned", t.keep_pruned, "weights exactly zero at the start stay zero (a pruned start keeps its structure)");
  s.add("train.domains", t.domains, "training-split domains batches are drawn from (empty: all; validation covers all)");
  s.add("train.init_from", t.init_from, {}, "checkpoint (path, sweep:NAME/VARIANT/SEED, or sweep:NAME/VARIANT for this run's seed) whose weights start the model (continue-tuning; new parameters keep their init)");

  auto& pr = c.prune;
  s.add("prune.method", pr.method, {"", "none", "magnitude", "wanda", "taylor", "shortgpt", "wanda_2_4"},
        "static pruning baseline applied to train.init_from instead of training (none: the dense start as is)");
  s.add("prune.active", pr.active, 1e-3, 1.0, "target ratio of active attention/SwiGLU parameters of the pruned model");
  s.add("prune.calibration", pr.calibration, 1, 1 << 16, "calibration batches of training windows");

  auto& e = c.eval;
  s.add("eval.tasks", e.tasks, "zero-shot tasks (empty: all)");
  s.add("eval.limit", e.limit, 0, kBig, "first N items per task (0: all)");
  s.add("eval.batch_size", e.batch_size, 1, 1 << 16, "sequences per forward pass");
  s.add("eval.wikitext", e.wikitext, "WikiText-2 test perplexity");
  s.add("eval.max_val_tokens", e.max_val_tokens, 0, kBig, "per-domain val tokens for perplexity (0: all)");

  // Names users reach for that are not keys: only for the "did you mean" of an unknown key.
  s.suggest("train.steps", "train.max_steps");
  s.suggest("train.iters", "train.max_steps");
  s.suggest("train.warmup", "train.warmup_steps");
  s.suggest("train.learning_rate", "train.lr");
  s.suggest("train.batch", "train.batch_size");
  s.suggest("train.epochs", "train.max_steps");
  s.suggest("train.context", "train.seq_len");
  s.suggest("model.layers", "model.n_layers");
  s.suggest("model.heads", "model.n_heads");
  s.suggest("model.kv_heads", "model.n_kv_heads");
  s.suggest("model.d_model", "model.dim");
  s.suggest("model.hidden_size", "model.dim");
  s.suggest("model.vocab", "model.vocab_size");
  s.suggest("data.vocab_size", "data.bpe_vocab_size");
  s.suggest("eval.max_tokens", "eval.max_val_tokens");
  return s;
}

void flatten(const toml::table& table, const std::string& prefix, const Schema& schema, const std::string& origin) {
  for (const auto& [k, node] : table) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = node.as_table()) {
      flatten(*sub, key, schema, origin);
      continue;
    }
    const std::string name = current_key(key);
    const FieldSpec& f = schema.at(name);  // unknown key → Error
    ConfigValue v;
    if (auto i = node.value_exact<std::int64_t>()) v = *i;
    else if (auto d = node.value_exact<double>()) v = *d;
    else if (auto b = node.value_exact<bool>()) v = *b;
    else if (auto s = node.value_exact<std::string>()) v = *s;
    else if (const toml::array* arr = node.as_array()) {
      std::vector<std::string> items;
      for (const auto& el : *arr) {
        auto s = el.value_exact<std::string>();
        if (!s) throw Error("config key '" + key + "' expects " + a_type_name(f.type) + " (" + origin + ")");
        items.push_back(*s);
      }
      v = items;
    } else {
      throw Error("config key '" + key + "' has an unsupported value type (" + origin + ")");
    }
    current_key(key, &v);
    schema.set(name, v, origin);
  }
}

nlohmann::json to_json_value(const ConfigValue& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

}  // namespace

std::string Config::to_json() const {
  Config copy = *this;
  Schema s = bind(copy);
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : s.fields()) j[f.key] = to_json_value(f.get());
  return j.dump();  // nlohmann orders object keys, so the dump is canonical
}

std::string Config::hash() const {
  Config copy = *this;
  copy.run = RunOptions{};  // names and paths
  copy.train.threads = 0;   // how many cores a run used does not change what it computes
  auto j = nlohmann::json::parse(copy.to_json());
  j.erase("execution.form");        // nor which form computed it (equal to rounding)
  j.erase("execution.denormals");   // nor whether it flushed denormals (equal to rounding)
  return sha256_hex(j.dump());
}

bool same_but_rank_batch(const Config& a, const Config& b) {
  Config a_split_as_b = a;
  a_split_as_b.train.batch_size = b.train.batch_size;
  return a_split_as_b.hash() == b.hash();
}

void apply_override(Config& cfg, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw Error("--set expects key=value, got '" + assignment + "'");
  Schema s = bind(cfg);
  ConfigValue value = assignment.substr(eq + 1);
  const std::string key = current_key(assignment.substr(0, eq), &value);
  s.set_from_text(key, std::get<std::string>(value), "--set " + assignment);
}

namespace {
// What a path that exists is, when it is not a regular file: a directory would otherwise parse as an
// empty table (the defaults, silently) and a FIFO would block the parser.
std::string file_kind(const std::filesystem::file_status& st) {
  switch (st.type()) {
    case std::filesystem::file_type::directory: return "a directory";
    case std::filesystem::file_type::fifo: return "a FIFO";
    case std::filesystem::file_type::socket: return "a socket";
    case std::filesystem::file_type::block:
    case std::filesystem::file_type::character: return "a device";
    default: return "not a regular file";
  }
}
}  // namespace

Config load_config(const std::string& toml_path, const std::vector<std::string>& overrides) {
  Config cfg;
  if (!toml_path.empty()) {
    std::error_code ec;
    const auto st = std::filesystem::status(toml_path, ec);
    if (ec || !std::filesystem::exists(st)) throw Error("cannot open config file " + toml_path);
    if (!std::filesystem::is_regular_file(st))
      throw Error("config file " + toml_path + " is " + file_kind(st) + ", not a TOML file");
    Schema s = bind(cfg);
    toml::table table;
    try {
      table = toml::parse_file(toml_path);
    } catch (const toml::parse_error& err) {
      const auto& where = err.source().begin;
      if (std::string(err.description()).find("File could not be opened") != std::string::npos)
        throw Error("cannot open config file " + toml_path);
      throw Error("config file " + toml_path + ":" + std::to_string(where.line) + ": " + std::string(err.description()));
    }
    flatten(table, "", s, toml_path);
  }
  for (const auto& o : overrides) apply_override(cfg, o);
  validate(cfg);
  return cfg;
}


Config config_from_json(const std::string& json) {
  Config cfg;
  Schema s = bind(cfg);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const std::exception& e) {
    throw Error(std::string("malformed config JSON: ") + e.what());
  }
  require(j.is_object(), "config JSON is not an object of key: value");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& v = it.value();
    ConfigValue cv;
    if (v.is_boolean()) cv = v.get<bool>();
    else if (v.is_number_integer()) cv = v.get<std::int64_t>();
    else if (v.is_number()) cv = v.get<double>();
    else if (v.is_string()) cv = v.get<std::string>();
    else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_string(); }))
      cv = v.get<std::vector<std::string>>();
    else throw Error("config JSON key '" + it.key() + "' has an unsupported value");
    s.set(current_key(it.key(), &cv), cv, "config JSON");
  }
  validate(cfg);
  return cfg;
}

void validate(const Config& c) {
  const auto& m = c.model;
  require(m.head_dim_override > 0 || m.dim % m.n_heads == 0, "model.dim (" + std::to_string(m.dim) + ") must be divisible by model.n_heads (" +
                                      std::to_string(m.n_heads) + ")");
  require(m.n_heads % m.n_kv_heads == 0, "model.n_heads must be a multiple of model.n_kv_heads");
  for (const auto& kind : model_kinds())
    if (kind.validate && (m.attention == kind.name || m.ffn == kind.name)) kind.validate(m);
  require(c.train.loss != "distill" || m.is_tomoe() || !c.train.teacher.empty(),
          "train.loss = distill needs a teacher: a ToMoE model (its gates off) or train.teacher");
  require(c.train.teacher.empty() || c.train.loss == "distill", "train.teacher is used only with train.loss = distill");
  if (!c.prune.method.empty()) {
    require(!c.train.init_from.empty(), "prune.method needs train.init_from: the dense checkpoint to prune");
    require(c.prune.method != "none" || c.prune.active == 1.0, "prune.method = none keeps everything: prune.active must be 1");
    require(c.prune.method != "wanda_2_4" || c.prune.active == 0.5, "prune.method = wanda_2_4 keeps exactly half: prune.active must be 0.5");
  }
  require(m.branch_scale == "none" || !m.is_tomoe(),
          "model.branch_scale is a control for models trained from scratch; ToMoE converts a dense model and keeps none");
  require(m.branch_scale != "none" || (m.attn_branch_scale == 1.0 && m.ffn_branch_scale == 1.0),
          "model.attn_branch_scale / model.ffn_branch_scale need model.branch_scale = fixed or learned");
  require(m.head_dim() % 2 == 0, "head dimension (model.head_dim, or model.dim / model.n_heads) must be even for RoPE");
  require(c.train.seq_len <= m.max_seq_len, "train.seq_len (" + std::to_string(c.train.seq_len) +
                                                ") exceeds model.max_seq_len (" + std::to_string(m.max_seq_len) + ")");
  require(c.train.warmup_steps <= c.train.max_steps,
          "train.warmup_steps (" + std::to_string(c.train.warmup_steps) + ") exceeds train.max_steps (" +
              std::to_string(c.train.max_steps) + "): set train.warmup_steps too, e.g. --set train.warmup_steps=" +
              std::to_string(c.train.max_steps / 10));
  for (const auto& e : c.data.extra)
    require(e.find('=') != std::string::npos && e.find('=') > 0,
            "data.extra entries must be DOMAIN=PATH, got '" + e + "'");
  require(c.data.corpus != "none" || !c.data.extra.empty(), "data.corpus = none needs at least one data.extra source");
}

void set_config_key(Config& cfg, const std::string& key, const ConfigValue& value, const std::string& origin) {
  bind(cfg).set(key, value, origin);
}

std::vector<std::string> describe_config_keys() {
  Config c;
  Schema s = bind(c);
  std::vector<std::string> out;
  for (const auto& f : s.fields()) {
    nlohmann::json def = to_json_value(f.get());
    out.push_back(f.key + " (" + type_name(f.type) + ", default " + def.dump() + "): " + f.help);
  }
  return out;
}

}  // namespace moxlab
