// Data-parallel training on LibTorch's c10d with Gloo (no home-made communication): every rank holds
// the whole model; rank 0's parameters are broadcast at the start; after each backward pass the
// gradients are averaged over the ranks, so N ranks with micro-batch B take the steps of one process
// with micro-batch N x B. Debian's LibTorch cannot include DDP's reducer.hpp, so the gradients are
// all-reduced here the way it does: flattened into buckets of one dtype, one allreduce per bucket,
// divided by the world size after wait(), copied back.
// The c10d headers (and USE_C10D_GLOO, which libgloo-dev's headers need) stay inside data_parallel.cpp.
// Backends: Gloo (CPU tensors; this machine's). NCCL (CUDA tensors) is the same code over c10d's
// ProcessGroupNCCL, compiled only where LibTorch has it (USE_C10D_NCCL); a CPU build names the problem.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/distributed/rank_env.h"
#include "core/model/batch_statistics.h"

namespace moxlab {

// It is also the BatchReducer of the batch statistics (core/model/batch_statistics.h) of its ranks.
class DataParallelGroup : public BatchReducer {
 public:
  // Joins the group env.rendezvous names (waits up to `timeout` for the other ranks; a collective waits
  // as long, as PyTorch's default of 30 minutes: rank 0 validates and checkpoints while the others wait).
  // Gloo on the interface GLOO_SOCKET_IFNAME names, else the host name's address; one thread per collective.
  // backend: "gloo", or "nccl" (each rank on the CUDA device LOCAL_RANK selects).
  explicit DataParallelGroup(const RankEnv& env, const std::string& backend = "gloo",
                             std::chrono::milliseconds timeout = std::chrono::minutes(30));
  ~DataParallelGroup();
  DataParallelGroup(const DataParallelGroup&) = delete;
  DataParallelGroup& operator=(const DataParallelGroup&) = delete;

  int rank() const override;
  int world() const override;

  // Every tensor takes rank 0's values, in place (parameters and buffers at the start of a run).
  void broadcast(const std::vector<torch::Tensor>& tensors);
  // Each parameter's gradient becomes its mean over the ranks, in place. A parameter whose gradient is
  // undefined on this rank (an expert, head or sub-dimension no token reached) takes part with zeros
  // and leaves with the mean, so all ranks always reduce the same tensors and step the same.
  void average_gradients(const std::vector<torch::Tensor>& parameters);
  // Sums the values over the ranks, in place (the logged means of a step, the stop requests).
  void sum(std::vector<double>& values);
  // Every rank takes rank 0's bytes (a checkpoint to resume from, the config hash to check).
  void broadcast(std::string& bytes);
  // BatchReducer: on detached tensors.
  torch::Tensor sum(const torch::Tensor& local) override;
  torch::Tensor max(const torch::Tensor& local) override;
  torch::Tensor gather(const torch::Tensor& local) override;
  // Seconds spent in collectives so far (for the communication share of a step).
  double communication_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moxlab
