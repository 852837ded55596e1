// The trainer options a training script declares, read into train::TrainerOptions.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

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

// The script of script_with_trainer("{}") with one field set again: `spec.<field> = <value>`.
std::string script_with_field(const std::string& field, const std::string& value) {
  const std::string base = script_with_trainer("{}");
  std::ifstream in(base);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto table = text.find("return {");
  text.replace(table, 6, "local spec =");
  const std::string path = test::scratch_dir("spec-reader") + "/field_" + field + ".lua";
  std::ofstream(path) << text << "spec." << field << " = " << value << "\nreturn spec\n";
  return path;
}

// What engine train reads of a script before its first step.
void read_script(const std::string& path) {
  lua::Runtime runtime;
  lua::TrainScript script(runtime, path);
  script.name();
  script.description();
  script.seed();
  script.build(torch::kCPU, 1);
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

// The catalogue of bad input runs two of these through engine train (exit code 3, the message
// on stderr: tests/bad_input/run.sh); the rest are read here, without a process each.
TEST_CASE("a field of the wrong type names the script and the field") {
  struct Case {
    const char* field;
    const char* value;
    const char* message;
  };
  const Case cases[] = {
      {"name", "3", "field_name.lua: 'name' must be a string (got number)"},
      {"description", "{}", "field_description.lua: 'description' must be a string (got table)"},
      {"loss", "'nll'", "field_loss.lua: 'loss'"},
      {"scheduler", "5", "field_scheduler.lua: 'scheduler'"},
      {"metrics", "'accuracy'",
       "field_metrics.lua: 'metrics' must be a list of names such as {'accuracy'} (got string)"},
      {"train_batch", "1", "field_train_batch.lua: 'train_batch' must be a function"},
      {"evaluate_batch", "'x'", "field_evaluate_batch.lua: 'evaluate_batch' must be a function"},
      {"callbacks", "2", "field_callbacks.lua: 'callbacks' must be a table"},
      {"trainer", "7",
       "field_trainer.lua: 'trainer' must be a table of options or a function returning one (got "
       "number)"},
      {"seed", "'one'", "field_seed.lua: 'seed' must be a non-negative number"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.field);
    CHECK_THROWS_WITH_AS(read_script(script_with_field(c.field, c.value)),
                         doctest::Contains(c.message), core::ScriptError);
  }
  CHECK_THROWS_WITH_AS(read_script(script_with_field("trainer", "{['log(every'] = 2}")),
                       doctest::Contains("trainer: unknown option 'log(every'"), core::ScriptError);
}
