#include "experiments/bench/inference_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include "core/common/error.h"
#include "core/engine/inference_plan.h"
#include "core/engine/kv_cache.h"
#include "core/engine/tomoe_moe_plan.h"
#include "core/io/tomoe_moe_file.h"
#include "core/model/model_kind.h"
#include "core/model/transformer.h"
#include "experiments/bench/timing.h"
#include "experiments/bench/tomoe_bench_model.h"

namespace moxlab {

namespace {

double time_ms(const std::function<void()>& f, double min_seconds) { return 1000.0 * seconds_per_call(f, min_seconds); }

// One benchmarked model: a Transformer variant, or a converted ToMoE model.
struct Subject {
  std::shared_ptr<Transformer> model;
  std::shared_ptr<InferencePlan> plan;  // the model's
  std::optional<TomoeMoePlan> moe;
  bool has_reference = false;  // MoHD / MoH: a reference form to compare the sparse kernels with

  const ModelOptions& options() const { return moe ? moe->options() : model->options(); }
  // last: only the last position's logits (a prompt before generation); else every position's (scoring).
  void forward(const torch::Tensor& tokens, Form k, bool last, KvCache* cache = nullptr) {
    if (moe) return void(moe->forward(tokens, cache, last));
    ExecOptions exec;
    exec.form = k;
    exec.cache = cache;
    exec.last_logits_only = last;
    plan->forward(tokens, exec);
  }
  void attention(const torch::Tensor& h, Form k) {
    if (moe) return void(moe->attention(0, h));
    plan->attention(0, h, k);
  }
  void feed_forward(const torch::Tensor& h, Form k) {
    if (moe) return void(moe->feed_forward(0, h));
    plan->feed_forward(0, h, k);
  }
  // Forward FLOPs per token with `context` keys per query and the output head run for `head_rows` of the
  // tokens (see the header).
  double flops(int context, double head_rows) const {
    const ModelOptions& o = options();
    const double head = head_rows * o.vocab_size * o.dim;
    if (moe) {
      double attention = 0;
      for (int l = 0; l < o.n_layers; ++l) {
        const double qk = 2.0 * moe->weights().tensors.at("layers." + std::to_string(l) + ".attn.qk_pairs").size(0);
        attention += 2.0 * context * o.n_heads * (qk + o.head_dim());
      }
      return 2.0 * (static_cast<double>(moe->weights().param_count().active) + head) + attention;
    }
    double heads = 0;
    const auto& active_heads = attention_kind(o.attention).active_heads;
    for (int l = 0; l < o.n_layers; ++l) heads += active_heads ? active_heads(o, l) : o.n_heads;
    return 2.0 * (static_cast<double>(count_parameters(*model).active) + head) + 4.0 * context * heads * o.head_dim();
  }
  ParamCount params() const { return moe ? moe->weights().param_count() : count_parameters(*model); }
};

Subject make_subject(const InferenceCase& c) {
  Subject s;
  if (!c.tomoe_file.empty()) {
    s.moe.emplace(load_tomoe_moe(c.tomoe_file));
  } else if (c.tomoe_keep > 0) {
    s.moe.emplace(random_tomoe_moe(c.options, c.tomoe_keep, 1));
  } else {
    s.model = std::make_shared<Transformer>(c.options);
    s.model->init_weights(1);
    s.model->eval();
    s.plan = std::make_shared<InferencePlan>(*s.model);
    s.has_reference = attention_kind(c.options.attention).sparse_form || ffn_kind(c.options.ffn).sparse_form;
  }
  return s;
}

}  // namespace

const std::vector<std::string>& standard_variant_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& k : model_kinds())
      for (const auto& v : k.bench_variants) all.push_back(v.name);
    return all;
  }();
  return names;
}

std::vector<InferenceCase> standard_inference_cases(const ModelOptions& base, const std::vector<std::string>& names) {
  ModelOptions dense = base;
  dense.attention = dense.ffn = "dense";
  std::vector<InferenceCase> cases;
  for (const auto& name : names) {
    const BenchVariant* found = nullptr;
    for (const auto& k : model_kinds())
      for (const auto& v : k.bench_variants)
        if (v.name == name) found = &v;
    if (!found) throw Error("bench infer: unknown variant '" + name + "'");
    cases.push_back({name, found->options(dense), found->convert_keep});
  }
  return cases;
}

