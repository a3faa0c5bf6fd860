#include "core/observe/consecutive_runs.h"

#include "core/common/error.h"

namespace moxlab {

std::vector<std::int32_t> consecutive_run_lengths(const std::vector<std::int32_t>& window,
                                                  const std::vector<std::int32_t>& position) {
  require(window.size() == position.size(), "consecutive runs: /window and /position differ in length");
  std::vector<std::int32_t> length(window.size(), 1);
  for (std::size_t t = window.size(); t-- > 1;)
    if (window[t] == window[t - 1] && std::int64_t{position[t]} == std::int64_t{position[t - 1]} + 1)
      length[t - 1] = length[t] + 1;
  return length;
}

}  // namespace moxlab
