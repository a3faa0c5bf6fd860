#include "core/eval/tasks/task_registry.h"

#include "core/common/error.h"

namespace moxlab {

std::string task_kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::MultipleChoice: return "multiple_choice";
    case TaskKind::PartialContext: return "partial_context";
    case TaskKind::LastWord: return "last_word";
  }
  return "unknown";
}

namespace {

// Metric lists follow each harness task's YAML metric_list (lm_eval/tasks/<task>/*.yaml):
// arc, piqa, openbookqa and logiqa list acc and acc_norm; social_iqa, commonsense_qa, copa,
// boolq and winogrande list acc only; lambada_openai lists perplexity and acc. Per-choice
// loglikelihoods are in every audit row, so other metrics can be recomputed from them.
// Splits are the README's labels; "unlabelled" where it gives none (the counts of openbook_qa and
// logi_qa match both their validation and test splits upstream).
std::vector<TaskSpec> build_registry() {
  const std::vector<std::string> acc_norm = {"acc", "acc_norm"};
  const std::vector<std::string> acc = {"acc"};
  std::vector<TaskSpec> r;
  r.push_back({"arc_easy", "arc_easy.jsonl", TaskKind::MultipleChoice, "test", acc_norm,
               "query 'Question: {question}' with the answer texts as choices; the harness prompt "
               "is 'Question: {question}\\nAnswer:', so these contexts lack the '\\nAnswer:' suffix"});
  r.push_back({"arc_challenge", "arc_challenge.jsonl", TaskKind::MultipleChoice, "test", acc_norm,
               "query 'Question: {question}' with the answer texts as choices; the harness prompt "
               "is 'Question: {question}\\nAnswer:', so these contexts lack the '\\nAnswer:' suffix"});
  r.push_back({"piqa", "piqa.jsonl", TaskKind::MultipleChoice, "val", acc_norm,
               "query 'Question: {goal}\\n' with the two solutions as choices; the trailing newline "
               "moves into the continuation ('\\n ' + solution); the harness prompt is "
               "'Question: {goal}\\nAnswer:'"});
  r.push_back({"openbook_qa", "openbook_qa.jsonl", TaskKind::MultipleChoice, "unlabelled", acc_norm,
               "query = question_stem with the four answer texts as choices, as the harness's "
               "openbookqa prompt"});
  r.push_back({"logi_qa", "logi_qa.jsonl", TaskKind::MultipleChoice, "unlabelled", acc_norm,
               "query 'Context: ...\\nQuestion: ...\\nChoices: A. ...\\n' with letter choices A-D "
               "(trailing newline moves into the continuation); every choice has length 1 so "
               "acc_norm equals acc; the harness's logiqa scores the full option texts after "
               "'...\\nAnswer:'"});
  r.push_back({"siqa", "siqa.jsonl", TaskKind::MultipleChoice, "unlabelled", acc,
               "letter format 'Context: ...\\nQuestion: ...\\nChoices:\\nA. ...\\nB. ...\\nAnswer:' "
               "with choices A, B (two options per item); the harness's social_iqa scores the three "
               "answer texts after 'Q: {context} {question}\\nA:'"});
  r.push_back({"commonsense_qa", "commonsense_qa.jsonl", TaskKind::MultipleChoice, "unlabelled", acc,
               "letter format 'Question: ...\\nChoices:\\nA. ...\\nAnswer:' with choices A-D (four "
               "options); the harness's commonsense_qa lists five options A-E"});
  r.push_back({"copa", "copa.jsonl", TaskKind::MultipleChoice, "unlabelled", acc,
               "query '{premise without its period}, because|therefore' with first-letter-lowercased "
               "alternatives as choices; the harness's copa joins premise and connective without "
               "the comma"});
  r.push_back({"boolq", "boolq.jsonl", TaskKind::MultipleChoice, "val", acc,
               "query 'Passage: {passage}\\nQuestion: {question}?' with choices no, yes, used as "
               "given; the harness prompt is '{passage}\\nQuestion: {question}?\\nAnswer:' (no "
               "'Passage: ' prefix, ends in '\\nAnswer:')"});
  r.push_back({"winogrande", "winogrande.jsonl", TaskKind::PartialContext, "dev", acc,
               "context_options = sentence up to the blank with each option substituted, "
               "continuation = the text after the blank, stripped: the harness's partial scoring "
               "(preprocess_winogrande.py, multiple_inputs)"});
  r.push_back({"lambada_openai", "lambada_openai.jsonl", TaskKind::LastWord, "test",
               {"acc", "perplexity"},
               "text split at its last ' ': context = all before it, continuation = the last word; "
               "scored as ' ' + word, the harness's doc_to_target (no target_delimiter for "
               "output_type loglikelihood)"});
  return r;
}

}  // namespace

const std::vector<TaskSpec>& task_registry() {
  static const std::vector<TaskSpec> registry = build_registry();
  return registry;
}

const TaskSpec& find_task(const std::string& name) {
  std::string known;
  for (const TaskSpec& spec : task_registry()) {
    if (spec.name == name) return spec;
    known += (known.empty() ? "" : ", ") + spec.name;
  }
  throw Error("unknown zero-shot task '" + name + "' (known: " + known + ")");
}

}  // namespace moxlab
