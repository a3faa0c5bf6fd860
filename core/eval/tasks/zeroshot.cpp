#include "core/eval/tasks/zeroshot.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/eval/tasks/harness_metrics.h"
#include "core/eval/tasks/python_text.h"

namespace moxlab {

namespace {

// Requests of all items, flattened, with where each item's requests start.
struct RequestPlan {
  std::vector<LoglikelihoodRequest> requests;
  std::vector<std::size_t> first;   // item i owns requests [first[i], first[i + 1])
  std::vector<std::size_t> tokens;  // continuation length of each request, for the audit
};

void add_item(RequestPlan& plan, const std::vector<TextRequest>& texts, const Tokenizer& tok,
              const PrefixPolicy& prefix, const std::string& task, std::size_t item) {
  for (std::size_t c = 0; c < texts.size(); ++c) {
    try {
      plan.requests.push_back(encode_request(tok, texts[c], prefix));
    } catch (const Error& e) {
      throw Error(task + " item " + std::to_string(item) + " request " + std::to_string(c) + ": " + e.what());
    }
    plan.tokens.push_back(plan.requests.back().continuation.size());
  }
  plan.first.push_back(plan.requests.size());
}

std::vector<LoglikelihoodResult> score_in_chunks(const LoglikelihoodFn& score,
                                                 std::vector<LoglikelihoodRequest>&& requests,
                                                 std::size_t chunk,
                                                 const std::function<void(std::size_t, std::size_t)>& progress) {
  std::vector<LoglikelihoodResult> out;
  out.reserve(requests.size());
  for (std::size_t start = 0; start < requests.size(); start += chunk) {
    const std::size_t end = std::min(requests.size(), start + chunk);
    std::vector<LoglikelihoodRequest> batch(std::make_move_iterator(requests.begin() + static_cast<std::ptrdiff_t>(start)),
                                            std::make_move_iterator(requests.begin() + static_cast<std::ptrdiff_t>(end)));
    std::vector<LoglikelihoodResult> got = score(batch);
    require(got.size() == batch.size(), "loglikelihood scorer returned " + std::to_string(got.size()) +
                                            " results for " + std::to_string(batch.size()) + " requests");
    out.insert(out.end(), got.begin(), got.end());
    if (progress) progress(end, requests.size());
  }
  return out;
}

void check_metrics(const TaskSpec& spec) {
  std::vector<std::string> allowed;
  switch (spec.kind) {
    case TaskKind::MultipleChoice: allowed = {"acc", "acc_norm"}; break;
    case TaskKind::PartialContext: allowed = {"acc"}; break;
    case TaskKind::LastWord: allowed = {"acc", "perplexity"}; break;
  }
  require(!spec.metrics.empty(), "task " + spec.name + " lists no metrics");
  for (const std::string& m : spec.metrics)
    require(std::find(allowed.begin(), allowed.end(), m) != allowed.end(),
            "task " + spec.name + ": metric '" + m + "' is not defined for " + task_kind_name(spec.kind) + " tasks");
}

// Shown quoted in definitions, so a delimiter of " " or "\n" is visible.
std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

std::string scope(const TaskSpec& spec, std::size_t n, const TaskOptions& opts) {
  std::string s = "split=" + spec.split + ", n=" + std::to_string(n);
  if (opts.limit > 0) s += " (limit: first " + std::to_string(opts.limit) + " items)";
  return s;
}

const char* kMeanStderr = "stderr = sample stdev / sqrt(n), N/A (NaN) for n < 2";

std::string definition(const TaskSpec& spec, const std::string& metric, std::size_t n, const TaskOptions& opts) {
  const std::string d = quoted(opts.target_delimiter);
  const std::string where = "; " + scope(spec, n, opts);
  switch (spec.kind) {
    case TaskKind::MultipleChoice:
      if (metric == "acc")
        return "acc: mean over items of [argmax_i loglik(" + d + " + choice_i | query) == gold], first max wins "
               "(numpy argmax), harness multiple_choice; " + kMeanStderr + where;
      return "acc_norm: mean over items of [argmax_i loglik_i / len(choice_i) == gold], len = Unicode code "
             "points of the choice text without the delimiter (harness completion_len), harness-style; " +
             std::string(kMeanStderr) + where;
    case TaskKind::PartialContext:
      return "acc: mean over items of [argmax_i loglik(" + d + " + text after the blank | sentence up to the "
             "blank with option_i) == gold], harness partial scoring (multiple_inputs); " + kMeanStderr + where;
    case TaskKind::LastWord:
      if (metric == "acc")
        return "acc: fraction of items where ' ' + last word is the greedy continuation at every token "
               "(harness is_greedy); " + std::string(kMeanStderr) + where;
      return "perplexity: exp(-mean over items of loglik(' ' + last word | context)), per item not per token "
             "(harness 'perplexity' aggregation); stderr = delta method perplexity * stdev(loglik) / sqrt(n) "
             "(the harness bootstraps it)" + where;
  }
  return metric;
}

MetricResult mean_metric(const TaskSpec& spec, const std::string& name, const std::vector<double>& scores,
                         const TaskOptions& opts) {
  return {name, harness_mean(scores), mean_stderr(scores), definition(spec, name, scores.size(), opts)};
}

std::string describe_setup(const Tokenizer& tok, const PrefixPolicy& prefix, const TaskOptions& opts) {
  std::string s = "target_delimiter=" + quoted(opts.target_delimiter) + ", prefix_token=" + std::to_string(prefix.token) +
                  (prefix.every_context ? " before every context" : " for empty contexts only (harness default)");
  s += ", tokenizer=" + tok.kind() + ":" + tok.identity();
  return s;
}

}  // namespace

TaskResult score_task(const TaskSpec& spec, const TaskData& data, const Tokenizer& tok, const LoglikelihoodFn& score,
                      const TaskOptions& opts) {
  require(data.kind == spec.kind, "task " + spec.name + " is " + task_kind_name(spec.kind) + " but its data is " +
                                      task_kind_name(data.kind));
  require(opts.batch_requests > 0, "batch_requests must be positive");
  require(static_cast<bool>(score), "no loglikelihood scorer given");
  check_metrics(spec);
  std::size_t n = data.size();
  if (opts.limit > 0) n = std::min(n, static_cast<std::size_t>(opts.limit));
  require(n > 0, "task " + spec.name + " has no items to score (" + data.path + ")");

  const PrefixPolicy prefix{resolve_prefix_token(tok, opts.prefix_token), opts.prefix_every_context};
  RequestPlan plan;
  plan.first.push_back(0);
  std::vector<std::vector<std::size_t>> choice_chars(n);  // multiple choice: acc_norm divisors
  for (std::size_t i = 0; i < n; ++i) {
    switch (spec.kind) {
      case TaskKind::MultipleChoice: {
        const MultipleChoiceItem& item = data.multiple_choice[i];
        for (const std::string& c : item.choices) choice_chars[i].push_back(python_len(c));
        add_item(plan, text_requests(item, opts.target_delimiter), tok, prefix, spec.name, i);
        break;
      }
      case TaskKind::PartialContext:
        add_item(plan, text_requests(data.partial_context[i], opts.target_delimiter), tok, prefix, spec.name, i);
        break;
      case TaskKind::LastWord:
        add_item(plan, text_requests(data.last_word[i]), tok, prefix, spec.name, i);
        break;
    }
  }
  const std::vector<LoglikelihoodResult> results = score_in_chunks(score, std::move(plan.requests), opts.batch_requests, opts.progress);

  TaskResult out;
  out.task = spec.name;
  out.split = spec.split;
  out.n_items = n;
  out.data_note = spec.data_note;
  out.setup = describe_setup(tok, prefix, opts);
  std::vector<double> acc, acc_norm, logliks;
  for (std::size_t i = 0; i < n; ++i) {
    AuditRow row;
    row.item = i;
    for (std::size_t r = plan.first[i]; r < plan.first[i + 1]; ++r) {
      row.loglik.push_back(results[r].logprob);
      row.greedy.push_back(results[r].greedy);
      row.tokens.push_back(plan.tokens[r]);
    }
    switch (spec.kind) {
      case TaskKind::MultipleChoice: {
        row.gold = data.multiple_choice[i].gold;
        row.pred = static_cast<int>(numpy_argmax(row.loglik));
        // Division in double, as numpy does: an empty choice gives -inf, inf or NaN, and
        // numpy_argmax then behaves like numpy.argmax on them.
        std::vector<double> normed;
        for (std::size_t c = 0; c < row.loglik.size(); ++c)
          normed.push_back(row.loglik[c] / static_cast<double>(choice_chars[i][c]));
        row.pred_norm = static_cast<int>(numpy_argmax(normed));
        acc.push_back(row.pred == row.gold ? 1.0 : 0.0);
        acc_norm.push_back(row.pred_norm == row.gold ? 1.0 : 0.0);
        break;
      }
      case TaskKind::PartialContext:
        row.gold = data.partial_context[i].gold;
        row.pred = static_cast<int>(numpy_argmax(row.loglik));
        acc.push_back(row.pred == row.gold ? 1.0 : 0.0);
        break;
      case TaskKind::LastWord:
        acc.push_back(row.greedy[0] ? 1.0 : 0.0);
        logliks.push_back(row.loglik[0]);
        break;
    }
    out.audit.push_back(std::move(row));
  }

  for (const std::string& m : spec.metrics) {
    if (m == "acc") out.metrics.push_back(mean_metric(spec, m, acc, opts));
    if (m == "acc_norm") out.metrics.push_back(mean_metric(spec, m, acc_norm, opts));
    if (m == "perplexity")
      out.metrics.push_back({m, harness_perplexity(logliks), perplexity_stderr_delta(logliks), definition(spec, m, n, opts)});
  }
  return out;
}

TaskResult run_task(const TaskSpec& spec, const Tokenizer& tok, const LoglikelihoodFn& score, const TaskOptions& opts) {
  const TaskData data = load_task(spec, opts.limit, opts.data_dir);
  return score_task(spec, data, tok, score, opts);
}

}  // namespace moxlab
