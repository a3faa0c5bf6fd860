#include "experiments/runner/eval_run.h"

#include <cmath>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/data/shards/dataset.h"
#include "core/data/tokenizers/tokenizer.h"
#include "core/eval/kl_divergence.h"
#include "core/eval/perplexity.h"
#include "core/train/checkpoint.h"
#include "core/eval/scorer.h"
#include "core/eval/tasks/choice_margin.h"
#include "core/eval/tasks/zeroshot.h"
#include "core/eval/unigram_baseline.h"
#include "kernels/runtime/denormals.h"
#include "kernels/runtime/torch_threads.h"
#include "core/store/run_store.h"
#include "experiments/runner/image_eval.h"

namespace moxlab {

namespace {

// What the numbers of one perplexity evaluation are; the windows are the same for all of them.
const char* kWindows = " over non-overlapping windows of train.seq_len tokens (context restarts each window)";
const char* kPplDefinition = "token-level perplexity exp(mean next-token NLL)";
const char* kLossDefinition = "mean next-token NLL (nats) per token";
const char* kBpbDefinition = "bits per UTF-8 byte: summed NLL / (ln 2 * bytes of the scored text)";
const char* kEntropyDefinition =
    "mean predictive entropy -sum_v p(v) ln p(v) (nats) per token; below loss: overconfident on this text";

void put(RunStore& store, std::int64_t run, EvalRunResult& res, const std::string& key, double value,
         double std_err, const nlohmann::json& meta) {
  nlohmann::json m = meta;
  if (std::isfinite(std_err)) m["stderr"] = std_err;
  store.put_result(run, key, value, m.dump());
  res.lines.push_back({key, value, std_err, m.value("definition", ""), m.value("at_chance", false) ? "at chance" : ""});
}

void put_perplexity(RunStore& store, std::int64_t run, EvalRunResult& res, const std::string& name,
                    const PerplexityResult& r, const std::string& split, double temperature = 1.0) {
  nlohmann::json meta{{"split", split}, {"tokens", r.tokens}, {"bytes", r.bytes}};
  if (temperature != 1.0) meta["temperature"] = temperature;  // the model's logits were divided by it
  auto put_one = [&](const char* metric, const char* definition, double value) {
    meta["metric"] = metric;
    meta["definition"] = std::string(definition) + kWindows;
    put(store, run, res, std::string(metric) + "/" + name, value, NAN, meta);
  };
  put_one("ppl", kPplDefinition, r.ppl());
  put_one("loss", kLossDefinition, r.loss());
  if (r.bytes > 0) put_one("bpb", kBpbDefinition, r.bpb());
  put_one("entropy", kEntropyDefinition, r.entropy());
}

// The checkpoint KL is measured against: the model's train.init_from for "init", else the path or sweep
// reference given (sweep:NAME/VARIANT takes the model's own train.seed: a pruned-then-tuned student
// names its dense grandparent this way).
std::string kl_reference_path(const std::string& reference, const Config& cfg, const std::string& store) {
  if (reference != "init") return resolve_init_from(reference, store, cfg.train.seed, "eval --kl-reference");
  require(!cfg.train.init_from.empty(), "eval --kl-reference init: the model has no train.init_from (it was trained from scratch)");
  return resolve_init_from(cfg.train.init_from, store, cfg.train.seed);
}

void put_kl(RunStore& store, std::int64_t run, EvalRunResult& res, const std::string& name, const KlResult& kl,
            const std::string& reference) {
  const nlohmann::json meta{{"metric", "kl"}, {"split", "val"}, {"tokens", kl.tokens}, {"reference", reference},
                            {"definition", std::string("mean over predicted tokens of KL(reference || model) in nats, the reference "
                                                       "reading the same context") + kWindows}};
  put(store, run, res, "kl/" + name, kl.mean(), NAN, meta);
}

}  // namespace

EvalRunResult run_evaluation(const EvalRunOptions& opts) {
  auto log = [&](const std::string& s) { if (opts.log) opts.log(s); };
  auto progress = [&](const std::string& phase, std::int64_t done, std::int64_t total) {
    if (opts.progress) opts.progress(phase, done, total);
  };
  require(!opts.temperatures.empty(), "eval --temperature: give at least one temperature");
  std::vector<std::string> suffixes;  // of each temperature's keys: "" at 1, else "@T1.5"
  for (std::size_t i = 0; i < opts.temperatures.size(); ++i) {
    const double t = opts.temperatures[i];
    std::ostringstream text;
    text << t;  // 1.5, not 1.500000
    require(std::isfinite(t) && t > 0, "eval --temperature: must be a positive number, got " + text.str());
    suffixes.push_back(t == 1.0 ? "" : "@T" + text.str());
    for (std::size_t j = 0; j < i; ++j)  // two that print alike would store under one key
      require(suffixes[j] != suffixes[i], "eval --temperature: " + text.str() + " is given twice");
  }
  const bool scaled = opts.temperatures != std::vector<double>{1.0};
  require(!scaled || (opts.kl_reference.empty() && opts.tasks.size() == 1 && opts.tasks[0] == "none"),
          "eval --temperature: applies to perplexity only; pass --tasks none and no --kl-reference");
  set_torch_threads(opts.threads);
  if (opts.ref.run_id >= 0) {  // an image run is evaluated as at the end of its training (test top-1)
    const std::string path = run_checkpoint_path(opts.ref.store, opts.ref.run_id);
    if (is_image_checkpoint(path)) {
      evaluate_image_checkpoint(path, opts.ref.run_id, opts.ref.store, log);
      EvalRunResult res;
      res.run_id = opts.ref.run_id;
      for (const ResultRecord& r : RunStore(opts.ref.store).results(res.run_id))
        if (r.key.rfind("top1/test", 0) == 0 || r.key == "loss/test")
          res.lines.push_back({r.key, r.value, NAN, nlohmann::json::parse(r.meta_json).value("definition", "")});
      return res;
    }
  }
  ResolvedCheckpoint ck = resolve_checkpoint(opts.ref, "eval");
  RunStore store(opts.ref.store);
  EvalRunResult res;
  res.run_id = ck.run_id;
  try {
    Transformer& model = *ck.loaded.model;
    model.eval();
    const Config& cfg = ck.loaded.config;
    set_flush_denormals(cfg.execution.denormals == "flush");
    const Form form = form_from_name(cfg.execution.form);
    auto tok = load_tokenizer(ck.loaded.meta.tokenizer_spec);
    const int seq_len = cfg.train.seq_len;

    if (opts.perplexity) {
      DataOptions data = cfg.data;
      data.tokenizer = ck.loaded.meta.tokenizer_spec;  // the model's own vocabulary, never retrained
      PreparedData prepared = prepare_data(data, log);
      ShardTokenSource train(prepared.shards_dir, Split::Train), val(prepared.shards_dir, Split::Val);
      const UnigramBaseline unigram(train, cfg.model.vocab_size);
      const std::size_t temperatures = opts.temperatures.size();
      std::vector<PerplexityResult> all(temperatures);
      PerplexityResult all_unigram;
      std::optional<LoadedCheckpoint> reference;
      std::string reference_path;
      if (!opts.kl_reference.empty()) {
        reference_path = kl_reference_path(opts.kl_reference, cfg, opts.ref.store);
        reference = load_checkpoint(reference_path);
        require(reference->meta.tokenizer_spec == ck.loaded.meta.tokenizer_spec,
                "eval --kl-reference: " + reference_path + " has another tokenizer than the model");
      }
      KlResult kl_all;
      auto accumulate = [](PerplexityResult& sum, const PerplexityResult& r) {
        sum.nll_sum += r.nll_sum;
        sum.tokens += r.tokens;
        sum.bytes += r.bytes;
        sum.entropy_sum += r.entropy_sum;
      };
      std::int64_t total = 0, before = 0;  // validation tokens of all domains / of the domains done
      for (int d = 0; d < val.num_domains(); ++d) total += perplexity_tokens(val, d, opts.max_val_tokens);
      for (int d = 0; d < val.num_domains(); ++d) {
        const auto r = evaluate_perplexity_at_temperatures(
            model, val, d, seq_len, opts.max_val_tokens, opts.batch_size, opts.temperatures,
            [&](std::int64_t done) { progress("perplexity", before + done, total); }, form);
        before += perplexity_tokens(val, d, opts.max_val_tokens);
        for (std::size_t i = 0; i < temperatures; ++i) {
          put_perplexity(store, ck.run_id, res, "val/" + val.domain_name(d) + suffixes[i], r[i], "val", opts.temperatures[i]);
          accumulate(all[i], r[i]);
        }
        if (!scaled) {
          auto u = unigram.evaluate(val, d, opts.max_val_tokens);
          put_perplexity(store, ck.run_id, res, "unigram/val/" + val.domain_name(d), u, "val (add-one unigram of train tokens)");
          accumulate(all_unigram, u);
        }
        if (reference) {
          const KlResult kl = evaluate_kl(model, *reference->model, val, d, seq_len, opts.max_val_tokens, opts.batch_size, form,
                                          form_from_name(reference->config.execution.form));
          put_kl(store, ck.run_id, res, "val/" + val.domain_name(d), kl, reference_path);
          kl_all.kl_sum += kl.kl_sum;
          kl_all.tokens += kl.tokens;
        }
      }
      if (reference) put_kl(store, ck.run_id, res, "val/all", kl_all, reference_path);
      for (std::size_t i = 0; i < temperatures; ++i)
        put_perplexity(store, ck.run_id, res, "val/all" + suffixes[i], all[i], "val (token-weighted over domains)",
                       opts.temperatures[i]);
      if (!scaled) put_perplexity(store, ck.run_id, res, "unigram/val/all", all_unigram, "val (add-one unigram of train tokens)");
    }

    if (opts.wikitext) {
      const std::string dir = shared_data_dir();
      if (dir.empty()) {
        log("skipping WikiText-2: shared data folder not found");
      } else {
        const std::string text = read_file(dir + "/eval/wikitext2_test.raw");
        VectorTokenSource src;
        src.add("wikitext2", tok->encode(text), static_cast<std::int64_t>(text.size()));
        const std::int64_t total = src.size(0);
        const auto r = evaluate_perplexity_at_temperatures(
            model, src, 0, seq_len, 0, opts.batch_size, opts.temperatures,
            [&](std::int64_t done) { progress("wikitext2", done, total); }, form);
        for (std::size_t i = 0; i < opts.temperatures.size(); ++i)
          put_perplexity(store, ck.run_id, res, "wikitext2" + suffixes[i], r[i], "test (2891 non-empty rows)",
                         opts.temperatures[i]);
      }
    }

    const bool skip_tasks = opts.tasks.size() == 1 && opts.tasks[0] == "none";
    if (!skip_tasks) {
      if (shared_data_dir().empty()) {
        log("skipping zero-shot tasks: shared data folder not found");
      } else {
        std::vector<std::string> names = opts.tasks;
        if (names.empty())
          for (const auto& spec : task_registry()) names.push_back(spec.name);
        auto score = make_model_scorer(model, model.options().max_seq_len, opts.batch_size, form);
        TaskOptions topts;
        topts.limit = opts.limit;
        for (const auto& name : names) {
          const TaskSpec& spec = find_task(name);
          log("task " + name + " ...");
          topts.progress = [&](std::size_t done, std::size_t total) {
            progress("task " + name, static_cast<std::int64_t>(done), static_cast<std::int64_t>(total));
          };
          TaskResult tr = run_task(spec, *tok, score, topts);
          const auto margin = choice_margin(tr);
          for (const auto& m : tr.metrics) {
            nlohmann::json meta{{"metric", m.name}, {"split", tr.split}, {"n", tr.n_items},
                                {"definition", m.definition}, {"setup", tr.setup}};
            if (margin && (m.name == "acc" || m.name == "acc_norm")) {
              meta["chance"] = margin->chance;
              meta["at_chance"] = at_chance(m, margin->chance);  // its 95% interval contains chance
            }
            put(store, ck.run_id, res, name + "/" + m.name, m.value, m.std_err, meta);
          }
          if (margin) {
            put(store, ck.run_id, res, name + "/margin", margin->margin, margin->margin_stderr,
                {{"metric", "margin"}, {"split", tr.split}, {"n", margin->n}, {"definition", margin_definition()}, {"setup", tr.setup}});
            put(store, ck.run_id, res, name + "/chance", margin->chance, NAN,
                {{"metric", "chance"}, {"split", tr.split}, {"n", margin->n},
                 {"definition", "chance accuracy: mean over items of 1 / number of choices"}});
          }
          std::vector<std::pair<int, std::string>> items;
          for (const auto& row : tr.audit) items.emplace_back(static_cast<int>(row.item), row.to_json());
          store.add_items(ck.run_id, name, items);
        }
      }
    }
    if (ck.new_run) store.update_status(ck.run_id, RunStatus::finished);
  } catch (const std::exception& e) {
    if (ck.new_run) store.update_status(ck.run_id, RunStatus::failed, e.what());
    throw;
  }
  return res;
}

}  // namespace moxlab
