// Statistics the papers define over the whole training batch: the token shares and mean router scores of
// the balance losses (MoHD Eq. 13, MoH Eq. 7, ToMoE Eq. 9), ToMoE's union over tokens (Eq. 6) and its
// widest token (Eq. 8). In a data-parallel run each rank holds a slice of the batch, so each statistic is
// combined over the ranks by a BatchReducer that the trainer installs for the forward and backward of its
// micro-steps (core/train/trainer.cpp, over core/distributed/data_parallel.h). Without one (one process,
// evaluation) every function is the local statistic itself, unchanged.
//
// Each combined statistic S keeps the value of the whole batch and carries to this rank's slice the
// gradient that the whole-batch loss sends it, times the world size R: the trainer averages gradients
// over the ranks (dividing by R), so the step equals one process's on the whole batch. For S = mean of
// the ranks' means m_r: dS/dm_r = 1/R, so S = m_r + (S - m_r) with the bracket detached.
#pragma once
#include <torch/torch.h>

namespace moxlab {

// The ranks' collectives on detached tensors (every rank calls them in the same order, same shapes).
class BatchReducer {
 public:
  virtual ~BatchReducer() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  virtual torch::Tensor sum(const torch::Tensor& local) = 0;     // elementwise sum over the ranks
  virtual torch::Tensor max(const torch::Tensor& local) = 0;     // elementwise maximum over the ranks
  virtual torch::Tensor gather(const torch::Tensor& local) = 0;  // [world, local's shape], in rank order
};

namespace detail {
inline thread_local BatchReducer* t_batch_reducer = nullptr;
}

inline BatchReducer* batch_reducer() { return detail::t_batch_reducer; }

// Installs a reducer for this thread while in scope (the trainer's micro-steps).
class BatchReducerScope {
 public:
  explicit BatchReducerScope(BatchReducer* r) : previous_(detail::t_batch_reducer) { detail::t_batch_reducer = r; }
  ~BatchReducerScope() { detail::t_batch_reducer = previous_; }
  BatchReducerScope(const BatchReducerScope&) = delete;
  BatchReducerScope& operator=(const BatchReducerScope&) = delete;

 private:
  BatchReducer* previous_;
};

// local_mean: a mean over this rank's tokens (every rank has as many). The batch's mean.
inline torch::Tensor batch_mean(const torch::Tensor& local_mean) {
  BatchReducer* r = batch_reducer();
  if (r == nullptr) return local_mean;
  const torch::Tensor local = local_mean.detach();
  return local_mean + (r->sum(local) / static_cast<double>(r->world()) - local);
}

// local_product: a product over this rank's tokens (e.g. prod (1 - s) of Eq. 6). The batch's product
// Q = prod_r q_r; rank r's gradient R * prod_{q != r} q_q (no division, so exact zeros are fine).
inline torch::Tensor batch_product(const torch::Tensor& local_product) {
  BatchReducer* r = batch_reducer();
  if (r == nullptr) return local_product;
  const torch::Tensor local = local_product.detach();
  const torch::Tensor all = r->gather(local);  // [R, ...]
  torch::Tensor whole = torch::ones_like(local), others = torch::ones_like(local);
  for (int q = 0; q < r->world(); ++q) {
    whole = whole * all[q];
    if (q != r->rank()) others = others * all[q];
  }
  return whole + static_cast<double>(r->world()) * others * (local_product - local);
}

// rows: one value per row of this rank's tokens ([rows]). The batch's maximum, with the gradient split
// evenly over every row that attains it on any rank, as LibTorch's max() splits it over ties.
inline torch::Tensor batch_max_over_rows(const torch::Tensor& rows) {
  BatchReducer* r = batch_reducer();
  if (r == nullptr) return rows.max();
  const torch::Tensor local = rows.detach();
  const torch::Tensor top = r->max(local.max());
  const torch::Tensor tied = (local == top).to(rows.dtype());
  const torch::Tensor ties = r->sum(tied.sum());  // >= 1: some rank holds the maximum
  return top + (static_cast<double>(r->world()) / ties) * ((rows - local) * tied).sum();
}

}  // namespace moxlab
