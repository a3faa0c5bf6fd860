// Include this instead of <catch2/catch.hpp> in tests that use LibTorch: Debian's LibTorch is built
// with glog, whose CHECK macros would silently replace Catch2's if torch headers came second (the
// assertions then abort instead of being reported). Torch first, Catch2 last, so Catch2's win.
#pragma once
#include <torch/torch.h>
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE
#undef CHECK_NOTNULL
#include <catch2/catch.hpp>
