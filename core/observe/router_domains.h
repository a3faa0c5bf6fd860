// Per-domain routing of MoHD (Fig. 11): for every router of a capture, how often each sub-dimension is
// selected and its mean router score, averaged over the tokens of each data domain. Torch-free; reads
// the capture taps blocks.<l>.<attn|ffn>.router.probs (s, Eq. 11) and .router.topk (the active set,
// Eq. 12) written by the MoHD mixer (core/model/mohd/mohd_mixer.h).
//
// Routing file (layout_version 2, as captures; h5py-readable; <router> = blocks.<l>.<attn|ffn>):
//   attrs on "/": source (capture path), run_id (when the capture has one), layout_version
//   /domain_names                 strings [D]  domains with at least one captured token
//   /routing/<router>/tokens      int64 [D]    tokens per domain
//   /routing/<router>/selected    f64 [D, N]   fraction of the domain's tokens whose active set holds
//                                              sub-dimension i (shared ones: 1)
//   /routing/<router>/score       f64 [D, N]   mean router score s_i over the domain's tokens
//     attrs: sub_dims, spread (max over sub-dims of the max - min selection fraction across domains),
//            least_used (min over sub-dims of the mean selection fraction over domains); when the capture
//            has /window: spread_null_q95, spread_p, spread_permutations (routing_permutation.h)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/observe/observe_capture.h"
#include "core/observe/routing_permutation.h"

namespace moxlab {

struct RouterDomainStats {
  std::string router;                // "blocks.1.attn"
  std::vector<std::string> domains;  // domains with tokens, in capture order
  std::vector<std::int64_t> tokens;  // [D]
  int sub_dims = 0;                  // N
  std::vector<double> selected;      // [D * N]: selection fraction of sub-dimension i in domain d
  std::vector<double> score;         // [D * N]: mean s_i in domain d
  // Largest difference between domains in how often one sub-dimension is selected: 0 when every
  // domain routes alike, 1 when some sub-dimension is always taken in one domain and never in another.
  double spread() const;
  // Selection fraction of the least-used sub-dimension, averaged over domains (equal weight each): with
  // k routed of n specialised sub-dims, k/n when routing is balanced, near 0 when the router has collapsed.
  double least_used() const;
  SpreadNull null;  // the spread against domain labels permuted across windows; permutations 0: not computed
};

// probs and active: [rows, n] row-major (active > 0.5 = selected); domain: [rows], indices into names.
RouterDomainStats router_domain_stats(const std::string& router, const std::vector<float>& probs,
                                      const std::vector<float>& active, std::int64_t rows, int n,
                                      const std::vector<std::int32_t>& domain, const std::vector<std::string>& names);

struct RoutingReport {
  std::string capture, out;
  std::int64_t run_id = -1;
  std::vector<RouterDomainStats> routers;  // layer order, attn before ffn
  std::vector<ObservedResult> results;     // routing/{selected,score}/<router>/<domain>/<i>,
                                           // routing/{spread,least_used}/<router>, and with
                                           // /window routing/{spread_null95,spread_p}/<router>
};

// Permutations of the spread's null (spread_permutation_null) when the capture has /window.
constexpr int kSpreadPermutations = 999;

// Reads every router tap pair of the capture and writes the routing file to out_path (atomically).
// Throws when the capture has no router taps (a dense model, or a capture without them).
// The capture is opened with TensorLogReader::open_checked (read in a child process first) and its
// layout checked (layout_check.h) before any value is read.
RoutingReport observe_routing(const std::string& capture_path, const std::string& out_path);

}  // namespace moxlab
