// Zero-shot task code (core/eval/tasks): request construction, metrics and file loading, checked
// against hand-computed lm-evaluation-harness results. The tokenizer and the model are fakes
// defined here, so every expected number can be worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/eval/tasks/encode_pair.h"
#include "core/eval/tasks/harness_metrics.h"
#include "core/eval/tasks/python_text.h"
#include "core/eval/tasks/zeroshot.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {

// GPT-2-like word tokenizer: a token is a run of blanks followed by a run of non-blanks, so
// leading whitespace sticks to the next word (" yes" is one token) and trailing whitespace at
// the end of a text is a token of its own. That is exactly the behaviour _encode_pair guards
// against. Ids are handed out on first sight, from 10 up.
class WordTokenizer : public Tokenizer {
 public:
  explicit WordTokenizer(std::int32_t bos = -1, std::int32_t eos = -1) : bos_(bos), eos_(eos) {}
  std::vector<std::int32_t> encode(std::string_view text) const override {
    std::vector<std::int32_t> ids;
    std::size_t i = 0;
    while (i < text.size()) {
      std::size_t j = i;
      while (j < text.size() && blank(text[j])) ++j;
      while (j < text.size() && !blank(text[j])) ++j;
      ids.push_back(id(std::string(text.substr(i, j - i))));
      i = j;
    }
    return ids;
  }
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    std::string s;
    for (std::int32_t t : ids) s += piece(t);
    return s;
  }
  std::string token_bytes(std::int32_t t, std::int32_t) const override { return piece(t); }
  std::int32_t vocab_size() const override { return static_cast<std::int32_t>(10 + pieces_.size()); }
  std::int32_t bos_id() const override { return bos_; }
  std::int32_t eos_id() const override { return eos_; }
  std::string kind() const override { return "fake-word"; }
  std::string identity() const override { return "test"; }

  std::int32_t id(const std::string& piece) const {
    auto it = ids_.find(piece);
    if (it != ids_.end()) return it->second;
    pieces_.push_back(piece);
    return ids_[piece] = static_cast<std::int32_t>(9 + pieces_.size());
  }

 private:
  static bool blank(char c) { return c == ' ' || c == '\n' || c == '\t'; }
  std::string piece(std::int32_t t) const {
    if (t < 10) return "<special" + std::to_string(t) + ">";
    return pieces_.at(static_cast<std::size_t>(t - 10));
  }
  std::int32_t bos_, eos_;
  mutable std::map<std::string, std::int32_t> ids_;
  mutable std::vector<std::string> pieces_;
};

// A model given as a table: decoded continuation text -> (loglikelihood, greedy). Unknown
// continuations throw, so a test cannot pass on a request it did not anticipate. Records every
// request and batch size.
struct TableModel {
  const Tokenizer& tok;
  std::map<std::string, std::pair<double, bool>> table;
  std::vector<LoglikelihoodRequest> seen;
  std::vector<std::size_t> batches;

  LoglikelihoodFn fn() {
    return [this](const std::vector<LoglikelihoodRequest>& reqs) {
      batches.push_back(reqs.size());
      std::vector<LoglikelihoodResult> out;
      for (const auto& r : reqs) {
        seen.push_back(r);
        const std::string key = tok.decode(r.continuation);
        auto it = table.find(key);
        if (it == table.end()) throw std::runtime_error("TableModel: no entry for '" + key + "'");
        out.push_back({it->second.first, it->second.second});
      }
      return out;
    };
  }
};

// A fresh temporary folder, removed at scope exit.
using TempDir = moxlab::testing::ScratchDir;

TaskSpec mc_spec(std::vector<std::string> metrics = {"acc", "acc_norm"}) {
  return {"tiny_mc", "tiny_mc.jsonl", TaskKind::MultipleChoice, "test", std::move(metrics), "hand-made"};
}

TaskData mc_data(std::vector<MultipleChoiceItem> items) {
  TaskData d;
  d.kind = TaskKind::MultipleChoice;
  d.path = "<memory>";
  d.multiple_choice = std::move(items);
  return d;
}

}  // namespace

