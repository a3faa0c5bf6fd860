// Batch statistics over data-parallel ranks (core/model/batch_statistics.h), without a network: two
// "ranks" run in turn, each with a reducer that is handed the other's local statistics, and the mean of
// their gradients must equal the gradient of the same loss on the whole batch in one pass: a mean (the
// balance losses' shares), a product (ToMoE's union, Eq. 6, with exact zeros) and a maximum over rows
// (Eq. 8's widest token, tied across the ranks, where LibTorch splits the gradient over the ties).
#include "tests/torch_catch.h"

#include "core/model/batch_statistics.h"
#include "core/model/mohd/balance_loss.h"

using namespace moxlab;

namespace {

// Rank `rank` of 2; the other rank's local tensors, in the order this rank's calls will ask for them.
class TwoRankReducer : public BatchReducer {
 public:
  TwoRankReducer(int rank, std::vector<torch::Tensor> other) : rank_(rank), other_(std::move(other)) {}
  int rank() const override { return rank_; }
  int world() const override { return 2; }
  torch::Tensor sum(const torch::Tensor& local) override { return local + next(); }
  torch::Tensor max(const torch::Tensor& local) override { return torch::maximum(local, next()); }
  torch::Tensor gather(const torch::Tensor& local) override {
    const torch::Tensor o = next();
    return rank_ == 0 ? torch::stack({local, o}) : torch::stack({o, local});
  }

 private:
  torch::Tensor next() { return other_.at(calls_++); }
  int rank_;
  std::vector<torch::Tensor> other_;
  std::size_t calls_ = 0;
};

// Masks in [0, 1] of the rows of one rank from a shared parameter w.
torch::Tensor masks(const torch::Tensor& w, const torch::Tensor& data) { return torch::sigmoid(data * w); }

// A loss of the three kinds of statistic over masks [rows, 3] (straight-through 0/1 for the widest row).
torch::Tensor loss_of(const torch::Tensor& m) {
  const torch::Tensor mean = batch_mean(m.mean(0));                  // [3]
  const torch::Tensor uni = 1.0 - batch_product((1.0 - m).prod(0));  // [3]
  const torch::Tensor widest = batch_max_over_rows((m.round().detach() + m - m.detach()).sum(-1));  // kept per row
  return (mean * mean).sum() + torch::log(uni + 0.5).sum() + widest * widest;
}

}  // namespace

TEST_CASE("batch_mean, batch_product and batch_max_over_rows on two equal halves match one pass", "[model][distributed]") {
  const torch::Tensor d0 = torch::tensor({{2.0, -1.0, 0.5}, {1.0, 3.0, -2.0}});
  const torch::Tensor d1 = torch::tensor({{-1.5, 2.5, 1.0}, {0.5, 0.5, -4.0}});  // a widest row (3 kept) on each rank
  const torch::Tensor w0 = torch::tensor({0.8, 1.1, -0.6});

  auto w = w0.clone().requires_grad_(true);
  const torch::Tensor whole = loss_of(masks(w, torch::cat({d0, d1})));
  whole.backward();
  const torch::Tensor whole_grad = w.grad().clone();

  // What each rank's calls see from the other: its local statistics, and for the maximum's tie count
  // the other's number of rows at the global maximum.
  auto calls_of = [&](const torch::Tensor& d, const torch::Tensor& other_d) {
    const torch::Tensor m = masks(w0, d).detach(), om = masks(w0, other_d).detach();
    const torch::Tensor rows = m.round().sum(-1), other_rows = om.round().sum(-1);
    const torch::Tensor top = torch::maximum(rows.max(), other_rows.max());
    return std::vector<torch::Tensor>{om.mean(0), (1.0 - om).prod(0), other_rows.max(), (other_rows == top).to(torch::kFloat).sum()};
  };
  torch::Tensor grads = torch::zeros({3});
  for (int rank = 0; rank < 2; ++rank) {
    const torch::Tensor& mine = rank == 0 ? d0 : d1;
    const torch::Tensor& theirs = rank == 0 ? d1 : d0;
    TwoRankReducer reducer(rank, calls_of(mine, theirs));
    const BatchReducerScope scope(&reducer);
    auto wr = w0.clone().requires_grad_(true);
    const torch::Tensor l = loss_of(masks(wr, mine));
    INFO("rank " << rank);
    CHECK(l.item<double>() == Approx(whole.item<double>()).epsilon(1e-6));
    l.backward();
    grads += wr.grad() / 2.0;  // the trainer's gradient average
  }
  CHECK(torch::allclose(grads, whole_grad, 1e-5, 1e-7));
}

