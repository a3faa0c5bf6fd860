// The arithmetic of lm-evaluation-harness's metrics (lm_eval/api/metrics.py, lm_eval/api/task.py),
// reproduced operation for operation so results match to the last bit where the harness's own
// arithmetic is deterministic:
//   argmax         numpy.argmax: the first maximum; a NaN counts as the maximum (first NaN wins).
//   mean           sum(arr) / len(arr) with CPython >= 3.12's sum() (Neumaier-compensated; on
//                  0/1 scores every Python version gives the same, exact, result).
//   sample_stddev  sqrt(sum((x - mean)^2) / (n - 1)).
//   mean_stderr    sample_stddev / sqrt(n): the stderr reported for acc and acc_norm. The
//                  harness writes "N/A" when n < 2; these return NaN there.
//   perplexity     exp(-mean(per-item loglikelihoods)): lambada_openai's "perplexity"
//                  aggregation, per item, not per token.
#pragma once
#include <cstddef>
#include <vector>

namespace moxlab {

std::size_t numpy_argmax(const std::vector<double>& values);  // values must be non-empty
double python_sum(const std::vector<double>& values);
double harness_mean(const std::vector<double>& values);
double sample_stddev(const std::vector<double>& values);  // NaN when fewer than 2 values
double mean_stderr(const std::vector<double>& values);    // NaN when fewer than 2 values
double harness_perplexity(const std::vector<double>& logliks);

// The harness bootstraps perplexity's stderr (100000 resamples of Python's random); that is not
// reproducible here, so we report the delta-method estimate perplexity * mean_stderr(logliks),
// which the bootstrap approximates for large n. NaN when fewer than 2 values.
double perplexity_stderr_delta(const std::vector<double>& logliks);

}  // namespace moxlab
