// A model written in Lua under cuda_graphs, through core::CudaGraph's CPU stand-in: the result
// of a Lua forward that the trainer takes keeps no autograd graph in Lua (which held the
// parameters' gradient accumulators from the eager steps into the recording: CUDA refused to
// record ResNet-50), and what a script itself keeps is named before recording.
#include <doctest/doctest.h>

#include <torch/csrc/autograd/variable.h>

#include <cstdlib>
#include <fstream>

#include "engine/core/errors.hpp"
#include "engine/core/seed.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "engine/train/trainer.hpp"
#include "tests/test_support.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;

namespace {

// A script over in-memory images of 3x8x8 in 4 classes, batches of 8, with `model` and SGD with
// momentum (an optimizer a graph records).
std::string image_script(const std::string& name, const std::string& preamble,
                         const std::string& model) {
  const std::string path = test::scratch_dir("lua-model-graphs") + "/" + name + ".lua";
  std::ofstream(path) << "local nn, optim, data, torch = require 'nn', require 'optim', "
                         "require 'data', require 'torch'\n"
                      << preamble
                      << "\nreturn {\n"
                         "  model = "
                      << model
                      << ",\n"
                         "  data = function()\n"
                         "    return {train = data.tensors{input = torch.randn(48, 3, 8, 8),\n"
                         "      target = torch.arange(48):remainder(4):long() + 1}:batch(8)}\n"
                         "  end,\n"
                         "  loss = nn.CrossEntropyLoss(),\n"
                         "  optimizer = function(params) return optim.SGD(params, {lr = 0.05, "
                         "momentum = 0.9}) end,\n"
                         "}\n";
  return path;
}

std::string resnet_script() {
  return image_script("resnet", "local resnet = require 'resnet_cifar'",
                      "resnet.resnet20_cifar{num_classes = 4}");
}

lua::RuntimeOptions with_modules() {
  lua::RuntimeOptions options;
  const char* source = std::getenv("ENGINE_SOURCE_DIR");
  REQUIRE(source);
  options.package_dirs.push_back(std::string(source) + "/modules");
  return options;
}

// The parameters whose gradient accumulator something still holds (through an autograd graph).
std::vector<std::string> held_accumulators(const train::TrainSpec& spec) {
  std::vector<std::string> held;
  for (const auto& item : spec.model.module->named_parameters()) {
    if (torch::autograd::impl::try_get_grad_accumulator(item.value())) held.push_back(item.key());
  }
  return held;
}

}  // namespace

TEST_CASE("after an eager step of a model written in Lua, Lua holds none of its graph") {
  lua::Runtime runtime(with_modules());
  lua::TrainScript script(runtime, resnet_script());
  auto spec = script.build(torch::kCPU, 1);
  spec.options.steps = 2;
  spec.options.epochs = 0;
  train::Trainer(spec, {}).run();
  // no collection has run: the forward's result box in Lua kept the whole graph until one did
  CHECK(held_accumulators(spec).empty());
}

TEST_CASE("resnet_cifar, written in Lua, records as a CUDA graph and replays the eager run") {
  auto run = [](bool graphs) {
    lua::Runtime runtime(with_modules());
    core::seed_everything(1);  // the same weights and data in both runs
    lua::TrainScript script(runtime, resnet_script());
    auto spec = script.build(torch::kCPU, 1);
    spec.options.epochs = 2;  // 6 batches an epoch: 3 eager steps, then replays
    spec.options.log_every = 1;
    spec.options.cuda_graphs = graphs;
    spec.options.cuda_graphs_stand_in = graphs;
    test::Recorder recorder;
    train::Trainer(spec, {&recorder}).run();
    return std::make_pair(recorder.series(), test::all_weights(spec));
  };
  const auto [eager, eager_weights] = run(false);
  const auto [graphed, graphed_weights] = run(true);
  REQUIRE(eager.size() == 12);  // a train row a step
  CHECK((eager == graphed));
  CHECK(torch::equal(eager_weights, graphed_weights));
}

TEST_CASE("a forward that keeps a tensor with its graph is refused before recording, by name") {
  // the classic mistake of a recurrent model: the last hidden state kept without :detach()
  const auto path = image_script("keeps", R"(
local Keeps = nn.Module:extend('KeepsHidden')
function Keeps:init() self.fc = nn.Linear(192, 4) end
function Keeps:forward(x)
  local out = self.fc(x:flatten(2))
  self.hidden = out * 1
  return out
end)",
                                 "Keeps()");
  lua::Runtime runtime(with_modules());
  lua::TrainScript script(runtime, path);
  auto spec = script.build(torch::kCPU, 1);
  spec.options.cuda_graphs = true;
  spec.options.cuda_graphs_stand_in = true;
  CHECK_THROWS_WITH_AS(
      train::Trainer(spec, {}).run(),
      doctest::Contains("cuda_graphs cannot record the step: 2 parameters (fc.weight, fc.bias) "
                        "still have the autograd graph of an earlier step"),
      core::UsageError);
}