TEST_CASE("zeroshot: Python whitespace and length semantics", "[eval][zeroshot]") {
  CHECK(python_rstrip_size("ab \n\t") == 2);
  CHECK(python_rstrip_size("ab\xC2\xA0") == 2);           // U+00A0 no-break space: str.isspace()
  CHECK(python_rstrip_size("ab\xE3\x80\x80") == 2);       // U+3000 ideographic space
  CHECK(python_rstrip_size("ab\xE2\x80\x8B") == 5);       // U+200B zero-width space is not
  CHECK(python_rstrip_size("ab\x1f") == 2);               // information separators are
  CHECK(python_rstrip_size(" \n") == 0);
  CHECK(python_rstrip_size("") == 0);
  CHECK(python_len("\xC3\xA9t\xC3\xA9") == 3);            // "été": 3 code points, 5 bytes
  CHECK(python_len("ab") == 2);
}

TEST_CASE("zeroshot: trailing whitespace of the context moves to the continuation", "[eval][zeroshot]") {
  const TextRequest moved = move_trailing_whitespace({"Question: goal\n", " sol"});
  CHECK(moved.context == "Question: goal");
  CHECK(moved.continuation == "\n sol");

  // PIQA's query ends in "\n". Without the move, encode("Question: goal\n") ends with a "\n"
  // token and whole[len(context):] would be empty; with it the scored token is "\n sol".
  WordTokenizer tok;
  const LoglikelihoodRequest r = encode_request(tok, {"Question: goal\n", " sol"}, {});
  CHECK(r.context == tok.encode("Question: goal"));
  CHECK(r.continuation == std::vector<std::int32_t>{tok.id("\n sol")});
}

TEST_CASE("zeroshot: continuation tokens are whole[len(context_enc):], not encode(continuation)", "[eval][zeroshot]") {
  WordTokenizer tok;
  // The boundary falls inside a word: whole = ["abc", " d"], context_enc = ["ab"], so the
  // harness scores only " d" (encoding "c d" on its own would give ["c", " d"]).
  const LoglikelihoodRequest r = encode_request(tok, {"ab", "c d"}, {});
  CHECK(r.context == std::vector<std::int32_t>{tok.id("ab")});
  CHECK(r.continuation == std::vector<std::int32_t>{tok.id(" d")});
  CHECK(r.continuation != tok.encode("c d"));
  // Merged away entirely: nothing left to score is an error, not a silent zero.
  REQUIRE_THROWS_WITH(encode_request(tok, {"foo", "bar"}, {}), Contains("no tokens"));
}

TEST_CASE("zeroshot: prefix token for empty contexts and optional BOS everywhere", "[eval][zeroshot]") {
  WordTokenizer with_bos(1, 2), eos_only(-1, 2), none;
  CHECK(resolve_prefix_token(with_bos, -1) == 1);
  CHECK(resolve_prefix_token(eos_only, -1) == 2);
  CHECK(resolve_prefix_token(none, 7) == 7);
  CHECK(resolve_prefix_token(none, -1) == -1);

  const LoglikelihoodRequest empty = encode_request(with_bos, {"", " yes"}, {1, false});
  CHECK(empty.context == std::vector<std::int32_t>{1});
  CHECK(empty.continuation == with_bos.encode(" yes"));
  REQUIRE_THROWS_WITH(encode_request(none, {"", " yes"}, {-1, false}), Contains("prefix token"));

  // Whitespace-only context: rstrip leaves nothing, so it gets the prefix like an empty one.
  const LoglikelihoodRequest blank = encode_request(with_bos, {" ", "yes"}, {1, false});
  CHECK(blank.context == std::vector<std::int32_t>{1});
  CHECK(blank.continuation == std::vector<std::int32_t>{with_bos.id(" yes")});

  const LoglikelihoodRequest every = encode_request(with_bos, {"Q", " yes"}, {1, true});
  CHECK(every.context == std::vector<std::int32_t>{1, with_bos.id("Q")});
  const LoglikelihoodRequest plain = encode_request(with_bos, {"Q", " yes"}, {1, false});
  CHECK(plain.context == std::vector<std::int32_t>{with_bos.id("Q")});
}

