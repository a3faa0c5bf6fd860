// Include this instead of <catch2/catch.hpp> in tests that use LibTorch: Debian's LibTorch is built
// with glog, whose CHECK macros would silently replace Catch2's if torch headers came second (the
// assertions then abort instead of being reported). Torch first without those macros (the header every
// LibTorch target precompiles), Catch2 last, so Catch2's win.
#pragma once
#include "cmake/torch_pch.h"

#include <catch2/catch.hpp>