TEST_CASE("batch_product takes exact zeros and batch_max_over_rows splits its gradient over ties on both ranks",
          "[model][distributed]") {
  // Product: rank 0's local product is exactly 0 in column 0; the whole batch's gradient reaches rank
  // 1's factor through rank 0's zero (d/dq1 of q0 q1 = q0 = 0) and rank 0's through q1.
  auto q0 = torch::tensor({0.0, 0.5}).requires_grad_(true);
  auto q1 = torch::tensor({0.25, 0.4}).requires_grad_(true);
  {
    TwoRankReducer r0(0, {q1.detach()});
    const BatchReducerScope s(&r0);
    const torch::Tensor p = batch_product(q0);
    CHECK(torch::allclose(p.detach(), torch::tensor({0.0, 0.2})));
    p.sum().backward();
  }
  {
    TwoRankReducer r1(1, {q0.detach()});
    const BatchReducerScope s(&r1);
    batch_product(q1).sum().backward();
  }
  // Averaged over the ranks: d(q0 q1)/dq0 = q1, d/dq1 = q0 (each rank's gradient is twice its share).
  CHECK(torch::allclose(q0.grad() / 2.0, torch::tensor({0.25, 0.4})));
  CHECK(torch::allclose(q1.grad() / 2.0, torch::tensor({0.0, 0.5})));

  // Maximum: rows 3, 5, 5 on rank 0 and 5, 1 on rank 1: three tied rows, each 1/3 of the gradient.
  auto a = torch::tensor({3.0, 5.0, 5.0}).requires_grad_(true);
  auto b = torch::tensor({5.0, 1.0}).requires_grad_(true);
  {
    TwoRankReducer r0(0, {torch::tensor(5.0), torch::tensor(1.0)});
    const BatchReducerScope s(&r0);
    const torch::Tensor m = batch_max_over_rows(a);
    CHECK(m.item<double>() == 5.0);
    m.backward();
  }
  {
    TwoRankReducer r1(1, {torch::tensor(5.0), torch::tensor(2.0)});
    const BatchReducerScope s(&r1);
    batch_max_over_rows(b).backward();
  }
  CHECK(torch::allclose(a.grad() / 2.0, torch::tensor({0.0, 1.0 / 3, 1.0 / 3})));
  CHECK(torch::allclose(b.grad() / 2.0, torch::tensor({1.0 / 3, 0.0})));
  // One pass over all five rows, as LibTorch's max() splits it.
  auto all = torch::tensor({3.0, 5.0, 5.0, 5.0, 1.0}).requires_grad_(true);
  all.max().backward();
  CHECK(torch::allclose(all.grad(), torch::tensor({0.0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0})));
}

TEST_CASE("Without a reducer the batch statistics are the local ones, and the MoHD balance loss is unchanged", "[model]") {
  const torch::Tensor x = torch::tensor({{0.2, 0.7, 0.1}, {0.6, 0.1, 0.3}});
  CHECK(torch::equal(batch_mean(x.mean(0)), x.mean(0)));
  CHECK(torch::equal(batch_product(x.prod(0)), x.prod(0)));
  CHECK(torch::equal(batch_max_over_rows(x.sum(-1)), x.sum(-1).max()));
  // Eq. 13 by hand: one shared column, two specialised; P = mean of s / sum s over the specialised.
  // Row 1: (0.7, 0.1) / 0.8 = (0.875, 0.125); row 2: (0.1, 0.3) / 0.4 = (0.25, 0.75); P = (0.5625, 0.4375);
  // f = (1/2, 1/2) (top: column 1, then column 2); L = beta (0.5625 + 0.4375) / 2 = 0.5 beta.
  CHECK(sub_dim_balance_loss(x, 1, 2.0).item<double>() == Approx(1.0));
}
