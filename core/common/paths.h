// Where moxlab finds things at run time: the shared real-data folder (../shared/data next to the
// checkout, or $MOXLAB_SHARED_DATA) and the source tree (configs, data recipes, npm corpora).
#pragma once
#include <string>

namespace moxlab {

// Path of the shared data folder, "" when it does not exist (tests then skip with a message).
std::string shared_data_dir();

// Root of the moxlab source tree (compiled in; $MOXLAB_SOURCE_DIR overrides).
std::string source_dir();

}  // namespace moxlab