TEST_CASE("zeroshot: numpy argmax, mean, stderr and perplexity", "[eval][zeroshot]") {
  CHECK(numpy_argmax({1.0, 3.0, 3.0}) == 1);  // first maximum
  CHECK(numpy_argmax({-2.0, -1.0}) == 1);
  const double nan = std::nan("");
  CHECK(numpy_argmax({1.0, nan, 5.0, nan}) == 1);  // NaN is numpy's maximum
  // {1,0,1,1}: mean 0.75, sample variance (3*0.0625 + 0.5625)/3 = 0.25, stderr 0.5/sqrt(4).
  CHECK(harness_mean({1, 0, 1, 1}) == 0.75);
  CHECK(sample_stddev({1, 0, 1, 1}) == 0.5);
  CHECK(mean_stderr({1, 0, 1, 1}) == 0.25);
  CHECK(std::isnan(mean_stderr({1})));  // the harness reports "N/A"
  CHECK(harness_perplexity({-1.0, -3.0}) == Approx(std::exp(2.0)).epsilon(1e-15));
  // stdev{-1,-3} = sqrt(2), / sqrt(2) = 1, times perplexity.
  CHECK(perplexity_stderr_delta({-1.0, -3.0}) == Approx(std::exp(2.0)).epsilon(1e-12));
  // Compensated summation, as Python >= 3.12: 1e16 + 1 + -1e16 is 1, not 0.
  CHECK(python_sum({1e16, 1.0, -1e16}) == 1.0);
}

TEST_CASE("zeroshot: acc and acc_norm disagree on hand-made items", "[eval][zeroshot]") {
  WordTokenizer tok;
  TableModel model{tok, {}, {}, {}};
  // Item 0: " a" -2.0, " bbbb" -3.0. acc picks 0; acc_norm: -2/1 = -2 vs -3/4 = -0.75 picks 1.
  // Item 1 (code points): " \u00e9" -1.5, " ab" -2.0. acc picks 0; acc_norm by code points
  //   -1.5/1 vs -2/2 = -1 picks 1 (by bytes -1.5/2 = -0.75 would pick 0).
  // Item 2 (no delimiter in the divisor): " c" -1.0, " ddd" -2.5. len(choice): -1 vs -0.833
  //   picks 1; dividing by len(" " + choice) -0.5 vs -0.625 would pick 0.
  // Item 3 (tie): " x" and " y" both -1.0: both metrics pick the first index, 0.
  model.table = {{" a", {-2.0, true}},  {" bbbb", {-3.0, false}}, {" \xC3\xA9", {-1.5, true}},
                 {" ab", {-2.0, false}}, {" c", {-1.0, true}},     {" ddd", {-2.5, false}},
                 {" x", {-1.0, false}}, {" y", {-1.0, false}}};
  const TaskData data = mc_data({{"Q0", {"a", "bbbb"}, 1},
                                 {"Q1", {"\xC3\xA9", "ab"}, 1},
                                 {"Q2", {"c", "ddd"}, 1},
                                 {"Q3", {"x", "y"}, 0}});
  TaskOptions opts;
  const TaskResult res = score_task(mc_spec(), data, tok, model.fn(), opts);
  REQUIRE(res.n_items == 4);
  REQUIRE(res.audit.size() == 4);
  CHECK(res.audit[0].pred == 0);
  CHECK(res.audit[0].pred_norm == 1);
  CHECK(res.audit[1].pred == 0);
  CHECK(res.audit[1].pred_norm == 1);
  CHECK(res.audit[2].pred == 0);
  CHECK(res.audit[2].pred_norm == 1);
  CHECK(res.audit[3].pred == 0);
  CHECK(res.audit[3].pred_norm == 0);
  // acc scores {0,0,0,1}: 0.25, stderr sqrt(0.75/3)/2 = 0.25. acc_norm {1,1,1,1}: 1, stderr 0.
  CHECK(res.metric("acc").value == 0.25);
  CHECK(res.metric("acc").std_err == 0.25);
  CHECK(res.metric("acc_norm").value == 1.0);
  CHECK(res.metric("acc_norm").std_err == 0.0);
  CHECK_THAT(res.metric("acc_norm").definition, Contains("len(choice_i)") && Contains("split=test, n=4"));
  CHECK_THAT(res.setup, Contains("prefix_token=-1") && Contains("fake-word"));
  // The query is the context of every choice; the delimiter " " opens each continuation.
  REQUIRE(model.seen.size() == 8);
  CHECK(model.seen[0].context == tok.encode("Q0"));
  CHECK(model.seen[1].continuation == std::vector<std::int32_t>{tok.id(" bbbb")});
  CHECK(res.audit[0].to_json() ==
        R"({"item":0,"loglik":[-2.0,-3.0],"greedy":[true,false],"tokens":[1,1],"pred":0,"pred_norm":1,"gold":1})");
}

