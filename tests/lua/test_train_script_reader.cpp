// The trainer options a training script declares, read into train::TrainerOptions.
#include <doctest/doctest.h>

#include <fstream>

#include "engine/core/errors.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

// A complete little script over in-memory tensors, with `trainer` returning `options`.
std::string script_with_trainer(const std::string& options) {
  const auto dir = test::scratch_dir("spec-reader");
  const std::string path = dir + "/s.lua";
  std::ofstream(path) << "local nn, optim, data, torch = require 'nn', require 'optim', "
                         "require 'data', require 'torch'\n"
                         "return {\n"
                         "  model = nn.Linear(4, 2),\n"
                         "  data = function() return {train = data.tensors{input = "
                         "torch.randn(8, 4), target = torch.ones(8):long()}:batch(4)} end,\n"
                         "  loss = nn.CrossEntropyLoss(),\n"
                         "  optimizer = function(params) return optim.SGD(params, {lr = 0.1}) "
                         "end,\n"
                         "  trainer = "
                      << options << ",\n}\n";
  return path;
}

train::TrainerOptions read_options(const std::string& options) {
  lua::Runtime runtime;
  lua::TrainScript script(runtime, script_with_trainer(options));
  return script.build(torch::kCPU, 1).options;
}

}  // namespace

TEST_CASE("loss_scale: on by default with float16 only; 'dynamic', false or a settings table") {
  auto plain = read_options("{}");
  CHECK_FALSE(plain.loss_scale.active(plain.precision));
  CHECK(plain.loss_scale.active(train::Precision::kFloat16));

  auto dynamic = read_options("{precision = 'bfloat16', loss_scale = 'dynamic'}");
  CHECK((dynamic.precision == train::Precision::kBFloat16));
  CHECK(dynamic.loss_scale.active(dynamic.precision));
  CHECK(dynamic.loss_scale.init_scale == 65536.0);

  auto off = read_options("{loss_scale = false}");
  CHECK_FALSE(off.loss_scale.active(train::Precision::kFloat16));

  auto custom = read_options("{loss_scale = {init_scale = 1024, growth_interval = 100}}");
  CHECK(custom.loss_scale.active(custom.precision));
  CHECK(custom.loss_scale.init_scale == 1024.0);
  CHECK(custom.loss_scale.growth_interval == 100);
  CHECK(custom.loss_scale.growth_factor == 2.0);
  CHECK(custom.loss_scale.backoff_factor == 0.5);
}

TEST_CASE("bad loss_scale values name the script and the field") {
  CHECK_THROWS_WITH_AS(read_options("{loss_scale = 'static'}"),
                       doctest::Contains("s.lua:7: trainer loss_scale must be 'dynamic'"),
                       core::ScriptError);
  CHECK_THROWS_WITH_AS(read_options("{loss_scale = {backoff_factor = 2}}"),
                       doctest::Contains("s.lua:7: trainer loss_scale backoff_factor"),
                       core::ScriptError);
  CHECK_THROWS_WITH_AS(read_options("{loss_scale = {init = 8}}"),
                       doctest::Contains("unknown option 'init'"), core::ScriptError);
  CHECK_THROWS_WITH_AS(read_options("{precision = 'half'}"),
                       doctest::Contains("precision must be 'float32', 'bfloat16' or 'float16'"),
                       core::UsageError);
}
