// MoHD Fig. 11 (and MoH head load, ToMoE expert load) as a library call shared by `moxlab route` and sweep evaluation: per-domain router
// statistics (core/observe/router_domains.h) of a capture, or of a stored run whose router taps are
// captured first, recorded on the run (results + a "routing" artifact).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/model/model_kind.h"
#include "core/observe/router_domains.h"

namespace moxlab {

// Whether a run's config JSON names kinds with routers (has_routers, core/model/model_kind.h): MoHD
// attention or FFN (Fig. 11), MoH attention (head load, MoH Fig. 3), ToMoE FFN (expert load per domain).
bool is_routed_config(const std::string& config_json);

// Observes the capture into <capture stem>.routing.h5 and records the results on its run in `store`
// (a note goes to log when that is not possible).
RoutingReport route_capture(const std::string& capture, const std::string& store,
                            const std::function<void(const std::string&)>& log);

// Captures the run's router taps (tokens_per_domain from the start of each validation split) into its
// run directory, then route_capture.
RoutingReport route_stored_run(const std::string& store, std::int64_t run_id, std::int64_t tokens_per_domain,
                               const std::function<void(const std::string&)>& log);

}  // namespace moxlab
