// The header precompiled for the LibTorch targets (cmake/torch_pch.cmake). LibTorch brings glog's CHECK
// macros, which no moxlab code uses and which would collide with Catch2's in the tests that include both.
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