TEST_CASE("zeroshot: only the metrics a task lists are reported, in order", "[eval][zeroshot]") {
  WordTokenizer tok;
  TableModel model{tok, {{" no", {-1.0, true}}, {" yes", {-2.0, false}}}, {}, {}};
  const TaskResult res = score_task(mc_spec({"acc"}), mc_data({{"Passage: p\nQuestion: q?", {"no", "yes"}, 0}}), tok,
                                    model.fn(), {});
  REQUIRE(res.metrics.size() == 1);
  CHECK(res.metrics[0].name == "acc");
  CHECK(res.metrics[0].value == 1.0);
  CHECK(std::isnan(res.metrics[0].std_err));  // one item: N/A
  REQUIRE_THROWS_AS(res.metric("acc_norm"), Error);
  REQUIRE_THROWS_WITH(score_task(mc_spec({"perplexity"}), mc_data({{"Q", {"a"}, 0}}), tok, model.fn(), {}),
                      Contains("not defined"));
}

TEST_CASE("zeroshot: requests go to the scorer in chunks", "[eval][zeroshot]") {
  WordTokenizer tok;
  TableModel model{tok, {{" a", {-1.0, true}}, {" b", {-2.0, false}}}, {}, {}};
  std::vector<MultipleChoiceItem> items(4, MultipleChoiceItem{"Q", {"a", "b"}, 0});
  TaskOptions opts;
  opts.batch_requests = 3;
  const TaskResult res = score_task(mc_spec(), mc_data(items), tok, model.fn(), opts);
  CHECK(model.batches == std::vector<std::size_t>{3, 3, 2});
  CHECK(res.metric("acc").value == 1.0);

  opts.limit = 2;  // first two items only
  model.batches.clear();
  const TaskResult limited = score_task(mc_spec(), mc_data(items), tok, model.fn(), opts);
  CHECK(limited.n_items == 2);
  CHECK(model.batches == std::vector<std::size_t>{3, 1});
  CHECK_THAT(limited.metric("acc").definition, Contains("limit: first 2"));

  LoglikelihoodFn short_answer = [](const std::vector<LoglikelihoodRequest>& reqs) {
    return std::vector<LoglikelihoodResult>(reqs.size() - 1);
  };
  REQUIRE_THROWS_WITH(score_task(mc_spec(), mc_data(items), tok, short_answer, {}), Contains("results for"));
}

TEST_CASE("zeroshot: WinoGrande partial scoring", "[eval][zeroshot]") {
  WordTokenizer tok;
  // Both options share the continuation, so the model answers by context: the "Tom so Tom"
  // context scores -4, the other -3.
  std::vector<LoglikelihoodRequest> seen;
  LoglikelihoodFn fn = [&](const std::vector<LoglikelihoodRequest>& reqs) {
    std::vector<LoglikelihoodResult> out;
    for (const auto& r : reqs) {
      seen.push_back(r);
      const bool tom = tok.decode(r.context).find("Tom so Tom") != std::string::npos;
      out.push_back({tom ? -4.0 : -3.0, false});
    }
    return out;
  };
  TaskData data;
  data.kind = TaskKind::PartialContext;
  data.partial_context = {{{"The cat chased Tom so Tom", "The cat chased Tom so the cat"}, "ran away.", 0},
                          {{"The cat chased Tom so Tom", "The cat chased Tom so the cat"}, "ran away.", 1}};
  const TaskSpec spec{"wg", "wg.jsonl", TaskKind::PartialContext, "dev", {"acc"}, ""};
  const TaskResult res = score_task(spec, data, tok, fn, {});
  REQUIRE(seen.size() == 4);
  // context = the sentence up to the blank with the option; continuation = " " + the rest.
  CHECK(seen[0].context == tok.encode("The cat chased Tom so Tom"));
  CHECK(seen[1].context == tok.encode("The cat chased Tom so the cat"));
  CHECK(seen[0].continuation == std::vector<std::int32_t>{tok.id(" ran"), tok.id(" away.")});
  CHECK(seen[1].continuation == seen[0].continuation);
  CHECK(res.audit[0].pred == 1);
  CHECK(res.audit[0].pred_norm == -1);  // no acc_norm for partial scoring
  CHECK(res.metric("acc").value == 0.5);
  CHECK(res.metrics.size() == 1);
}

