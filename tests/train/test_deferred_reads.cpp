// Deferred reads (TrainerOptions::deferred_reads, the default on CUDA) run here on the CPU:
// the loss and metrics stay tensors until a log step, a checkpoint or an epoch's end reads
// them in one copy. The series must be the ones per-step reads give, bit for bit.
#include <doctest/doctest.h>

#include <limits>

#include "engine/core/errors.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::blob_spec;
using engine::test::Recorder;

namespace {

// One run's rows and the weights it ends with.
std::pair<Recorder, torch::Tensor> run_blobs(bool deferred, int64_t accumulate = 1) {
  auto spec = blob_spec(11);  // accuracy and top2: counts read later, divided as before
  spec.options.deferred_reads = deferred;
  spec.options.accumulate = accumulate;
  Recorder recorder;
  train::Trainer(spec, {&recorder}).run();
  return {recorder, engine::test::all_weights(spec)};
}

}  // namespace

TEST_CASE("deferred reads give the per-step reads' series and weights, bit for bit") {
  for (const int64_t accumulate : {1, 3}) {
    CAPTURE(accumulate);
    const auto [eager, eager_weights] = run_blobs(false, accumulate);
    const auto [deferred, deferred_weights] = run_blobs(true, accumulate);
    REQUIRE(eager.series().size() > 5);
    CHECK((eager.series() == deferred.series()));  // every value compared exactly
    CHECK(torch::equal(eager_weights, deferred_weights));
    REQUIRE(eager.epochs.size() == deferred.epochs.size());
    for (size_t i = 0; i < eager.epochs.size(); ++i) {
      CHECK((eager.epochs[i].train == deferred.epochs[i].train));
      CHECK((eager.epochs[i].validation == deferred.epochs[i].validation));
    }
  }
}

TEST_CASE("read_pending reads what measure reads, for every kind of value") {
  train::MetricAccumulator metrics({"accuracy", "top2"});
  torch::manual_seed(5);
  const auto output = torch::randn({9, 4}).log_softmax(1);
  const auto target = torch::tensor({0, 1, 2, 3, 0, 1, 2, 3, 0}, torch::kInt64);
  const auto loss = torch::nll_loss(output, target);
  const std::map<std::string, double> logged = {{"extra", 0.25}};
  auto now = metrics.measure({{"loss", loss.item<double>()}, {"extra", 0.25}}, output, target, 9);
  std::vector<train::PendingBatch> pending = {
      metrics.measure_pending(loss, logged, output, target, 9)};
  const auto later = train::read_pending(pending);
  REQUIRE(later.size() == 1);
  CHECK(later[0].samples == 9);
  CHECK((later[0].means == now.means));
  // a loss per sample is read as its sum, as the per-step read takes it
  const auto per_sample = torch::nll_loss(output, target, {}, at::Reduction::None);
  pending = {metrics.measure_pending(per_sample, {}, torch::Tensor(), torch::Tensor(), 9)};
  CHECK(train::read_pending(pending)[0].means.at("loss") == per_sample.sum().item<double>());
  CHECK(train::read_pending({}).empty());
}

TEST_CASE("a non-finite loss read late still ends the run, naming its step") {
  auto spec = blob_spec(2);
  spec.options.deferred_reads = true;
  spec.options.log_every = 5;
  spec.optimizer = std::make_shared<torch::optim::SGD>(spec.model.module->parameters(),
                                                       torch::optim::SGDOptions(1e30));
  Recorder recorder;
  train::Trainer trainer(spec, {&recorder});
  try {
    trainer.run();
    FAIL("expected a TrainingError");
  } catch (const core::TrainingError& e) {
    const std::string what = e.what();
    CHECK(what.find("the loss is ") != std::string::npos);
    CHECK(what.find(" at step ") != std::string::npos);
    CHECK(what.find("read at step 5") != std::string::npos);  // the first log step
    CHECK(what.find("on_nan = 'skip'") != std::string::npos);
  }
}