std::vector<InferenceRow> run_inference_bench(const std::vector<InferenceCase>& cases, const InferenceBenchOptions& o) {
  require(!cases.empty(), "bench infer: no variants");
  torch::NoGradGuard no_grad;
  std::vector<Subject> subjects;
  std::vector<InferenceRow> rows;
  for (const auto& c : cases) {
    subjects.push_back(make_subject(c));
    InferenceRow r;
    r.name = c.name;
    // Relative to the dense model (the first case): a ToMoE model stores more than it activates.
    r.active_fraction = static_cast<double>(subjects.back().params().active) / static_cast<double>(subjects.front().params().total);
    r.flops_prefill = subjects.back().flops(o.seq, 1.0 / o.seq);
    r.flops_forward = subjects.back().flops(o.seq, 1);
    r.flops_decode = subjects.back().flops(o.seq + 1, 1);
    rows.push_back(r);
  }
  const ModelOptions& shape = subjects.front().options();
  for (const auto& s : subjects)
    require(s.options().vocab_size == shape.vocab_size && s.options().dim == shape.dim,
            "bench infer: every variant needs the base model's vocabulary and dim");
  require(o.seq + 1 <= shape.max_seq_len, "bench infer: --seq plus the decoded token is longer than model.max_seq_len");
  torch::manual_seed(7);
  const auto prefill = torch::randint(shape.vocab_size, {o.batch, o.seq}, torch::kLong);
  const auto prompt = prefill.narrow(0, 0, 1);  // the decode step's context
  const auto decode = torch::randint(shape.vocab_size, {1, 1}, torch::kLong);
  // One decode step: the token after `prompt`, whose keys and values are cached; the cache is cut back
  // after every step so each timed call does the same work.
  auto decode_ms = [&](Subject& s, Form k) {
    KvCache cache;
    s.forward(prompt, k, true, &cache);
    return time_ms(
        [&] {
          s.forward(decode, k, true, &cache);
          cache.truncate(o.seq);
        },
        o.min_seconds);
  };
  // Prefill speedups from adjacent calls of the dense model and a variant, in alternating order (a pair's
  // second call does not always run in the cache state its first one leaves).
  auto paired_speedups = [](Subject& dense, Subject& variant, const torch::Tensor& tokens, double seconds) {
    auto call_ms = [&](Subject& s) {
      const auto start = std::chrono::steady_clock::now();
      s.forward(tokens, Form::automatic, true);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    std::vector<double> speedups;
    const auto start = std::chrono::steady_clock::now();
    while (speedups.size() < 2 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
      const bool dense_first = speedups.size() % 2 == 0;
      const double first = call_ms(dense_first ? dense : variant), second = call_ms(dense_first ? variant : dense);
      speedups.push_back(dense_first ? first / second : second / first);
    }
    return speedups;
  };
  const auto h = torch::randn({o.batch, o.seq, shape.dim});
  for (auto& s : subjects) {  // warm-up: allocator, thread pools, Monarch folds
    s.forward(prefill, Form::automatic, false);
    decode_ms(s, Form::automatic);
  }
  struct Samples {
    std::vector<double> forward, prefill, prefill_ref, prefill_sparse, decode, decode_ref, decode_sparse, attn, attn_ref, ffn, ffn_ref;
  };
  std::vector<Samples> samples(subjects.size());
  for (int rep = 0; rep < o.repeats; ++rep) {
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      auto& s = subjects[i];
      auto& m = samples[i];
      // Whole model: the default (automatic) form, and for MoHD / MoH also the reference and the forced sparse
      // form. Layers: the sparse kernels against the reference form.
      m.prefill.push_back(time_ms([&] { s.forward(prefill, Form::automatic, true); }, o.min_seconds));
      m.forward.push_back(time_ms([&] { s.forward(prefill, Form::automatic, false); }, o.min_seconds));
      m.decode.push_back(decode_ms(s, Form::automatic));
      if (s.has_reference) {
        m.prefill_ref.push_back(time_ms([&] { s.forward(prefill, Form::reference, true); }, o.min_seconds));
        m.decode_ref.push_back(decode_ms(s, Form::reference));
        m.prefill_sparse.push_back(time_ms([&] { s.forward(prefill, Form::sparse, true); }, o.min_seconds));
        m.decode_sparse.push_back(decode_ms(s, Form::sparse));
      }
      if (!o.per_layer) continue;
      m.attn.push_back(time_ms([&] { s.attention(h, Form::sparse); }, o.min_seconds));
      m.ffn.push_back(time_ms([&] { s.feed_forward(h, Form::sparse); }, o.min_seconds));
      if (!s.has_reference) continue;
      m.attn_ref.push_back(time_ms([&] { s.attention(h, Form::reference); }, o.min_seconds));
      m.ffn_ref.push_back(time_ms([&] { s.feed_forward(h, Form::reference); }, o.min_seconds));
    }
  }
  if (o.paired_seconds > 0)
    for (std::size_t i = 1; i < subjects.size(); ++i) rows[i].paired_speedups = paired_speedups(subjects[0], subjects[i], prefill, o.paired_seconds);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& r = rows[i];
    const auto& m = samples[i];
    r.prefill_ms = median(m.prefill);
    r.prefill_samples = m.prefill;
    r.forward_ms = median(m.forward);
    r.decode_ms = median(m.decode);
    r.prefill_reference_ms = median(m.prefill_ref);
    r.decode_reference_ms = median(m.decode_ref);
    r.prefill_sparse_ms = median(m.prefill_sparse);
    r.decode_sparse_ms = median(m.decode_sparse);
    r.attn_ms = median(m.attn);
    r.ffn_ms = median(m.ffn);
    r.attn_reference_ms = median(m.attn_ref);
    r.ffn_reference_ms = median(m.ffn_ref);
    if (o.profile_top > 0) r.prefill_ops = profile_ops([&] { subjects[i].forward(prefill, Form::automatic, true); }, 3);
  }
  return rows;
}

namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// "-" where a variant has no such form.
std::string or_dash(double v, const char* format) {
  char b[32];
  std::snprintf(b, sizeof b, format, v);
  return v > 0 ? std::string(b) : std::string("-");
}

std::string format_layer_table(const std::vector<InferenceRow>& rows, const InferenceBenchOptions& o) {
  const InferenceRow& dense = rows.front();
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "\nLayer 0 alone (input %d x %d x d; sparse form, speedup vs dense; reference form beside it)\n\n", o.batch, o.seq);
  out += buf;
  out += "| variant | attention ms | speedup | reference form ms | FFN ms | speedup | reference form ms |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "| %s | %.2f | %.2fx | %s | %.2f | %.2fx | %s |\n", r.name.c_str(), r.attn_ms,
                  ratio(dense.attn_ms, r.attn_ms), or_dash(r.attn_reference_ms, "%.2f").c_str(), r.ffn_ms,
                  ratio(dense.ffn_ms, r.ffn_ms), or_dash(r.ffn_reference_ms, "%.2f").c_str());
    out += buf;
  }
  return out;
}

// The q-quantile of sorted values (nearest rank).
double quantile(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
}

std::string format_paired_table(const std::vector<InferenceRow>& rows, const InferenceBenchOptions& o) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\nPrefill speedup from adjacent calls (dense and the variant alternating for %.0f s each; per pair dense ms / "
                "variant ms)\n\n| variant | median | interquartile range | pairs |\n|---|---|---|---|\n",
                o.paired_seconds);
  out += buf;
  for (const auto& r : rows) {
    if (r.paired_speedups.empty()) continue;
    auto sorted = r.paired_speedups;
    std::sort(sorted.begin(), sorted.end());
    std::snprintf(buf, sizeof buf, "| %s | %.3fx | %.3f-%.3f | %zu |\n", r.name.c_str(), quantile(sorted, 0.5), quantile(sorted, 0.25),
                  quantile(sorted, 0.75), sorted.size());
    out += buf;
  }
  return out;
}

}  // namespace

std::string format_inference_bench(const std::vector<InferenceRow>& rows, const InferenceBenchOptions& o) {
  std::string out;
  char buf[512];
  const InferenceRow& dense = rows.front();
  std::snprintf(buf, sizeof buf,
                "Model (prefill = %d x %d prompt tokens to next-token logits; forward = the same with every position's logits; "
                "decode = batch 1, one token after a %d-token prompt in the KV cache; medians of %d repeats; speedups vs %s)\n\n",
                o.batch, o.seq, o.seq, o.repeats, dense.name.c_str());
  out += buf;
  out += "| variant | active params | prefill ms | prefill tokens/s | speedup | ideal | of ideal | reference form ms | sparse form ms "
         "| forward ms | forward speedup | forward ideal | decode ms | decode speedup | decode ideal | decode reference / sparse ms |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const double speedup = ratio(dense.prefill_ms, r.prefill_ms), ideal = ratio(dense.flops_prefill, r.flops_prefill);
    std::snprintf(buf, sizeof buf,
                  "| %s | %.1f%% | %.2f | %.0f | %.2fx | %.2fx | %.0f%% | %s | %s | %.2f | %.2fx | %.2fx | %.3f | %.2fx | %.2fx | %s |\n",
                  r.name.c_str(), 100 * r.active_fraction, r.prefill_ms, 1000.0 * o.batch * o.seq / r.prefill_ms, speedup, ideal,
                  100 * ratio(speedup, ideal), or_dash(r.prefill_reference_ms, "%.2f").c_str(), or_dash(r.prefill_sparse_ms, "%.2f").c_str(),
                  r.forward_ms, ratio(dense.forward_ms, r.forward_ms), ratio(dense.flops_forward, r.flops_forward), r.decode_ms,
                  ratio(dense.decode_ms, r.decode_ms), ratio(dense.flops_decode, r.flops_decode),
                  (or_dash(r.decode_reference_ms, "%.3f") + " / " + or_dash(r.decode_sparse_ms, "%.3f")).c_str());
    out += buf;
  }
  if (o.paired_seconds > 0) out += format_paired_table(rows, o);
  if (dense.attn_ms > 0) out += format_layer_table(rows, o);
  for (const auto& r : rows) {
    if (r.prefill_ops.empty()) continue;
    out += "\nProfile of " + r.name + "'s prefill (default form; LibTorch's CPU profiler, mean of 3 calls; self = an op's time less the ops it called)\n\n";
    out += format_op_profile(r.prefill_ops, o.profile_top);
  }
  return out;
}

}  // namespace moxlab