TEST_CASE("zeroshot: LAMBADA last word, greedy accuracy and perplexity", "[eval][zeroshot]") {
  WordTokenizer tok;
  TableModel model{tok, {{" Mary", {-1.0, true}}, {" signs", {-3.0, false}}}, {}, {}};
  TaskData data;
  data.kind = TaskKind::LastWord;
  data.last_word = {{"He said hello to", "Mary"}, {"I don't care about", "signs"}};
  const TaskSpec spec{"lam", "lam.jsonl", TaskKind::LastWord, "test", {"acc", "perplexity"}, ""};
  const TaskResult res = score_task(spec, data, tok, model.fn(), {});
  REQUIRE(model.seen.size() == 2);
  CHECK(model.seen[0].context == tok.encode("He said hello to"));
  CHECK(model.seen[0].continuation == std::vector<std::int32_t>{tok.id(" Mary")});
  CHECK(res.metric("acc").value == 0.5);
  // exp(-mean(-1, -3)) = e^2; delta-method stderr e^2 * sqrt(2)/sqrt(2).
  CHECK(res.metric("perplexity").value == Approx(std::exp(2.0)).epsilon(1e-15));
  CHECK(res.metric("perplexity").std_err == Approx(std::exp(2.0)).epsilon(1e-12));
  CHECK_THAT(res.metric("perplexity").definition, Contains("exp(-mean over items"));
  CHECK(res.audit[1].to_json() == R"({"item":1,"loglik":[-3.0],"greedy":[false],"tokens":[1]})");
}

TEST_CASE("zeroshot: malformed JSONL lines name the file and line", "[eval][zeroshot]") {
  TempDir dir;
  const std::string good = R"({"query": "Q", "choices": ["a", "b"], "gold": 1})";
  const std::string broken = dir.write("broken.jsonl", good + "\n" + R"({"query": "Q", "choices": ["a")" + "\n");
  REQUIRE_THROWS_WITH(load_task_file(broken, TaskKind::MultipleChoice), Contains("broken.jsonl:2:") && Contains("JSON"));
  // limit stops before the bad line, so a quick run on the head of a file still works.
  CHECK(load_task_file(broken, TaskKind::MultipleChoice, 1).size() == 1);

  const std::string gold = dir.write("gold.jsonl", good + "\n\n" + R"({"query": "Q", "choices": ["a", "b"], "gold": 2})");
  REQUIRE_THROWS_WITH(load_task_file(gold, TaskKind::MultipleChoice), Contains("gold.jsonl:3:") && Contains("out of range"));
  const std::string missing = dir.write("missing.jsonl", R"({"context_options": ["a", "b"], "gold": 0})");
  REQUIRE_THROWS_WITH(load_task_file(missing, TaskKind::PartialContext), Contains("missing.jsonl:1:") && Contains("'continuation'"));
  const std::string floaty = dir.write("floaty.jsonl", R"({"query": "Q", "choices": ["a"], "gold": 0.0})");
  REQUIRE_THROWS_WITH(load_task_file(floaty, TaskKind::MultipleChoice), Contains("floaty.jsonl:1:") && Contains("integer"));
  const std::string array = dir.write("array.jsonl", "[1, 2]\n");
  REQUIRE_THROWS_WITH(load_task_file(array, TaskKind::LastWord), Contains("array.jsonl:1:") && Contains("object"));
  REQUIRE_THROWS_WITH(load_task_file((dir.path / "absent.jsonl").string(), TaskKind::LastWord), Contains("absent.jsonl"));
}

