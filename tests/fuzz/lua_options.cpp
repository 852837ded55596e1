// The Lua option readers: training scripts whose hparams, optimizer, scheduler, trainer, metrics
// and searcher tables, and benchmark sweeps whose parameters, variables, order, extensions and
// conditions, hold values of every kind (wrong types, NaN, huge numbers, empty tables, search
// spaces, functions), put together from the fuzz input. The script is read as engine train,
// engine search and engine bench read it; nothing is trained.
#include <string>
#include <vector>

#include "engine/bench/parameters.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/sweep_reader.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using engine::fuzz::Bytes;

const std::vector<std::string> kValues = {"1",
                                          "0",
                                          "-1",
                                          "0.5",
                                          "3",
                                          "64",
                                          "1e308",
                                          "-1e308",
                                          "0/0",
                                          "1/0",
                                          "2^53",
                                          "2^63",
                                          "1e-320",
                                          "'epoch'",
                                          "'x'",
                                          "''",
                                          "true",
                                          "false",
                                          "{}",
                                          "{1, 2}",
                                          "{steps = 10}",
                                          "{epochs = 2}",
                                          "{epochs = 0}",
                                          "function() end",
                                          "function() error('boom') end",
                                          "search.log(1e-3, 1)",
                                          "search.choice{1, 2}",
                                          "search.int(1, 5)",
                                          "search.uniform(0, 1)",
                                          "'validation.loss'",
                                          "'validation.accuracy'",
                                          "'float16'",
                                          "'bfloat16'",
                                          "'max'",
                                          "'min'",
                                          "'dynamic'",
                                          "'skip'",
                                          "'asha'",
                                          "'random'",
                                          "'grid'",
                                          "'single'",
                                          "'step'",
                                          "nn.Linear(1, 1)",
                                          "{'accuracy'}",
                                          "{'nope'}",
                                          "{accuracy = 1}",
                                          "'mlp'",
                                          "'resnet18'",
                                          "{1, 'x', true}",
                                          "{{}}",
                                          "-0.0"};

std::string value(Bytes& in) {
  return in.pick(kValues);
}

// "{k1 = v1, k2 = v2}" with keys from `keys` and from nowhere
std::string table(Bytes& in, const std::vector<std::string>& keys) {
  std::string out = "{";
  const int count = static_cast<int>(in.in_range(0, 4));
  for (int i = 0; i < count; ++i) {
    const std::string key =
        in.flag() ? in.pick(keys)
                  : in.pick(std::vector<std::string>{"unknown", "[1]", "['a b']", "lr"});
    out += key + " = " + (in.in_range(0, 5) == 0 ? table(in, keys) : value(in)) + ", ";
  }
  return out + "}";
}

const std::vector<std::string> kTrainerKeys = {
    "epochs",           "steps",     "validate_every", "log_every",      "checkpoint_every",
    "keep_checkpoints", "keep_best", "clip_grad_norm", "clip_norm_type", "clip_grad_value",
    "accumulate",       "precision", "loss_scale",     "early_stopping", "on_nan",
    "sync_batchnorm",   "metric",    "mode",           "patience",       "init_scale",
    "growth_interval",  "min_delta"};
const std::vector<std::string> kOptimizerKeys = {
    "lr",    "momentum", "dampening", "weight_decay", "nesterov", "rho",      "eps",
    "betas", "amsgrad",  "alpha",     "centered",     "lr_decay", "max_iter", "history_size"};
const std::vector<std::string> kSchedulerKeys = {
    "step_size",    "gamma",      "step_mode",   "milestones", "T_max",       "eta_min",
    "start_factor", "end_factor", "total_iters", "max_lr",     "total_steps", "pct_start",
    "metric",       "mode",       "factor",      "patience",   "schedulers",  "lr_lambda"};
const std::vector<std::string> kSearcherKeys = {
    "name",      "metric",  "smaller_is_better",     "max_trials",   "max_length",
    "max_rungs", "divisor", "max_concurrent_trials", "max_restarts", "unit",
    "seed"};
const std::vector<std::string> kSweepKeys = {"model",  "batch_size", "threads",    "phase",
                                             "dtype",  "device",     "warmup",     "iterations",
                                             "_label", "enabled",    "input_shape"};

std::string training_script(Bytes& in) {
  const auto optimizer = in.pick(
      std::vector<std::string>{"SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "RMSprop", "LBFGS"});
  const auto scheduler = in.pick(
      std::vector<std::string>{"StepLR", "ExponentialLR", "MultiStepLR", "CosineAnnealingLR",
                               "LinearLR", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR"});
  std::string s =
      "local nn, optim, data, torch, search = require 'nn', require 'optim', require 'data', "
      "require 'torch', require 'search'\n"
      "return {\n"
      "  hparams = " +
      table(in, {"lr", "batch", "depth", "optimizer", "momentum"}) +
      ",\n"
      "  model = nn.Linear(4, 2),\n"
      "  data = function() return {train = data.tensors{input = torch.randn(8, 4), "
      "target = torch.ones(8):long()}:batch(" +
      (in.flag() ? value(in) : "4") +
      ")} end,\n"
      "  loss = nn.CrossEntropyLoss(),\n"
      "  optimizer = function(p) return optim." +
      optimizer + "(p, " + table(in, kOptimizerKeys) + ") end,\n";
  if (in.flag())
    s += "  scheduler = function(o) return optim." + scheduler + "(o, " +
         table(in, kSchedulerKeys) + ") end,\n";
  if (in.flag()) s += "  metrics = " + value(in) + ",\n";
  s += "  trainer = " + table(in, kTrainerKeys) + ",\n";
  if (in.flag()) s += "  searcher = " + table(in, kSearcherKeys) + ",\n";
  return s + "}\n";
}

std::string sweep_script(Bytes& in) {
  std::string s = "return {\n  kind = 'benchmark',\n  parameters = " + table(in, kSweepKeys) +
                  ",\n  variables = " + table(in, kSweepKeys) + ",\n";
  if (in.flag()) s += "  order = {" + in.pick(kSweepKeys) + ", " + value(in) + "},\n";
  if (in.flag())
    s += "  extensions = {{condition = " + table(in, kSweepKeys) +
         ", parameters = " + table(in, kSweepKeys) + "}},\n";
  if (in.flag())
    s += "  where = function(p) return p." + in.pick(kSweepKeys) + " ~= " + value(in) + " end,\n";
  return s + "}\n";
}

}  // namespace

ENGINE_FUZZ_TARGET(lua_options) {
  Bytes in(data, size);
  const bool sweep = in.flag();
  const std::string text = sweep ? sweep_script(in) : training_script(in);
  const auto path = engine::fuzz::scratch_dir() + "/options.lua";
  engine::fuzz::write_file(path, text.data(), text.size());
  engine::lua::Runtime runtime;
  if (sweep) {
    auto spec = engine::lua::read_sweep(runtime, path);
    (void)engine::bench::expand(spec, engine::bench::point_schema());
    return;
  }
  engine::lua::TrainScript script(runtime, path);
  const auto space = script.search_space();
  (void)script.searcher();
  (void)space;
  (void)script.build(torch::kCPU, 1);
}
