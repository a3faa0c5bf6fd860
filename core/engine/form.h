// Which form the method modules compute in. Reference: the dense-compute forms the paper equations are
// written in (masks and zero gates: core/model); sparse: the gathered forms of kernels/sparse, which skip
// what a token does not use and equal the reference to rounding (gradients included). Automatic: the
// sparse form where the module's rule says it wins, for inference and for training separately (each plan
// states its rule), without recorded taps (taps record the reference form's tensors).
// docs/decisions/2026-11-25-sparse-forms-and-model-kernels.md has the measurements behind these defaults.
#pragma once
#include <string>

namespace moxlab {

enum class Form { automatic, reference, sparse };
// "automatic" | "reference" | "sparse" (execution.form; the config checks the name).
inline Form form_from_name(const std::string& name) {
  return name == "reference" ? Form::reference : name == "sparse" ? Form::sparse : Form::automatic;
}

}  // namespace moxlab
