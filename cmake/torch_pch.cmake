# <torch/torch.h> precompiled once per target instead of parsed by every translation unit that includes it
# (parsing it is most of a torch-including unit's compile time). One header per target, not REUSE_FROM:
# GCC only takes a precompiled header built with the same definitions and options (-fopenmp, -D...), and
# the targets differ in those.
option(MOXLAB_TORCH_PCH "Precompile <torch/torch.h> for the LibTorch targets" ON)

function(moxlab_torch_pch target)
  if(MOXLAB_TORCH_PCH)
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/torch_pch.h)
  endif()
endfunction()
