// Values from the command line: --set key=value on a training script's hyperparameters (nested
// tables included) and --set/--var on a benchmark sweep's parameters and variables.
#include <string>
#include <vector>

#include "engine/bench/parameters.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/bench/value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

const std::string& script_path() {
  static const std::string path = [] {
    const auto p = engine::fuzz::scratch_dir() + "/overrides.lua";
    const std::string text =
        "local nn, optim, data, torch = require 'nn', require 'optim', require 'data', "
        "require 'torch'\n"
        "return {\n"
        "  hparams = {lr = 0.1, batch = 4, name = 'x', shuffle = true,\n"
        "             optimizer = {momentum = 0.9, nesterov = false, inner = {eps = 1e-8}}},\n"
        "  model = nn.Linear(4, 2),\n"
        "  data = function(h) return {train = data.tensors{input = torch.randn(8, 4), "
        "target = torch.ones(8):long()}:batch(h.batch)} end,\n"
        "  loss = nn.CrossEntropyLoss(),\n"
        "  optimizer = function(p, h) return optim.SGD(p, {lr = h.lr, momentum = "
        "h.optimizer.momentum}) end,\n"
        "}\n";
    engine::fuzz::write_file(p, text.data(), text.size());
    return p;
  }();
  return path;
}

}  // namespace

ENGINE_FUZZ_TARGET(overrides) {
  engine::fuzz::Bytes in(data, size);
  const bool sweep = in.flag();
  std::vector<std::string> assignments;
  while (in.left() > 0 && assignments.size() < 4) assignments.push_back(in.text(64));
  if (sweep) {
    engine::bench::SweepSpec spec;
    spec.parameters["model"] = engine::bench::Value(std::string("mlp"));
    spec.variables["batch_size"] = {int64_t{1}, int64_t{2}};
    engine::bench::Overrides overrides;
    for (size_t i = 0; i < assignments.size(); ++i) {
      (void)engine::bench::parse_value(assignments[i]);
      const auto pair = engine::bench::split_assignment(assignments[i], i % 2 ? "--var" : "--set");
      (i % 2 ? overrides.var : overrides.set).push_back(pair);
    }
    (void)engine::bench::expand(spec, engine::bench::point_schema(), overrides);
    return;
  }
  engine::lua::Runtime runtime;
  engine::lua::TrainScript script(runtime, script_path());
  script.apply_overrides(assignments);
  (void)script.hparams();
  (void)script.build(torch::kCPU, 1);
}
