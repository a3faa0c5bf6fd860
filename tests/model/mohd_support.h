// MohdOptions in one call, for the MoHD tests.
#pragma once
#include "core/model/mohd/mohd_options.h"

namespace moxlab::testing {

inline MohdOptions mohd(int n, int active, int shared, int groups, bool scaling = true, double beta = 0.01) {
  MohdOptions o;
  o.sub_dims = n;
  o.active = active;
  o.shared = shared;
  o.fusion_groups = groups;
  o.scaling = scaling;
  o.balance_beta = beta;
  return o;
}

}  // namespace moxlab::testing
