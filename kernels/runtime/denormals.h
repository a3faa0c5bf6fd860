// Denormal floats (magnitude below 1.2e-38) in CPU arithmetic: flushed to zero, or kept as IEEE 754 asks.
// x86 cores compute on denormal operands through a microcode assist tens of times slower than a normal
// operation. A model's activations and gradients reach that range once training pushes logits far
// apart (an attention softmax's exp(-100) is 4e-44), and then a whole training step slows several-fold
// (docs/decisions/2026-11-28-flush-denormals.md). Flushing changes only values below 1.2e-38, so results
// agree to rounding; `execution.denormals` chooses per run, and moxlab processes flush by default.
#pragma once

namespace moxlab {

// Sets flush-to-zero and denormals-are-zero (flush = true) or clears both, on the calling thread and on
// each of LibTorch's intra-op workers (at::get_num_threads(); call it after set_torch_threads). Threads
// started later inherit the calling thread's mode. False when the CPU has no such mode (then nothing
// changes).
bool set_flush_denormals(bool flush);

}  // namespace moxlab
