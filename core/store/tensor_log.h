// The tensor log: one HDF5 file per capture (DESIGN.md, "Tensor log"), written by TensorLogWriter
// and read by TensorLogReader (and h5py). This header pulls in both. The capture layout itself
// (/probes/<tap>, /tokens, /domain, /text/..., root attributes run_id and config) belongs to the
// capture code and is documented in core/capture/capture.h; this module stays layout-agnostic.
#pragma once

#include "core/store/tensor_dtype.h"
#include "core/store/tensor_log_reader.h"
#include "core/store/tensor_log_writer.h"
