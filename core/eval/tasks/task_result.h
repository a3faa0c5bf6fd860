// What a zero-shot task run reports: the aggregate metrics, each with its standard error and a
// one-line definition that says exactly what was computed (so a table can say whether it shows
// acc or acc_norm, on which split, over how many items), and one audit row per item with the
// raw per-choice loglikelihoods, so every number can be recomputed or checked later.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace moxlab {

struct MetricResult {
  std::string name;    // "acc", "acc_norm" or "perplexity"
  double value = 0.0;
  double std_err = 0.0;  // NaN where the harness reports "N/A" (fewer than 2 items)
  std::string definition;
};

struct AuditRow {
  std::size_t item = 0;             // 0-based index of the item in its task file
  std::vector<double> loglik;       // per choice (per option for WinoGrande; one for LAMBADA)
  std::vector<bool> greedy;         // is_greedy per choice
  std::vector<std::size_t> tokens;  // continuation tokens scored per choice
  int pred = -1;                    // argmax of loglik (-1 for LAMBADA, which has no choices)
  int pred_norm = -1;               // argmax of loglik / choice length (multiple choice only)
  int gold = -1;                    // gold index (-1 for LAMBADA)
  // Compact one-line JSON, e.g.
  // {"item":3,"loglik":[-4.5,-2.25],"greedy":[false,true],"tokens":[2,3],"pred":1,"pred_norm":1,"gold":1}
  // Keys whose value is -1 above are left out. Non-finite loglikelihoods are written as null.
  std::string to_json() const;
};

struct TaskResult {
  std::string task;
  std::string split;
  std::size_t n_items = 0;
  std::vector<MetricResult> metrics;  // in the order of TaskSpec::metrics
  std::vector<AuditRow> audit;        // one per item, in file order
  std::string data_note;              // TaskSpec::data_note, carried along for reports
  // How requests were built: delimiter, prefix token policy, tokenizer kind and identity.
  std::string setup;
  // The metric called `name`; throws Error when the task did not report it.
  const MetricResult& metric(const std::string& name) const;
};

}  // namespace moxlab
