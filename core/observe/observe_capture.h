// `moxlab observe`, torch-free part: the activation observations of MoHD section 3 (Fig. 3-5)
// computed from a probe capture (layout: core/capture/capture.h), written to an observations HDF5 file
// and returned as headline numbers for the run store. One tap is in memory at a time (its [N, d]
// float32 rows plus rank and magnitude copies of the same size).
//
// Observations file (layout_version 2, as captures; h5py-readable; <tap> = capture tap name, e.g. blocks.3.attn.in):
//   attrs on "/": source (capture path), run_id (when the capture has one), layout_version, tokens,
//                 eps, p (top percent of Fig. 5), max_run
//   Fig. 3 left (magnitude_profile.h) and Fig. 4 numbers (magnitude_summary.h):
//     /magnitude/<tap>/pooled_sorted    f64 [d]  per-dim mean of x^2 over tokens, descending
//     /magnitude/<tap>/pooled_cumshare  f64 [d]  its cumulative share of the total
//     /magnitude/<tap>/token_sorted     f64 [d]  mean over tokens of each token's sorted x^2
//     /magnitude/<tap>/token_cumshare   f64 [d]  mean over tokens of each token's cumulative share
//       attrs: median, mean (of x^2 over all elements), tokens, dims
//   Fig. 3 middle, Eq. 2 (sparsity.h):
//     /sparsity/eps_grid                f64 [33] thresholds on x^2, 1e-6..1e2 log-spaced
//     /sparsity/<tap>/curve             f64 [33] sparsity at each threshold
//     /sparsity/<tap>/value             f64 scalar, sparsity at eps
//     /sparsity/by_layer/<kind>         f64 [L]  value per layer for attn.in, attn.out, ffn.in, ffn.out (NaN: absent)
//   Fig. 4 activation flow (per layer with an attn.in tap):
//     /flow/taps                        strings [13] attn.in, attn.q, ..., resid.out (forward order)
//     /flow/layer_<l>/median, mean      f64 [13] of x^2 per tap kind (NaN: tap absent)
//     /flow/layer_<l>/median_rel, mean_rel  f64 [13] in percent of attn.in of the layer
//   Fig. 3 right (shared_dims.h):
//     /shared/k                         int32 [max_run-1] 2..max_run
//     /shared/p                         f64 [100] 1..100 (percent of dims counted as high)
//     /shared/<tap>/counts, chance      f64 [max_run-1, 100]
//     /shared/<tap>/runs                int64 [max_run-1] runs of k consecutive tokens
//   Fig. 5 (shared_specific.h), runs of 5 tokens, high = top p%:
//     /pattern5/<tap>/counts            f64 [32] mean number of dims per 5-bit high/low pattern
//     /pattern5/<tap>/magnitude         f32 [5, d] x^2 of the example run (original dim order)
//     /pattern5/<tap>/order             int32 [d] clustered dimension order (heat-map columns)
//     /pattern5/<tap>/pattern           int32 [d] pattern of each dim in the example run (bit j: token j)
//       attrs: all, one_total, one_per_token, chance_all, chance_one_total, runs, high (K), example_row
//     (magnitude/order/pattern are absent when the tap has no run of 5 consecutive tokens)
//   Residual branch sizes (branch_scale.h; when every block has resid.mid and resid.out taps):
//     /branch/attn_rms, /branch/ffn_rms f64 [L]  RMS of resid.mid[l] - resid.out[l-1] (NaN at l = 0) and of
//                                                resid.out[l] - resid.mid[l]
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/observe/branch_scale.h"
#include "core/observe/sparsity.h"

namespace moxlab {

struct ObserveOptions {
  double eps = kDefaultSparsityEps;   // Eq. 2 threshold on x^2
  double top_percent = 20;            // "high" in Fig. 5
  int max_run = 20;                   // Fig. 3 right: k = 2..max_run
  std::vector<std::int64_t> top_k;    // top-k shares; empty: default_top_k(d) of each tap
  std::int64_t example_row = -1;      // Fig. 5 example run start row (-1: the first run)
  std::function<void(const std::string&)> log;  // one line per tap (optional)
};

// A headline number for RunStore::put_result.
struct ObservedResult {
  std::string key;
  double value = 0;
  std::string meta_json;
};

// The headline numbers of one tap, for summaries.
struct TapObservation {
  std::string tap, kind;  // "blocks.3.attn.in", "attn.in"
  int layer = -1;         // -1: not a blocks.<l>.<kind> name
  std::int64_t tokens = 0, dims = 0;
  double share_top50 = 0, token_share_top50 = 0, sparsity = 0, median = 0, mean = 0;
  double flow_median_pct = std::numeric_limits<double>::quiet_NaN();  // NaN: no attn.in tap in the layer
  double shared5_all = 0, shared5_one_per_token = 0;              // Fig. 5, high = top p%
  double shared5_chance_all = 0, shared5_chance_one_per_token = 0;  // for independent tokens
};

struct ObserveReport {
  std::string capture, out;
  std::int64_t run_id = -1;  // the capture's run_id attribute; -1 when absent
  std::int64_t tokens = 0;
  std::vector<TapObservation> taps;     // layer order, forward order inside a layer
  std::vector<ObservedResult> results;  // keys observe/<metric>/<tap>; NaN values left out
  std::vector<BranchScale> branches;    // empty without residual taps
};

// Reads every /probes/<tap> of the capture and writes the observations file to out_path (atomically).
// The capture is opened with TensorLogReader::open_checked (read in a child process first) and its
// layout checked (layout_check.h) before any value is read.
ObserveReport observe_capture(const std::string& capture_path, const std::string& out_path,
                              const ObserveOptions& options = {});

// The 13 per-block tap kinds of a dense block in forward order. Same names as BlockTapNames in
// core/model/tap_recorder.h, repeated here because this library is torch-free.
const std::vector<std::string>& flow_tap_kinds();
// "blocks.<l>.<kind>" -> (l, kind); anything else -> (-1, name).
std::pair<int, std::string> split_tap(const std::string& tap);

}  // namespace moxlab
