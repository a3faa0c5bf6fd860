// The git revision this binary was built from, captured at build time by cmake/git_revision.cmake
// ("+dirty" when tracked files differed from HEAD, "unknown" outside a checkout). Runs record what
// produced them, not the state the source tree happens to be in when they run.
#pragma once
#include <string>

namespace moxlab {

std::string build_git_revision();

}  // namespace moxlab
