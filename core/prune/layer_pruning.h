// ShortGPT (Men et al. 2024): remove whole decoder blocks with the lowest block influence
// BI_l = 1 - E[cos(x_in, x_out)] (calibration_stats.h). A removed block's residual branches are zeroed
// (W_O and W_D), which makes it the identity: the same function as deleting it.
#pragma once
#include <vector>

#include "core/model/transformer.h"

namespace moxlab {

// The blocks to remove so that at most (1 - ratio) of the blocks go: the round((1 - ratio) * L) of lowest
// influence, in increasing layer order.
std::vector<int> blocks_to_remove(const std::vector<double>& block_influence, double ratio);

void remove_blocks(Transformer& model, const std::vector<int>& blocks);

}  // namespace moxlab
