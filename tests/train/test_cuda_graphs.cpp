// cuda_graphs' bookkeeping on the CPU, through core::CudaGraph's stand-in (a replay runs the
// recorded step again): warm-up steps, the static batch each batch is copied into, the loss
// copied out of it, a last smaller batch run eagerly, a new learning rate recorded again,
// Adadelta's step counts. The series must be the eager run's, bit for bit. On a GPU,
// test_gpu compares a recorded run with an eager one.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/core/errors.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/scheduler.hpp"
#include "engine/train/sgd.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::blob_spec;
using engine::test::Recorder;

namespace {

// blobs in batches of 30 (the epoch's last one 16), an epoch schedule that changes the rate
// every epoch, SGD with momentum or Adadelta
train::TrainSpec graph_spec(bool adadelta) {
  auto spec = blob_spec(21, 0, false, 30);
  auto params = spec.model.module->parameters();
  if (adadelta) {
    spec.optimizer = std::make_shared<train::Adadelta>(params, train::AdadeltaOptions(1.0));
    spec.optimizer_name = "Adadelta";
  } else {
    spec.optimizer = std::make_shared<train::FusedSGD>(
        params, torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
  }
  spec.scheduler = std::make_shared<train::ClosedFormLR>(spec.optimizer, train::step_rate(1, 0.7),
                                                         train::StepMode::kEpoch, "StepLR");
  spec.options.deferred_reads = true;
  return spec;
}

std::pair<Recorder, torch::Tensor> run_graph_spec(bool adadelta, bool graphs) {
  auto spec = graph_spec(adadelta);
  spec.options.cuda_graphs = graphs;
  spec.options.cuda_graphs_stand_in = graphs;
  Recorder recorder;
  train::Trainer(spec, {&recorder}).run();
  auto weights = engine::test::all_weights(spec);
  if (adadelta) {  // every parameter stepped once a batch, recorded steps counted too
    for (auto& [key, state] : spec.optimizer->state()) {
      CHECK(static_cast<train::AdadeltaParamState&>(*state).step() == 4 * 9);
    }
  }
  return {recorder, weights};
}

}  // namespace

TEST_CASE("a recorded step replays the eager run's series, bit for bit") {
  for (const bool adadelta : {false, true}) {
    CAPTURE(adadelta);
    const auto [eager, eager_weights] = run_graph_spec(adadelta, false);
    const auto [graphed, graphed_weights] = run_graph_spec(adadelta, true);
    REQUIRE(eager.series().size() > 10);
    CHECK((eager.series() == graphed.series()));
    CHECK(torch::equal(eager_weights, graphed_weights));
  }
}

TEST_CASE("the loss scaler recorded in the graph skips, backs off and grows as the eager one") {
  // bfloat16 with loss scaling forced on (float16 itself needs CUDA): a scale so large that the
  // first steps overflow and back off, and growth every 4 good steps
  auto run = [](bool graphs) {
    auto spec = graph_spec(false);
    spec.options.precision = train::Precision::kBFloat16;
    spec.options.loss_scale.enabled = true;
    spec.options.loss_scale.init_scale = std::ldexp(1.0, 127);
    // inputs ten times larger: the first layer's scaled gradients overflow float32
    spec.scheduler = nullptr;
    spec.optimizer->param_groups()[0].options().set_lr(0.005);
    auto forward = spec.model.forward;
    spec.model.forward = [forward](const torch::Tensor& x) { return forward(x * 10); };
    spec.options.loss_scale.growth_interval = 4;
    spec.options.cuda_graphs = graphs;
    spec.options.cuda_graphs_stand_in = graphs;
    Recorder recorder;
    train::Trainer(spec, {&recorder}).run();
    return std::make_tuple(recorder.series(), engine::test::all_weights(spec),
                           recorder.data_values("overflow_skipped_steps"));
  };
  const auto [eager, eager_weights, eager_skipped] = run(false);
  const auto [graphed, graphed_weights, graphed_skipped] = run(true);
  REQUIRE(eager.size() > 10);
  CHECK((eager == graphed));  // loss_scale is in every train row
  CHECK(torch::equal(eager_weights, graphed_weights));
  CHECK(eager_skipped == graphed_skipped);
  REQUIRE(!eager_skipped.empty());
  CHECK(eager_skipped[0] > 0);  // the case did overflow
  double scales_seen = 0;
  for (const auto& row : eager) scales_seen += std::get<3>(row).count("loss_scale");
  CHECK(scales_seen > 0);
}

TEST_CASE("cuda_graphs refuses what it cannot record, saying why") {
  auto refused = [](const std::function<void(train::TrainSpec&)>& change, const char* why) {
    auto spec = graph_spec(false);
    spec.options.cuda_graphs = true;
    spec.options.cuda_graphs_stand_in = true;
    change(spec);
    CAPTURE(why);
    try {
      train::Trainer trainer(spec, {});
      FAIL("expected a UsageError");
    } catch (const core::UsageError& e) {
      const std::string what = e.what();
      CHECK(what.find("cuda_graphs cannot record this run's step") != std::string::npos);
      CHECK(what.find(why) != std::string::npos);
    }
  };
  refused([](train::TrainSpec& s) { s.options.cuda_graphs_stand_in = false; },
          "it needs a CUDA device (--device cuda), not cpu");
  refused([](train::TrainSpec& s) { s.options.clip_grad_norm = 1; }, "gradient clipping");
  refused([](train::TrainSpec& s) { s.options.accumulate = 2; }, "accumulate > 1");
  refused([](train::TrainSpec& s) { s.options.on_nan = train::NanPolicy::kSkip; },
          "on_nan = 'skip'");
  refused(
      [](train::TrainSpec& s) {
        s.optimizer = std::make_shared<torch::optim::Adam>(s.model.module->parameters());
        s.optimizer_name = "Adam";
        s.scheduler = nullptr;
      },
      "Adam is not one of the engine's multi-tensor optimizers a graph can record");
  refused(
      [](train::TrainSpec& s) {
        s.scheduler = std::make_shared<train::ClosedFormLR>(s.optimizer, train::step_rate(1, 0.7),
                                                            train::StepMode::kStep, "StepLR");
      },
      "a per-step schedule");
}