TEST_CASE("zeroshot: run_task reads a task file from a given folder", "[eval][zeroshot]") {
  TempDir dir;
  dir.write("tiny_mc.jsonl", R"({"query": "Q", "choices": ["a", "bbbb"], "gold": 1})" "\n"
                             R"({"query": "Q", "choices": ["a", "bbbb"], "gold": 0})" "\n");
  WordTokenizer tok;
  TableModel model{tok, {{" a", {-2.0, true}}, {" bbbb", {-3.0, false}}}, {}, {}};
  TaskOptions opts;
  opts.data_dir = dir.path.string();
  const TaskResult res = run_task(mc_spec(), tok, model.fn(), opts);
  CHECK(res.n_items == 2);
  CHECK(res.metric("acc").value == 0.5);
  CHECK(res.metric("acc_norm").value == 0.5);
  // sample stdev of {1,0} is sqrt(0.5); stderr sqrt(0.5)/sqrt(2) = 0.5.
  CHECK(res.metric("acc").std_err == Approx(0.5).epsilon(1e-15));
}

TEST_CASE("zeroshot: registry", "[eval][zeroshot]") {
  CHECK(task_registry().size() == 11);
  const TaskSpec& arc = find_task("arc_easy");
  CHECK(arc.kind == TaskKind::MultipleChoice);
  CHECK(arc.split == "test");
  CHECK(arc.metrics == std::vector<std::string>{"acc", "acc_norm"});
  CHECK(find_task("winogrande").metrics == std::vector<std::string>{"acc"});
  CHECK(find_task("winogrande").kind == TaskKind::PartialContext);
  CHECK(find_task("lambada_openai").kind == TaskKind::LastWord);
  CHECK(find_task("boolq").metrics == std::vector<std::string>{"acc"});
  REQUIRE_THROWS_WITH(find_task("hellaswag"), Contains("unknown zero-shot task") && Contains("arc_easy"));
}

TEST_CASE("zeroshot: every real task file loads with the README's item count", "[eval][zeroshot][shared]") {
  if (shared_data_dir().empty()) {
    WARN("shared data folder absent (../shared/data or $MOXLAB_SHARED_DATA): skipping real task files");
    return;
  }
  // Counts from ../shared/data/README.md, eval/.
  const std::map<std::string, std::size_t> readme = {
      {"arc_easy", 2376}, {"arc_challenge", 1172}, {"piqa", 1838},       {"openbook_qa", 500},
      {"logi_qa", 651},   {"siqa", 1954},          {"commonsense_qa", 1221}, {"copa", 100},
      {"boolq", 3270},    {"winogrande", 1267},    {"lambada_openai", 5153}};
  REQUIRE(readme.size() == task_registry().size());
  for (const TaskSpec& spec : task_registry()) {
    INFO("task " << spec.name);
    REQUIRE(readme.count(spec.name) == 1);
    CHECK(load_task(spec).size() == readme.at(spec.name));
    CHECK(load_task(spec, 5).size() == 5);
  }
}

TEST_CASE("zeroshot: every real task builds and scores its requests end to end", "[eval][zeroshot][shared]") {
  if (shared_data_dir().empty()) {
    WARN("shared data folder absent (../shared/data or $MOXLAB_SHARED_DATA): skipping real task files");
    return;
  }
  // A deterministic stand-in model: loglikelihood = -(continuation characters), greedy when the
  // continuation is a single token. Checks that every item of every file yields well-formed,
  // non-empty requests and that the aggregation runs over the full sets.
  WordTokenizer tok(1);
  std::size_t requests = 0;
  LoglikelihoodFn fn = [&](const std::vector<LoglikelihoodRequest>& reqs) {
    std::vector<LoglikelihoodResult> out;
    for (const auto& r : reqs) {
      REQUIRE(!r.context.empty());
      REQUIRE(!r.continuation.empty());
      out.push_back({-static_cast<double>(tok.decode(r.continuation).size()), r.continuation.size() == 1});
    }
    requests += reqs.size();
    return out;
  };
  for (const TaskSpec& spec : task_registry()) {
    INFO("task " << spec.name);
    const TaskResult res = run_task(spec, tok, fn, {});
    CHECK(res.n_items == load_task(spec).size());
    CHECK(res.audit.size() == res.n_items);
    CHECK(res.metrics.size() == spec.metrics.size());
    for (const MetricResult& m : res.metrics) {
      CHECK(std::isfinite(m.value));
      CHECK(std::isfinite(m.std_err));
      CHECK_THAT(m.definition, Contains("split=" + spec.split));
    }
  }
  CHECK(requests > 30000);
}
