// The trainer over a distributed::Group of two ranks (one thread each, loopback Gloo) against one
// process: the same global batches, so the same metric series and weights up to rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <thread>

#include "engine/distributed/group.hpp"
#include "engine/distributed/launcher.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::all_weights;
using engine::test::blob_spec;
using engine::test::Recorder;

namespace {

distributed::World rank_of_two(int rank, int port) {
  distributed::World w;
  w.rank = w.local_rank = rank;
  w.size = w.local_size = 2;
  w.master_port = port;
  w.timeout = std::chrono::milliseconds(30000);
  return w;
}

// Runs body(group, rank) for ranks 0 and 1 of one group, on two threads; returns what each
// threw ("" when nothing).
std::vector<std::string> on_two_ranks(const std::function<void(distributed::Group&, int)>& body) {
  std::vector<std::string> errors(2);
  const int port = distributed::free_port();
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        distributed::Group group(rank_of_two(r, port), torch::kCPU);
        body(group, r);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

std::vector<std::string> train_on_two_ranks(train::TrainSpec (&specs)[2], Recorder (&ranks)[2]) {
  return on_two_ranks([&](distributed::Group& group, int r) {
    train::Trainer(specs[r], {&ranks[r]}, {}, &group).run();
  });
}

void check_close(const Recorder& a, const Recorder& b) {
  const auto x = a.series(), y = b.series();
  REQUIRE(x.size() == y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(std::get<0>(x[i]) == std::get<0>(y[i]));
    CHECK(std::get<1>(x[i]) == std::get<1>(y[i]));
    for (const auto& [name, value] : std::get<3>(x[i])) {
      INFO(std::get<0>(x[i]), " step ", std::get<1>(x[i]), " ", name);
      REQUIRE(std::get<3>(y[i]).count(name) == 1);
      CHECK(std::get<3>(y[i]).at(name) == doctest::Approx(value).epsilon(1e-5));
    }
  }
}

}  // namespace

TEST_CASE("two ranks with half of each batch train as one process does") {
  for (const int64_t accumulate : {1, 3}) {
    CAPTURE(accumulate);
    auto whole = blob_spec(7);
    whole.options.accumulate = accumulate;
    Recorder one;
    train::Trainer(whole, {&one}).run();

    train::TrainSpec specs[2] = {blob_spec(7), blob_spec(7)};
    for (auto& spec : specs) spec.options.accumulate = accumulate;
    Recorder ranks[2];
    const auto errors = train_on_two_ranks(specs, ranks);
    CHECK(errors[0] == "");
    CHECK(errors[1] == "");
    CHECK(specs[0].train_data->batch_size() == 16);  // the global batch of 32, halved
    check_close(one, ranks[0]);
    check_close(one, ranks[1]);
    CHECK(torch::equal(all_weights(specs[0]), all_weights(specs[1])));
    CHECK(torch::allclose(all_weights(whole), all_weights(specs[0]), 1e-4, 1e-5));
  }
}

namespace {

torch::Tensor all_buffers(const train::TrainSpec& spec) {
  std::vector<torch::Tensor> parts;
  for (const auto& b : spec.model.module->buffers())
    parts.push_back(b.to(torch::kDouble).reshape(-1));
  return torch::cat(parts);
}

}  // namespace

TEST_CASE(
    "sync_batchnorm: two ranks with BatchNorm train as one process does, and without it not") {
  auto whole = blob_spec(11, 0, false, 32, /*batchnorm=*/true);
  Recorder one;
  train::Trainer(whole, {&one}).run();

  for (const bool sync : {true, false}) {
    CAPTURE(sync);
    train::TrainSpec specs[2] = {blob_spec(11, 0, false, 32, true),
                                 blob_spec(11, 0, false, 32, true)};
    for (auto& spec : specs) spec.options.sync_batchnorm = sync;
    Recorder ranks[2];
    const auto errors = train_on_two_ranks(specs, ranks);
    CHECK(errors[0] == "");
    CHECK(errors[1] == "");
    CHECK(torch::equal(all_weights(specs[0]), all_weights(specs[1])));
    if (sync) {
      check_close(one, ranks[0]);
      CHECK(torch::allclose(all_weights(whole), all_weights(specs[0]), 1e-4, 1e-5));
      CHECK(torch::allclose(all_buffers(whole), all_buffers(specs[0]), 1e-4, 1e-5));
    } else {
      // each rank normalised its half with its own statistics
      CHECK_FALSE(torch::allclose(all_weights(whole), all_weights(specs[0]), 1e-4, 1e-5));
    }
  }
}

TEST_CASE("SyncBatchNorm's gradients over two ranks are those of the whole batch") {
  torch::manual_seed(5);
  const auto x = torch::randn({6, 3, 2, 2}) * 2 + 0.5;
  const auto weights = torch::randn({6, 3, 2, 2});
  nn::BatchNorm reference(nn::BatchNormKind::k2d, torch::nn::BatchNormOptions(3));
  const auto whole_input = x.clone().requires_grad_();
  const auto whole_output = reference->forward(whole_input);
  (whole_output * weights).sum().backward();

  torch::Tensor outputs[2], input_grads[2], weight_grads[2], running_vars[2];
  const auto errors = on_two_ranks([&](distributed::Group& group, int r) {
    nn::BatchNorm bn(nn::BatchNormKind::kSync, torch::nn::BatchNormOptions(3));
    bn->synchronise({r, 2, [&group](torch::Tensor& t) { group.all_reduce(t); }});
    // unequal shares: 2 samples on rank 0, 4 on rank 1
    const int64_t start = r == 0 ? 0 : 2, length = r == 0 ? 2 : 4;
    const auto input = x.narrow(0, start, length).clone().requires_grad_();
    outputs[r] = bn->forward(input);
    (outputs[r] * weights.narrow(0, start, length)).sum().backward();
    input_grads[r] = input.grad();
    weight_grads[r] = bn->weight.grad();
    running_vars[r] = bn->running_var.clone();
  });
  REQUIRE(errors[0] == "");
  REQUIRE(errors[1] == "");
  CHECK(torch::allclose(torch::cat({outputs[0], outputs[1]}), whole_output, 1e-5, 1e-6));
  CHECK(torch::allclose(torch::cat({input_grads[0], input_grads[1]}), whole_input.grad(), 1e-4,
                        1e-5));
  // each rank holds its share of the weight's gradient; the Reducer would sum (and average) them
  CHECK(torch::allclose(weight_grads[0] + weight_grads[1], reference->weight.grad(), 1e-4, 1e-5));
  CHECK(torch::allclose(running_vars[0], reference->running_var, 1e-5, 1e-6));
  CHECK(torch::allclose(running_vars[1], reference->running_var, 1e-5, 1e-6));
}

TEST_CASE("with SyncBatchNorm, a NaN loss on one rank makes every rank skip that batch") {
  train::TrainSpec specs[2] = {blob_spec(11, 0, false, 32, true),
                               blob_spec(11, 0, false, 32, true)};
  for (int r = 0; r < 2; ++r) {
    auto& spec = specs[r];
    spec.options.sync_batchnorm = true;
    spec.options.on_nan = train::NanPolicy::kSkip;
    spec.options.epochs = 1;
    spec.hooks.train_batch = [&spec, r](train::StepContext& ctx, const data::Batch& batch) {
      auto loss = (*spec.loss)(spec.model.forward(batch.input), batch.target);
      if (r == 1 && ctx.step_index() == 2) loss = loss * std::nan("");
      ctx.backward(loss);
      ctx.step();
      return train::BatchResult{{{"loss", loss.item<double>()}}, {}};
    };
  }
  Recorder ranks[2];
  const auto errors = train_on_two_ranks(specs, ranks);
  CHECK(errors[0] == "");  // not a hang, nor a failed all-reduce
  CHECK(errors[1] == "");
  REQUIRE(ranks[0].epochs.size() == 1);
  CHECK(ranks[0].epochs[0].nan_skipped == 1);  // the finite rank skipped it too
  CHECK(torch::equal(all_weights(specs[0]), all_weights(specs[1])));
}
