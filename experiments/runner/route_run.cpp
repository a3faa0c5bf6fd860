#include "experiments/runner/route_run.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/observe/store_observations.h"
#include "core/store/run_store.h"
#include "experiments/runner/capture_run.h"

namespace moxlab {

bool is_routed_config(const std::string& config_json) {
  const auto cfg = nlohmann::json::parse(config_json, nullptr, false);
  return cfg.is_object() && has_routers(cfg.value("model.attention", ""), cfg.value("model.ffn", ""));
}

RoutingReport route_capture(const std::string& capture, const std::string& store,
                            const std::function<void(const std::string&)>& log) {
  const std::string out = std::filesystem::path(capture).replace_extension(".routing.h5").string();
  RoutingReport rep = observe_routing(capture, out);
  const std::string why = store_observations(store, rep.run_id, rep.results, "routing", rep.out,
                                             nlohmann::json{{"capture", rep.capture}}.dump(
                                                 -1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!why.empty() && log) log("note: routing results not stored (" + why + ")");
  return rep;
}

RoutingReport route_stored_run(const std::string& store, std::int64_t run_id, std::int64_t tokens_per_domain,
                               const std::function<void(const std::string&)>& log) {
  require(is_routed_config(RunStore(store).get_run(run_id).config_json),
          "run " + std::to_string(run_id) + " has no routers (not a MoHD, MoH or ToMoE model)");
  CaptureOptions opt;
  opt.taps = "blocks.*.router.probs,blocks.*.router.topk";
  opt.tokens_per_domain = tokens_per_domain;
  const std::string name = "capture-routing-" + std::to_string(tokens_per_domain) + ".h5";
  const CaptureRunResult c = capture_stored_run(store, run_id, opt, name, log);
  if (log) log("run " + std::to_string(run_id) + ": captured " + std::to_string(c.summary.tokens) +
               " tokens of router taps -> " + c.path);
  return route_capture(c.path, store, log);
}

}  // namespace moxlab
