#include "core/common/build_revision.h"

#include "moxlab_git_revision.h"  // generated into the build tree

namespace moxlab {

std::string build_git_revision() { return MOXLAB_GIT_REVISION; }

}  // namespace moxlab
